/* Trap 3: exit() in a thread that a rank created cannot end only that rank
 * (its program thread cannot be stopped), so it ends the job, with that
 * status and a message saying why.  Rank 1's thread calls exit(5) while
 * rank 0 waits for a message that never comes.  The job exits with 5. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *exit_from_thread(void *unused)
{
    (void)unused;
    exit(5);
}

int main(int argc, char **argv)
{
    int rank, provided, never;
    pthread_t t;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        pthread_create(&t, NULL, exit_from_thread, NULL);
        pthread_join(t, NULL);
    } else {
        MPI_Recv(&never, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    printf("rank %d: still running after exit() in a thread\n", rank);
    MPI_Finalize();
    return 0;
}
