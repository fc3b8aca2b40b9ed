/*
 * pingpong.c - point-to-point latency (Strand benchmark suite).
 *
 * Ranks 0 and 1 bounce one message back and forth with blocking
 * MPI_Send/MPI_Recv; other ranks, if any, stay idle.  Reported value: the
 * one-way latency, half of the median round-trip time, in microseconds,
 * for message sizes 0 B .. 4 MiB.
 *
 * Each size: warm-up, then the iteration count is calibrated so that the
 * size takes about --time seconds in all, split over --reps repetitions.
 * After timing, one extra round trip with cleared receive buffers checks
 * that both ranks received the right bytes.
 *
 * Output: "pingpong SIZE MICROSECONDS us".
 * Run:    mpiexec -n 2 ./pingpong [--time S] [--reps N] [--max-size B]
 */
#include "bench.h"

#define PINGPONG_TAG 17

typedef struct {
    MPI_Comm comm;
    int rank;
    int bytes;
    unsigned char *send_buf; /* rank 0 sends from here */
    unsigned char *recv_buf; /* both ranks receive here; rank 1 echoes it */
} pingpong_ctx;

static void pingpong_kernel(void *arg, long iters)
{
    pingpong_ctx *c = arg;
    for (long i = 0; i < iters; i++) {
        if (c->rank == 0) {
            MPI_Send(c->send_buf, c->bytes, MPI_BYTE, 1, PINGPONG_TAG, c->comm);
            MPI_Recv(c->recv_buf, c->bytes, MPI_BYTE, 1, PINGPONG_TAG, c->comm,
                     MPI_STATUS_IGNORE);
        } else if (c->rank == 1) {
            MPI_Recv(c->recv_buf, c->bytes, MPI_BYTE, 0, PINGPONG_TAG, c->comm,
                     MPI_STATUS_IGNORE);
            MPI_Send(c->recv_buf, c->bytes, MPI_BYTE, 0, PINGPONG_TAG, c->comm);
        }
    }
}

/* One round trip into cleared buffers; both ranks check what arrived.
 * (Each rank clears its own buffer before it posts the receive, so no
 * synchronisation is needed.) */
static void pingpong_verify(pingpong_ctx *c, uint32_t seed)
{
    memset(c->recv_buf, 0, (size_t)c->bytes);
    pingpong_kernel(c, 1);
    if (c->rank <= 1)
        bench_check(c->comm, c->rank == 0 ? "pingpong echo" : "pingpong",
                    c->recv_buf, (size_t)c->bytes, seed);
}

static void pingpong_size(pingpong_ctx *c, const bench_opts *o)
{
    uint32_t seed = (uint32_t)c->bytes + 1;
    double per_iter;

    bench_fill(c->send_buf, (size_t)c->bytes, seed);
    memset(c->recv_buf, 0, (size_t)c->bytes);
    per_iter = bench_measure(c->comm, pingpong_kernel, c, o,
                             bench_warmup_for(o, c->bytes));
    pingpong_verify(c, seed);
    bench_report(c->comm, "pingpong", c->bytes, per_iter / 2.0 * 1e6, "us");
}

int main(int argc, char **argv)
{
    const long sizes[] = {0, 1, 8, 64, 512, 4 * BENCH_KIB,
                                 32 * BENCH_KIB, 256 * BENCH_KIB, BENCH_MIB,
                                 4 * BENCH_MIB};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    MPI_Comm comm = MPI_COMM_WORLD;
    bench_opts opts;
    pingpong_ctx ctx;
    int status;

    bench_init(&argc, &argv);
    status = bench_parse_args(comm, argc, argv, &opts, "", NULL, NULL);
    if (status == 0 && bench_nprocs(comm) < 2) {
        if (bench_rank(comm) == 0)
            fprintf(stderr, "pingpong needs at least 2 ranks\n");
        status = -1;
    }
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? 1 : 0;
    }

    bench_header(comm, "pingpong: one-way latency (half round trip),"
                 " MPI_Send/MPI_Recv between ranks 0 and 1", &opts);
    ctx.comm = comm;
    ctx.rank = bench_rank(comm);
    ctx.send_buf = bench_malloc(comm, (size_t)opts.max_size);
    ctx.recv_buf = bench_malloc(comm, (size_t)opts.max_size);
    for (int s = 0; s < nsizes && sizes[s] <= opts.max_size; s++) {
        if (sizes[s] < opts.min_size)
            continue;
        ctx.bytes = (int)sizes[s];
        pingpong_size(&ctx, &opts);
    }
    free(ctx.send_buf);
    free(ctx.recv_buf);
    MPI_Finalize();
    return 0;
}
