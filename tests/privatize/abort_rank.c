/* MPI_Abort ends the whole job, not only the calling rank: the last rank
 * aborts with code 7 while the others wait for a message that never comes.
 * The job must exit with 7 and say which rank aborted. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, never;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == size - 1)
        MPI_Abort(MPI_COMM_WORLD, 7);
    else
        MPI_Recv(&never, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d: still running after MPI_Abort\n", rank);
    MPI_Finalize();
    return 0;
}
