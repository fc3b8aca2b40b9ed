/* pthread_exit() in main: like a process, the rank lets its other threads
 * finish, then ends with status 0 and runs its atexit handlers.  The handler
 * ends the job with status 9 if the rank's worker had not finished. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int worker_done;

static void after_worker(void)
{
    if (!worker_done) {
        printf("atexit handler ran before the worker finished\n");
        fflush(stdout);
        _exit(9);
    }
}

static void *worker(void *unused)
{
    (void)unused;
    usleep(100 * 1000); /* main has called pthread_exit by now */
    worker_done = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    int rank;
    pthread_t t;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    atexit(after_worker);
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    pthread_exit(NULL);
}
