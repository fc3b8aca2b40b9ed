/* MPI_Alltoall, v and w, each also with MPI_IN_PLACE (MPI-2.2). */
#include <stdlib.h>
#include "coll_util.h"

/* What rank `from` sends to rank `to`, element i. */
static int value(int from, int to, int i) { return from * 100000 + to * 10 + i; }

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int count = 3;
    size_t n = (size_t)size;
    int *sbuf = malloc(sizeof(int) * n * count * 2), *rbuf = malloc(sizeof(int) * n * count * 2);
    int *scounts = malloc(sizeof(int) * n), *sdispls = malloc(sizeof(int) * n);
    int *rcounts = malloc(sizeof(int) * n), *rdispls = malloc(sizeof(int) * n);
    int *sbytes = malloc(sizeof(int) * n), *rbytes = malloc(sizeof(int) * n);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * n);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < count; i++)
            sbuf[p * count + i] = value(rank, p, i);
    MPI_Alltoall(sbuf, count, MPI_INT, rbuf, count, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < count; i++)
            CHECK(&errs, rbuf[p * count + i] == value(p, rank, i), "alltoall from %d[%d] = %d", p, i,
                  rbuf[p * count + i]);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < count; i++)
            rbuf[p * count + i] = value(rank, p, i) + 1;
    MPI_Alltoall(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, rbuf, count, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < count; i++)
            CHECK(&errs, rbuf[p * count + i] == value(p, rank, i) + 1, "alltoall in place from %d[%d] = %d", p, i,
                  rbuf[p * count + i]);
    /* v: rank r sends (r + p) % 3 elements to p, blocks in reverse order. */
    int stotal = 0, rtotal = 0;
    for (int p = size - 1; p >= 0; p--) {
        scounts[p] = (rank + p) % 3;
        sdispls[p] = stotal;
        stotal += scounts[p];
        rcounts[p] = (p + rank) % 3;
        rdispls[p] = rtotal;
        rtotal += rcounts[p];
    }
    for (int p = 0; p < size; p++)
        for (int i = 0; i < scounts[p]; i++)
            sbuf[sdispls[p] + i] = value(rank, p, i);
    for (int i = 0; i < rtotal; i++)
        rbuf[i] = -1;
    MPI_Alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < rcounts[p]; i++)
            CHECK(&errs, rbuf[rdispls[p] + i] == value(p, rank, i), "alltoallv from %d[%d] = %d", p, i,
                  rbuf[rdispls[p] + i]);
    /* In place, v: the receive layout is also the send layout (symmetric counts). */
    for (int p = 0; p < size; p++)
        for (int i = 0; i < rcounts[p]; i++)
            rbuf[rdispls[p] + i] = value(rank, p, i) + 2;
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < rcounts[p]; i++)
            CHECK(&errs, rbuf[rdispls[p] + i] == value(p, rank, i) + 2, "alltoallv in place from %d[%d] = %d", p, i,
                  rbuf[rdispls[p] + i]);
    /* w: byte displacements, ints sent, received as bytes from odd ranks. */
    for (int p = 0; p < size; p++) {
        sbytes[p] = sdispls[p] * (int)sizeof(int);
        rbytes[p] = rdispls[p] * (int)sizeof(int);
        types[p] = MPI_INT;
    }
    MPI_Datatype *rtypes = malloc(sizeof(MPI_Datatype) * n);
    int *rwcounts = malloc(sizeof(int) * n);
    for (int p = 0; p < size; p++) {
        rtypes[p] = p % 2 ? MPI_BYTE : MPI_INT;
        rwcounts[p] = p % 2 ? rcounts[p] * (int)sizeof(int) : rcounts[p];
    }
    for (int i = 0; i < rtotal; i++)
        rbuf[i] = -1;
    MPI_Alltoallw(sbuf, scounts, sbytes, types, rbuf, rwcounts, rbytes, rtypes, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < rcounts[p]; i++)
            CHECK(&errs, rbuf[rdispls[p] + i] == value(p, rank, i), "alltoallw from %d[%d] = %d", p, i,
                  rbuf[rdispls[p] + i]);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < rcounts[p]; i++)
            rbuf[rdispls[p] + i] = value(rank, p, i) + 3;
    MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rbuf, rcounts, rbytes, types, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < rcounts[p]; i++)
            CHECK(&errs, rbuf[rdispls[p] + i] == value(p, rank, i) + 3, "alltoallw in place from %d[%d] = %d", p, i,
                  rbuf[rdispls[p] + i]);
    free(sbuf); free(rbuf); free(scounts); free(sdispls); free(rcounts); free(rdispls);
    free(sbytes); free(rbytes); free(types); free(rtypes); free(rwcounts);
    return coll_finish(errs);
}
