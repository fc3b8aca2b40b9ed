/*
 * init_thread_multiple: MPI_Init_thread(MPI_THREAD_MULTIPLE) must provide
 * MPI_THREAD_MULTIPLE; then several threads per rank (the main thread plus
 * NTHREADS-1 pthreads) exchange messages with the partner rank at the same
 * time, each thread on its own tag, using blocking send/recv, Sendrecv,
 * Isend/Irecv/Waitall and Probe+Recv.  Every message is checked (data,
 * source, tag, count).  Also: MPI_Query_thread and MPI_Is_thread_main from
 * the main thread and from the other threads.
 *
 * Ranks pair up as (2k, 2k+1); with an odd rank count the last rank only
 * checks the thread queries.  Minimum ranks: 2.
 */
#include "testutil.h"
#include <pthread.h>

#define NTHREADS 4
#define ITERS 24

struct worker {
    int rank, peer, tid, is_main_thread, big;
    int errs;
};

static int msg_count(const struct worker *w, int it)
{
    if (it % 6 == 5)
        return w->big ? 65536 + w->tid : 2048 + w->tid;
    return 16 + 3 * w->tid + it;
}

static void fill_msg(int *buf, int n, int rank, int tid, int it)
{
    int i;
    for (i = 0; i < n; i++)
        buf[i] = rank * 1000003 + tid * 10007 + it * 101 + i;
}

static int check_msg(const int *buf, int n, int rank, int tid, int it)
{
    int i;
    for (i = 0; i < n; i++) {
        int want = rank * 1000003 + tid * 10007 + it * 101 + i;
        if (buf[i] != want)
            return TU_FAIL("thread %d iteration %d: element %d of %d from "
                           "rank %d: expected %d, got %d",
                           tid, it, i, n, rank, want, buf[i]);
    }
    return 0;
}

static void *worker_main(void *arg)
{
    struct worker *w = (struct worker *)arg;
    int errs = 0, it, flag = -1, level = -1;
    int tag = w->tid + 1;
    int lower = w->rank < w->peer;
    int maxn = w->big ? 65536 + NTHREADS : 2048 + NTHREADS;
    int *sbuf = (int *)tu_malloc(sizeof(int) * maxn);
    int *rbuf = (int *)tu_malloc(sizeof(int) * maxn);

    CHECK_RC(MPI_Is_thread_main(&flag));
    CHECK(!flag == !w->is_main_thread,
          "thread %d: MPI_Is_thread_main gave %d", w->tid, flag);
    CHECK_RC(MPI_Query_thread(&level));
    CHECK_INT("MPI_Query_thread in a thread", MPI_THREAD_MULTIPLE, level);

    for (it = 0; w->peer >= 0 && it < ITERS; it++) {
        int n = msg_count(w, it);
        int src = (it % 2) ? MPI_ANY_SOURCE : w->peer;
        MPI_Status st;
        MPI_Request req[2];
        char what[64];

        snprintf(what, sizeof what, "thread %d iteration %d", w->tid, it);
        fill_msg(sbuf, n, w->rank, w->tid, it);
        memset(rbuf, 0xff, sizeof(int) * maxn);
        switch (it % 4) {
        case 0: /* blocking, ordered so that the pair cannot deadlock */
            if (lower) {
                MPI_Send(sbuf, n, MPI_INT, w->peer, tag, MPI_COMM_WORLD);
                MPI_Recv(rbuf, maxn, MPI_INT, src, tag, MPI_COMM_WORLD, &st);
            } else {
                MPI_Recv(rbuf, maxn, MPI_INT, src, tag, MPI_COMM_WORLD, &st);
                MPI_Send(sbuf, n, MPI_INT, w->peer, tag, MPI_COMM_WORLD);
            }
            break;
        case 1:
            MPI_Sendrecv(sbuf, n, MPI_INT, w->peer, tag, rbuf, maxn, MPI_INT,
                         src, tag, MPI_COMM_WORLD, &st);
            break;
        case 2: {
            MPI_Status sts[2];
            MPI_Irecv(rbuf, maxn, MPI_INT, src, tag, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(sbuf, n, MPI_INT, w->peer, tag, MPI_COMM_WORLD,
                      &req[1]);
            MPI_Waitall(2, req, sts);
            st = sts[0];
            break;
        }
        default: { /* Probe for the size, then receive exactly that */
            int cnt = -1;
            MPI_Isend(sbuf, n, MPI_INT, w->peer, tag, MPI_COMM_WORLD,
                      &req[0]);
            MPI_Probe(src, tag, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &cnt);
            CHECK_INT("probed count", n, cnt);
            if (cnt < 0 || cnt > maxn)
                cnt = maxn;
            MPI_Recv(rbuf, cnt, MPI_INT, st.MPI_SOURCE, st.MPI_TAG,
                     MPI_COMM_WORLD, &st);
            MPI_Wait(&req[0], MPI_STATUS_IGNORE);
            break;
        }
        }
        errs += tu_check_status(&st, w->peer, tag, MPI_INT, n, what);
        errs += check_msg(rbuf, n, w->peer, w->tid, it);
        if (n < maxn && rbuf[n] != -1)
            errs += TU_FAIL("%s: receive wrote past the message", what);
    }
    free(sbuf);
    free(rbuf);
    w->errs = errs;
    return NULL;
}

int main(int argc, char **argv)
{
    int errs = 0, provided = -1, level = -1, rank, size, peer, t;
    struct worker w[NTHREADS];
    pthread_t th[NTHREADS];

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    rank = tu_rank();
    size = tu_size();
    if (provided != MPI_THREAD_MULTIPLE) {
        TU_FAIL("MPI_Init_thread(MPI_THREAD_MULTIPLE) provided %d, expected "
                "%d", provided, MPI_THREAD_MULTIPLE);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    CHECK_RC(MPI_Query_thread(&level));
    CHECK_INT("MPI_Query_thread", MPI_THREAD_MULTIPLE, level);

    peer = rank ^ 1;
    if (peer >= size)
        peer = -1; /* odd rank count: the last rank has no partner */

    for (t = 0; t < NTHREADS; t++) {
        w[t].rank = rank;
        w[t].peer = peer;
        w[t].tid = t;
        w[t].is_main_thread = (t == 0);
        w[t].big = peer >= 0 && tu_big_ok(rank, peer);
        w[t].errs = 0;
    }
    for (t = 1; t < NTHREADS; t++)
        if (pthread_create(&th[t], NULL, worker_main, &w[t]) != 0)
            TU_ABORT("pthread_create failed");
    worker_main(&w[0]); /* the main thread is worker 0 */
    for (t = 1; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    for (t = 0; t < NTHREADS; t++)
        errs += w[t].errs;

    return tu_finish(errs);
}
