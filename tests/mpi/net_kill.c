/*
 * net_kill: the node process of the last rank is killed (SIGKILL, as by
 * the out-of-memory killer or a crash) while the other ranks wait for a
 * message from it. The job must end within seconds, mpiexec must name the
 * dead node process and its ranks, and no node process may be left (the
 * testlist checks all three). Run with mpiexec --nodes K, K >= 2.
 * Minimum ranks: 2.
 */
#include <signal.h>
#include <unistd.h>

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
        kill(getpid(), SIGKILL);
    }
    MPI_Recv(&v, 1, MPI_INT, size - 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d: the receive returned although nobody sent\n", rank);
    MPI_Finalize();
    return 1;
}
