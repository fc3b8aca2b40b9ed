/* General active target synchronization on subsets of the window's group:
 * neighbours in a ring, disjoint (even target, odd origin) pairs with
 * MPI_Win_test polling, all ranks into rank 0, a rank with itself, and
 * MPI_MODE_NOCHECK where the program guarantees the order. */
#include <stdlib.h>
#include "rma_util.h"

enum { ITERS = 50 };

static MPI_Group group_of(MPI_Group world, int n, const int *ranks)
{
    MPI_Group g;
    MPI_Group_incl(world, n, (int *)ranks, &g);
    return g;
}

static void ring(int *errs, MPI_Group world, int rank, int size)
{
    int slots[2] = { -1, -1 };      /* [0] from the left neighbour, [1] from the right */
    MPI_Win win;
    MUST(errs, MPI_Win_create(slots, sizeof slots, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int pair[2] = { left, right };
    MPI_Group nb = group_of(world, left == right ? 1 : 2, pair);
    for (int it = 0; it < ITERS; it++) {
        int v = rank * 1000 + it;
        MUST(errs, MPI_Win_post(nb, 0, win));
        MUST(errs, MPI_Win_start(nb, 0, win));
        MUST(errs, MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
        MUST(errs, MPI_Put(&v, 1, MPI_INT, left, 1, 1, MPI_INT, win));
        MUST(errs, MPI_Win_complete(win));
        MUST(errs, MPI_Win_wait(win));
        CHECK(errs, slots[0] == left * 1000 + it, "iteration %d: from left %d", it, slots[0]);
        CHECK(errs, slots[1] == right * 1000 + it, "iteration %d: from right %d", it, slots[1]);
    }
    MPI_Group_free(&nb);
    MUST(errs, MPI_Win_free(&win));
}

/* Even rank t is exposed to odd rank t + 1 only; a last odd-sized rank sits out. */
static void pairs_with_test(int *errs, MPI_Group world, int rank, int size)
{
    double buf[4] = { 0 };
    MPI_Win win;
    MUST(errs, MPI_Win_create(buf, sizeof buf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int peer = rank % 2 == 0 ? rank + 1 : rank - 1;
    if (peer < size) {
        MPI_Group g = group_of(world, 1, &peer);
        for (int it = 0; it < ITERS; it++) {
            if (rank % 2 == 0) {
                MUST(errs, MPI_Win_post(g, MPI_MODE_NOSTORE, win));
                int flag = 0;
                while (!flag)
                    MUST(errs, MPI_Win_test(win, &flag));
                for (int i = 0; i < 4; i++)
                    CHECK(errs, buf[i] == peer + it + i * 0.5, "iteration %d: buf[%d] = %g", it, i, buf[i]);
            } else {
                double v[4];
                for (int i = 0; i < 4; i++)
                    v[i] = rank + it + i * 0.5;
                MUST(errs, MPI_Win_start(g, 0, win));
                MUST(errs, MPI_Put(v, 4, MPI_DOUBLE, peer, 0, 4, MPI_DOUBLE, win));
                MUST(errs, MPI_Win_complete(win));
            }
        }
        MPI_Group_free(&g);
    }
    MUST(errs, MPI_Win_free(&win));
}

static void all_into_root(int *errs, MPI_Group world, int rank, int size)
{
    long sum = 0;
    MPI_Win win;
    MUST(errs, MPI_Win_create(&sum, sizeof sum, sizeof sum, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int zero = 0;
    MPI_Group root = group_of(world, 1, &zero), others;
    MPI_Group_excl(world, 1, &zero, &others);
    for (int it = 0; it < ITERS; it++) {
        if (rank == 0) {
            if (size > 1) {
                MUST(errs, MPI_Win_post(others, 0, win));
                MUST(errs, MPI_Win_wait(win));
            }
            long want = (long)(it + 1) * ((long)size * (size - 1) / 2);
            CHECK(errs, sum == want, "iteration %d: sum %ld, expected %ld", it, sum, want);
        } else {
            long v = rank;
            MUST(errs, MPI_Win_start(root, 0, win));
            MUST(errs, MPI_Accumulate(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
            MUST(errs, MPI_Win_complete(win));
        }
    }
    MPI_Group_free(&root);
    MPI_Group_free(&others);
    MUST(errs, MPI_Win_free(&win));
}

static void self_and_nocheck(int *errs, MPI_Group world, int rank, int size)
{
    int cell[2] = { 0, 0 };
    MPI_Win win;
    MUST(errs, MPI_Win_create(cell, sizeof cell, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Group me = group_of(world, 1, &rank);
    for (int it = 0; it < ITERS; it++) {
        int v = rank + it;
        MUST(errs, MPI_Win_post(me, 0, win));
        MUST(errs, MPI_Win_start(me, 0, win));
        MUST(errs, MPI_Put(&v, 1, MPI_INT, rank, 0, 1, MPI_INT, win));
        MUST(errs, MPI_Win_complete(win));
        MUST(errs, MPI_Win_wait(win));
        CHECK(errs, cell[0] == rank + it, "self iteration %d: %d", it, cell[0]);
    }
    /* NOCHECK: every post is done before any start (barrier in between). */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Group from_left = group_of(world, 1, &left), to_right = group_of(world, 1, &right);
    for (int it = 0; it < ITERS; it++) {
        MUST(errs, MPI_Win_post(from_left, MPI_MODE_NOCHECK, win));
        MPI_Barrier(MPI_COMM_WORLD);
        int v = -(rank * 100 + it);
        MUST(errs, MPI_Win_start(to_right, MPI_MODE_NOCHECK, win));
        MUST(errs, MPI_Put(&v, 1, MPI_INT, right, 1, 1, MPI_INT, win));
        MUST(errs, MPI_Win_complete(win));
        MUST(errs, MPI_Win_wait(win));
        CHECK(errs, cell[1] == -(left * 100 + it), "nocheck iteration %d: %d", it, cell[1]);
        MPI_Barrier(MPI_COMM_WORLD);   /* our next post must not precede the others' waits */
    }
    MPI_Group_free(&me);
    MPI_Group_free(&from_left);
    MPI_Group_free(&to_right);
    MUST(errs, MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    ring(&errs, world, rank, size);
    pairs_with_test(&errs, world, rank, size);
    all_into_root(&errs, world, rank, size);
    self_and_nocheck(&errs, world, rank, size);
    MPI_Group_free(&world);
    return rma_finish(errs);
}
