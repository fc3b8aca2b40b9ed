/* Back-to-back collectives of every kind with changing roots and no
 * barrier in between: a fast rank enters the next collective while slow
 * ones still read the previous one's buffers. Every result is checked. */
#include <stdlib.h>
#include "coll_util.h"

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = size >= 256 ? 4 : size >= 64 ? 20 : 200;
    int *all = malloc(sizeof(int) * (size_t)size);
    for (int it = 0; it < iters; it++) {
        int root = (it * 13) % size;
        int v = rank == root ? it * 3 + 1 : -1;
        MPI_Bcast(&v, 1, MPI_INT, root, MPI_COMM_WORLD);
        CHECK(&errs, v == it * 3 + 1, "iter %d bcast from %d gave %d", it, root, v);
        int mine = rank * it;
        MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, (root + 1) % size, MPI_COMM_WORLD);
        if (rank == (root + 1) % size)
            for (int r = 0; r < size; r++)
                CHECK(&errs, all[r] == r * it, "iter %d gather [%d] = %d", it, r, all[r]);
        int sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(&errs, sum == it * (size * (size - 1) / 2), "iter %d allreduce = %d", it, sum);
        if (rank == root)
            for (int r = 0; r < size; r++)
                all[r] = r + it;
        int got = -1;
        MPI_Scatter(all, 1, MPI_INT, &got, 1, MPI_INT, root, MPI_COMM_WORLD);
        CHECK(&errs, got == rank + it, "iter %d scatter gave %d", it, got);
        MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            CHECK(&errs, all[r] == r * it, "iter %d allgather [%d] = %d", it, r, all[r]);
        int red = -1;
        MPI_Reduce(&mine, &red, 1, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
        if (rank == root)
            CHECK(&errs, red == (size - 1) * it, "iter %d reduce max = %d", it, red);
        int pre = 0;
        MPI_Scan(&mine, &pre, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(&errs, pre == it * (rank * (rank + 1) / 2), "iter %d scan = %d", it, pre);
    }
    free(all);
    return coll_finish(errs);
}
