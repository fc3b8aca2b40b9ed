/* Trap 2: a program global named like something libmpi exports.
 *
 * A program linked by mpicc exports all its globals, and its first instance
 * (the one the kernel loads) comes first in the process's symbol lookup
 * scope.  So:
 *   - the program's own references to these globals must bind to its own
 *     copy (mpicc links with -Bsymbolic), or every rank would share them;
 *   - libmpi's references to its own functions of these names must bind to
 *     libmpi (libmpi built with hidden internals or -Bsymbolic), or libmpi
 *     would call into this program's data and crash.
 * strand_current_rank and strand_node_run are libmpi functions (the core's
 * interface to privatize/). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

/* Exported as in any program compiled without -fvisibility=hidden (the
 * test suite's flags have it: say "default" explicitly). */
#define EXPORTED __attribute__((visibility("default")))
EXPORTED int strand_current_rank = -1;
EXPORTED double strand_node_run[4];

static void barrier_by_messages(int rank, int size)
{
    int token = 0;
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            MPI_Recv(&token, 1, MPI_INT, r, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int r = 1; r < size; r++)
            MPI_Send(&token, 1, MPI_INT, r, 99, MPI_COMM_WORLD);
    } else {
        MPI_Send(&token, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    strand_current_rank = 1000 + rank;
    strand_node_run[0] = rank + 0.5;
    barrier_by_messages(rank, size); /* all ranks have written theirs */
    int mine[2] = {strand_current_rank == 1000 + rank, strand_node_run[0] == rank + 0.5};
    int rank_again = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_again); /* libmpi still works */
    errors = (!mine[0]) + (!mine[1]) + (rank_again != rank);
    if (errors)
        printf("rank %d: global int %s, global array %s, MPI_Comm_rank %d\n", rank,
               mine[0] ? "private" : "SHARED", mine[1] ? "private" : "SHARED", rank_again);

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
