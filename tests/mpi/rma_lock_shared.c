/* Shared locks with concurrent gets, against writers holding exclusive
 * locks: every rank whose rank % 4 == 1 rewrites rank 0's whole array with
 * one value per epoch; the others read it under shared locks and must
 * always see one value throughout (readers exclude writers, not each
 * other). Then locks on every target at once, MPI_MODE_NOCHECK, and
 * MPI_PROC_NULL. */
#include <stdbool.h>
#include <stdlib.h>
#include "rma_util.h"

enum { K = 512, ITERS = 200 };

static void readers_and_writers(int *errs, int rank, int size)
{
    int *a = calloc(K, sizeof *a);
    MPI_Win win;
    MUST(errs, MPI_Win_create(a, rank == 0 ? K * sizeof *a : 0, sizeof *a, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *buf = malloc(K * sizeof *buf);
    bool writer = rank % 4 == 1;
    for (int it = 0; it < ITERS; it++) {
        if (writer) {
            for (int i = 0; i < K; i++)
                buf[i] = rank * ITERS + it + 1;
            MUST(errs, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            MUST(errs, MPI_Put(buf, K, MPI_INT, 0, 0, K, MPI_INT, win));
            MUST(errs, MPI_Win_unlock(0, win));
        } else {
            MUST(errs, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            /* Two gets in one epoch: both see the same version. */
            MUST(errs, MPI_Get(buf, K / 2, MPI_INT, 0, 0, K / 2, MPI_INT, win));
            MUST(errs, MPI_Get(buf + K / 2, K / 2, MPI_INT, 0, K / 2, K / 2, MPI_INT, win));
            MUST(errs, MPI_Win_unlock(0, win));
            int bad = 0;
            for (int i = 1; i < K; i++)
                bad += buf[i] != buf[0];
            CHECK(errs, bad == 0, "iteration %d: torn read (%d elements differ from %d)", it, bad, buf[0]);
            CHECK(errs, buf[0] == 0 || (buf[0] - 1) / ITERS % 4 == 1, "iteration %d: value %d from no writer", it,
                  buf[0]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Writers' last values: the array holds one of them. */
    MUST(errs, MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win));
    MUST(errs, MPI_Get(buf, 1, MPI_INT, 0, K - 1, 1, MPI_INT, win));
    MUST(errs, MPI_Win_unlock(0, win));
    CHECK(errs, size < 2 || buf[0] % ITERS == 0, "final value %d is not a writer's last", buf[0]);
    MUST(errs, MPI_Win_free(&win));
    free(buf);
    free(a);
}

/* Every rank locks every target (shared) at once and reads each one's id. */
static void lock_all_targets(int *errs, int rank, int size)
{
    int id = rank * 7;
    MPI_Win win;
    MUST(errs, MPI_Win_create(&id, sizeof id, sizeof id, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *seen = malloc(size * sizeof *seen);
    for (int t = 0; t < size; t++)
        MUST(errs, MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    for (int t = 0; t < size; t++)
        MUST(errs, MPI_Get(&seen[t], 1, MPI_INT, t, 0, 1, MPI_INT, win));
    for (int t = size - 1; t >= 0; t--)
        MUST(errs, MPI_Win_unlock(t, win));
    for (int t = 0; t < size; t++)
        CHECK(errs, seen[t] == t * 7, "target %d: %d", t, seen[t]);
    /* MPI_PROC_NULL: lock, operations and unlock do nothing. */
    MUST(errs, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, MPI_PROC_NULL, 0, win));
    MUST(errs, MPI_Put(&id, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    MUST(errs, MPI_Win_unlock(MPI_PROC_NULL, win));
    /* Exclusive locks on my right neighbour, taken by everyone at once. */
    int right = (rank + 1) % size;
    MPI_Barrier(MPI_COMM_WORLD);
    MUST(errs, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    int v = -rank;
    MUST(errs, MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MUST(errs, MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(errs, id == -((rank + size - 1) % size), "after neighbour puts: %d", id);
    free(seen);
    MUST(errs, MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    readers_and_writers(&errs, rank, size);
    lock_all_targets(&errs, rank, size);
    return rma_finish(errs);
}
