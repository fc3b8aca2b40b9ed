/*
 * fatal_error: with the default error handler MPI_ERRORS_ARE_FATAL, an
 * invalid call ends the whole job.
 *   Rank 0 calls MPI_Send to rank = size (invalid).  The job must end with
 *   a non-zero exit status and print a message naming the function
 *   (MPI_Send); the other ranks are blocked in a receive and must be ended
 *   too.  The testlist entry is
 *       fatal_error 2 exit=ANY output=MPI_Send
 *
 *   If the invalid send returns (which it must not), rank 0 says so (without
 *   naming the function, so the output check cannot pass by accident),
 *   releases the other ranks, and every rank returns 0: a zero exit status
 *   is what makes the runner report the failure.
 *
 * Minimum ranks: 1.
 */
#include "testutil.h"

int main(int argc, char **argv)
{
    int rank, size, v = 1, r;

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();
    if (rank == 0) {
        MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
        /* not reached with a conforming MPI */
        printf("FAILED: the send to an invalid rank returned control to the "
               "program under MPI_ERRORS_ARE_FATAL\n");
        fflush(stdout);
        for (r = 1; r < size; r++)
            MPI_Send(&v, 1, MPI_INT, r, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
