/* MPI_Allgather(v), with and without MPI_IN_PLACE. */
#include <stdlib.h>
#include "coll_util.h"

static double value(int rank, int i) { return rank * 1000.0 + i + 0.5; }

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = (r * 3) % 4;              /* some ranks contribute nothing */
        displs[r] = total + 1;                /* with a gap before each block */
        total += counts[r] + 1;
    }
    for (int count = 0; count <= (size <= 64 ? 300 : 20); count += size <= 64 ? 100 : 10) {
        double *mine = malloc(sizeof(double) * (size_t)(count + 4));
        double *all = malloc(sizeof(double) * (size_t)size * (size_t)(count + 4) + sizeof(double) * (size_t)total);
        for (int i = 0; i < count; i++)
            mine[i] = value(rank, i);
        for (int i = 0; i < size * count; i++)
            all[i] = -1;
        MPI_Allgather(mine, count, MPI_DOUBLE, all, count, MPI_DOUBLE, MPI_COMM_WORLD);
        for (int i = 0; i < size * count; i++)
            CHECK(&errs, all[i] == value(i / count, i % count), "allgather %d: all[%d] = %g", count, i, all[i]);
        for (int i = 0; i < size * count; i++)
            all[i] = i / count == rank ? value(rank, i % count) + 1 : -1;
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, count, MPI_DOUBLE, MPI_COMM_WORLD);
        for (int i = 0; i < size * count; i++)
            CHECK(&errs, all[i] == value(i / count, i % count) + 1, "allgather in place %d: all[%d] = %g", count,
                  i, all[i]);
        free(mine);
        free(all);
    }
    double mine[4], *all = malloc(sizeof(double) * (size_t)total);
    for (int i = 0; i < 4; i++)
        mine[i] = value(rank, i);
    for (int i = 0; i < total; i++)
        all[i] = -2;
    MPI_Allgatherv(mine, counts[rank], MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        CHECK(&errs, all[displs[r] - 1] == -2, "allgatherv wrote into a gap before rank %d", r);
        for (int i = 0; i < counts[r]; i++)
            CHECK(&errs, all[displs[r] + i] == value(r, i), "allgatherv from %d[%d] = %g", r, i, all[displs[r] + i]);
    }
    for (int i = 0; i < total; i++)
        all[i] = -2;
    for (int i = 0; i < counts[rank]; i++)
        all[displs[rank] + i] = value(rank, i) * 2;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            CHECK(&errs, all[displs[r] + i] == value(r, i) * 2, "allgatherv in place from %d[%d] = %g", r, i,
                  all[displs[r] + i]);
    free(all);
    free(counts);
    free(displs);
    return coll_finish(errs);
}
