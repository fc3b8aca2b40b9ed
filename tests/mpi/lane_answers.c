/*
 * lane_answers: request-answer exchanges mixed with bursts, so that a
 * lane's messages alternate between its answer slot and its ring.
 *
 * Ranks pair up (2k with 2k+1). Each round, both ranks of a pair draw the
 * same step from a shared generator:
 *  - exchange: n request-answer pairs of 0..8 bytes (what goes into the
 *    answer slots once an exchange runs), now and then of 9..64 bytes
 *    (ring), blocking or with MPI_Irecv + MPI_Send + MPI_Wait;
 *  - burst: the even rank sends 1..40 messages of 0..64 bytes at once,
 *    then one more after the odd rank's reply, and the odd rank receives
 *    them with MPI_ANY_TAG, half of them after an MPI_Probe;
 *  - unexpected: the odd rank answers first, the even rank sleeps a
 *    little before it receives (the answer waits in a slot or the ring);
 *  - overtake: the even rank sends two messages, takes one (an answer is
 *    then due), sends one (after two: the ring), takes another, and sends
 *    an answer while the odd rank sleeps: its first message waits in the
 *    ring, the answer in the slot, and the odd rank must take them in
 *    that order.
 * Every message carries its sender's running number and the round; the
 * receiver checks the number (so a message taken out of send order shows,
 * whichever of slot and ring it came through), the bytes and the status.
 * With an odd rank count the last rank idles.
 *
 * Arguments: [rounds] (default 400).
 */
#include <stdbool.h>
#include <stdint.h>

#include "testutil.h"

enum { MAX_BYTES = 64, TAG_EXCHANGE = 1, TAG_BURST = 2, TAG_REPLY = 3 };

struct side {
    int rank, peer, errs;
    uint32_t sent, received;        /* running numbers, per direction */
    uint64_t rng;
};

static uint32_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*state >> 33);
}

/* A message of `bytes` (>= 4 carry the number; smaller ones a byte of it). */
static void fill(unsigned char *buf, int bytes, uint32_t number)
{
    for (int i = 0; i < bytes; i++)
        buf[i] = (unsigned char)(number * 31u + (uint32_t)i);
}

static int check(struct side *s, const unsigned char *buf, int bytes, MPI_Status *st, int tag, int line)
{
    uint32_t number = s->received++;
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (st->MPI_SOURCE != s->peer || (tag != MPI_ANY_TAG && st->MPI_TAG != tag) || count != bytes)
        return tu_fail(line, "message %u: source %d tag %d count %d, expected %d/%d/%d", number, st->MPI_SOURCE,
                       st->MPI_TAG, count, s->peer, tag, bytes);
    for (int i = 0; i < bytes; i++)
        if (buf[i] != (unsigned char)(number * 31u + (uint32_t)i))
            return tu_fail(line, "message %u of %d bytes: byte %d is %u, expected %u (out of order?)", number, bytes,
                           i, buf[i], (unsigned char)(number * 31u + (uint32_t)i));
    return 0;
}

static void send_one(struct side *s, int bytes, int tag)
{
    unsigned char buf[MAX_BYTES];
    fill(buf, bytes, s->sent++);
    MPI_Send(buf, bytes, MPI_BYTE, s->peer, tag, MPI_COMM_WORLD);
}

static void recv_one(struct side *s, int bytes, int tag, bool probe_first)
{
    unsigned char buf[MAX_BYTES + 8];
    MPI_Status st;
    if (probe_first) {
        MPI_Probe(s->peer, tag, MPI_COMM_WORLD, &st);
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count != bytes)
            s->errs += tu_fail(__LINE__, "probe: count %d, expected %d", count, bytes);
    }
    MPI_Recv(buf, MAX_BYTES + 8, MPI_BYTE, s->peer, tag, MPI_COMM_WORLD, &st);
    s->errs += check(s, buf, bytes, &st, tag, __LINE__) != 0;
}

/* The even rank asks, the odd one answers; sizes mostly answer-sized. */
static void exchange(struct side *s, int n, bool nonblocking)
{
    bool asks = s->rank % 2 == 0;
    for (int i = 0; i < n; i++) {
        int bytes = next_random(&s->rng) % 8 == 0 ? 9 + (int)(next_random(&s->rng) % 56)
                                                   : (int)(next_random(&s->rng) % 9);
        if (asks)
            send_one(s, bytes, TAG_EXCHANGE);
        if (nonblocking) {
            unsigned char buf[MAX_BYTES + 8];
            MPI_Request req;
            MPI_Status st;
            MPI_Irecv(buf, MAX_BYTES + 8, MPI_BYTE, s->peer, TAG_EXCHANGE, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, &st);
            s->errs += check(s, buf, bytes, &st, TAG_EXCHANGE, __LINE__) != 0;
        } else {
            recv_one(s, bytes, TAG_EXCHANGE, false);
        }
        if (!asks)
            send_one(s, bytes, TAG_EXCHANGE);
    }
}

/* A burst from the even rank, a reply, and one more message: the last
 * one is an answer-sized message right after a burst (not an answer). */
static void burst(struct side *s, int n)
{
    int sizes[41];
    for (int i = 0; i <= n; i++)
        sizes[i] = (int)(next_random(&s->rng) % (MAX_BYTES + 1));
    if (s->rank % 2 == 0) {
        for (int i = 0; i < n; i++)
            send_one(s, sizes[i], TAG_BURST);
        recv_one(s, 4, TAG_REPLY, false);
        send_one(s, sizes[n] % 9, TAG_BURST);
    } else {
        for (int i = 0; i < n; i++)
            recv_one(s, sizes[i], MPI_ANY_TAG, i % 2 == 1);
        send_one(s, 4, TAG_REPLY);
        recv_one(s, sizes[n] % 9, TAG_BURST, false);
    }
}

/* The odd rank sends first; the even rank receives late (unexpected). */
static void unexpected(struct side *s, int bytes)
{
    if (s->rank % 2 == 1) {
        send_one(s, bytes, TAG_REPLY);
        recv_one(s, bytes, TAG_REPLY, false);
    } else {
        tu_sleep_ms(1);
        recv_one(s, bytes, TAG_REPLY, true);
        send_one(s, bytes, TAG_REPLY);
    }
}

static void overtake(struct side *s, int bytes)
{
    if (s->rank % 2 == 1) {
        recv_one(s, 1, TAG_BURST, false);
        recv_one(s, 2, TAG_BURST, false);
        send_one(s, 0, TAG_REPLY);
        tu_sleep_ms(1);
        send_one(s, 3, TAG_REPLY);
        tu_sleep_ms(2);
        recv_one(s, bytes, TAG_EXCHANGE, false);
        recv_one(s, bytes % 9, TAG_EXCHANGE, false);
    } else {
        send_one(s, 1, TAG_BURST);          /* two: not an answer next */
        send_one(s, 2, TAG_BURST);
        recv_one(s, 0, TAG_REPLY, false);   /* one taken: an answer due */
        send_one(s, bytes, TAG_EXCHANGE);   /* after two: the ring */
        recv_one(s, 3, TAG_REPLY, false);   /* one taken again */
        send_one(s, bytes % 9, TAG_EXCHANGE);   /* the answer slot, if <= 8 bytes */
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = tu_rank(), size = tu_size();
    int rounds = argc > 1 ? atoi(argv[1]) : 400;
    struct side s = { .rank = rank, .peer = rank ^ 1, .rng = 12345 };
    if (s.peer < size) {
        for (int r = 0; r < rounds; r++) {
            uint32_t step = next_random(&s.rng) % 10;
            if (step < 5)
                exchange(&s, 1 + (int)(next_random(&s.rng) % 30), step == 4);
            else if (step < 7)
                burst(&s, 1 + (int)(next_random(&s.rng) % 40));
            else if (step < 8)
                unexpected(&s, (int)(next_random(&s.rng) % 9));
            else
                overtake(&s, (int)(next_random(&s.rng) % 65));
        }
    }
    return tu_finish(s.errs);
}
