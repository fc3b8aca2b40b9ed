/*
 * net_fail: the node process of the last rank (another node process than
 * rank 0's when run with mpiexec --nodes K, K >= 2) fails while every other
 * rank is blocked in MPI_Recv waiting for it:
 *   net_fail abort  the last rank calls MPI_Abort(MPI_COMM_WORLD, 7): the
 *                   job must end with status 7;
 *   net_fail kill   its node process is killed (SIGKILL, as by the
 *                   out-of-memory killer): the job must end within seconds
 *                   and mpiexec must name the dead node process and its ranks;
 *   net_fail wait   nobody fails by itself: the test kills a node process
 *                   (or a whole emulated node) from outside, see
 *                   tests/testbeds/slurm-jobs.sh;
 *   net_fail start  the ranks of the last node process (STRAND_NODE_INDEX)
 *                   exit with status 5 before MPI_Init: the job must end
 *                   with that status at once, saying so (the others would
 *                   wait for them in MPI_Init or in a receive).
 * Either way no node process may be left; the testlist checks the status,
 * the message and the orphans. Minimum ranks: 2.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"

int main(int argc, char **argv)
{
    int rank, size, v = 0;
    const char *node = getenv("STRAND_NODE_INDEX"), *nodes = getenv("STRAND_NODES");
    if (argc > 1 && strcmp(argv[1], "start") == 0 && node != NULL && nodes != NULL &&
        atoi(node) == atoi(nodes) - 1)
        exit(5);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int kill_node = argc > 1 && strcmp(argv[1], "kill") == 0;
    int wait_for_test = argc > 1 && strcmp(argv[1], "wait") == 0;
    tu_barrier();
    if (rank == size - 1 && wait_for_test)
        MPI_Recv(&v, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == size - 1) {
        tu_sleep_ms(100);
        if (kill_node)
            kill(getpid(), SIGKILL);
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    /* Never satisfied: only the failure ends this. */
    MPI_Recv(&v, 1, MPI_INT, size - 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d: the receive returned although nobody sent\n", rank);
    MPI_Finalize();
    return 1;
}
