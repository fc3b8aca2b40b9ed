/*
 * bandwidth.c - streaming point-to-point bandwidth (Strand benchmark suite).
 *
 * Rank 0 posts a window of --window (64) MPI_Isend and waits for them all;
 * rank 1 posts the matching MPI_Irecv and waits, then returns a 4-byte ack.
 * One iteration = one window + ack.  Reported value: payload megabytes
 * (10^6 bytes) per second, median over repetitions, for 8 B .. 4 MiB.
 *
 * Each message of a window has its own buffer slot on both sides, as long
 * as window * size stays within --max-mem (default 256 MiB per side);
 * beyond that the slots are reused round-robin.  After timing, one extra
 * window into cleared receive slots checks every slot's contents.
 *
 * Output: "bandwidth SIZE MB_PER_S MB/s".
 * Run:    mpiexec -n 2 ./bandwidth [--window N] [--max-mem B] [--time S]
 */
#include "bench.h"

#define BW_DATA_TAG 23
#define BW_ACK_TAG 24

typedef struct {
    int window;   /* messages in flight per iteration */
    long max_mem; /* bytes of slots per side */
} bw_params;

typedef struct {
    MPI_Comm comm;
    int rank;
    int bytes;
    int window;
    int slots;            /* distinct buffers per side, <= window */
    unsigned char *buf;   /* slots * bytes: send slots on 0, recv on 1 */
    MPI_Request *reqs;    /* window requests */
    MPI_Status *stats;    /* window statuses (not MPI_STATUSES_IGNORE:
                             gcc 12 warns about it with MPICH headers) */
} bw_ctx;

static unsigned char *bw_slot(const bw_ctx *c, int message)
{
    return c->buf + (size_t)(message % c->slots) * (size_t)c->bytes;
}

static uint32_t bw_seed(const bw_ctx *c, int slot)
{
    return (uint32_t)c->bytes * 131u + (uint32_t)slot;
}

static void bw_kernel(void *arg, long iters)
{
    bw_ctx *c = arg;
    int ack = 0;
    for (long i = 0; i < iters; i++) {
        if (c->rank == 0) {
            for (int m = 0; m < c->window; m++)
                MPI_Isend(bw_slot(c, m), c->bytes, MPI_BYTE, 1, BW_DATA_TAG,
                          c->comm, &c->reqs[m]);
            MPI_Waitall(c->window, c->reqs, c->stats);
            MPI_Recv(&ack, 1, MPI_INT, 1, BW_ACK_TAG, c->comm,
                     MPI_STATUS_IGNORE);
        } else if (c->rank == 1) {
            for (int m = 0; m < c->window; m++)
                MPI_Irecv(bw_slot(c, m), c->bytes, MPI_BYTE, 0, BW_DATA_TAG,
                          c->comm, &c->reqs[m]);
            MPI_Waitall(c->window, c->reqs, c->stats);
            MPI_Send(&ack, 1, MPI_INT, 0, BW_ACK_TAG, c->comm);
        }
    }
}

/* Sender fills its slots; receiver clears its slots. */
static void bw_prepare(bw_ctx *c)
{
    if (c->rank > 1)
        return;
    for (int s = 0; s < c->slots; s++) {
        if (c->rank == 0)
            bench_fill(bw_slot(c, s), (size_t)c->bytes, bw_seed(c, s));
        else
            memset(bw_slot(c, s), 0, (size_t)c->bytes);
    }
}

/* One window into cleared slots; the receiver checks every slot. */
static void bw_verify(bw_ctx *c)
{
    if (c->rank == 1)
        memset(c->buf, 0, (size_t)c->slots * (size_t)c->bytes);
    bw_kernel(c, 1);
    if (c->rank == 1)
        for (int s = 0; s < c->slots; s++)
            bench_check(c->comm, "bandwidth", bw_slot(c, s), (size_t)c->bytes,
                        bw_seed(c, s));
}

static void bw_size(bw_ctx *c, const bench_opts *o, const bw_params *p)
{
    long fit = p->max_mem / c->bytes;
    double per_iter;

    c->slots = fit < 1 ? 1 : fit < c->window ? (int)fit : c->window;
    bw_prepare(c);
    /* warm-up counts windows: a quarter of the message count is plenty */
    per_iter = bench_measure(c->comm, bw_kernel, c, o,
                             (bench_warmup_for(o, c->bytes) + 3) / 4);
    bw_verify(c);
    bench_report(c->comm, "bandwidth", c->bytes,
                 (double)c->bytes * c->window / per_iter / 1e6, "MB/s");
}

static int bw_parse(void *arg, int argc, char **argv, int *i)
{
    bw_params *p = arg;
    if (*i + 1 >= argc)
        return 0;
    if (!strcmp(argv[*i], "--window")) {
        p->window = atoi(argv[++*i]);
        return p->window > 0 ? 1 : -1;
    }
    if (!strcmp(argv[*i], "--max-mem")) {
        p->max_mem = bench_parse_size(argv[++*i]);
        return p->max_mem > 0 ? 1 : -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const long sizes[] = {8, 64, 256, BENCH_KIB, 4 * BENCH_KIB,
                          16 * BENCH_KIB, 64 * BENCH_KIB, 256 * BENCH_KIB,
                          BENCH_MIB, 4 * BENCH_MIB};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    MPI_Comm comm = MPI_COMM_WORLD;
    bw_params params = {64, 256 * BENCH_MIB};
    bench_opts opts;
    bw_ctx ctx;
    size_t slot_bytes;
    int status;

    bench_init(&argc, &argv);
    status = bench_parse_args(comm, argc, argv, &opts,
                              "  --window N      messages in flight (64)\n"
                              "  --max-mem B     buffer bytes per side (256M)\n",
                              bw_parse, &params);
    if (status == 0 && bench_nprocs(comm) < 2) {
        if (bench_rank(comm) == 0)
            fprintf(stderr, "bandwidth needs at least 2 ranks\n");
        status = -1;
    }
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? 1 : 0;
    }

    bench_header(comm, "bandwidth: MB/s (1e6 B/s) of a window of MPI_Isend"
                 " -> MPI_Irecv from rank 0 to 1, Waitall + ack", &opts);
    if (bench_rank(comm) == 0)
        printf("# window=%d max_mem=%ld\n", params.window, params.max_mem);
    ctx.comm = comm;
    ctx.rank = bench_rank(comm);
    ctx.window = params.window;
    ctx.reqs = bench_malloc(comm, sizeof *ctx.reqs * (size_t)params.window);
    ctx.stats = bench_malloc(comm, sizeof *ctx.stats * (size_t)params.window);
    slot_bytes = (size_t)params.window * (size_t)opts.max_size;
    if (slot_bytes > (size_t)params.max_mem)
        slot_bytes = (size_t)(params.max_mem > opts.max_size ? params.max_mem
                                                             : opts.max_size);
    if (ctx.rank > 1)
        slot_bytes = 0; /* idle ranks never touch the slots */
    ctx.buf = bench_malloc(comm, slot_bytes);
    for (int s = 0; s < nsizes && sizes[s] <= opts.max_size; s++) {
        if (sizes[s] < opts.min_size)
            continue;
        ctx.bytes = (int)sizes[s];
        bw_size(&ctx, &opts, &params);
    }
    free(ctx.buf);
    free(ctx.reqs);
    free(ctx.stats);
    MPI_Finalize();
    return 0;
}
