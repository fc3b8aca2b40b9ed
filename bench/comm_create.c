/* Time of MPI_Comm_dup and MPI_Comm_split (each followed by MPI_Comm_free),
 * per call, seen by rank 0. Portable MPI: build it with any mpicc.
 *   mpiexec -n 64 ./comm_create [iterations]
 * Prints one line: ranks, dup us, split us (split: 4 colors, keys reversed). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Everyone has arrived: a split needs every member's color. */
static void sync_all(void)
{
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &c);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    for (int warm = 0; warm < 10; warm++)
        sync_all();

    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_free(&c);
    }
    sync_all();
    double dup_us = 1e6 * (MPI_Wtime() - t0) / iters;

    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 4, size - rank, &c);
        MPI_Comm_free(&c);
    }
    sync_all();
    double split_us = 1e6 * (MPI_Wtime() - t0) / iters;
    if (rank == 0)
        printf("ranks %d iterations %d dup %.1f us split %.1f us\n", size, iters, dup_us, split_us);
    MPI_Finalize();
    return 0;
}
