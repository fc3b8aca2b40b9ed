/*
 * exec_child: a program that a rank starts with fork and exec runs once,
 * as a process of its own, as under a process-per-rank MPI (HDF5's
 * t_cache_image runs its serial steps so). Under Strand the child
 * inherits the node process's environment, which names the job; it must
 * not start as a node process of that job (src/core/node.c,
 * node_environment_inherited).
 *
 * The first and the last rank each start this program twice: once in a
 * mode that does not call MPI, once in a mode that calls MPI_Init and
 * must find a world of its own, of 1 rank. Each child writes one byte
 * into a pipe it inherits; the parent counts the bytes until the pipe
 * closes (one child process running every rank of the job would write one
 * per rank) and checks the exit status.
 */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static int child_main(int argc, char **argv)
{
    int fd = atoi(argv[2]);
    int status = 0;
    if (strcmp(argv[1], "mpi-child") == 0) {
        int size = -1;
        MPI_Init(&argc, &argv);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size != 1) {
            printf("exec'd child: MPI_COMM_WORLD has %d ranks, expected 1\n", size);
            status = 3;
        }
        MPI_Finalize();
    }
    if (getenv("STRAND_NRANKS") != NULL) {
        printf("exec'd child: STRAND_NRANKS=%s inherited\n", getenv("STRAND_NRANKS"));
        status = 4;
    }
    char one = 'x';
    if (write(fd, &one, 1) != 1)
        status = 5;
    return status;
}

/* Starts this program in `mode`; returns the number of errors. */
static int run_child(const char *self, const char *mode)
{
    int fds[2];
    if (pipe(fds) != 0)
        return TU_FAIL("pipe: %s", strerror(errno));
    char fd_text[16];
    snprintf(fd_text, sizeof fd_text, "%d", fds[1]);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char *args[] = { (char *)self, (char *)mode, fd_text, NULL };
        execv("/proc/self/exe", args);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0)
        return TU_FAIL("fork: %s", strerror(errno));
    int bytes = 0;
    char buf[64];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        bytes += (int)n;
    }
    close(fds[0]);
    int status, errs = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        errs += TU_FAIL("%s: child ended with status 0x%x", mode, status);
    if (bytes != 1)
        errs += TU_FAIL("%s: the child ran %d times, expected once", mode, bytes);
    return errs;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strstr(argv[1], "-child") != NULL)
        return child_main(argc, argv);
    MPI_Init(&argc, &argv);
    int rank = tu_rank(), size = tu_size(), errs = 0;
    if (rank == 0 || rank == size - 1) {
        errs += run_child(argv[0], "plain-child");
        errs += run_child(argv[0], "mpi-child");
    }
    return tu_finish(errs);
}
