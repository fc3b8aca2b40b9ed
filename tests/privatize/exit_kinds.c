/* Trap 3: _exit() and abort() end only the calling rank, without running
 * its atexit handlers.  Ranks 1 and 2 register a handler that would end the
 * job with status 66 if it ever ran, finalize, then rank 1 calls _exit(3)
 * and rank 2 abort() (status 134).  Run with 3 ranks: rank 0 reports, the
 * job exits with the highest status, 134. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void handler_that_must_not_run(void)
{
    printf("an atexit handler ran after _exit or abort\n");
    fflush(stdout);
    _exit(66);
}

int main(int argc, char **argv)
{
    int rank, size, token = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        for (int r = 1; r < size && r <= 2; r++)
            MPI_Recv(&token, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf(" No Errors\n");
        fflush(stdout);
    } else {
        atexit(handler_that_must_not_run);
        MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    if (rank == 1)
        _exit(3);
    if (rank == 2)
        abort();
    return 0;
}
