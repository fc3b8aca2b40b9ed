/* Trap 6: a program with initial-exec TLS cannot be loaded once per rank
 * (each copy takes part of glibc's small static TLS reserve).  With one
 * rank it runs; with more, the job must fail at once with a message that
 * says "initial-exec TLS" and how to rebuild. */
#include <mpi.h>
#include <stdio.h>

__thread int per_thread __attribute__((tls_model("initial-exec")));

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    per_thread++;
    if (rank == 0)
        printf(per_thread == 1 ? " No Errors\n" : " Found 1 errors\n");
    MPI_Finalize();
    return 0;
}
