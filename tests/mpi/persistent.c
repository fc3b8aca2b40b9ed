/*
 * persistent: persistent requests.
 *   - MPI_Send_init, MPI_Bsend_init, MPI_Ssend_init, MPI_Rsend_init and
 *     MPI_Recv_init, started 100 times with MPI_Start / MPI_Startall while
 *     the data in the buffers changes every iteration; each round's data,
 *     source, tag and count are checked (the receives are started and a
 *     "ready" message sent before the sender starts, so Rsend is legal).
 *   - A completed persistent request stays allocated (not MPI_REQUEST_NULL)
 *     and is inactive: MPI_Wait / MPI_Test on it return at once with an
 *     empty status.
 *   - MPI_Request_free on inactive persistent requests, never started and
 *     after completion, sets the handle to MPI_REQUEST_NULL.
 *   - Persistent requests to and from MPI_PROC_NULL.
 *
 * Ranks pair up as (2k, 2k+1): the even rank sends, the odd receives, then
 * the other way round.  With an odd rank count the last rank only does the
 * local parts.  Minimum ranks: 1 (the pair parts need 2).
 */
#include "testutil.h"

#define ITERS 100
#define TAG_READY 50
#define NKIND 4 /* Send, Bsend, Ssend, Rsend */

static int value(int it, int kind, int i)
{
    return it * 100003 + kind * 1009 + i * 7;
}

static int exchange(int sender, int peer, int n)
{
    int errs = 0, it, k, i;
    int *bufs[NKIND];
    MPI_Request reqs[NKIND];
    MPI_Status sts[NKIND];

    for (k = 0; k < NKIND; k++)
        bufs[k] = (int *)tu_malloc(sizeof(int) * (size_t)(n + 4));

    if (sender) {
        int bsize = 2 * (n * (int)sizeof(int) + MPI_BSEND_OVERHEAD), dsize;
        void *bb = tu_malloc((size_t)bsize), *db;
        CHECK_RC(MPI_Buffer_attach(bb, bsize));
        CHECK_RC(MPI_Send_init(bufs[0], n, MPI_INT, peer, 1, MPI_COMM_WORLD,
                               &reqs[0]));
        CHECK_RC(MPI_Bsend_init(bufs[1], n, MPI_INT, peer, 2, MPI_COMM_WORLD,
                                &reqs[1]));
        CHECK_RC(MPI_Ssend_init(bufs[2], n, MPI_INT, peer, 3, MPI_COMM_WORLD,
                                &reqs[2]));
        CHECK_RC(MPI_Rsend_init(bufs[3], n, MPI_INT, peer, 4, MPI_COMM_WORLD,
                                &reqs[3]));
        for (it = 0; it < ITERS; it++) {
            for (k = 0; k < NKIND; k++)
                for (i = 0; i < n; i++)
                    bufs[k][i] = value(it, k, i);
            CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_READY,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            if (it % 2) {
                CHECK_RC(MPI_Startall(NKIND, reqs));
            } else {
                for (k = NKIND - 1; k >= 0; k--)
                    CHECK_RC(MPI_Start(&reqs[k]));
            }
            CHECK_RC(MPI_Waitall(NKIND, reqs, sts));
            for (k = 0; k < NKIND; k++)
                if (reqs[k] == MPI_REQUEST_NULL) {
                    errs += TU_FAIL("iteration %d: Waitall freed persistent "
                                    "send request %d", it, k);
                    TU_ABORT("cannot go on without the request");
                }
        }
        for (k = 0; k < NKIND; k++) {
            CHECK_RC(MPI_Request_free(&reqs[k]));
            CHECK(reqs[k] == MPI_REQUEST_NULL, "Request_free of send "
                  "request %d did not set MPI_REQUEST_NULL", k);
        }
        CHECK_RC(MPI_Buffer_detach(&db, &dsize));
        free(bb);
    } else {
        for (k = 0; k < NKIND; k++)
            CHECK_RC(MPI_Recv_init(bufs[k], n + 4, MPI_INT, peer, k + 1,
                                   MPI_COMM_WORLD, &reqs[k]));
        for (it = 0; it < ITERS; it++) {
            for (k = 0; k < NKIND; k++)
                for (i = 0; i < n + 4; i++)
                    bufs[k][i] = -1;
            if (it % 3 == 0) {
                for (k = 0; k < NKIND; k++)
                    CHECK_RC(MPI_Start(&reqs[k]));
            } else
                CHECK_RC(MPI_Startall(NKIND, reqs));
            CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_READY,
                              MPI_COMM_WORLD));
            if (it % 2) {
                CHECK_RC(MPI_Waitall(NKIND, reqs, sts));
            } else {
                for (k = 0; k < NKIND; k++) {
                    int flag = 0;
                    while (!flag) {
                        CHECK_RC(MPI_Test(&reqs[k], &flag, &sts[k]));
                        if (!flag)
                            tu_yield();
                    }
                }
            }
            for (k = 0; k < NKIND; k++) {
                char what[64];
                if (reqs[k] == MPI_REQUEST_NULL) {
                    errs += TU_FAIL("iteration %d: completion freed "
                                    "persistent receive %d", it, k);
                    TU_ABORT("cannot go on without the request");
                }
                snprintf(what, sizeof what, "iteration %d, request %d", it,
                         k);
                errs += tu_check_status(&sts[k], peer, k + 1, MPI_INT, n,
                                        what);
                for (i = 0; i < n; i++)
                    if (bufs[k][i] != value(it, k, i)) {
                        errs += TU_FAIL("%s: element %d expected %d, got %d",
                                        what, i, value(it, k, i),
                                        bufs[k][i]);
                        break;
                    }
                for (i = n; i < n + 4; i++)
                    if (bufs[k][i] != -1) {
                        errs += TU_FAIL("%s: wrote past the message", what);
                        break;
                    }
            }
        }
        /* Inactive requests: wait and test return an empty status. */
        {
            MPI_Status st;
            int flag = 0;
            CHECK_RC(MPI_Wait(&reqs[0], &st));
            errs += tu_check_empty_status(&st, "Wait on inactive request");
            CHECK(reqs[0] != MPI_REQUEST_NULL,
                  "Wait on an inactive persistent request freed it");
            CHECK_RC(MPI_Test(&reqs[1], &flag, &st));
            CHECK(flag, "Test on an inactive request gave flag 0");
            errs += tu_check_empty_status(&st, "Test on inactive request");
            CHECK_RC(MPI_Waitall(NKIND, reqs, sts));
            for (k = 0; k < NKIND; k++)
                errs += tu_check_empty_status(&sts[k],
                                              "Waitall on inactive requests");
        }
        for (k = 0; k < NKIND; k++) {
            CHECK_RC(MPI_Request_free(&reqs[k]));
            CHECK(reqs[k] == MPI_REQUEST_NULL, "Request_free of receive "
                  "request %d did not set MPI_REQUEST_NULL", k);
        }
    }
    for (k = 0; k < NKIND; k++)
        free(bufs[k]);
    return errs;
}

/* Never-started persistent requests can be freed; PROC_NULL ones work. */
static int local_parts(void)
{
    int errs = 0, buf[8] = {0}, it, i;
    MPI_Request r[5];
    MPI_Status sts[2];

    CHECK_RC(MPI_Send_init(buf, 8, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Bsend_init(buf, 8, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[1]));
    CHECK_RC(MPI_Ssend_init(buf, 8, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[2]));
    CHECK_RC(MPI_Rsend_init(buf, 8, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[3]));
    CHECK_RC(MPI_Recv_init(buf, 8, MPI_INT, MPI_ANY_SOURCE, 1,
                           MPI_COMM_WORLD, &r[4]));
    for (i = 0; i < 5; i++) {
        CHECK(r[i] != MPI_REQUEST_NULL, "*_init gave MPI_REQUEST_NULL");
        CHECK_RC(MPI_Request_free(&r[i]));
        CHECK(r[i] == MPI_REQUEST_NULL, "Request_free of a never-started "
              "request did not set MPI_REQUEST_NULL");
    }

    CHECK_RC(MPI_Send_init(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD,
                           &r[0]));
    CHECK_RC(MPI_Recv_init(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD,
                           &r[1]));
    for (it = 0; it < 3; it++) {
        for (i = 0; i < 8; i++)
            buf[i] = it + i;
        CHECK_RC(MPI_Startall(2, r));
        CHECK_RC(MPI_Waitall(2, r, sts));
        if (!TU_MPICH_PROCNULL_BUG)
            errs += tu_check_procnull_status(&sts[1], "persistent receive "
                                             "from MPI_PROC_NULL");
        for (i = 0; i < 8; i++)
            CHECK(buf[i] == it + i, "receive from MPI_PROC_NULL changed the "
                  "buffer");
    }
    CHECK_RC(MPI_Request_free(&r[0]));
    CHECK_RC(MPI_Request_free(&r[1]));
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, peer, dir;

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();
    peer = rank ^ 1;
    errs += local_parts();
    if (peer < size) {
        int n = tu_big_ok(rank, peer) ? 20000 : 300;
        for (dir = 0; dir < 2; dir++)
            errs += exchange((rank & 1) == dir, peer, n);
    }
    return tu_finish(errs);
}
