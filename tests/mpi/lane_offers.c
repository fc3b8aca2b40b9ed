/*
 * lane_offers: messages of 1-16 KiB between two ranks, where Strand (ranks
 * on their own cores) puts an offer into the lane for those of up to
 * 4 KiB and the receiver copies from the sender's buffer. Whatever the implementation, each case below
 * must behave as an eager send would:
 *  - send, then barrier: the sender's MPI_Send returns while the receiver
 *    sits in MPI_Barrier, which takes no message (else: a hang);
 *  - test loop: MPI_Isend, then MPI_Test until it completes, while the
 *    receiver sits in MPI_Barrier;
 *  - late receiver: a burst of sends, the buffer overwritten as soon as
 *    each send returns, received after the receiver slept; and the same
 *    with the receiver already waiting;
 *  - head to head: both ranks MPI_Send before they receive;
 *  - mixed sizes: small (in the lane itself), offered and large messages
 *    of one tag, received in send order with MPI_ANY_TAG after MPI_Probe;
 *  - a derived datatype (a vector of doubles) freed right after MPI_Isend;
 *  - MPI_Request_free right after MPI_Isend;
 *  - cancel: a send nobody receives, cancelled; if the cancel succeeds the
 *    receiver must never see the message, otherwise it must receive it;
 *  - a one-way stream of MPI_Isend of mostly 513-1024 bytes (which Strand
 *    offers once the sender has received nothing from the receiver for a
 *    few messages), one of them (of its own tag) cancelled, each buffer
 *    overwritten once MPI_Waitall returns; the receiver late or already
 *    waiting.
 * Ranks pair up (2k with 2k+1); with an odd count the last rank only
 * joins the barriers. Every message's bytes encode its number, so a
 * message copied after its buffer was reused, or taken out of order,
 * shows.
 *
 * Arguments: [rounds] (default 20).
 */
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "testutil.h"

enum { MAX_BYTES = 16384, BIG_BYTES = 40000, BURST = 24 };
enum { TAG_DATA = 1, TAG_MIX = 2, TAG_CANCEL = 3, TAG_VERDICT = 4, TAG_FREED = 5, TAG_STREAM_CANCEL = 6 };
enum { STREAM = 40, STREAM_CANCELLED = 20 };

struct pair {
    int rank, peer, errs;
    bool even;
    uint32_t number;                 /* of the next message, shared by both sides' counts */
    uint64_t rng;
    unsigned char *buf;              /* BIG_BYTES */
};

static uint32_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*state >> 33);
}

/* Mostly 1025..4096 bytes (offers), else up to 16 KiB (Strand's mailbox
 * path, eager: the two must keep their order). */
static int medium_size(struct pair *p)
{
    uint32_t r = next_random(&p->rng);
    return r % 4 != 0 ? 1025 + (int)(r / 4 % 3072) : 4097 + (int)(r / 4 % (MAX_BYTES - 4096));
}

static void fill(unsigned char *buf, int bytes, uint32_t number)
{
    for (int i = 0; i < bytes; i++)
        buf[i] = (unsigned char)(number * 131u + (uint32_t)i * 7u + (uint32_t)(i >> 8));
}

static void check(struct pair *p, const unsigned char *buf, int bytes, MPI_Status *st, int tag,
                  uint32_t number, int line)
{
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (st->MPI_SOURCE != p->peer || st->MPI_TAG != tag || count != bytes) {
        p->errs += tu_fail(line, "message %u: source %d tag %d count %d, expected %d/%d/%d", number,
                           st->MPI_SOURCE, st->MPI_TAG, count, p->peer, tag, bytes);
        return;
    }
    for (int i = 0; i < bytes; i++) {
        unsigned char want = (unsigned char)(number * 131u + (uint32_t)i * 7u + (uint32_t)(i >> 8));
        if (buf[i] != want) {
            p->errs += tu_fail(line, "message %u (%d bytes): byte %d is %u, expected %u", number, bytes, i,
                               buf[i], want);
            return;
        }
    }
}

/* The even rank sends while the odd one is in a barrier that takes no
 * message; `test_loop` completes the send with MPI_Test instead. */
static void send_then_barrier(struct pair *p, bool test_loop)
{
    int bytes = medium_size(p);
    uint32_t number = p->number++;
    if (p->even) {
        fill(p->buf, bytes, number);
        if (test_loop) {
            MPI_Request req;
            int done = 0;
            MPI_Isend(p->buf, bytes, MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD, &req);
            while (!done)
                MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(p->buf, bytes, MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD);
        }
        memset(p->buf, 0xee, (size_t)bytes);     /* reusable once the send completed */
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Recv(p->buf, MAX_BYTES, MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD, &st);
        check(p, p->buf, bytes, &st, TAG_DATA, number, __LINE__);
    }
}

/* BURST sends, each buffer overwritten at once; the receiver sleeps first
 * (`late`) or is already waiting. */
static void burst(struct pair *p, bool late)
{
    int bytes[BURST];
    uint32_t first = p->number;
    for (int k = 0; k < BURST; k++)
        bytes[k] = medium_size(p);
    p->number += BURST;
    if (p->even) {
        for (int k = 0; k < BURST; k++) {
            fill(p->buf, bytes[k], first + (uint32_t)k);
            MPI_Send(p->buf, bytes[k], MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD);
            memset(p->buf, 0xdd, (size_t)bytes[k]);
        }
        return;
    }
    if (late)
        usleep(2000);
    for (int k = 0; k < BURST; k++) {
        MPI_Status st;
        MPI_Recv(p->buf, MAX_BYTES, MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD, &st);
        check(p, p->buf, bytes[k], &st, TAG_DATA, first + (uint32_t)k, __LINE__);
    }
}

static void head_to_head(struct pair *p)
{
    int bytes = medium_size(p);
    uint32_t mine = p->number + (p->even ? 0 : 1), theirs = p->number + (p->even ? 1 : 0);
    p->number += 2;
    unsigned char *in = p->buf + MAX_BYTES;
    MPI_Status st;
    fill(p->buf, bytes, mine);
    MPI_Send(p->buf, bytes, MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD);
    memset(p->buf, 0xcc, (size_t)bytes);
    MPI_Recv(in, MAX_BYTES, MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD, &st);
    check(p, in, bytes, &st, TAG_DATA, theirs, __LINE__);
}

/* Small, offered and large messages of one tag, in send order. */
static void mixed(struct pair *p)
{
    enum { N = 12 };
    int bytes[N];
    uint32_t first = p->number;
    for (int k = 0; k < N; k++) {
        uint32_t r = next_random(&p->rng) % 3;
        bytes[k] = r == 0 ? (int)(next_random(&p->rng) % 1025) : r == 1 ? medium_size(p) : BIG_BYTES;
    }
    p->number += N;
    if (p->even) {
        MPI_Request reqs[N];
        unsigned char *bufs = malloc((size_t)N * BIG_BYTES);
        for (int k = 0; k < N; k++) {
            fill(bufs + (size_t)k * BIG_BYTES, bytes[k], first + (uint32_t)k);
            MPI_Isend(bufs + (size_t)k * BIG_BYTES, bytes[k], MPI_BYTE, p->peer, TAG_MIX, MPI_COMM_WORLD, &reqs[k]);
        }
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
        free(bufs);
        return;
    }
    for (int k = 0; k < N; k++) {
        MPI_Status st;
        int count;
        MPI_Probe(p->peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count != bytes[k])
            p->errs += tu_fail(__LINE__, "probe of message %u: count %d, expected %d", first + (uint32_t)k, count,
                               bytes[k]);
        MPI_Recv(p->buf, BIG_BYTES, MPI_BYTE, p->peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        check(p, p->buf, bytes[k], &st, TAG_MIX, first + (uint32_t)k, __LINE__);
    }
}

/* A vector of doubles (every other one), its type freed after MPI_Isend. */
static void derived(struct pair *p)
{
    int n = 300 + (int)(next_random(&p->rng) % 700);     /* 2.4-8 KiB of data */
    uint32_t number = p->number++;
    double *v = malloc(sizeof(double) * 2 * (size_t)n);
    if (p->even) {
        MPI_Datatype every_other;
        MPI_Request req;
        MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &every_other);
        MPI_Type_commit(&every_other);
        for (int i = 0; i < 2 * n; i++)
            v[i] = i % 2 == 0 ? number * 10000.0 + i / 2 : -1.0;
        MPI_Isend(v, 1, every_other, p->peer, TAG_DATA, MPI_COMM_WORLD, &req);
        MPI_Type_free(&every_other);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Status st;
        int count;
        MPI_Recv(v, n, MPI_DOUBLE, p->peer, TAG_DATA, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        if (count != n)
            p->errs += tu_fail(__LINE__, "vector message %u: %d doubles, expected %d", number, count, n);
        for (int i = 0; i < n && i < count; i++)
            if (v[i] != number * 10000.0 + i) {
                p->errs += tu_fail(__LINE__, "vector message %u: element %d is %g", number, i, v[i]);
                break;
            }
    }
    free(v);
}

/* MPI_Request_free right after MPI_Isend; the buffer stays until the
 * receiver says it has the message. */
static void freed_request(struct pair *p)
{
    int bytes = medium_size(p);
    uint32_t number = p->number++;
    MPI_Status st;
    if (p->even) {
        MPI_Request req;
        int ack;
        fill(p->buf, bytes, number);
        MPI_Isend(p->buf, bytes, MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD, &req);
        MPI_Request_free(&req);
        MPI_Recv(&ack, 1, MPI_INT, p->peer, TAG_FREED, MPI_COMM_WORLD, &st);
    } else {
        int ack = 1;
        MPI_Recv(p->buf, MAX_BYTES, MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD, &st);
        check(p, p->buf, bytes, &st, TAG_DATA, number, __LINE__);
        MPI_Send(&ack, 1, MPI_INT, p->peer, TAG_FREED, MPI_COMM_WORLD);
    }
}

/* The receiver's side of a cancelled send of `tag`: the sender's verdict
 * (MPI_Test_cancelled), then the message must not be there if the cancel
 * succeeded, and must arrive intact if it did not. */
static void receive_after_cancel(struct pair *p, int tag, uint32_t number, int bytes, int line)
{
    MPI_Status st;
    int verdict, there;
    MPI_Recv(&verdict, 1, MPI_INT, p->peer, TAG_VERDICT, MPI_COMM_WORLD, &st);
    MPI_Iprobe(p->peer, tag, MPI_COMM_WORLD, &there, &st);
    if (verdict && there && !TU_SEND_CANCEL_QUIRKS)
        p->errs += tu_fail(line, "message %u (tag %d) was cancelled but can be probed", number, tag);
    if (!verdict) {
        MPI_Recv(p->buf, MAX_BYTES, MPI_BYTE, p->peer, tag, MPI_COMM_WORLD, &st);
        check(p, p->buf, bytes, &st, tag, number, line);
    }
}

/* A send nobody has posted a receive for, cancelled at once. */
static void cancelled(struct pair *p)
{
    int bytes = medium_size(p);
    uint32_t number = p->number++;
    MPI_Status st;
    int verdict;
    if (p->even) {
        MPI_Request req;
        fill(p->buf, bytes, number);
        MPI_Isend(p->buf, bytes, MPI_BYTE, p->peer, TAG_CANCEL, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &verdict);
        memset(p->buf, 0xbb, (size_t)bytes);
        MPI_Send(&verdict, 1, MPI_INT, p->peer, TAG_VERDICT, MPI_COMM_WORLD);
        return;
    }
    receive_after_cancel(p, TAG_CANCEL, number, bytes, __LINE__);
}

/* Mostly 513..1024 bytes (offers in a one-way stream), else up to 4 KiB. */
static int stream_size(struct pair *p)
{
    uint32_t r = next_random(&p->rng);
    return r % 4 != 0 ? 513 + (int)(r / 4 % 512) : 1 + (int)(r / 4 % 4096);
}

/* STREAM nonblocking sends of one tag and, at STREAM_CANCELLED, one of
 * another that is cancelled at once; all buffers overwritten after
 * MPI_Waitall. The receiver sleeps first (`late`) or is already waiting.
 * (The cancelled one has a tag of its own: the sender goes on to the next
 * round's messages while the receiver still probes for it.) */
static void stream(struct pair *p, bool late)
{
    int bytes[STREAM];
    uint32_t first = p->number;
    for (int k = 0; k < STREAM; k++)
        bytes[k] = stream_size(p);
    uint32_t cancel_number = first + STREAM;
    int cancel_bytes = stream_size(p);
    p->number += STREAM + 1;
    MPI_Status st;
    int verdict;
    if (p->even) {
        MPI_Request reqs[STREAM + 1];
        unsigned char *bufs = malloc((size_t)(STREAM + 1) * 4096);
        for (int k = 0; k < STREAM; k++) {
            if (k == STREAM_CANCELLED) {
                unsigned char *c = bufs + (size_t)STREAM * 4096;
                fill(c, cancel_bytes, cancel_number);
                MPI_Isend(c, cancel_bytes, MPI_BYTE, p->peer, TAG_STREAM_CANCEL, MPI_COMM_WORLD, &reqs[STREAM]);
                MPI_Cancel(&reqs[STREAM]);
            }
            fill(bufs + (size_t)k * 4096, bytes[k], first + (uint32_t)k);
            MPI_Isend(bufs + (size_t)k * 4096, bytes[k], MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD, &reqs[k]);
        }
        MPI_Waitall(STREAM, reqs, MPI_STATUSES_IGNORE);
        memset(bufs, 0xaa, (size_t)STREAM * 4096);
        MPI_Wait(&reqs[STREAM], &st);
        MPI_Test_cancelled(&st, &verdict);
        memset(bufs + (size_t)STREAM * 4096, 0xaa, 4096);
        MPI_Send(&verdict, 1, MPI_INT, p->peer, TAG_VERDICT, MPI_COMM_WORLD);
        free(bufs);
        return;
    }
    if (late)
        usleep(2000);
    for (int k = 0; k < STREAM; k++) {
        MPI_Recv(p->buf, MAX_BYTES, MPI_BYTE, p->peer, TAG_DATA, MPI_COMM_WORLD, &st);
        check(p, p->buf, bytes[k], &st, TAG_DATA, first + (uint32_t)k, __LINE__);
    }
    receive_after_cancel(p, TAG_STREAM_CANCEL, cancel_number, cancel_bytes, __LINE__);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    struct pair p = { .rank = tu_rank() };
    int size = tu_size();
    p.even = p.rank % 2 == 0;
    p.peer = p.even ? p.rank + 1 : p.rank - 1;
    bool paired = p.peer < size;
    p.rng = 0x5eed0ffe75ull + (uint64_t)(p.rank / 2);
    p.buf = malloc(2 * BIG_BYTES);
    for (int round = 0; round < rounds; round++) {
        if (!paired) {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            continue;
        }
        send_then_barrier(&p, false);
        send_then_barrier(&p, true);
        burst(&p, round % 2 == 0);
        head_to_head(&p);
        mixed(&p);
        derived(&p);
        freed_request(&p);
        cancelled(&p);
        stream(&p, round % 2 == 1);
    }
    free(p.buf);
    return tu_finish(p.errs);
}
