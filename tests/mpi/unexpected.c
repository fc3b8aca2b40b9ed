/*
 * unexpected: messages that arrive before their receive is posted.
 *   1. The sender issues many messages (small, medium and large: 1 MiB
 *      between ranks 0-3, 64 KiB elsewhere) with MPI_Isend, MPI_Issend and
 *      MPI_Bsend, each on its own tag, then a "sent" handshake;
 *      the receiver waits for the handshake, then receives the messages in
 *      a different order (reverse tag order, then the even tags, then the
 *      odd ones).
 *   2. Several messages on the same tag, interleaved with other tags, are
 *      queued while the receiver sleeps; it then receives them tag by tag
 *      (with MPI_ANY_SOURCE) and each tag's messages must come in order.
 *   3. Zero-byte unexpected messages.
 * Data, source, tag and count are checked for every message.  The program
 * is safe: no blocking standard-mode send relies on being buffered.
 *
 * Ranks pair up as (2k, 2k+1), both directions; with an odd rank count the
 * last rank idles.  Minimum ranks: 2.
 */
#include "testutil.h"

#define NMSG 24
#define TAG_SENT 500

static size_t msg_bytes(int k, int big)
{
    switch (k % 6) {
    case 2:
        return 3000 + (size_t)k;
    case 5:
        return big ? (1u << 20) + (size_t)k : 65536 + (size_t)k;
    default:
        return (size_t)(k % 4);
    }
}

static int part1(int sender, int peer, int big)
{
    int errs = 0, k, i, nreq = 0;
    int order[NMSG];
    unsigned char *bufs[NMSG];
    MPI_Request reqs[NMSG + 1];
    MPI_Status st;

    if (sender) {
        int bsize = 0, dsize;
        void *bb, *db;
        for (k = 0; k < NMSG; k++)
            if (k % 4 == 3)
                bsize += (int)msg_bytes(k, big) + MPI_BSEND_OVERHEAD;
        bb = tu_malloc((size_t)bsize);
        CHECK_RC(MPI_Buffer_attach(bb, bsize));
        for (k = 0; k < NMSG; k++) {
            size_t n = msg_bytes(k, big);
            bufs[k] = (unsigned char *)tu_malloc(n);
            tu_fill(bufs[k], n, (unsigned)k);
            if (k % 4 == 3)
                CHECK_RC(MPI_Bsend(bufs[k], (int)n, MPI_BYTE, peer, k + 1,
                                   MPI_COMM_WORLD));
            else if (k % 4 == 1)
                CHECK_RC(MPI_Issend(bufs[k], (int)n, MPI_BYTE, peer, k + 1,
                                    MPI_COMM_WORLD, &reqs[nreq++]));
            else
                CHECK_RC(MPI_Isend(bufs[k], (int)n, MPI_BYTE, peer, k + 1,
                                   MPI_COMM_WORLD, &reqs[nreq++]));
        }
        CHECK_RC(MPI_Isend(NULL, 0, MPI_BYTE, peer, TAG_SENT, MPI_COMM_WORLD,
                           &reqs[nreq++]));
        CHECK_RC(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
        CHECK_RC(MPI_Buffer_detach(&db, &dsize));
        free(bb);
        for (k = 0; k < NMSG; k++)
            free(bufs[k]);
        return errs;
    }

    CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_SENT, MPI_COMM_WORLD,
                      &st));
    tu_sleep_ms(5); /* give large messages time to be announced */
    /* reverse order for the first half, then even, then odd tags */
    for (i = 0, k = NMSG - 1; k >= NMSG / 2; k--)
        order[i++] = k;
    for (k = 0; k < NMSG / 2; k += 2)
        order[i++] = k;
    for (k = 1; k < NMSG / 2; k += 2)
        order[i++] = k;
    for (i = 0; i < NMSG; i++) {
        size_t n;
        unsigned char *buf;
        char what[64];
        k = order[i];
        n = msg_bytes(k, big);
        buf = (unsigned char *)tu_malloc(n + 32);
        tu_guard(buf, n + 32);
        snprintf(what, sizeof what, "unexpected message tag %d", k + 1);
        CHECK_RC(MPI_Recv(buf, (int)n + 32, MPI_BYTE, peer, k + 1,
                          MPI_COMM_WORLD, &st));
        errs += tu_check_status(&st, peer, k + 1, MPI_BYTE, (int)n, what);
        errs += tu_check_data(buf, n, n + 32, (unsigned)k, what);
        free(buf);
    }
    return errs;
}

/* Same tag several times, interleaved with other tags. */
static int part2(int sender, int peer)
{
    enum { NT = 3, PER = 8 };
    int errs = 0, k, t, v[4];
    MPI_Status st;
    if (sender) {
        int sv[PER * NT][4];
        MPI_Request reqs[PER * NT];
        for (k = 0; k < PER; k++)
            for (t = 0; t < NT; t++) {
                int *p = sv[k * NT + t];
                p[0] = t;
                p[1] = k;
                p[2] = 1000 * t + k;
                p[3] = -k;
                CHECK_RC(MPI_Isend(p, 4, MPI_INT, peer, 100 + t,
                                   MPI_COMM_WORLD, &reqs[k * NT + t]));
            }
        CHECK_RC(MPI_Waitall(PER * NT, reqs, MPI_STATUSES_IGNORE));
        return errs;
    }
    tu_sleep_ms(20); /* let them all arrive before any receive */
    for (t = NT - 1; t >= 0; t--)
        for (k = 0; k < PER; k++) {
            CHECK_RC(MPI_Recv(v, 4, MPI_INT, MPI_ANY_SOURCE, 100 + t,
                              MPI_COMM_WORLD, &st));
            errs += tu_check_status(&st, peer, 100 + t, MPI_INT, 4,
                                    "queued same-tag message");
            if (v[0] != t || v[1] != k || v[2] != 1000 * t + k || v[3] != -k)
                errs += TU_FAIL("tag %d: expected message %d, got {%d, %d, "
                                "%d, %d}", 100 + t, k, v[0], v[1], v[2], v[3]);
        }
    return errs;
}

/* Zero-byte messages, queued, then received with a non-empty buffer. */
static int part3(int sender, int peer)
{
    int errs = 0, k, buf[4];
    MPI_Status st;
    if (sender) {
        MPI_Request reqs[6];
        for (k = 0; k < 5; k++)
            CHECK_RC(MPI_Isend(NULL, 0, MPI_INT, peer, 200 + k,
                               MPI_COMM_WORLD, &reqs[k]));
        CHECK_RC(MPI_Isend(NULL, 0, MPI_BYTE, peer, TAG_SENT, MPI_COMM_WORLD,
                           &reqs[5]));
        CHECK_RC(MPI_Waitall(6, reqs, MPI_STATUSES_IGNORE));
        return errs;
    }
    CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_SENT, MPI_COMM_WORLD,
                      &st));
    for (k = 4; k >= 0; k--) {
        buf[0] = buf[1] = buf[2] = buf[3] = 77;
        CHECK_RC(MPI_Recv(buf, 4, MPI_INT, peer, 200 + k, MPI_COMM_WORLD,
                          &st));
        errs += tu_check_status(&st, peer, 200 + k, MPI_INT, 0,
                                "zero-byte message");
        CHECK(buf[0] == 77 && buf[3] == 77,
              "a zero-byte message changed the receive buffer");
    }
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, peer, dir;

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();
    peer = rank ^ 1;
    if (peer < size) {
        int big = tu_big_ok(rank, peer);
        for (dir = 0; dir < 2; dir++) {
            int sender = (rank & 1) == dir;
            errs += part1(sender, peer, big);
            errs += part2(sender, peer);
            errs += part3(sender, peer);
        }
    }
    return tu_finish(errs);
}
