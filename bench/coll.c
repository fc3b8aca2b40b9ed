/*
 * coll.c - collective operation latency (Strand benchmark suite).
 *
 * Average time per call, in microseconds, of:
 *   barrier   0        MPI_Barrier
 *   bcast     8, 1 MiB MPI_Bcast of bytes from rank 0
 *   allreduce 8, 1 MiB MPI_Allreduce of doubles, MPI_SUM
 *   alltoall  1 KiB    MPI_Alltoall, 1 KiB to every rank
 *   gather    1 KiB    MPI_Gather to rank 0, 1 KiB from every rank
 * The size column is the message size in bytes (per pair / per rank for
 * alltoall and gather).  The time of one call is the maximum over ranks of
 * the batch time divided by the batch length; batches are time-bound (about
 * --time seconds per operation in all, at most --max-iters calls each) so
 * that large rank counts stay short.  After timing, one more call into
 * cleared buffers is checked on every rank.
 *
 * Output: "OP SIZE MICROSECONDS us".
 * Run:    mpiexec -n N ./coll [--time S] [--reps N] [--max-iters N]
 *                              [--ops barrier,bcast,allreduce,alltoall,gather]
 */
#include "bench.h"

#define COLL_ROOT 0

typedef struct {
    MPI_Comm comm;
    int rank;
    int nprocs;
    int bytes;              /* message size of the current operation */
    unsigned char *send_buf;
    unsigned char *recv_buf;
} coll_ctx;

typedef struct {
    const char *name;
    long bytes;
    bench_kernel kernel;
    void (*prepare)(coll_ctx *c); /* fill send data, clear receive data */
    void (*check)(coll_ctx *c);   /* verify receive data after one call */
} coll_op;

/* ---- data helpers ------------------------------------------------------- */

/* Seed of the block that rank `src` sends to rank `dst`. */
static uint32_t coll_seed(int src, int dst)
{
    return (uint32_t)src * 1000003u + (uint32_t)dst + 7u;
}

static void coll_clear_recv(coll_ctx *c, size_t bytes)
{
    memset(c->recv_buf, 0, bytes);
}

static int coll_doubles(const coll_ctx *c)
{
    return c->bytes / (int)sizeof(double);
}

/* Element i of the allreduce input of `rank`; small integers, so the sum
 * is exact in any order. */
static double coll_allreduce_input(int rank, int i)
{
    return (double)(rank + 1) * (double)(i % 7 + 1);
}

/* ---- kernels ------------------------------------------------------------ */

static void barrier_kernel(void *arg, long iters)
{
    coll_ctx *c = arg;
    for (long i = 0; i < iters; i++)
        MPI_Barrier(c->comm);
}

static void bcast_kernel(void *arg, long iters)
{
    coll_ctx *c = arg;
    unsigned char *buf = c->rank == COLL_ROOT ? c->send_buf : c->recv_buf;
    for (long i = 0; i < iters; i++)
        MPI_Bcast(buf, c->bytes, MPI_BYTE, COLL_ROOT, c->comm);
}

static void allreduce_kernel(void *arg, long iters)
{
    coll_ctx *c = arg;
    for (long i = 0; i < iters; i++)
        MPI_Allreduce(c->send_buf, c->recv_buf, coll_doubles(c), MPI_DOUBLE,
                      MPI_SUM, c->comm);
}

static void alltoall_kernel(void *arg, long iters)
{
    coll_ctx *c = arg;
    for (long i = 0; i < iters; i++)
        MPI_Alltoall(c->send_buf, c->bytes, MPI_BYTE, c->recv_buf, c->bytes,
                     MPI_BYTE, c->comm);
}

static void gather_kernel(void *arg, long iters)
{
    coll_ctx *c = arg;
    for (long i = 0; i < iters; i++)
        MPI_Gather(c->send_buf, c->bytes, MPI_BYTE, c->recv_buf, c->bytes,
                   MPI_BYTE, COLL_ROOT, c->comm);
}

/* ---- prepare / check ---------------------------------------------------- */

static void barrier_prepare(coll_ctx *c) { (void)c; }
static void barrier_check(coll_ctx *c) { (void)c; }

static void bcast_prepare(coll_ctx *c)
{
    if (c->rank == COLL_ROOT)
        bench_fill(c->send_buf, (size_t)c->bytes, coll_seed(COLL_ROOT, 0));
    coll_clear_recv(c, (size_t)c->bytes);
}

static void bcast_check(coll_ctx *c)
{
    if (c->rank != COLL_ROOT)
        bench_check(c->comm, "bcast", c->recv_buf, (size_t)c->bytes,
                    coll_seed(COLL_ROOT, 0));
}

static void allreduce_prepare(coll_ctx *c)
{
    double *in = (double *)c->send_buf;
    for (int i = 0; i < coll_doubles(c); i++)
        in[i] = coll_allreduce_input(c->rank, i);
    coll_clear_recv(c, (size_t)c->bytes);
}

static void allreduce_check(coll_ctx *c)
{
    const double *out = (const double *)c->recv_buf;
    double ranks_sum = 0.5 * (double)c->nprocs * (double)(c->nprocs + 1);
    for (int i = 0; i < coll_doubles(c); i++) {
        double want = ranks_sum * coll_allreduce_input(0, i);
        if (out[i] != want)
            bench_fail(c->comm, "allreduce: element %d is %g, want %g", i,
                       out[i], want);
    }
}

static void alltoall_prepare(coll_ctx *c)
{
    for (int dst = 0; dst < c->nprocs; dst++)
        bench_fill(c->send_buf + (size_t)dst * (size_t)c->bytes,
                   (size_t)c->bytes, coll_seed(c->rank, dst));
    coll_clear_recv(c, (size_t)c->nprocs * (size_t)c->bytes);
}

static void alltoall_check(coll_ctx *c)
{
    for (int src = 0; src < c->nprocs; src++)
        bench_check(c->comm, "alltoall",
                    c->recv_buf + (size_t)src * (size_t)c->bytes,
                    (size_t)c->bytes, coll_seed(src, c->rank));
}

static void gather_prepare(coll_ctx *c)
{
    bench_fill(c->send_buf, (size_t)c->bytes, coll_seed(c->rank, COLL_ROOT));
    coll_clear_recv(c, (size_t)c->nprocs * (size_t)c->bytes);
}

static void gather_check(coll_ctx *c)
{
    if (c->rank != COLL_ROOT)
        return;
    for (int src = 0; src < c->nprocs; src++)
        bench_check(c->comm, "gather",
                    c->recv_buf + (size_t)src * (size_t)c->bytes,
                    (size_t)c->bytes, coll_seed(src, COLL_ROOT));
}

/* ---- driver ------------------------------------------------------------- */

static void coll_run(coll_ctx *c, const coll_op *op, const bench_opts *o)
{
    double per_call;

    c->bytes = (int)op->bytes;
    op->prepare(c);
    per_call = bench_measure(c->comm, op->kernel, c, o,
                             bench_warmup_for(o, c->bytes) / 4);
    op->prepare(c);
    MPI_Barrier(c->comm);
    op->kernel(c, 1);
    op->check(c);
    bench_report(c->comm, op->name, op->bytes, per_call * 1e6, "us");
}

/* Is `name` in the comma-separated list `ops` (NULL = all)? */
static int coll_selected(const char *ops, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = ops; p != NULL; p = strchr(p, ',')) {
        if (*p == ',')
            p++;
        if (!strncmp(p, name, len) && (p[len] == ',' || p[len] == '\0'))
            return 1;
    }
    return ops == NULL;
}

struct coll_options {
    const char *ops;            /* --ops */
    const char *alltoall_sizes; /* --alltoall-sizes */
};

static int coll_parse(void *arg, int argc, char **argv, int *i)
{
    struct coll_options *co = arg;
    if (*i + 1 >= argc)
        return 0;
    if (!strcmp(argv[*i], "--ops"))
        co->ops = argv[++*i];
    else if (!strcmp(argv[*i], "--alltoall-sizes"))
        co->alltoall_sizes = argv[++*i];
    else
        return 0;
    return 1;
}

/* "64,1K,16K" -> sizes (at most max); returns how many. */
static int coll_sizes(const char *list, long *sizes, int max)
{
    int n = 0;
    for (const char *p = list; p != NULL && *p != '\0' && n < max;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (*end == 'K' || *end == 'k')
            v *= BENCH_KIB, end++;
        else if (*end == 'M' || *end == 'm')
            v *= BENCH_MIB, end++;
        if (v > 0)
            sizes[n++] = v;
        p = *end == ',' ? end + 1 : NULL;
    }
    return n;
}

int main(int argc, char **argv)
{
    const coll_op ops[] = {
        {"barrier", 0, barrier_kernel, barrier_prepare, barrier_check},
        {"bcast", 8, bcast_kernel, bcast_prepare, bcast_check},
        {"bcast", BENCH_MIB, bcast_kernel, bcast_prepare, bcast_check},
        {"allreduce", 8, allreduce_kernel, allreduce_prepare, allreduce_check},
        {"allreduce", BENCH_MIB, allreduce_kernel, allreduce_prepare,
         allreduce_check},
        {"alltoall", BENCH_KIB, alltoall_kernel, alltoall_prepare,
         alltoall_check},
        {"gather", BENCH_KIB, gather_kernel, gather_prepare, gather_check},
    };
    const int nops = (int)(sizeof ops / sizeof ops[0]);
    MPI_Comm comm = MPI_COMM_WORLD;
    struct coll_options co = { NULL, NULL };
    bench_opts opts;
    coll_ctx ctx;
    size_t buf_bytes;
    int status;

    MPI_Init(&argc, &argv);
    status = bench_parse_args(comm, argc, argv, &opts,
                              "  --ops LIST      comma-separated subset of"
                              " barrier,bcast,allreduce,alltoall,gather\n"
                              "  --alltoall-sizes LIST  alltoall block sizes instead"
                              " of 1K, e.g. 64,4K,16K\n",
                              coll_parse, &co);
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? 1 : 0;
    }

    bench_header(comm, "coll: average time per collective call,"
                 " max over ranks", &opts);
    ctx.comm = comm;
    ctx.rank = bench_rank(comm);
    ctx.nprocs = bench_nprocs(comm);
    long a2a[16] = { BENCH_KIB };
    int na2a = co.alltoall_sizes != NULL ? coll_sizes(co.alltoall_sizes, a2a, 16) : 1;
    long a2a_max = 0;
    for (int k = 0; k < na2a; k++)
        a2a_max = a2a[k] > a2a_max ? a2a[k] : a2a_max;
    /* largest need: 1 MiB (bcast, allreduce) or nprocs blocks (alltoall) */
    buf_bytes = (size_t)ctx.nprocs * (size_t)a2a_max;
    if (buf_bytes < (size_t)BENCH_MIB)
        buf_bytes = (size_t)BENCH_MIB;
    ctx.send_buf = bench_malloc(comm, buf_bytes);
    ctx.recv_buf = bench_malloc(comm, buf_bytes);
    for (int i = 0; i < nops; i++) {
        if (!coll_selected(co.ops, ops[i].name))
            continue;
        if (ops[i].kernel != alltoall_kernel) {
            coll_run(&ctx, &ops[i], &opts);
            continue;
        }
        for (int k = 0; k < na2a; k++) {
            coll_op sized = ops[i];
            sized.bytes = a2a[k];
            coll_run(&ctx, &sized, &opts);
        }
    }
    free(ctx.send_buf);
    free(ctx.recv_buf);
    MPI_Finalize();
    return 0;
}
