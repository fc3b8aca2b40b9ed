/*
 * ordering: the non-overtaking rule (MPI-2.2 3.5).
 *   A. Many messages with the same (source, tag), small, medium and large
 *      (1 MiB between ranks 0-3, 32 KiB elsewhere) mixed so that an eager
 *      small message follows a large one, sent with a mix of MPI_Send,
 *      MPI_Isend and MPI_Ssend, received (1) one at a time as they come,
 *      (2) by receives all posted before the first send (posted receives
 *      match in the order they were posted), and (3) after all of them were
 *      sent (unexpected messages), with MPI_ANY_TAG.
 *   B. MPI_ANY_SOURCE receives from several senders keep each sender's
 *      order (groups of up to 4 ranks: one receiver, up to 3 senders).
 *   C. MPI_ANY_TAG receives see a sender's messages in sending order
 *      whatever their tags; receives for one tag skip the messages with
 *      other tags but keep that tag's order.
 *
 * Ranks pair up as (2k, 2k+1) for A and C; with an odd rank count the last
 * rank takes part in B only.  Minimum ranks: 2.
 */
#include "testutil.h"

#define NMSG 60
#define TAG_A 5
#define TAG_A_DONE 6
#define TAG_B 9
#define TAG_GO 10
#define TAG_C2_BASE 20 /* tags 21..33 for part C */

/* Size in bytes of message k of part A (at least one int). */
static size_t msg_bytes(int k, int big)
{
    if (k % 10 == 3)
        return big ? (1u << 20) + 4 : 32768 + 4;
    if (k % 10 == 7)
        return 16384;
    return sizeof(int) * (size_t)(1 + k % 5);
}

/* Message k: first int is k, the rest a pattern. */
static void make_msg(unsigned char *buf, size_t n, int k)
{
    tu_fill(buf, n, 1000u + (unsigned)k);
    memcpy(buf, &k, sizeof k);
}

static int check_msg(const unsigned char *buf, MPI_Status *st,
                     int expect_k, int big, int peer, int tag,
                     const char *what)
{
    int errs = 0, k, count = -1;
    size_t n = msg_bytes(expect_k, big);
    char w[96];
    memcpy(&k, buf, sizeof k);
    if (k != expect_k)
        return TU_FAIL("%s: expected message %d, got message %d (overtaken)",
                       what, expect_k, k);
    snprintf(w, sizeof w, "%s, message %d", what, k);
    MPI_Get_count(st, MPI_BYTE, &count);
    if (count != (int)n)
        errs += TU_FAIL("%s: count %d bytes, expected %zu", w, count, n);
    if (st->MPI_SOURCE != peer || st->MPI_TAG != tag)
        errs += TU_FAIL("%s: source/tag %d/%d, expected %d/%d", w,
                        st->MPI_SOURCE, st->MPI_TAG, peer, tag);
    /* compare all but the leading sequence number */
    {
        unsigned char *ref = (unsigned char *)tu_malloc(n);
        make_msg(ref, n, k);
        if (memcmp(ref, buf, n) != 0)
            errs += TU_FAIL("%s: payload differs", w);
        free(ref);
    }
    return errs;
}

/* Sender side of part A.  how: 0 = mix Send/Isend/Ssend as we go,
 * 1 = all Isend. */
static int send_all(int peer, int big, int how)
{
    int errs = 0, k, nreq = 0;
    unsigned char *bufs[NMSG];
    MPI_Request reqs[NMSG];
    for (k = 0; k < NMSG; k++) {
        size_t n = msg_bytes(k, big);
        bufs[k] = (unsigned char *)tu_malloc(n);
        make_msg(bufs[k], n, k);
        if (how == 1 || k % 3 == 1)
            CHECK_RC(MPI_Isend(bufs[k], (int)n, MPI_BYTE, peer, TAG_A,
                               MPI_COMM_WORLD, &reqs[nreq++]));
        else if (k % 3 == 0)
            CHECK_RC(MPI_Send(bufs[k], (int)n, MPI_BYTE, peer, TAG_A,
                              MPI_COMM_WORLD));
        else
            CHECK_RC(MPI_Ssend(bufs[k], (int)n, MPI_BYTE, peer, TAG_A,
                               MPI_COMM_WORLD));
    }
    if (how == 1) /* everything is issued: tell the receiver */
        CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_A_DONE,
                          MPI_COMM_WORLD));
    CHECK_RC(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    for (k = 0; k < NMSG; k++)
        free(bufs[k]);
    return errs;
}

static int part_a(int sender, int peer, int big)
{
    int errs = 0, k;
    size_t maxn = msg_bytes(3, big);
    unsigned char *buf;
    MPI_Status st;

    /* (1) receive one at a time as they come */
    if (sender)
        errs += send_all(peer, big, 0);
    else {
        buf = (unsigned char *)tu_malloc(maxn);
        for (k = 0; k < NMSG; k++) {
            CHECK_RC(MPI_Recv(buf, (int)maxn, MPI_BYTE, peer, TAG_A,
                              MPI_COMM_WORLD, &st));
            errs += check_msg(buf, &st, k, big, peer, TAG_A, "A1 in turn");
        }
        free(buf);
    }

    /* (2) all receives posted before the first send */
    if (sender) {
        CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        errs += send_all(peer, big, 0);
    } else {
        unsigned char *bufs[NMSG];
        MPI_Request reqs[NMSG];
        MPI_Status sts[NMSG];
        for (k = 0; k < NMSG; k++) {
            /* each receive is sized for the message it must match: an
             * out-of-order match shows up as a data or truncation error */
            bufs[k] = (unsigned char *)tu_malloc(msg_bytes(k, big) + 64);
            CHECK_RC(MPI_Irecv(bufs[k], (int)msg_bytes(k, big) + 64,
                               MPI_BYTE, peer, TAG_A, MPI_COMM_WORLD,
                               &reqs[k]));
        }
        CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD));
        CHECK_RC(MPI_Waitall(NMSG, reqs, sts));
        for (k = 0; k < NMSG; k++) {
            errs += check_msg(bufs[k], &sts[k], k, big, peer, TAG_A,
                              "A2 pre-posted");
            free(bufs[k]);
        }
    }

    /* (3) everything sent before the first receive; MPI_ANY_TAG */
    if (sender)
        errs += send_all(peer, big, 1);
    else {
        CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_A_DONE,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        buf = (unsigned char *)tu_malloc(maxn);
        for (k = 0; k < NMSG; k++) {
            CHECK_RC(MPI_Recv(buf, (int)maxn, MPI_BYTE, peer, MPI_ANY_TAG,
                              MPI_COMM_WORLD, &st));
            errs += check_msg(buf, &st, k, big, peer, TAG_A, "A3 unexpected");
        }
        free(buf);
    }
    return errs;
}

/* B: ANY_SOURCE from up to 3 senders to the group leader. */
#define NB 30
static int part_b(int rank, int size)
{
    int errs = 0, leader = rank - rank % 4, nsend, k, r;
    int next[4] = {0, 0, 0, 0};
    enum { SMALL = 2, LARGE = 2048 };
    int *buf = (int *)tu_malloc(sizeof(int) * LARGE);
    nsend = size - leader - 1;
    if (nsend > 3)
        nsend = 3;

    if (rank != leader) {
        for (k = 0; k < NB; k++) {
            int n = (k % 7 == 3) ? LARGE : SMALL;
            for (r = 0; r < n; r++)
                buf[r] = rank * 1000 + k + r;
            buf[0] = rank;
            buf[1] = k;
            CHECK_RC(MPI_Send(buf, n, MPI_INT, leader, TAG_B,
                              MPI_COMM_WORLD));
        }
        free(buf);
        return errs;
    }
    /* first half with blocking receives, the rest with batches of Irecv:
     * posted receives are matched in the order they were posted */
    for (k = 0; k < nsend * NB;) {
        MPI_Status st;
        if (k < nsend * NB / 2) {
            CHECK_RC(MPI_Recv(buf, LARGE, MPI_INT, MPI_ANY_SOURCE, TAG_B,
                              MPI_COMM_WORLD, &st));
            k++;
        } else {
            enum { BATCH = 5 };
            int *bb[BATCH], j, nb = nsend * NB - k;
            MPI_Request reqs[BATCH];
            MPI_Status sts[BATCH];
            if (nb > BATCH)
                nb = BATCH;
            for (j = 0; j < nb; j++) {
                bb[j] = (int *)tu_malloc(sizeof(int) * LARGE);
                CHECK_RC(MPI_Irecv(bb[j], LARGE, MPI_INT, MPI_ANY_SOURCE,
                                   TAG_B, MPI_COMM_WORLD, &reqs[j]));
            }
            CHECK_RC(MPI_Waitall(nb, reqs, sts));
            for (j = 0; j < nb; j++) {
                int src = sts[j].MPI_SOURCE, idx = src - leader;
                if (idx < 1 || idx > nsend || bb[j][0] != src) {
                    errs += TU_FAIL("B: message from source %d claims to be "
                                    "from %d", src, bb[j][0]);
                    continue;
                }
                if (bb[j][1] != next[idx])
                    errs += TU_FAIL("B: from rank %d expected message %d, "
                                    "got %d", src, next[idx], bb[j][1]);
                next[idx] = bb[j][1] + 1;
            }
            for (j = 0; j < nb; j++)
                free(bb[j]);
            k += nb;
            continue;
        }
        {
            int src = st.MPI_SOURCE, idx = src - leader, cnt = -1;
            if (idx < 1 || idx > nsend || buf[0] != src) {
                errs += TU_FAIL("B: message from source %d claims to be from "
                                "%d", src, buf[0]);
                continue;
            }
            if (buf[1] != next[idx])
                errs += TU_FAIL("B: from rank %d expected message %d, got %d",
                                src, next[idx], buf[1]);
            MPI_Get_count(&st, MPI_INT, &cnt);
            CHECK_INT("B: count", (buf[1] % 7 == 3) ? LARGE : SMALL, cnt);
            next[idx] = buf[1] + 1;
        }
    }
    for (r = 1; r <= nsend; r++)
        CHECK_INT("B: messages received from one sender", NB, next[r]);
    free(buf);
    return errs;
}

/* C: ANY_TAG keeps sending order across tags; a specific tag keeps its own
 * order while skipping others. */
static int part_c(int sender, int peer)
{
    int errs = 0, k, v;
    enum { NC = 40 };
    MPI_Status st;
    if (sender) {
        for (k = 0; k < NC; k++) {
            int tag = TAG_C2_BASE + 1 + (k * 7) % 13;
            CHECK_RC(MPI_Send(&k, 1, MPI_INT, peer, tag, MPI_COMM_WORLD));
        }
        /* then tags 1 and 2 alternating, read back tag by tag (Isend: a
         * blocking send need not complete before its receive is posted) */
        {
            int vals[10];
            MPI_Request reqs[10];
            for (k = 0; k < 10; k++) {
                vals[k] = k;
                CHECK_RC(MPI_Isend(&vals[k], 1, MPI_INT, peer, 1 + k % 2,
                                   MPI_COMM_WORLD, &reqs[k]));
            }
            CHECK_RC(MPI_Waitall(10, reqs, MPI_STATUSES_IGNORE));
        }
        return errs;
    }
    for (k = 0; k < NC; k++) {
        int tag = TAG_C2_BASE + 1 + (k * 7) % 13;
        v = -1;
        CHECK_RC(MPI_Recv(&v, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD,
                          &st));
        if (v != k || st.MPI_TAG != tag)
            errs += TU_FAIL("C: ANY_TAG receive %d got message %d with tag "
                            "%d, expected tag %d", k, v, st.MPI_TAG, tag);
    }
    for (k = 1; k < 10; k += 2) {
        v = -1;
        CHECK_RC(MPI_Recv(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &st));
        CHECK_INT("C: tag 2 message", k, v);
    }
    for (k = 0; k < 10; k += 2) {
        v = -1;
        CHECK_RC(MPI_Recv(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
        CHECK_INT("C: tag 1 message", k, v);
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
            errs += part_a(sender, peer, big);
            errs += part_c(sender, peer);
        }
    }
    errs += part_b(rank, size);
    return tu_finish(errs);
}
