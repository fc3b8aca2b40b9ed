/* Trap 5: a program's constructors run once per rank, in that rank's own
 * thread (each rank loads its copy of the program itself), before main and
 * before MPI_Init.  Checked per rank, gathered at rank 0. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

static int constructor_runs;
static pthread_t constructor_thread;

__attribute__((constructor)) static void construct(void)
{
    constructor_runs++;
    constructor_thread = pthread_self();
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (constructor_runs != 1 || !pthread_equal(constructor_thread, pthread_self())) {
        printf("rank %d: constructor ran %d times, %s\n", rank, constructor_runs,
               pthread_equal(constructor_thread, pthread_self()) ? "in this thread"
                                                                 : "in another thread");
        errors = 1;
    }
    if (rank != 0) {
        MPI_Send(&errors, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    } else {
        for (int r = 1; r < size; r++) {
            int theirs;
            MPI_Recv(&theirs, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errors += theirs;
        }
        if (errors == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", errors);
    }
    MPI_Finalize();
    return 0;
}
