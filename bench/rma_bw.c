/*
 * rma_bw.c - one-sided put/get latency and bandwidth by size (Strand
 * benchmark suite). Meant for two node processes (bench/compare --tcp:
 * one rank per process), it runs anywhere with 2+ ranks.
 *
 * Even rank r is the origin, r+1 the target (an odd last rank idles).
 * Every rank exposes a window of WINDOW_BYTES. For each size S (8 B to
 * --max-size, x8 steps), passive target, the origin's time per:
 *   put_lock S  MPI_Win_lock(SHARED), one MPI_Put of S bytes, MPI_Win_unlock
 *   get_lock S  the same with MPI_Get (latency: the data is there after unlock)
 *   put_bw   S  one lock epoch of D puts of S bytes to D disjoint places
 *               (D = 16, fewer when 16 x S exceeds the window), reported as
 *               MB/s (10^6 bytes per second)
 *   get_bw   S  the same with gets
 * After each point the data is checked: the target compares its window
 * with the origin's pattern (puts), the origin its buffer with the
 * target's (gets); a mismatch aborts.
 *
 * Output: "put_lock 8 12.3 us", "put_bw 1048576 950.2 MB/s", ...
 * Run:    mpiexec -n 2 ./rma_bw [--time S] [--reps N] [--max-size BYTES]
 */
#include "bench.h"

#define WINDOW_BYTES (16L * BENCH_MIB)
#define DEPTH_MAX 16

typedef struct {
    MPI_Comm comm;
    MPI_Win win;
    unsigned char *mem;   /* window memory */
    unsigned char *buf;   /* origin buffer: DEPTH_MAX x size */
    int origin, target, peer;
    long size;
    int depth;
} bw_ctx;

/* `iters` lock epochs of `depth` puts or gets each. */
static void epochs(bw_ctx *c, long iters, int depth, int get)
{
    if (!c->origin)
        return;
    for (long i = 0; i < iters; i++) {
        MPI_Win_lock(MPI_LOCK_SHARED, c->peer, 0, c->win);
        for (int k = 0; k < depth; k++) {
            unsigned char *b = c->buf + (size_t)k * (size_t)c->size;
            MPI_Aint disp = (MPI_Aint)k * c->size;
            if (get)
                MPI_Get(b, (int)c->size, MPI_BYTE, c->peer, disp, (int)c->size, MPI_BYTE, c->win);
            else
                MPI_Put(b, (int)c->size, MPI_BYTE, c->peer, disp, (int)c->size, MPI_BYTE, c->win);
        }
        MPI_Win_unlock(c->peer, c->win);
    }
}

static void put_lock_kernel(void *arg, long iters) { epochs(arg, iters, 1, 0); }
static void get_lock_kernel(void *arg, long iters) { epochs(arg, iters, 1, 1); }
static void put_bw_kernel(void *arg, long iters) { epochs(arg, iters, ((bw_ctx *)arg)->depth, 0); }
static void get_bw_kernel(void *arg, long iters) { epochs(arg, iters, ((bw_ctx *)arg)->depth, 1); }

/* After puts: the target's first `depth` places hold the origin's pattern. */
static void check_puts(bw_ctx *c, int depth)
{
    MPI_Barrier(c->comm);
    if (c->target)
        for (int k = 0; k < depth; k++)
            bench_check(c->comm, "put", c->mem + (size_t)k * (size_t)c->size, (size_t)c->size,
                        (uint32_t)(k + 1));
    MPI_Barrier(c->comm);
}

/* Before gets the target lays out its pattern; after them the origin checks. */
static void target_pattern(bw_ctx *c)
{
    MPI_Barrier(c->comm);
    if (c->target)
        for (int k = 0; k < c->depth; k++)
            bench_fill(c->mem + (size_t)k * (size_t)c->size, (size_t)c->size, (uint32_t)(100 + k));
    MPI_Barrier(c->comm);
}

static void check_gets(bw_ctx *c, int depth)
{
    if (c->origin)
        for (int k = 0; k < depth; k++)
            bench_check(c->comm, "get", c->buf + (size_t)k * (size_t)c->size, (size_t)c->size,
                        (uint32_t)(100 + k));
    MPI_Barrier(c->comm);
}

static void origin_pattern(bw_ctx *c)
{
    for (int k = 0; k < c->depth; k++)
        bench_fill(c->buf + (size_t)k * (size_t)c->size, (size_t)c->size, (uint32_t)(k + 1));
}

static void run_size(bw_ctx *c, const bench_opts *o)
{
    long warmup = bench_warmup_for(o, c->size);
    double bytes = (double)c->size * c->depth;
    double t;

    origin_pattern(c);
    t = bench_measure(c->comm, put_lock_kernel, c, o, warmup);
    check_puts(c, 1);
    bench_report(c->comm, "put_lock", c->size, t * 1e6, "us");

    target_pattern(c);
    t = bench_measure(c->comm, get_lock_kernel, c, o, warmup);
    check_gets(c, 1);
    bench_report(c->comm, "get_lock", c->size, t * 1e6, "us");

    origin_pattern(c);
    t = bench_measure(c->comm, put_bw_kernel, c, o, warmup);
    check_puts(c, c->depth);
    bench_report(c->comm, "put_bw", c->size, bytes / t / 1e6, "MB/s");

    target_pattern(c);
    t = bench_measure(c->comm, get_bw_kernel, c, o, warmup);
    check_gets(c, c->depth);
    bench_report(c->comm, "get_bw", c->size, bytes / t / 1e6, "MB/s");
}

int main(int argc, char **argv)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    bench_opts opts;
    bw_ctx c;
    int status;

    MPI_Init(&argc, &argv);
    status = bench_parse_args(comm, argc, argv, &opts, "", NULL, NULL);
    if (status == 0 && bench_nprocs(comm) < 2) {
        if (bench_rank(comm) == 0)
            fprintf(stderr, "rma_bw needs at least 2 ranks\n");
        status = -1;
    }
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? 1 : 0;
    }
    bench_header(comm, "rma_bw: one-sided put/get under MPI_Win_lock(SHARED), even rank -> next odd rank", &opts);
    int rank = bench_rank(comm), nprocs = bench_nprocs(comm);
    memset(&c, 0, sizeof c);
    c.comm = comm;
    c.origin = rank % 2 == 0 && rank + 1 < nprocs;
    c.target = rank % 2 == 1;
    c.peer = c.origin ? rank + 1 : rank - 1;
    long max = opts.max_size < WINDOW_BYTES ? opts.max_size : WINDOW_BYTES;
    MPI_Alloc_mem(WINDOW_BYTES, MPI_INFO_NULL, &c.mem);
    c.buf = bench_malloc(comm, (size_t)WINDOW_BYTES);
    memset(c.mem, 0, (size_t)WINDOW_BYTES);
    MPI_Win_create(c.mem, WINDOW_BYTES, 1, MPI_INFO_NULL, comm, &c.win);
    for (c.size = 8; c.size <= max; c.size *= 8) {
        c.depth = WINDOW_BYTES / c.size < DEPTH_MAX ? (int)(WINDOW_BYTES / c.size) : DEPTH_MAX;
        run_size(&c, &opts);
    }
    MPI_Win_free(&c.win);
    MPI_Free_mem(c.mem);
    free(c.buf);
    MPI_Finalize();
    return 0;
}
