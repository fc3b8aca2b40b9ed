/* Privatization: every rank has its own globals and statics (DESIGN §4).
 * Each rank increments a global, a file static and a function static once;
 * after all ranks have done so, each must still read 1, and the global's
 * address must differ between ranks. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int counter;             /* exported global */
static int file_counter; /* file static */

static int bump_function_static(void)
{
    static int calls;
    return ++calls;
}

struct report {
    int counter, file_counter, function_static;
    uintptr_t counter_address;
};

/* Only point-to-point exists: gather at rank 0, then release everyone. */
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

static int check(const struct report *r, int from)
{
    if (r->counter == 1 && r->file_counter == 1 && r->function_static == 1)
        return 0;
    printf("rank %d sees global %d, file static %d, function static %d (all should be 1)\n", from,
           r->counter, r->file_counter, r->function_static);
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    counter++;
    file_counter++;
    int function_static = bump_function_static();
    barrier_by_messages(rank, size); /* every rank has incremented */
    struct report mine = {counter, file_counter, function_static, (uintptr_t)&counter};

    if (rank != 0) {
        MPI_Send(&mine, (int)sizeof mine, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    } else {
        uintptr_t *addresses = malloc((size_t)size * sizeof *addresses);
        errors += check(&mine, 0);
        addresses[0] = mine.counter_address;
        for (int r = 1; r < size; r++) {
            struct report theirs;
            MPI_Recv(&theirs, (int)sizeof theirs, MPI_BYTE, r, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            errors += check(&theirs, r);
            addresses[r] = theirs.counter_address;
        }
        for (int i = 0; i < size; i++)
            for (int j = 0; j < i; j++)
                if (addresses[i] == addresses[j]) {
                    printf("ranks %d and %d share the global at %#lx\n", j, i,
                           (unsigned long)addresses[i]);
                    errors++;
                }
        free(addresses);
        if (errors == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", errors);
    }
    MPI_Finalize();
    return 0;
}
