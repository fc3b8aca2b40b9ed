/*
 * cancel: MPI_Cancel and MPI_Test_cancelled.
 *   1. An MPI_Irecv that can never match (a tag nobody sends; also one with
 *      MPI_ANY_SOURCE) is cancelled: MPI_Wait returns and MPI_Test_cancelled
 *      says true; the request is freed.
 *   2. A receive that has already completed (seen with
 *      MPI_Request_get_status, which does not free it) is "cancelled":
 *      MPI_Test_cancelled says false and the data and status are intact.
 *   3. MPI_Isend / MPI_Issend / MPI_Ibsend (small and large) to a rank that
 *      does not receive them, then MPI_Cancel + MPI_Wait.  Either outcome is
 *      legal: cancelled = true and the receiver must NOT be able to receive
 *      the message, or cancelled = false and the receiver gets it intact.  A
 *      later message on another tag tells the receiver which to expect.
 *   4. MPI_Cancel + MPI_Request_free on a receive that never matches, then
 *      normal traffic on the same tag still works.
 *
 * Ranks pair up as (2k, 2k+1) (part 3 in both directions); with an odd
 * rank count the last rank does parts 1 and 4 with itself only.
 * Minimum ranks: 1 (the pair parts need 2).
 */
#include "testutil.h"

#define TAG_NEVER 777
#define TAG_DATA 5
#define TAG_VERDICT 6

static int cancel_unmatched_recv(void)
{
    int errs = 0, buf[4], cancelled = -1, src;
    MPI_Request req;
    MPI_Status st;

    for (src = 0; src < 2; src++) {
        int source = src ? MPI_ANY_SOURCE : tu_rank();
        CHECK_RC(MPI_Irecv(buf, 4, MPI_INT, source, TAG_NEVER,
                           MPI_COMM_WORLD, &req));
        CHECK_RC(MPI_Cancel(&req));
        CHECK(req != MPI_REQUEST_NULL, "MPI_Cancel freed the request");
        CHECK_RC(MPI_Wait(&req, &st));
        CHECK(req == MPI_REQUEST_NULL, "Wait did not free a cancelled "
              "request");
        cancelled = -1;
        CHECK_RC(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled, "unmatched Irecv (source %d): Test_cancelled gave "
              "false", source);
    }

    /* Cancel then MPI_Request_free; then the tag works normally. */
    CHECK_RC(MPI_Irecv(buf, 4, MPI_INT, MPI_ANY_SOURCE, TAG_NEVER,
                       MPI_COMM_WORLD, &req));
    CHECK_RC(MPI_Cancel(&req));
    CHECK_RC(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "Request_free did not set "
          "MPI_REQUEST_NULL");
    {
        int out[4] = {9, 8, 7, 6};
        MPI_Request r2;
        CHECK_RC(MPI_Irecv(buf, 4, MPI_INT, tu_rank(), TAG_NEVER,
                           MPI_COMM_WORLD, &r2));
        CHECK_RC(MPI_Send(out, 4, MPI_INT, tu_rank(), TAG_NEVER,
                          MPI_COMM_WORLD));
        CHECK_RC(MPI_Wait(&r2, &st));
        errs += tu_check_status(&st, tu_rank(), TAG_NEVER, MPI_INT, 4,
                                "receive after a cancelled one");
        CHECK(buf[0] == 9 && buf[3] == 6, "data after a cancelled receive: "
              "%d..%d", buf[0], buf[3]);
        cancelled = -1;
        CHECK_RC(MPI_Test_cancelled(&st, &cancelled));
        CHECK(!cancelled, "a normal receive says it was cancelled");
    }
    return errs;
}

static int cancel_completed_recv(int sender, int peer)
{
    int errs = 0, v[3] = {42, 43, 44}, flag = 0, cancelled = -1;
    MPI_Request req;
    MPI_Status st;

    if (sender) {
        CHECK_RC(MPI_Send(v, 3, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD));
        return errs;
    }
    v[0] = v[1] = v[2] = 0;
    CHECK_RC(MPI_Irecv(v, 3, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req));
    while (!flag) {
        CHECK_RC(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
        if (!flag)
            tu_yield();
    }
    CHECK_RC(MPI_Cancel(&req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK_RC(MPI_Test_cancelled(&st, &cancelled));
    CHECK(!cancelled, "cancel of a completed receive succeeded");
    errs += tu_check_status(&st, peer, TAG_DATA, MPI_INT, 3,
                            "completed-then-cancelled receive");
    CHECK(v[0] == 42 && v[1] == 43 && v[2] == 44,
          "completed-then-cancelled receive: data {%d, %d, %d}", v[0], v[1],
          v[2]);
    return errs;
}

enum { K_ISEND, K_ISSEND, K_IBSEND, NKINDS };
static const char *const kind_name[NKINDS] = {"Isend", "Issend", "Ibsend"};

/* One send that is cancelled before the peer looks for it. */
static int cancel_send(int sender, int peer, int kind, int n, int tag)
{
    int errs = 0, cancelled = -1;
    char what[80];
    unsigned char *buf = (unsigned char *)tu_malloc((size_t)n + 16);
    MPI_Status st;

    snprintf(what, sizeof what, "cancelled %s of %d bytes", kind_name[kind],
             n);
    if (sender) {
        MPI_Request req;
        void *bb = NULL, *db;
        int bsize = n + MPI_BSEND_OVERHEAD, dsize;
        tu_fill(buf, (size_t)n, (unsigned)tag);
        if (kind == K_IBSEND) {
            bb = tu_malloc((size_t)bsize);
            CHECK_RC(MPI_Buffer_attach(bb, bsize));
            CHECK_RC(MPI_Ibsend(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                                &req));
        } else if (kind == K_ISSEND)
            CHECK_RC(MPI_Issend(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                                &req));
        else
            CHECK_RC(MPI_Isend(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                               &req));
        CHECK_RC(MPI_Cancel(&req));
        /* After MPI_Cancel, a wait is local (MPI-2.2 3.8.4): polling
         * MPI_Test must succeed even though the receiver has not posted a
         * receive.  If it does not within the time limit (see
         * TU_SEND_CANCEL_QUIRKS), the verdict is "pending" and the
         * receiver receives the message so that the send can finish. */
        {
            double t0 = MPI_Wtime();
            double limit = TU_SEND_CANCEL_QUIRKS ? 0.02 : 5.0;
            int flag = 0;
            while (!flag) {
                CHECK_RC(MPI_Test(&req, &flag, &st));
                if (!flag && MPI_Wtime() - t0 > limit)
                    break;
                if (!flag)
                    tu_sleep_ms(1);
            }
            if (flag) {
                CHECK_RC(MPI_Test_cancelled(&st, &cancelled));
                cancelled = cancelled != 0;
            } else {
                if (!TU_SEND_CANCEL_QUIRKS)
                    errs += TU_FAIL("%s: MPI_Test after MPI_Cancel did not "
                                    "complete within %g s while the receiver "
                                    "waits", what, limit);
                cancelled = 2;
            }
            /* tell the receiver what to expect */
            CHECK_RC(MPI_Send(&cancelled, 1, MPI_INT, peer, TAG_VERDICT,
                              MPI_COMM_WORLD));
            if (!flag) {
                CHECK_RC(MPI_Wait(&req, &st));
                CHECK_RC(MPI_Test_cancelled(&st, &cancelled));
                CHECK(!cancelled, "%s: the receiver got the message, but "
                      "the send says it was cancelled", what);
            }
        }
        if (kind == K_IBSEND) {
            CHECK_RC(MPI_Buffer_detach(&db, &dsize));
            free(bb);
        }
    } else {
        int i, flag;
        CHECK_RC(MPI_Recv(&cancelled, 1, MPI_INT, peer, TAG_VERDICT,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (cancelled == 1) {
            /* It must not arrive, however long we look.  (Never receive it:
             * with a broken cancel the data may be gone.) */
            for (i = 0; i < 20; i++) {
                flag = -1;
                CHECK_RC(MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, &st));
                if (flag) {
                    if (!TU_SEND_CANCEL_QUIRKS)
                        errs += TU_FAIL("%s: sender says cancelled, but "
                                        "MPI_Iprobe finds the message", what);
                    break;
                }
                if (i % 5 == 4)
                    tu_sleep_ms(1);
            }
        } else {
            /* not cancelled (0), or still pending after the cancel (2) */
            tu_guard(buf, (size_t)n + 16);
            CHECK_RC(MPI_Recv(buf, n + 16, MPI_BYTE, peer, tag,
                              MPI_COMM_WORLD, &st));
            errs += tu_check_status(&st, peer, tag, MPI_BYTE, n, what);
            errs += tu_check_data(buf, (size_t)n, (size_t)n + 16,
                                  (unsigned)tag, what);
        }
    }
    free(buf);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, peer, dir, kind, s;

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();
    peer = rank ^ 1;
    errs += cancel_unmatched_recv();
    if (peer < size) {
        int sizes[3] = {8, 2000, 65536};
        if (tu_big_ok(rank, peer))
            sizes[2] = 1 << 20;
        for (dir = 0; dir < 2; dir++) {
            int sender = (rank & 1) == dir;
            errs += cancel_completed_recv(sender, peer);
            for (kind = 0; kind < NKINDS; kind++)
                for (s = 0; s < 3; s++)
                    errs += cancel_send(sender, peer, kind, sizes[s],
                                        100 + kind * 10 + s);
        }
    }
    return tu_finish(errs);
}
