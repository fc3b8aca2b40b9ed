/* MPI_Type_create_subarray and MPI_Type_create_darray. Each is expressed
 * with simpler constructors (contiguous, hvector, struct, resized), dimension
 * by dimension from the fastest-varying one; the result keeps its own
 * combiner and arguments and delegates its type map to that `inner` type. */
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "datatype.h"

/* Replaces *t by next (the old one is released); false (and *t released)
 * on error. */
static bool step(MPI_Datatype *t, int rc, MPI_Datatype next)
{
    if (*t != NULL)
        dt_release(*t);
    *t = rc == MPI_SUCCESS ? next : NULL;
    return rc == MPI_SUCCESS;
}

/* The dimensions in fastest-first order. */
static int dim_at(int order, int ndims, int k)
{
    return order == MPI_ORDER_C ? ndims - 1 - k : k;
}

/* Places `t` at `disp` inside an array of `total` bytes starting at 0, then
 * creates the public type with its arguments. Consumes t. */
static int finish_array(MPI_Datatype t, MPI_Aint disp, MPI_Aint total, int combiner, const int *ints, int nints,
                        MPI_Datatype old, MPI_Datatype *newtype, const char **why)
{
    int one = 1;
    MPI_Datatype placed, inner;
    int rc = dt_make_struct(1, &one, &disp, &t, &placed, why);
    dt_release(t);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = dt_make_resized(placed, 0, total, &inner, why);
    dt_release(placed);
    if (rc != MPI_SUCCESS)
        return rc;
    struct dt_args a = { combiner, nints, 0, 1, ints, NULL, &old, inner };
    rc = dt_create(&a, newtype, why);
    dt_release(inner);
    return rc;
}

static const char *overflow = "the array's extent overflows the address range";

static int subarray(int ndims, const int *sizes, const int *subsizes, const int *starts, int order,
                    MPI_Datatype old, MPI_Datatype *newtype, const char **why)
{
    MPI_Aint unit = dt_extent(old), disp = 0;
    MPI_Datatype t = old;
    dt_retain(old);
    for (int k = 0; k < ndims; k++) {
        int d = dim_at(order, ndims, k);
        MPI_Datatype next = NULL;
        int rc = k == 0 ? dt_make_contiguous(subsizes[d], t, &next, why)
                        : dt_make_hvector(subsizes[d], 1, unit, t, &next, why);
        if (!step(&t, rc, next))
            return rc;
        MPI_Aint offset;
        if (__builtin_mul_overflow((MPI_Aint)starts[d], unit, &offset) ||
            __builtin_add_overflow(disp, offset, &disp) || __builtin_mul_overflow(unit, (MPI_Aint)sizes[d], &unit)) {
            dt_release(t);
            *why = overflow;
            return MPI_ERR_ARG;
        }
    }
    size_t nints = 3 * (size_t)ndims + 2;
    int *ints = malloc(nints * sizeof(int));
    if (ints == NULL) {
        dt_release(t);
        *why = "out of memory";
        return MPI_ERR_NO_MEM;
    }
    ints[0] = ndims;
    memcpy(ints + 1, sizes, (size_t)ndims * sizeof(int));
    memcpy(ints + 1 + ndims, subsizes, (size_t)ndims * sizeof(int));
    memcpy(ints + 1 + 2 * ndims, starts, (size_t)ndims * sizeof(int));
    ints[nints - 1] = order;
    int rc = finish_array(t, disp, unit, MPI_COMBINER_SUBARRAY, ints, (int)nints, old, newtype, why);
    free(ints);
    return rc;
}

static int check_order(const char *where, int order)
{
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return dt_error(MPI_ERR_ARG, where, "order must be MPI_ORDER_C or MPI_ORDER_FORTRAN, not %d", order);
    return MPI_SUCCESS;
}

int PMPI_Type_create_subarray(int ndims, int array_of_sizes[], int array_of_subsizes[], int array_of_starts[],
                              int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *where = "MPI_Type_create_subarray";
    int rc = dt_check_arg(where, oldtype);
    if (rc == MPI_SUCCESS)
        rc = check_order(where, order);
    if (rc != MPI_SUCCESS)
        return rc;
    if (newtype == NULL)
        return dt_error(MPI_ERR_ARG, where, "newtype is NULL");
    if (ndims <= 0)
        return dt_error(MPI_ERR_ARG, where, "ndims must be positive, not %d", ndims);
    if (array_of_sizes == NULL || array_of_subsizes == NULL || array_of_starts == NULL)
        return dt_error(MPI_ERR_ARG, where, "an argument array is NULL");
    for (int i = 0; i < ndims; i++) {
        int size = array_of_sizes[i], sub = array_of_subsizes[i], start = array_of_starts[i];
        if (size <= 0)
            return dt_error(MPI_ERR_ARG, where, "array_of_sizes[%d] = %d must be positive", i, size);
        if (sub < 0 || sub > size)
            return dt_error(MPI_ERR_ARG, where, "array_of_subsizes[%d] = %d is not within 0..%d", i, sub, size);
        if (start < 0 || start > size - sub)
            return dt_error(MPI_ERR_ARG, where, "array_of_starts[%d] = %d is not within 0..%d", i, start,
                            size - sub);
    }
    if (ndims > (INT32_MAX - 2) / 3)
        return dt_error(MPI_ERR_ARG, where, "ndims %d is too large", ndims);
    const char *why = NULL;
    rc = subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype, newtype, &why);
    return rc == MPI_SUCCESS ? rc : dt_error(rc, where, "%s", why != NULL ? why : "cannot create the type");
}
STRAND_MPI_ALIAS(MPI_Type_create_subarray);

/* ---- darray ---- */

struct darray_dim {
    int gsize, distrib, darg, psize, coord;
};

/* The local part of one dimension, as copies of `elem` (which steps one
 * index of this dimension); *first gets the first local index. */
static int darray_local(const struct darray_dim *d, MPI_Datatype elem, MPI_Aint unit, MPI_Datatype *out,
                        int *first, const char **why)
{
    if (d->distrib == MPI_DISTRIBUTE_NONE) {
        *first = 0;
        return dt_make_contiguous(d->gsize, elem, out, why);
    }
    if (d->distrib == MPI_DISTRIBUTE_BLOCK) {
        int b = d->darg == MPI_DISTRIBUTE_DFLT_DARG ? (d->gsize + d->psize - 1) / d->psize : d->darg;
        long start = (long)d->coord * b;
        long count = start >= d->gsize ? 0 : (d->gsize - start < b ? d->gsize - start : b);
        *first = count > 0 ? (int)start : 0;
        return dt_make_contiguous((int)count, elem, out, why);
    }
    /* Cyclic: blocks of b indices, every psize * b, starting at coord * b. */
    long b = d->darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : d->darg;
    long start = (long)d->coord * b, period = (long)d->psize * b;
    if (start >= d->gsize) {
        *first = 0;
        return dt_make_contiguous(0, elem, out, why);
    }
    *first = (int)start;
    long nblocks = (d->gsize - start + period - 1) / period;
    long last = d->gsize - (start + (nblocks - 1) * period);
    if (last > b)
        last = b;
    MPI_Aint stride;
    if (__builtin_mul_overflow((MPI_Aint)period, unit, &stride)) {
        *why = overflow;
        return MPI_ERR_ARG;
    }
    if (last == b)
        return dt_make_hvector((int)nblocks, (int)b, stride, elem, out, why);
    /* The last block is shorter: full blocks, then the remainder. */
    MPI_Datatype parts[2];
    int rc = dt_make_hvector((int)nblocks - 1, (int)b, stride, elem, &parts[0], why);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = dt_make_contiguous((int)last, elem, &parts[1], why);
    if (rc != MPI_SUCCESS) {
        dt_release(parts[0]);
        return rc;
    }
    int ones[2] = { 1, 1 };
    MPI_Aint disps[2] = { 0, stride * (MPI_Aint)(nblocks - 1) };
    rc = dt_make_struct(2, ones, disps, parts, out, why);
    dt_release(parts[0]);
    dt_release(parts[1]);
    return rc;
}

static int darray(int size, int rank, int ndims, const int *gsizes, const int *distribs, const int *dargs,
                  const int *psizes, int order, MPI_Datatype old, MPI_Datatype *newtype, const char **why)
{
    struct darray_dim *dims = malloc((size_t)ndims * sizeof *dims);
    if (dims == NULL) {
        *why = "out of memory";
        return MPI_ERR_NO_MEM;
    }
    /* Process coordinates: the process grid is row-major whatever `order`. */
    for (int i = ndims - 1, r = rank; i >= 0; i--) {
        dims[i] = (struct darray_dim){ gsizes[i], distribs[i], dargs[i], psizes[i], r % psizes[i] };
        r /= psizes[i];
    }
    MPI_Aint unit = dt_extent(old), disp = 0;
    MPI_Datatype t = old;
    dt_retain(old);
    int rc = MPI_SUCCESS;
    for (int k = 0; k < ndims && rc == MPI_SUCCESS; k++) {
        const struct darray_dim *d = &dims[dim_at(order, ndims, k)];
        MPI_Datatype next = NULL;
        if (k > 0) {    /* copies of the faster dimensions step one index of this one */
            rc = dt_make_resized(t, 0, unit, &next, why);
            if (!step(&t, rc, next))
                break;
        }
        int first = 0;
        rc = darray_local(d, t, unit, &next, &first, why);
        if (!step(&t, rc, next))
            break;
        MPI_Aint offset;
        if (__builtin_mul_overflow((MPI_Aint)first, unit, &offset) || __builtin_add_overflow(disp, offset, &disp) ||
            __builtin_mul_overflow(unit, (MPI_Aint)d->gsize, &unit)) {
            *why = overflow;
            rc = MPI_ERR_ARG;
        }
    }
    free(dims);
    if (rc != MPI_SUCCESS) {
        if (t != NULL)
            dt_release(t);
        return rc;
    }
    size_t nints = 4 * (size_t)ndims + 4;
    int *ints = malloc(nints * sizeof(int));
    if (ints == NULL) {
        dt_release(t);
        *why = "out of memory";
        return MPI_ERR_NO_MEM;
    }
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    memcpy(ints + 3, gsizes, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + ndims, distribs, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + 2 * ndims, dargs, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + 3 * ndims, psizes, (size_t)ndims * sizeof(int));
    ints[nints - 1] = order;
    rc = finish_array(t, disp, unit, MPI_COMBINER_DARRAY, ints, (int)nints, old, newtype, why);
    free(ints);
    return rc;
}

static int check_darray_dim(const char *where, int i, int gsize, int distrib, int darg, int psize)
{
    if (gsize <= 0)
        return dt_error(MPI_ERR_ARG, where, "array_of_gsizes[%d] = %d must be positive", i, gsize);
    if (psize <= 0)
        return dt_error(MPI_ERR_ARG, where, "array_of_psizes[%d] = %d must be positive", i, psize);
    if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0)
        return dt_error(MPI_ERR_ARG, where, "array_of_dargs[%d] = %d must be positive or "
                        "MPI_DISTRIBUTE_DFLT_DARG", i, darg);
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        if (psize != 1)
            return dt_error(MPI_ERR_ARG, where, "dimension %d is not distributed but has %d processes", i, psize);
        return MPI_SUCCESS;
    case MPI_DISTRIBUTE_BLOCK:
        if (darg != MPI_DISTRIBUTE_DFLT_DARG && (long)darg * psize < gsize)
            return dt_error(MPI_ERR_ARG, where, "dimension %d: %d blocks of %d cannot hold %d elements", i,
                            psize, darg, gsize);
        return MPI_SUCCESS;
    case MPI_DISTRIBUTE_CYCLIC:
        return MPI_SUCCESS;
    default:
        return dt_error(MPI_ERR_ARG, where, "array_of_distribs[%d] = %d is not a distribution", i, distrib);
    }
}

int PMPI_Type_create_darray(int size, int rank, int ndims, int array_of_gsizes[], int array_of_distribs[],
                            int array_of_dargs[], int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    const char *where = "MPI_Type_create_darray";
    int rc = dt_check_arg(where, oldtype);
    if (rc == MPI_SUCCESS)
        rc = check_order(where, order);
    if (rc != MPI_SUCCESS)
        return rc;
    if (newtype == NULL)
        return dt_error(MPI_ERR_ARG, where, "newtype is NULL");
    if (size <= 0 || rank < 0 || rank >= size)
        return dt_error(MPI_ERR_ARG, where, "rank %d is not within a group of size %d", rank, size);
    if (ndims <= 0 || ndims > (INT32_MAX - 4) / 4)
        return dt_error(MPI_ERR_ARG, where, "ndims must be positive, not %d", ndims);
    if (array_of_gsizes == NULL || array_of_distribs == NULL || array_of_dargs == NULL || array_of_psizes == NULL)
        return dt_error(MPI_ERR_ARG, where, "an argument array is NULL");
    long nprocs = 1;
    for (int i = 0; i < ndims; i++) {
        rc = check_darray_dim(where, i, array_of_gsizes[i], array_of_distribs[i], array_of_dargs[i],
                              array_of_psizes[i]);
        if (rc != MPI_SUCCESS)
            return rc;
        if (nprocs <= size)
            nprocs *= array_of_psizes[i];
    }
    if (nprocs != size)
        return dt_error(MPI_ERR_ARG, where, "the process grid has %ld processes, not size %d", nprocs, size);
    const char *why = NULL;
    rc = darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order,
                oldtype, newtype, &why);
    return rc == MPI_SUCCESS ? rc : dt_error(rc, where, "%s", why != NULL ? why : "cannot create the type");
}
STRAND_MPI_ALIAS(MPI_Type_create_darray);
