/* Trap 3: exit() in a rank ends that rank only, with its status; the job's
 * exit status is the highest.  Rank k exits with k % 3 after MPI_Finalize;
 * rank 0 reports first (run with 4 ranks: the job exits with 2). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void barrier_by_messages(int rank, int size)
{
    int token = 0;
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            MPI_Recv(&token, 1, MPI_INT, r, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int r = 1; r < size; r++)
            MPI_Send(&token, 1, MPI_INT, r, 99, MPI_COMM_WORLD);
    } else {
        MPI_Send(&token, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* every rank is still alive here: no exit() ended the process early */
    barrier_by_messages(rank, size);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    exit(rank % 3);
}
