/* A rank's fork() child is an ordinary process (DESIGN §4 trap 9): its
 * exit/_exit/return status reaches the parent's waitpid unchanged, with no
 * Strand message and no effect on the job, and a child calling MPI fails
 * with a clear message (status 1) instead of hanging. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_status(int how, int rank)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return -1;
    }
    if (pid == 0) {
        switch (how) {
        case 0: _exit(0);
        case 1: exit(5);
        case 2: _exit(rank % 200 + 10);
        case 3: {
            int r; /* must fail: a child is no rank */
            MPI_Comm_rank(MPI_COMM_WORLD, &r);
            _exit(99);
        }
        default: abort();
        }
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0, all_errors;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* how: _exit(0), exit(5), _exit(per rank), MPI call, abort() */
    for (int round = 0; round < 2; round++) {
        for (int how = 0; how < 5; how++) {
            int want[] = {0, 5, rank % 200 + 10, 1, 1000 + 6};
            int got = child_status(how, rank);
            if (got != want[how]) {
                printf("rank %d: child %d ended with %d, expected %d\n", rank, how, got, want[how]);
                errors++;
            }
        }
    }
    MPI_Reduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all_errors == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
