/*
 * rma.c - one-sided (RMA) latency (Strand benchmark suite).
 *
 * Ranks are paired: even rank r is the origin, r+1 the target (an odd last
 * rank stays idle, except that it joins the collective fences).  Each rank
 * exposes one double in a window made with MPI_Alloc_mem + MPI_Win_create.
 * Average time per operation, in microseconds, of:
 *   put_fence  8  MPI_Put of 8 bytes, then MPI_Win_fence on all ranks
 *   put_lock   8  MPI_Win_lock(SHARED), MPI_Put 8 bytes, MPI_Win_unlock
 *   acc_lock   8  MPI_Win_lock(EXCLUSIVE), MPI_Accumulate(SUM) of one
 *                 double, MPI_Win_unlock
 *   put_pscw   8  origin: MPI_Win_start, MPI_Put, MPI_Win_complete;
 *                 target: MPI_Win_post, MPI_Win_wait
 * After each measurement the result is checked: the target (fence, PSCW)
 * or the origin with an MPI_Get (lock) compares the window with the value
 * it must hold; for accumulate that is the exact count of accumulates.
 *
 * Output: "OP 8 MICROSECONDS us".
 * Run:    mpiexec -n 2 ./rma [--time S] [--reps N]
 */
#include "bench.h"

#define RMA_VERIFY_VALUE 4242.25

typedef enum { RMA_ORIGIN, RMA_TARGET, RMA_IDLE } rma_role;

typedef struct {
    MPI_Comm comm;
    MPI_Win win;
    double *local;        /* this rank's window memory: one double */
    rma_role role;
    int peer;             /* target of an origin, origin of a target */
    MPI_Group peer_group; /* group of just the peer (PSCW) */
    double value;         /* origin: the value to put next */
    long accumulated;     /* origin: accumulates done since reset */
} rma_ctx;

/* ---- kernels ------------------------------------------------------------ */

static void put_fence_kernel(void *arg, long iters)
{
    rma_ctx *c = arg;
    for (long i = 0; i < iters; i++) {
        if (c->role == RMA_ORIGIN)
            MPI_Put(&c->value, 1, MPI_DOUBLE, c->peer, 0, 1, MPI_DOUBLE,
                    c->win);
        MPI_Win_fence(0, c->win);
    }
}

static void put_lock_kernel(void *arg, long iters)
{
    rma_ctx *c = arg;
    if (c->role != RMA_ORIGIN)
        return;
    for (long i = 0; i < iters; i++) {
        MPI_Win_lock(MPI_LOCK_SHARED, c->peer, 0, c->win);
        MPI_Put(&c->value, 1, MPI_DOUBLE, c->peer, 0, 1, MPI_DOUBLE, c->win);
        MPI_Win_unlock(c->peer, c->win);
    }
}

static void acc_lock_kernel(void *arg, long iters)
{
    rma_ctx *c = arg;
    double one = 1.0; /* not const: MPI-2.2 buffers are plain void * */
    if (c->role != RMA_ORIGIN)
        return;
    for (long i = 0; i < iters; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->peer, 0, c->win);
        MPI_Accumulate(&one, 1, MPI_DOUBLE, c->peer, 0, 1, MPI_DOUBLE,
                       MPI_SUM, c->win);
        MPI_Win_unlock(c->peer, c->win);
    }
    c->accumulated += iters;
}

static void put_pscw_kernel(void *arg, long iters)
{
    rma_ctx *c = arg;
    for (long i = 0; i < iters; i++) {
        if (c->role == RMA_ORIGIN) {
            MPI_Win_start(c->peer_group, 0, c->win);
            MPI_Put(&c->value, 1, MPI_DOUBLE, c->peer, 0, 1, MPI_DOUBLE,
                    c->win);
            MPI_Win_complete(c->win);
        } else if (c->role == RMA_TARGET) {
            MPI_Win_post(c->peer_group, 0, c->win);
            MPI_Win_wait(c->win);
        }
    }
}

/* ---- checks ------------------------------------------------------------- */

/* Origin: reads the target's double under a shared lock. */
static double rma_read_target(rma_ctx *c)
{
    double got = -1.0;
    MPI_Win_lock(MPI_LOCK_SHARED, c->peer, 0, c->win);
    MPI_Get(&got, 1, MPI_DOUBLE, c->peer, 0, 1, MPI_DOUBLE, c->win);
    MPI_Win_unlock(c->peer, c->win);
    return got;
}

/* Origin: writes the target's double under an exclusive lock. */
static void rma_write_target(rma_ctx *c, double v)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->peer, 0, c->win);
    MPI_Put(&v, 1, MPI_DOUBLE, c->peer, 0, 1, MPI_DOUBLE, c->win);
    MPI_Win_unlock(c->peer, c->win);
}

static void rma_expect(rma_ctx *c, const char *what, double got, double want)
{
    if (got != want)
        bench_fail(c->comm, "%s: window holds %.17g, want %.17g", what, got,
                   want);
}

/* Active target: the target clears its double, then one more round puts a
 * known value, which the target checks in its own memory once the round's
 * epoch has closed. */
static void put_fence_check(rma_ctx *c)
{
    if (c->role == RMA_TARGET)
        *c->local = 0.0;
    MPI_Win_fence(0, c->win); /* orders the store before the next put */
    c->value = RMA_VERIFY_VALUE;
    put_fence_kernel(c, 1);
    if (c->role == RMA_TARGET)
        rma_expect(c, "put_fence", *c->local, RMA_VERIFY_VALUE);
}

static void put_pscw_check(rma_ctx *c)
{
    if (c->role == RMA_TARGET)
        *c->local = 0.0; /* not exposed now; the next post publishes it */
    c->value = RMA_VERIFY_VALUE;
    put_pscw_kernel(c, 1);
    if (c->role == RMA_TARGET)
        rma_expect(c, "put_pscw", *c->local, RMA_VERIFY_VALUE);
}

static void put_lock_check(rma_ctx *c)
{
    if (c->role != RMA_ORIGIN)
        return;
    c->value = RMA_VERIFY_VALUE;
    put_lock_kernel(c, 1);
    rma_expect(c, "put_lock", rma_read_target(c), RMA_VERIFY_VALUE);
}

static void acc_lock_check(rma_ctx *c)
{
    if (c->role == RMA_ORIGIN)
        rma_expect(c, "acc_lock", rma_read_target(c), (double)c->accumulated);
}

/* ---- driver ------------------------------------------------------------- */

static void rma_report(rma_ctx *c, const char *name, double per_op)
{
    bench_report(c->comm, name, (long)sizeof(double), per_op * 1e6, "us");
}

static void rma_run_all(rma_ctx *c, const bench_opts *o)
{
    long warmup = bench_warmup_for(o, 8);
    double t;

    /* put_fence: the window opens with a fence that starts the first epoch */
    MPI_Win_fence(0, c->win);
    c->value = 1.0;
    t = bench_measure(c->comm, put_fence_kernel, c, o, warmup);
    put_fence_check(c);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win);
    rma_report(c, "put_fence", t);

    c->value = 2.0;
    t = bench_measure(c->comm, put_lock_kernel, c, o, warmup);
    put_lock_check(c);
    MPI_Barrier(c->comm);
    rma_report(c, "put_lock", t);

    if (c->role == RMA_ORIGIN)
        rma_write_target(c, 0.0);
    c->accumulated = 0;
    t = bench_measure(c->comm, acc_lock_kernel, c, o, warmup);
    acc_lock_check(c);
    MPI_Barrier(c->comm);
    rma_report(c, "acc_lock", t);

    c->value = 3.0;
    t = bench_measure(c->comm, put_pscw_kernel, c, o, warmup);
    put_pscw_check(c);
    MPI_Barrier(c->comm);
    rma_report(c, "put_pscw", t);
}

static void rma_setup(rma_ctx *c, MPI_Comm comm)
{
    int rank = bench_rank(comm), nprocs = bench_nprocs(comm);
    MPI_Group world;

    c->comm = comm;
    if (rank % 2 == 0 && rank + 1 < nprocs) {
        c->role = RMA_ORIGIN;
        c->peer = rank + 1;
    } else if (rank % 2 == 1) {
        c->role = RMA_TARGET;
        c->peer = rank - 1;
    } else {
        c->role = RMA_IDLE;
        c->peer = MPI_PROC_NULL;
    }
    MPI_Comm_group(comm, &world);
    if (c->role == RMA_IDLE)
        c->peer_group = MPI_GROUP_EMPTY;
    else
        MPI_Group_incl(world, 1, &c->peer, &c->peer_group);
    MPI_Group_free(&world);

    MPI_Alloc_mem((MPI_Aint)sizeof(double), MPI_INFO_NULL, &c->local);
    *c->local = 0.0;
    MPI_Win_create(c->local, (MPI_Aint)sizeof(double), (int)sizeof(double),
                   MPI_INFO_NULL, comm, &c->win);
}

static void rma_teardown(rma_ctx *c)
{
    MPI_Win_free(&c->win);
    MPI_Free_mem(c->local);
    if (c->peer_group != MPI_GROUP_EMPTY)
        MPI_Group_free(&c->peer_group);
}

int main(int argc, char **argv)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    bench_opts opts;
    rma_ctx ctx;
    int status;

    MPI_Init(&argc, &argv);
    status = bench_parse_args(comm, argc, argv, &opts, "", NULL, NULL);
    if (status == 0 && bench_nprocs(comm) < 2) {
        if (bench_rank(comm) == 0)
            fprintf(stderr, "rma needs at least 2 ranks\n");
        status = -1;
    }
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? 1 : 0;
    }

    bench_header(comm, "rma: average latency per RMA operation or epoch,"
                 " even rank -> next odd rank", &opts);
    rma_setup(&ctx, comm);
    rma_run_all(&ctx, &opts);
    rma_teardown(&ctx);
    MPI_Finalize();
    return 0;
}
