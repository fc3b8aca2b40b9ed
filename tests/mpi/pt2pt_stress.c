/*
 * pt2pt_stress: random traffic whose every receive is checked.
 *
 * In each round every rank sends to its next NEIGHBOURS ranks (rank+1..),
 * for each of TAGS tags, a number of messages that a hash of (round,
 * source, destination, tag) decides; each message's size (0 B to 20 KiB,
 * mostly small: lanes, the mailbox path, rendezvous) and mode (MPI_Isend
 * or MPI_Issend) come from a hash of the same plus its sequence number,
 * and its bytes from (source, tag, sequence). Every rank knows from the
 * hashes what it must receive, and takes it with a random mix of:
 * MPI_Irecv from the source, MPI_Recv from MPI_ANY_SOURCE, MPI_Probe
 * (MPI_ANY_SOURCE) then MPI_Recv of the probed source and size,
 * MPI_Iprobe until found, and MPI_Irecv + MPI_Cancel (cancelled: posted
 * again; not cancelled: the message is checked). A receive that gets a
 * message checks its status, size and bytes against the next message of
 * that (source, tag): non-overtaking order per source and tag.
 * A receive on a tag nobody sends is posted and cancelled every round.
 * Rounds end with a barrier (no message of the next round can match).
 *
 * Arguments: [rounds] (default 40). Minimum 2 ranks.
 */
#include <stdint.h>

#include "testutil.h"

enum { NEIGHBOURS = 3, TAGS = 4, MAX_PER_TAG = 3, MAX_BYTES = 20480, UNUSED_TAG = 99 };

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t hash5(int a, int b, int c, int d, int e)
{
    uint64_t h = mix((uint64_t)a + 0x9e3779b97f4a7c15ULL);
    h = mix(h ^ (uint64_t)b);
    h = mix(h ^ (uint64_t)c);
    h = mix(h ^ (uint64_t)d);
    return mix(h ^ (uint64_t)e);
}

static int message_count(int round, int src, int dst, int tag)
{
    return (int)(hash5(round, src, dst, tag, -1) % (MAX_PER_TAG + 1));
}

/* Above 64 ranks sizes stop at 2 KiB, to keep the memory small. */
static int message_size(int round, int src, int dst, int tag, int seq, int n)
{
    uint64_t h = hash5(round, src, dst, tag, seq);
    int size;
    switch (h % 8) {
    case 0: size = 0; break;
    case 1: case 2: case 3: size = (int)((h >> 8) % 48); break;
    case 4: case 5: size = (int)((h >> 8) % 1100); break;
    case 6: size = (int)((h >> 8) % 4200); break;
    default: size = (int)((h >> 8) % MAX_BYTES); break;
    }
    return n > 64 ? size % 2048 : size;
}

static unsigned char pattern(int src, int tag, int seq, int round, int i)
{
    return (unsigned char)(src * 31 + tag * 7 + seq * 13 + round * 5 + i);
}

struct expect {
    int next[TAGS];      /* next sequence number per tag */
    int total[TAGS];
};

/* Checks a received message against the next one of (src, tag). */
static int check_message(int round, int me, int n, int src, int tag, const unsigned char *buf,
                         MPI_Status *st, struct expect *e)
{
    int errs = 0;
    if (tag < 0 || tag >= TAGS || e->next[tag] >= e->total[tag]) {
        TU_FAIL("rank %d round %d: unexpected message from %d tag %d", me, round, src, tag);
        return 1;
    }
    int seq = e->next[tag]++;
    int size = message_size(round, src, me, tag, seq, n);
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(count == size, "rank %d round %d: from %d tag %d seq %d: %d bytes, expected %d", me, round, src,
          tag, seq, count, size);
    for (int i = 0; i < count && i < size; i++)
        if (buf[i] != pattern(src, tag, seq, round, i)) {
            TU_FAIL("rank %d round %d: from %d tag %d seq %d: byte %d differs (order or data)", me, round,
                    src, tag, seq, i);
            errs++;
            break;
        }
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    int nb = NEIGHBOURS < n - 1 ? NEIGHBOURS : n - 1;
    if (nb < 1)
        nb = 1;
    unsigned char *sendbuf = tu_malloc((size_t)nb * TAGS * MAX_PER_TAG * MAX_BYTES);
    unsigned char *recvbuf = tu_malloc(MAX_BYTES);
    MPI_Request sends[NEIGHBOURS * TAGS * MAX_PER_TAG];
    struct expect from[NEIGHBOURS];
    int sources[NEIGHBOURS];
    for (int round = 0; round < rounds && errs == 0; round++) {
        /* Sends, interleaving tags and destinations. */
        int nsend = 0;
        for (int seq = 0; seq < MAX_PER_TAG; seq++)
            for (int k = 0; k < nb; k++)
                for (int tag = 0; tag < TAGS; tag++) {
                    int dst = (me + 1 + k) % n;
                    if (seq >= message_count(round, me, dst, tag))
                        continue;
                    int size = message_size(round, me, dst, tag, seq, n);
                    unsigned char *b = sendbuf + (size_t)nsend * MAX_BYTES;
                    for (int i = 0; i < size; i++)
                        b[i] = pattern(me, tag, seq, round, i);
                    if (hash5(round, me, dst, tag, seq + 100) % 5 == 0)
                        MPI_Issend(b, size, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &sends[nsend++]);
                    else
                        MPI_Isend(b, size, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &sends[nsend++]);
                }
        /* What arrives: from my previous nb ranks. */
        int remaining = 0;
        for (int k = 0; k < nb; k++) {
            sources[k] = ((me - 1 - k) % n + n) % n;
            for (int tag = 0; tag < TAGS; tag++) {
                from[k].next[tag] = 0;
                from[k].total[tag] = message_count(round, sources[k], me, tag);
                remaining += from[k].total[tag];
            }
        }
        MPI_Request unused;
        MPI_Irecv(recvbuf, 1, MPI_BYTE, MPI_ANY_SOURCE, UNUSED_TAG, MPI_COMM_WORLD, &unused);
        for (int step = 0; remaining > 0 && errs == 0; step++) {
            /* A source and tag with something left, chosen at random. */
            uint64_t h = hash5(round, me, step, 7, 7);
            int k = (int)(h % (uint64_t)nb), tag = (int)((h >> 8) % TAGS);
            while (from[k].next[tag] >= from[k].total[tag]) {
                if (++tag == TAGS) {
                    tag = 0;
                    k = (k + 1) % nb;
                }
            }
            int src = sources[k];
            MPI_Status st;
            MPI_Request r;
            int flag = 0, probed_src, probed_tag;
            int kind = (int)((h >> 16) % 5);
            switch (kind) {
            case 0:
                MPI_Irecv(recvbuf, MAX_BYTES, MPI_BYTE, src, tag, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, &st);
                break;
            case 1:
                MPI_Recv(recvbuf, MAX_BYTES, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
                break;
            case 2:
            case 3:
                if (kind == 2) {
                    MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
                } else {
                    while (!flag) {
                        MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st);
                        if (!flag)
                            tu_yield();
                    }
                }
                probed_src = st.MPI_SOURCE;
                probed_tag = st.MPI_TAG;
                int probed_count;
                MPI_Get_count(&st, MPI_BYTE, &probed_count);
                MPI_Recv(recvbuf, probed_count, MPI_BYTE, probed_src, probed_tag, MPI_COMM_WORLD, &st);
                CHECK(st.MPI_SOURCE == probed_src && st.MPI_TAG == probed_tag,
                      "rank %d: probed %d/%d, received %d/%d", me, probed_src, probed_tag, st.MPI_SOURCE,
                      st.MPI_TAG);
                break;
            default:
                MPI_Irecv(recvbuf, MAX_BYTES, MPI_BYTE, src, tag, MPI_COMM_WORLD, &r);
                MPI_Cancel(&r);
                MPI_Wait(&r, &st);
                MPI_Test_cancelled(&st, &flag);
                if (flag)
                    continue;   /* nothing taken: the message is still to come */
                break;
            }
            int j = 0;
            while (j < nb && sources[j] != st.MPI_SOURCE)
                j++;
            if (j == nb) {
                TU_FAIL("rank %d round %d: message from %d, not a neighbour", me, round, st.MPI_SOURCE);
                errs++;
                break;
            }
            errs += check_message(round, me, n, st.MPI_SOURCE, st.MPI_TAG, recvbuf, &st, &from[j]);
            remaining--;
        }
        MPI_Status ust;
        int cancelled = 0;
        MPI_Cancel(&unused);
        MPI_Wait(&unused, &ust);
        MPI_Test_cancelled(&ust, &cancelled);
        CHECK(cancelled, "rank %d round %d: a receive on an unused tag was not cancelled", me, round);
        MPI_Waitall(nsend, sends, MPI_STATUSES_IGNORE);
        /* A sender a round ahead would feed ANY_SOURCE receives of this one. */
        tu_barrier();
    }
    if (errs != 0)      /* the others wait for messages this rank no longer takes */
        MPI_Abort(MPI_COMM_WORLD, 1);
    free(sendbuf);
    free(recvbuf);
    return tu_finish(errs);
}
