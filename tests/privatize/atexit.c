/* Trap 3: each rank's atexit handler runs once, in that rank's program
 * thread, with that rank's globals, when the rank ends (its copy of the
 * program is unloaded).
 *
 * Handlers run after MPI_Finalize, so they report through a pipe that rank
 * 0 made (file descriptors are shared by all ranks of a node): every other
 * rank's handler writes one record; rank 0 reads them all, then checks that
 * no second record comes. */
#include <mpi.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct record {
    int rank;
    int ok;
};

static int my_rank = -1;
static int report_fd = -1;
static pthread_t program_thread;
static int handler_runs;

static void at_rank_exit(void)
{
    handler_runs++;
    struct record r = {my_rank,
                       handler_runs == 1 && pthread_equal(program_thread, pthread_self())};
    if (write(report_fd, &r, sizeof r) != (ssize_t)sizeof r)
        perror("atexit handler: write");
}

/* Reads one record, waiting at most timeout_ms; 0 if none came. */
static int read_record(int fd, struct record *r, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, timeout_ms) == 1 && read(fd, r, sizeof *r) == (ssize_t)sizeof *r;
}

static int collect(int fd, int size)
{
    int errors = 0, *seen = calloc((size_t)size, sizeof *seen);
    struct record r;
    for (int n = 1; n < size; n++) {
        if (!read_record(fd, &r, 30000)) {
            printf("only %d of %d atexit handlers ran\n", n - 1, size - 1);
            return errors + 1;
        }
        if (r.rank < 1 || r.rank >= size || seen[r.rank]++ || !r.ok) {
            printf("bad atexit record: rank %d, ok %d\n", r.rank, r.ok);
            errors++;
        }
    }
    if (read_record(fd, &r, 200)) {
        printf("an atexit handler ran twice (rank %d)\n", r.rank);
        errors++;
    }
    free(seen);
    return errors;
}

int main(int argc, char **argv)
{
    int size, fds[2] = {-1, -1};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    program_thread = pthread_self();
    if (my_rank == 0) {
        if (pipe(fds) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (int r = 1; r < size; r++)
            MPI_Send(&fds[1], 1, MPI_INT, r, 0, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&report_fd, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (atexit(at_rank_exit) != 0)
            printf("rank %d: atexit failed\n", my_rank);
    }
    MPI_Finalize();
    if (my_rank == 0) {
        int errors = collect(fds[0], size);
        if (errors == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", errors);
    }
    return 0;
}
