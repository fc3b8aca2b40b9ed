/* Every constructor over point-to-point with mismatched but signature-
 * compatible layouts: each layout describes 24 ints at hand-computed
 * positions; rank 2i sends with one layout, rank 2i+1 receives with another
 * and checks every value and that no other int of its buffer changed. Then a
 * struct received as a differently laid out struct, and 1M doubles sent as a
 * stride-2 vector (rendezvous) into contiguous memory and back. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpi.h"

#define N 24
#define SPAN 800
#define SENTINEL (-7)

struct layout {
    const char *name;
    MPI_Datatype type;
    int count;
    int pos[N];     /* int index of the k-th element of the signature */
};

static void make_layouts(struct layout *l, int nprocs_rank3)
{
    int k = 0;
    MPI_Datatype t;
    /* L0 contiguous */
    l[0].name = "contiguous";
    MPI_Type_contiguous(N, MPI_INT, &l[0].type);
    l[0].count = 1;
    for (k = 0; k < N; k++) l[0].pos[k] = k;
    /* L1 vector(12, 2, 3) */
    l[1].name = "vector";
    MPI_Type_vector(12, 2, 3, MPI_INT, &l[1].type);
    l[1].count = 1;
    for (k = 0; k < N; k++) l[1].pos[k] = (k / 2) * 3 + k % 2;
    /* L2 hvector(6, 4, 28 bytes) */
    l[2].name = "hvector";
    MPI_Type_create_hvector(6, 4, 7 * sizeof(int), MPI_INT, &l[2].type);
    l[2].count = 1;
    for (k = 0; k < N; k++) l[2].pos[k] = (k / 4) * 7 + k % 4;
    /* L3 indexed, blocks out of order */
    {
        int bl[3] = { 5, 10, 9 }, disp[3] = { 20, 0, 40 }, b, j;
        l[3].name = "indexed";
        MPI_Type_indexed(3, bl, disp, MPI_INT, &l[3].type);
        l[3].count = 1;
        for (k = 0, b = 0; b < 3; b++) for (j = 0; j < bl[b]; j++) l[3].pos[k++] = disp[b] + j;
    }
    /* L4 hindexed (MPI-1 name) */
    {
        int bl[2] = { 12, 12 }, j;
        MPI_Aint disp[2] = { 100 * sizeof(int), sizeof(int) };
        l[4].name = "hindexed";
        MPI_Type_hindexed(2, bl, disp, MPI_INT, &l[4].type);
        l[4].count = 1;
        for (j = 0; j < 12; j++) { l[4].pos[j] = 100 + j; l[4].pos[12 + j] = 1 + j; }
    }
    /* L5 indexed_block */
    {
        int disp[8] = { 0, 30, 6, 50, 12, 70, 18, 90 };
        l[5].name = "indexed_block";
        MPI_Type_create_indexed_block(8, 3, disp, MPI_INT, &l[5].type);
        l[5].count = 1;
        for (k = 0; k < N; k++) l[5].pos[k] = disp[k / 3] + k % 3;
    }
    /* L6 struct (MPI-1 name) with markers */
    {
        int bl[5] = { 6, 6, 12, 1, 1 };
        MPI_Aint disp[5] = { 0, 40, 100, -4, 200 };
        MPI_Datatype types[5] = { MPI_INT, MPI_INT, MPI_INT, MPI_LB, MPI_UB };
        l[6].name = "struct";
        MPI_Type_struct(5, bl, disp, types, &l[6].type);
        l[6].count = 1;
        for (k = 0; k < 6; k++) { l[6].pos[k] = k; l[6].pos[6 + k] = 10 + k; }
        for (k = 0; k < 12; k++) l[6].pos[12 + k] = 25 + k;
    }
    /* L7 resized vector, count 12 */
    MPI_Type_vector(2, 1, 3, MPI_INT, &t);
    l[7].name = "resized";
    MPI_Type_create_resized(t, 0, 6 * sizeof(int), &l[7].type);
    MPI_Type_free(&t);
    l[7].count = 12;
    for (k = 0; k < N; k++) l[7].pos[k] = 6 * (k / 2) + 3 * (k % 2);
    /* L8 subarray, C order */
    {
        int sizes[3] = { 4, 5, 6 }, subs[3] = { 2, 3, 4 }, starts[3] = { 1, 1, 2 }, i, j, m;
        l[8].name = "subarray C";
        MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &l[8].type);
        l[8].count = 1;
        for (k = 0, i = 0; i < 2; i++) for (j = 0; j < 3; j++) for (m = 0; m < 4; m++)
            l[8].pos[k++] = (1 + i) * 30 + (1 + j) * 6 + 2 + m;
    }
    /* L9 subarray, Fortran order */
    {
        int sizes[3] = { 6, 5, 4 }, subs[3] = { 4, 3, 2 }, starts[3] = { 2, 1, 1 }, a, b, c;
        l[9].name = "subarray Fortran";
        MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &l[9].type);
        l[9].count = 1;
        for (k = 0, c = 0; c < 2; c++) for (b = 0; b < 3; b++) for (a = 0; a < 4; a++)
            l[9].pos[k++] = (2 + a) + 6 * (1 + b) + 30 * (1 + c);
    }
    /* L10 darray 8x12, rows block over 2, columns cyclic(2) over 2, as rank 3 of 4 */
    {
        int g[2] = { 8, 12 }, dist[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC };
        int darg[2] = { MPI_DISTRIBUTE_DFLT_DARG, 2 }, p[2] = { 2, 2 }, cols[6] = { 2, 3, 6, 7, 10, 11 }, r, c;
        l[10].name = "darray";
        MPI_Type_create_darray(nprocs_rank3, 3, 2, g, dist, darg, p, MPI_ORDER_C, MPI_INT, &l[10].type);
        l[10].count = 1;
        for (k = 0, r = 4; r < 8; r++) for (c = 0; c < 6; c++) l[10].pos[k++] = r * 12 + cols[c];
    }
    /* L11 dup of the vector */
    l[11].name = "dup";
    MPI_Type_dup(l[1].type, &l[11].type);
    l[11].count = 1;
    memcpy(l[11].pos, l[1].pos, sizeof l[1].pos);
    /* L12 hvector of vector */
    MPI_Type_vector(4, 3, 5, MPI_INT, &t);
    l[12].name = "hvector of vector";
    MPI_Type_create_hvector(2, 1, 100 * sizeof(int), t, &l[12].type);
    MPI_Type_free(&t);
    l[12].count = 1;
    for (k = 0; k < N; k++) l[12].pos[k] = (k / 12) * 100 + ((k % 12) / 3) * 5 + k % 3;
}
#define NLAYOUTS 13

static int check_pair(const struct layout *s, const struct layout *r, int rank, int peer, int tag)
{
    int buf[SPAN], errs = 0, k, i;
    for (i = 0; i < SPAN; i++) buf[i] = SENTINEL;
    if (rank % 2 == 0) {
        for (k = 0; k < N; k++) buf[s->pos[k]] = 1000 * tag + k;
        MPI_Send(buf, s->count, s->type, peer, tag, MPI_COMM_WORLD);
        return 0;
    }
    MPI_Status st;
    MPI_Recv(buf, r->count, r->type, peer, tag, MPI_COMM_WORLD, &st);
    int want[SPAN];
    for (i = 0; i < SPAN; i++) want[i] = SENTINEL;
    for (k = 0; k < N; k++) want[r->pos[k]] = 1000 * tag + k;
    for (i = 0; i < SPAN; i++)
        if (buf[i] != want[i] && errs++ < 3)
            printf("send %s / recv %s: int %d is %d, expected %d\n", s->name, r->name, i, buf[i], want[i]);
    int count;
    MPI_Get_count(&st, r->type, &count);
    if (count != r->count && errs++ < 3)
        printf("send %s / recv %s: MPI_Get_count %d, expected %d\n", s->name, r->name, count, r->count);
    MPI_Get_elements(&st, r->type, &count);
    if (count != N && errs++ < 3)
        printf("send %s / recv %s: MPI_Get_elements %d, expected %d\n", s->name, r->name, count, N);
    return errs;
}

struct s1 { int a; double b; char c; };
struct s2 { double b; char c; int a; };

static int check_struct(int rank, int peer)
{
    int bl[3] = { 1, 1, 1 }, errs = 0, i;
    MPI_Aint d1[3] = { offsetof(struct s1, a), offsetof(struct s1, b), offsetof(struct s1, c) };
    MPI_Aint d2[3] = { offsetof(struct s2, a), offsetof(struct s2, b), offsetof(struct s2, c) };
    MPI_Datatype types[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, t1, t2;
    MPI_Type_create_struct(3, bl, d1, types, &t1);
    MPI_Type_create_struct(3, bl, d2, types, &t2);
    MPI_Type_commit(&t1);
    MPI_Type_commit(&t2);
    if (rank % 2 == 0) {
        struct s1 x[10];
        for (i = 0; i < 10; i++) { x[i].a = i; x[i].b = i + 0.5; x[i].c = (char)('a' + i); }
        MPI_Send(x, 10, t1, peer, 99, MPI_COMM_WORLD);
    } else {
        struct s2 y[10];
        MPI_Recv(y, 10, t2, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (i = 0; i < 10; i++)
            if ((y[i].a != i || y[i].b != i + 0.5 || y[i].c != 'a' + i) && errs++ < 3)
                printf("struct %d: got {%d, %g, %c}\n", i, y[i].a, y[i].b, y[i].c);
    }
    MPI_Type_free(&t1);
    MPI_Type_free(&t2);
    return errs;
}

/* 1M doubles: stride-2 vector into contiguous, and back into a vector. */
static int check_large_vector(int rank, int peer)
{
    const int n = 1 << 20;
    int errs = 0, i;
    MPI_Datatype v;
    MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    double *strided = malloc(sizeof(double) * 2 * n), *dense = malloc(sizeof(double) * n);
    if (rank % 2 == 0) {
        for (i = 0; i < 2 * n; i++) strided[i] = i;
        MPI_Send(strided, 1, v, peer, 100, MPI_COMM_WORLD);
        for (i = 0; i < 2 * n; i++) strided[i] = -1;
        MPI_Recv(strided, 1, v, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (i = 0; i < 2 * n; i++)
            if (strided[i] != (i % 2 ? -1.0 : (double)(i / 2) * 3) && errs++ < 3)
                printf("vector back: %d is %g\n", i, strided[i]);
    } else {
        MPI_Recv(dense, n, MPI_DOUBLE, peer, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (i = 0; i < n; i++)
            if (dense[i] != 2.0 * i && errs++ < 3)
                printf("vector to contiguous: %d is %g\n", i, dense[i]);
        for (i = 0; i < n; i++) dense[i] = 3.0 * i;
        MPI_Send(dense, n, MPI_DOUBLE, peer, 101, MPI_COMM_WORLD);
    }
    free(strided);
    free(dense);
    MPI_Type_free(&v);
    return errs;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0, i, j, tag = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct layout l[NLAYOUTS];
    make_layouts(l, 4);
    for (i = 0; i < NLAYOUTS; i++)
        MPI_Type_commit(&l[i].type);
    int peer = rank % 2 == 0 ? rank + 1 : rank - 1;
    if (peer < size) {
        for (i = 0; i < NLAYOUTS; i++) {
            /* each layout against its neighbours and against contiguous */
            int partners[3] = { (i + 1) % NLAYOUTS, (i + 5) % NLAYOUTS, 0 };
            for (j = 0; j < 3; j++)
                errs += check_pair(&l[i], &l[partners[j]], rank, peer, tag++);
        }
        errs += check_pair(&l[0], &l[12], rank, peer, tag++);
        errs += check_struct(rank, peer);
        errs += check_large_vector(rank, peer);
    }
    for (i = 0; i < NLAYOUTS; i++)
        MPI_Type_free(&l[i].type);
    /* rank 0 collects the verdict */
    if (rank == 0) {
        for (i = 1; i < size; i++) {
            int e;
            MPI_Recv(&e, 1, MPI_INT, i, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += e;
        }
        if (errs == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", errs);
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return errs != 0;
}
