/* MPI_Gather(v) and MPI_Scatter(v) from several roots, with MPI_IN_PLACE
 * at the root, and v variants with uneven counts and reversed displacements. */
#include <stdlib.h>
#include "coll_util.h"

static int value(int rank, int i) { return rank * 10007 + i; }

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int count = 5;
    int *all = malloc(sizeof(int) * (size_t)size * count * 2);
    int *mine = malloc(sizeof(int) * count * 2);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int total = 0;
    /* v layout: rank r has r % 3 + 1 elements, placed in reverse rank order. */
    for (int r = size - 1; r >= 0; r--) {
        counts[r] = r % 3 + 1;
        displs[r] = total;
        total += counts[r];
    }
    int nroots = size < 4 ? size : 4;
    for (int k = 0; k < nroots; k++) {
        int root = (k * 5 + 1) % size;
        /* Gather, then gather in place. */
        for (int i = 0; i < count; i++)
            mine[i] = value(rank, i);
        for (int i = 0; i < size * count; i++)
            all[i] = -1;
        MPI_Gather(mine, count, MPI_INT, all, count, MPI_INT, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int i = 0; i < size * count; i++)
                CHECK(&errs, all[i] == value(i / count, i % count), "gather root %d: all[%d] = %d", root, i,
                      all[i]);
        if (rank == root) {
            for (int i = 0; i < size * count; i++)
                all[i] = i / count == rank ? value(rank, i % count) : -1;
            MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, count, MPI_INT, root, MPI_COMM_WORLD);
            for (int i = 0; i < size * count; i++)
                CHECK(&errs, all[i] == value(i / count, i % count), "gather in place: all[%d] = %d", i, all[i]);
        } else {
            MPI_Gather(mine, count, MPI_INT, NULL, 0, MPI_INT, root, MPI_COMM_WORLD);
        }
        /* Gatherv. */
        for (int i = 0; i < total; i++)
            all[i] = -1;
        MPI_Gatherv(mine, counts[rank], MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < counts[r]; i++)
                    CHECK(&errs, all[displs[r] + i] == value(r, i), "gatherv root %d from %d[%d]: %d", root, r, i,
                          all[displs[r] + i]);
        /* Scatter, and scatter in place at the root. */
        if (rank == root)
            for (int i = 0; i < size * count; i++)
                all[i] = value(i / count, i % count) + root;
        for (int i = 0; i < count; i++)
            mine[i] = -1;
        MPI_Scatter(all, count, MPI_INT, mine, count, MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; i < count; i++)
            CHECK(&errs, mine[i] == value(rank, i) + root, "scatter root %d: mine[%d] = %d", root, i, mine[i]);
        if (rank == root)
            MPI_Scatter(all, count, MPI_INT, MPI_IN_PLACE, count, MPI_INT, root, MPI_COMM_WORLD);
        else
            MPI_Scatter(NULL, 0, MPI_INT, mine, count, MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; i < count; i++)
            CHECK(&errs, mine[i] == value(rank, i) + root, "scatter in place: mine[%d] = %d", i, mine[i]);
        /* Scatterv. */
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < counts[r]; i++)
                    all[displs[r] + i] = value(r, i) - root;
        for (int i = 0; i < count; i++)
            mine[i] = -7;
        MPI_Scatterv(all, counts, displs, MPI_INT, mine, counts[rank], MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; i < count; i++)
            CHECK(&errs, mine[i] == (i < counts[rank] ? value(rank, i) - root : -7), "scatterv: mine[%d] = %d", i,
                  mine[i]);
    }
    /* Type conversion between sides: root receives MPI_BYTE blocks. */
    int root = size - 1;
    for (int i = 0; i < count; i++)
        mine[i] = value(rank, i);
    MPI_Gather(mine, count, MPI_INT, all, count * (int)sizeof(int), MPI_BYTE, root, MPI_COMM_WORLD);
    if (rank == root)
        for (int i = 0; i < size * count; i++)
            CHECK(&errs, all[i] == value(i / count, i % count), "gather to bytes: all[%d] = %d", i, all[i]);
    free(all);
    free(mine);
    free(counts);
    free(displs);
    return coll_finish(errs);
}
