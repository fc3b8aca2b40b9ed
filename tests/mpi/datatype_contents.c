/* MPI_Type_get_envelope / MPI_Type_get_contents round trips: every combiner's
 * contents are fed back to its constructor, and the rebuilt type must have
 * the same envelope, contents, bounds and packed bytes as the original. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpi.h"

static MPI_Datatype rebuild(MPI_Datatype t)
{
    int ni, na, nt, c;
    MPI_Type_get_envelope(t, &ni, &na, &nt, &c);
    int *i = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *a = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *d = malloc(sizeof(MPI_Datatype) * (size_t)(nt + 1)), r = MPI_DATATYPE_NULL;
    MPI_Type_get_contents(t, ni, na, nt, i, a, d);
    switch (c) {
    case MPI_COMBINER_DUP: MPI_Type_dup(d[0], &r); break;
    case MPI_COMBINER_CONTIGUOUS: MPI_Type_contiguous(i[0], d[0], &r); break;
    case MPI_COMBINER_VECTOR: MPI_Type_vector(i[0], i[1], i[2], d[0], &r); break;
    case MPI_COMBINER_HVECTOR: MPI_Type_create_hvector(i[0], i[1], a[0], d[0], &r); break;
    case MPI_COMBINER_INDEXED: MPI_Type_indexed(i[0], i + 1, i + 1 + i[0], d[0], &r); break;
    case MPI_COMBINER_HINDEXED: MPI_Type_create_hindexed(i[0], i + 1, a, d[0], &r); break;
    case MPI_COMBINER_INDEXED_BLOCK: MPI_Type_create_indexed_block(i[0], i[1], i + 2, d[0], &r); break;
    case MPI_COMBINER_STRUCT: MPI_Type_create_struct(i[0], i + 1, a, d, &r); break;
    case MPI_COMBINER_SUBARRAY:
        MPI_Type_create_subarray(i[0], i + 1, i + 1 + i[0], i + 1 + 2 * i[0], i[1 + 3 * i[0]], d[0], &r);
        break;
    case MPI_COMBINER_DARRAY:
        MPI_Type_create_darray(i[0], i[1], i[2], i + 3, i + 3 + i[2], i + 3 + 2 * i[2], i + 3 + 3 * i[2],
                               i[3 + 4 * i[2]], d[0], &r);
        break;
    case MPI_COMBINER_RESIZED: MPI_Type_create_resized(d[0], a[0], a[1], &r); break;
    case MPI_COMBINER_F90_REAL: MPI_Type_create_f90_real(i[0], i[1], &r); break;
    case MPI_COMBINER_F90_COMPLEX: MPI_Type_create_f90_complex(i[0], i[1], &r); break;
    case MPI_COMBINER_F90_INTEGER: MPI_Type_create_f90_integer(i[0], &r); break;
    }
    for (int k = 0; k < nt; k++) {
        int x, y, z, kc;
        MPI_Type_get_envelope(d[k], &x, &y, &z, &kc);
        if (kc != MPI_COMBINER_NAMED)
            MPI_Type_free(&d[k]);
    }
    free(i);
    free(a);
    free(d);
    return r;
}

/* Same envelope, contents, bounds, size and packed image? */
static int same(const char *name, MPI_Datatype x, MPI_Datatype y)
{
    int errs = 0, e1[4], e2[4];
    MPI_Type_get_envelope(x, &e1[0], &e1[1], &e1[2], &e1[3]);
    MPI_Type_get_envelope(y, &e2[0], &e2[1], &e2[2], &e2[3]);
    if (memcmp(e1, e2, sizeof e1) != 0) {
        printf("%s: envelopes differ\n", name);
        return 1;
    }
    int *i1 = malloc(sizeof(int) * (size_t)(e1[0] + 1)), *i2 = malloc(sizeof(int) * (size_t)(e1[0] + 1));
    MPI_Aint *a1 = malloc(sizeof(MPI_Aint) * (size_t)(e1[1] + 1)), *a2 = malloc(sizeof(MPI_Aint) * (size_t)(e1[1] + 1));
    MPI_Datatype *d1 = malloc(sizeof(MPI_Datatype) * (size_t)(e1[2] + 1)), *d2 = malloc(sizeof(MPI_Datatype) * (size_t)(e1[2] + 1));
    if (e1[3] != MPI_COMBINER_NAMED) {
        MPI_Type_get_contents(x, e1[0], e1[1], e1[2], i1, a1, d1);
        MPI_Type_get_contents(y, e1[0], e1[1], e1[2], i2, a2, d2);
        if (memcmp(i1, i2, sizeof(int) * (size_t)e1[0]) || memcmp(a1, a2, sizeof(MPI_Aint) * (size_t)e1[1]) ||
            memcmp(d1, d2, sizeof(MPI_Datatype) * (size_t)e1[2]))
            printf("%s: contents differ\n", name), errs++;
        for (int k = 0; k < e1[2]; k++) {
            int p, q, r, c;
            MPI_Type_get_envelope(d1[k], &p, &q, &r, &c);
            if (c != MPI_COMBINER_NAMED) {
                MPI_Type_free(&d1[k]);
                MPI_Type_free(&d2[k]);
            }
        }
    }
    MPI_Aint lb1, ex1, lb2, ex2;
    int s1, s2;
    MPI_Type_get_extent(x, &lb1, &ex1);
    MPI_Type_get_extent(y, &lb2, &ex2);
    MPI_Type_size(x, &s1);
    MPI_Type_size(y, &s2);
    if (lb1 != lb2 || ex1 != ex2 || s1 != s2)
        printf("%s: bounds differ\n", name), errs++;
    MPI_Datatype cx = x, cy = y;
    MPI_Type_commit(&cx);
    MPI_Type_commit(&cy);
    int *src = malloc(sizeof(int) * 4096);
    for (int k = 0; k < 4096; k++)
        src[k] = k * 7 + 3;
    char *p1 = malloc((size_t)s1 * 2 + 1), *p2 = malloc((size_t)s1 * 2 + 1);
    int pos1 = 0, pos2 = 0;
    MPI_Pack(src + 2048, 2, cx, p1, s1 * 2, &pos1, MPI_COMM_WORLD);
    MPI_Pack(src + 2048, 2, cy, p2, s1 * 2, &pos2, MPI_COMM_WORLD);
    if (pos1 != pos2 || memcmp(p1, p2, (size_t)pos1) != 0)
        printf("%s: packed images differ\n", name), errs++;
    free(i1); free(i2); free(a1); free(a2); free(d1); free(d2); free(p1); free(p2); free(src);
    return errs;
}

int main(int argc, char **argv)
{
    int rank, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Datatype t[16];
    const char *names[16];
    int n = 0, bl[3] = { 2, 1, 3 }, disp[3] = { 5, -2, 9 };
    MPI_Aint hdisp[3] = { 16, -8, 40 };
    MPI_Datatype types[3] = { MPI_INT, MPI_DOUBLE, MPI_UB };
    names[n] = "contiguous"; MPI_Type_contiguous(3, MPI_INT, &t[n++]);
    names[n] = "vector"; MPI_Type_vector(3, 2, -4, t[0], &t[n++]);
    names[n] = "hvector"; MPI_Type_create_hvector(2, 3, 20, MPI_SHORT, &t[n++]);
    names[n] = "indexed"; MPI_Type_indexed(3, bl, disp, t[2], &t[n++]);
    names[n] = "hindexed"; MPI_Type_create_hindexed(3, bl, hdisp, MPI_INT, &t[n++]);
    names[n] = "indexed_block"; MPI_Type_create_indexed_block(3, 2, disp, MPI_INT, &t[n++]);
    types[0] = t[1];
    names[n] = "struct"; MPI_Type_create_struct(3, bl, hdisp, types, &t[n++]);
    names[n] = "resized"; MPI_Type_create_resized(t[6], -4, 100, &t[n++]);
    names[n] = "dup"; MPI_Type_dup(t[3], &t[n++]);
    {
        int sizes[2] = { 10, 12 }, subs[2] = { 3, 4 }, starts[2] = { 2, 5 };
        names[n] = "subarray"; MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t[n++]);
    }
    {
        int g[3] = { 6, 7, 8 }, dist[3] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK };
        int darg[3] = { 2, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG }, p[3] = { 2, 1, 3 };
        names[n] = "darray"; MPI_Type_create_darray(6, 4, 3, g, dist, darg, p, MPI_ORDER_C, MPI_INT, &t[n++]);
    }
    int first_f90 = n;
    names[n] = "f90 real"; MPI_Type_create_f90_real(6, 30, &t[n++]);
    names[n] = "f90 complex"; MPI_Type_create_f90_complex(12, MPI_UNDEFINED, &t[n++]);
    names[n] = "f90 integer"; MPI_Type_create_f90_integer(8, &t[n++]);
    for (int k = 0; k < n; k++) {
        MPI_Datatype r = rebuild(t[k]);
        errs += same(names[k], t[k], r);
        if (k < first_f90)
            MPI_Type_free(&r);
    }
    /* Named types: envelope NAMED, contents an error. */
    int ni, na, nt, c;
    MPI_Type_get_envelope(MPI_DOUBLE_INT, &ni, &na, &nt, &c);
    if (c != MPI_COMBINER_NAMED || ni || na || nt)
        printf("MPI_DOUBLE_INT envelope wrong\n"), errs++;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ints[4];
    MPI_Aint addrs[4];
    MPI_Datatype dts[4];
    int rc = MPI_Type_get_contents(MPI_INT, 4, 4, 4, ints, addrs, dts), cls;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_TYPE && cls != MPI_ERR_ARG)
        printf("get_contents of MPI_INT returned class %d\n", cls), errs++;
    rc = MPI_Type_get_contents(t[3], 1, 0, 1, ints, addrs, dts);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_ARG)
        printf("get_contents with short arrays returned class %d\n", cls), errs++;
    for (int k = 0; k < first_f90; k++)
        MPI_Type_free(&t[k]);
    if (rank == 0)
        printf(errs == 0 ? " No Errors\n" : " Found %d errors\n", errs);
    MPI_Finalize();
    return errs != 0;
}
