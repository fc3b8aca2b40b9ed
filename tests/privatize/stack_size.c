/* Rank stacks follow ulimit -s, like a process's main stack: every rank
 * uses a local array of 3/4 of the limit (capped at 64 MiB); with "overflow"
 * as argument, the last rank recurses without end and the job must end with
 * one line naming the rank and mpiexec --stack-size (see testlist). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

__attribute__((noinline)) static int use_stack(size_t bytes)
{
    volatile char array[bytes];
    memset((char *)array, 1, bytes);
    int sum = 0;
    for (size_t i = 0; i < bytes; i += 4096)
        sum += array[i];
    return sum;
}

__attribute__((noinline)) static int recurse(volatile int depth)
{
    volatile char frame[512];
    frame[0] = (char)depth;
    return recurse(depth + 1) + frame[0];
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "overflow") == 0 && rank == size - 1)
        printf("%d\n", recurse(0));
    MPI_Barrier(MPI_COMM_WORLD);
    struct rlimit limit;
    size_t bytes = 6 << 20;
    if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        bytes = limit.rlim_cur / 4 * 3;
    if (bytes > (64u << 20))
        bytes = 64u << 20;
    int ok = use_stack(bytes) == (int)(bytes / 4096), all_ok;
    if (!ok)
        printf("rank %d: the stack array of %zu bytes reads back wrong\n", rank, bytes);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0 && all_ok)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
