/* A fatal signal in one rank (args: segv, fpe, ill or abrt) ends the job
 * with 128 + signal (a process killed by it), after a report naming the rank, the signal and the
 * crashing function (see testlist: the expected status and output). */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

volatile int zero;
int *volatile nowhere;

__attribute__((noinline)) int crash_in_rank_function(const char *how)
{
    if (strcmp(how, "segv") == 0)
        return *nowhere;
    if (strcmp(how, "fpe") == 0)
        return (int)strlen(how) / zero;
    if (strcmp(how, "ill") == 0)
        __builtin_trap();
    assert(how == NULL && "abrt");
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == size - 1 && argc > 1)
        printf("%d\n", crash_in_rank_function(argv[1]));
    MPI_Barrier(MPI_COMM_WORLD); /* the others wait: the crash must end them */
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
