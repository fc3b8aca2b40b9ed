/*
 * net_abort: MPI_Abort called by the last rank, which is in another node
 * process than rank 0 when run with mpiexec --nodes K, while every other
 * rank is blocked in MPI_Recv. The whole job must end with the abort's
 * code (7) and no node process may be left (the testlist checks the exit
 * status, the message and that no process of the program survives).
 * Minimum ranks: 2.
 */
#include "testutil.h"

int main(int argc, char **argv)
{
    int rank, size, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tu_barrier();
    if (rank == size - 1) {
        tu_sleep_ms(100);
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    /* Never satisfied: only the abort ends this. */
    MPI_Recv(&v, 1, MPI_INT, size - 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d: the receive returned although nobody sent\n", rank);
    MPI_Finalize();
    return 1;
}
