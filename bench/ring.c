/*
 * ring.c - token ring: the hand-off from one rank to the next (Strand
 * benchmark suite).
 *
 * A token of 8 bytes goes around all ranks: rank 0 sends it to rank 1,
 * every rank r receives it from r-1 (blocking MPI_Recv), adds one and
 * sends it to r+1 (MPI_Send); rank 0 receives it back from np-1. One
 * iteration is one lap. Reported value: microseconds per hop (the time of
 * a lap divided by np), median over repetitions. With more ranks than
 * cores every hop wakes a rank that is not running: the figure is the
 * cost of a hand-off between ranks that take turns on a core.
 *
 * Checked: after every lap rank 0 finds the token grown by np.
 *
 * Output: "ring NP US_PER_HOP us" (the size column is the rank count).
 * Run:    mpiexec -n 64 ./ring [--time S]
 */
#include "bench.h"

#define RING_TAG 29

typedef struct {
    MPI_Comm comm;
    int rank, np;
} ring_ctx;

static void ring_kernel(void *arg, long iters)
{
    ring_ctx *c = arg;
    int next = (c->rank + 1) % c->np, prev = (c->rank + c->np - 1) % c->np;
    for (long i = 0; i < iters; i++) {
        int64_t token = 0;
        if (c->rank == 0) {
            MPI_Send(&token, 1, MPI_INT64_T, next, RING_TAG, c->comm);
            MPI_Recv(&token, 1, MPI_INT64_T, prev, RING_TAG, c->comm, MPI_STATUS_IGNORE);
            if (token != c->np - 1)
                bench_fail(c->comm, "ring: token %lld after a lap of %d ranks, expected %d",
                           (long long)token, c->np, c->np - 1);
        } else {
            MPI_Recv(&token, 1, MPI_INT64_T, prev, RING_TAG, c->comm, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT64_T, next, RING_TAG, c->comm);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    bench_opts opts;
    ring_ctx c;

    bench_init(&argc, &argv);
    int status = bench_parse_args(comm, argc, argv, &opts, "", NULL, NULL);
    c.comm = comm;
    c.rank = bench_rank(comm);
    c.np = bench_nprocs(comm);
    if (status == 0 && c.np < 2) {
        if (c.rank == 0)
            fprintf(stderr, "ring needs at least 2 ranks\n");
        status = -1;
    }
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? 1 : 0;
    }
    bench_header(comm, "ring: us per hop of an 8-byte token passed around all ranks"
                 " (MPI_Recv from the left, MPI_Send to the right)", &opts);
    double per_lap = bench_measure(comm, ring_kernel, &c, &opts, 3);
    bench_report(comm, "ring", c.np, per_lap / c.np * 1e6, "us");
    MPI_Finalize();
    return 0;
}
