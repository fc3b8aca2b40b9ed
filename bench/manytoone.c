/*
 * manytoone.c - message rate of many senders into one receiver (Strand
 * benchmark suite).
 *
 * Every rank but 0 posts a window of --window (64) MPI_Isend to rank 0 and
 * waits for them all, then for a 4-byte ack; rank 0 posts (np-1) * window
 * MPI_Irecv from MPI_ANY_SOURCE, waits for them all and acks every sender.
 * One iteration = one window from every sender. Reported value: payload
 * megabytes (10^6 bytes) per second into rank 0, median over repetitions,
 * for 8 B .. 4 KiB. The configuration is 8 ranks (7 senders).
 *
 * Checked: one window into cleared slots after timing; rank 0 checks that
 * each sender's messages arrived complete and in order (its slots carry
 * the sender's rank and the message number in their pattern seed).
 *
 * Output: "manytoone SIZE MB_PER_S MB/s".
 * Run:    mpiexec -n 8 ./manytoone [--window N] [--time S]
 */
#include "bench.h"

#define M1_DATA_TAG 25
#define M1_ACK_TAG 26

typedef struct {
    MPI_Comm comm;
    int rank, nprocs, bytes, window;
    unsigned char *buf;   /* window slots on senders, (np-1) * window on 0 */
    MPI_Request *reqs;
    MPI_Status *stats;
} m1_ctx;

static uint32_t m1_seed(const m1_ctx *c, int sender, int message)
{
    return (uint32_t)c->bytes * 977u + (uint32_t)sender * 131u + (uint32_t)message;
}

static void m1_kernel(void *arg, long iters)
{
    m1_ctx *c = arg;
    int ack = 0;
    int total = (c->nprocs - 1) * c->window;
    for (long i = 0; i < iters; i++) {
        if (c->rank == 0) {
            for (int m = 0; m < total; m++)
                MPI_Irecv(c->buf + (size_t)m * (size_t)c->bytes, c->bytes, MPI_BYTE, MPI_ANY_SOURCE,
                          M1_DATA_TAG, c->comm, &c->reqs[m]);
            MPI_Waitall(total, c->reqs, c->stats);
            for (int r = 1; r < c->nprocs; r++)
                MPI_Send(&ack, 1, MPI_INT, r, M1_ACK_TAG, c->comm);
        } else {
            for (int m = 0; m < c->window; m++)
                MPI_Isend(c->buf + (size_t)m * (size_t)c->bytes, c->bytes, MPI_BYTE, 0, M1_DATA_TAG,
                          c->comm, &c->reqs[m]);
            MPI_Waitall(c->window, c->reqs, c->stats);
            MPI_Recv(&ack, 1, MPI_INT, 0, M1_ACK_TAG, c->comm, MPI_STATUS_IGNORE);
        }
    }
}

/* One window into cleared slots: each sender's messages, in the order
 * rank 0 received them, must be its messages 0, 1, 2, ... */
static void m1_verify(m1_ctx *c)
{
    int total = (c->nprocs - 1) * c->window;
    if (c->rank == 0)
        memset(c->buf, 0, (size_t)total * (size_t)c->bytes);
    m1_kernel(c, 1);
    if (c->rank != 0)
        return;
    int *next = bench_malloc(c->comm, sizeof *next * (size_t)c->nprocs);
    memset(next, 0, sizeof *next * (size_t)c->nprocs);
    for (int m = 0; m < total; m++) {
        int src = c->stats[m].MPI_SOURCE;
        if (src < 1 || src >= c->nprocs)
            bench_fail(c->comm, "manytoone: message from rank %d", src);
        bench_check(c->comm, "manytoone", c->buf + (size_t)m * (size_t)c->bytes, (size_t)c->bytes,
                    m1_seed(c, src, next[src]++));
    }
    free(next);
}

static int m1_parse(void *arg, int argc, char **argv, int *i)
{
    int *window = arg;
    if (*i + 1 >= argc || strcmp(argv[*i], "--window"))
        return 0;
    *window = atoi(argv[++*i]);
    return *window > 0 ? 1 : -1;
}

int main(int argc, char **argv)
{
    const long sizes[] = {8, 64, 256, BENCH_KIB, 4 * BENCH_KIB};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    MPI_Comm comm = MPI_COMM_WORLD;
    int window = 64;
    bench_opts opts;
    m1_ctx c;

    bench_init(&argc, &argv);
    int status = bench_parse_args(comm, argc, argv, &opts, "  --window N      messages in flight per sender (64)\n",
                                  m1_parse, &window);
    if (status == 0 && bench_nprocs(comm) < 2) {
        if (bench_rank(comm) == 0)
            fprintf(stderr, "manytoone needs at least 2 ranks\n");
        status = -1;
    }
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? 1 : 0;
    }
    bench_header(comm, "manytoone: MB/s (1e6 B/s) into rank 0 of a window of MPI_Isend from every other rank"
                 " -> MPI_Irecv(MPI_ANY_SOURCE), Waitall + acks", &opts);
    c.comm = comm;
    c.rank = bench_rank(comm);
    c.nprocs = bench_nprocs(comm);
    c.window = window;
    long max = opts.max_size < 4 * BENCH_KIB ? opts.max_size : 4 * BENCH_KIB;
    int slots = c.rank == 0 ? (c.nprocs - 1) * window : window;
    c.buf = bench_malloc(comm, (size_t)slots * (size_t)max);
    c.reqs = bench_malloc(comm, sizeof *c.reqs * (size_t)slots);
    c.stats = bench_malloc(comm, sizeof *c.stats * (size_t)slots);
    for (int s = 0; s < nsizes && sizes[s] <= max; s++) {
        c.bytes = (int)sizes[s];
        if (c.rank != 0)
            for (int m = 0; m < window; m++)
                bench_fill(c.buf + (size_t)m * (size_t)c.bytes, (size_t)c.bytes, m1_seed(&c, c.rank, m));
        double per_iter = bench_measure(comm, m1_kernel, &c, &opts, (bench_warmup_for(&opts, c.bytes) + 3) / 4);
        m1_verify(&c);
        bench_report(comm, "manytoone", c.bytes,
                     (double)c.bytes * window * (c.nprocs - 1) / per_iter / 1e6, "MB/s");
    }
    free(c.buf);
    free(c.reqs);
    free(c.stats);
    MPI_Finalize();
    return 0;
}
