/* Passive target: every rank adds 1 to one counter on rank 0 ITERS times
 * (argument 1, default 1000), each time in its own lock epoch:
 *  - counter[0] under MPI_LOCK_EXCLUSIVE (an origin alone at the target
 *    combines without atomics: only mutual exclusion keeps the sum exact);
 *  - counter[1] under MPI_LOCK_SHARED (concurrent accumulates to one
 *    location must still behave as if done one after the other).
 * Rank 0 takes part like everyone else: passive target needs no call by
 * the target. */
#include <stdlib.h>
#include "rma_util.h"

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 1000;
    long counter[2] = { 0, 0 };
    MPI_Win win;
    MUST(&errs, MPI_Win_create(counter, rank == 0 ? sizeof counter : 0, sizeof(long), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &win));
    long one = 1;
    for (int i = 0; i < iters; i++) {
        MUST(&errs, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MUST(&errs, MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
        MUST(&errs, MPI_Win_unlock(0, win));
        MUST(&errs, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MUST(&errs, MPI_Accumulate(&one, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, win));
        MUST(&errs, MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long seen[2] = { -1, -1 };
    MUST(&errs, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MUST(&errs, MPI_Get(seen, 2, MPI_LONG, 0, 0, 2, MPI_LONG, win));
    MUST(&errs, MPI_Win_unlock(0, win));
    long want = (long)size * iters;
    CHECK(&errs, seen[0] == want, "exclusive counter %ld, expected %ld", seen[0], want);
    CHECK(&errs, seen[1] == want, "shared counter %ld, expected %ld", seen[1], want);
    MUST(&errs, MPI_Win_free(&win));
    return rma_finish(errs);
}
