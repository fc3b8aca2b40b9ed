/* A rank whose main returns while a thread it created still runs (a
 * detached worker, an idle OpenMP pool): its atexit handlers and destructors
 * still run when it ends, and the thread, which a process's exit would have
 * killed, goes on safely (the rank's copy of the program stays mapped). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int spins;

static void *background(void *unused)
{
    (void)unused;
    for (;;) {
        usleep(1000);
        spins++;
    }
    return NULL;
}

static void report(void)
{
    int before = spins;
    usleep(20 * 1000);
    printf(spins > before ? " No Errors\n" : " Found 1 errors: the thread stopped\n");
}

int main(int argc, char **argv)
{
    int rank;
    pthread_t t;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (pthread_create(&t, NULL, background, NULL) != 0 || pthread_detach(t) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0)
        atexit(report);
    MPI_Finalize();
    return 0;
}
