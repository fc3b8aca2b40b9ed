#include <stdlib.h>
#include <string.h>

#include "datatype_reference.h"

struct double_int { double value; int index; };
struct short_int { short value; int index; };

static void push(struct ref_map *m, MPI_Aint disp, size_t len)
{
    if (len == 0)
        return;
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->v = realloc(m->v, m->cap * sizeof *m->v);
    }
    m->v[m->n++] = (struct ref_entry){ disp, len };
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(t, &lb, &extent);
    return extent;
}

static void named(MPI_Datatype t, MPI_Aint at, struct ref_map *m)
{
    if (t == MPI_LB || t == MPI_UB)
        return;
    if (t == MPI_DOUBLE_INT) {
        push(m, at + offsetof(struct double_int, value), sizeof(double));
        push(m, at + offsetof(struct double_int, index), sizeof(int));
        return;
    }
    if (t == MPI_SHORT_INT) {
        push(m, at + offsetof(struct short_int, value), sizeof(short));
        push(m, at + offsetof(struct short_int, index), sizeof(int));
        return;
    }
    int size;
    MPI_Type_size(t, &size);
    push(m, at, (size_t)size);
}

/* Linear index of a tuple of `ndims` indices in an array of `sizes`. */
static MPI_Aint linear(int ndims, const int *sizes, const int *idx, int order)
{
    MPI_Aint lin = 0;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? k : ndims - 1 - k;
        lin = lin * sizes[d] + idx[d];
    }
    return lin;
}

/* Advances idx over [lo, hi) per dimension in array order; false at the end. */
static int next_index(int ndims, int *idx, const int *lo, const int *hi, int order)
{
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        if (++idx[d] < hi[d])
            return 1;
        idx[d] = lo[d];
    }
    return 0;
}

static void subarray(const int *ints, MPI_Datatype old, MPI_Aint base, struct ref_map *m)
{
    int n = ints[0];
    const int *sizes = ints + 1, *subs = ints + 1 + n, *starts = ints + 1 + 2 * n;
    int order = ints[1 + 3 * n];
    int lo[16], hi[16], idx[16];
    for (int d = 0; d < n; d++) {
        lo[d] = idx[d] = starts[d];
        hi[d] = starts[d] + subs[d];
        if (subs[d] == 0)
            return;
    }
    do
        ref_flatten(old, base + linear(n, sizes, idx, order) * extent_of(old), 1, m);
    while (next_index(n, idx, lo, hi, order));
}

static int owner(int i, int gsize, int distrib, int darg, int psize)
{
    if (distrib == MPI_DISTRIBUTE_NONE)
        return 0;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        return i / b;
    }
    int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (i / b) % psize;
}

static void darray(const int *ints, MPI_Datatype old, MPI_Aint base, struct ref_map *m)
{
    int rank = ints[1], n = ints[2];
    const int *g = ints + 3, *dist = ints + 3 + n, *darg = ints + 3 + 2 * n, *p = ints + 3 + 3 * n;
    int order = ints[3 + 4 * n];
    int coord[16], lo[16], idx[16];
    for (int d = n - 1, r = rank; d >= 0; d--) {
        coord[d] = r % p[d];
        r /= p[d];
        lo[d] = idx[d] = 0;
    }
    do {
        int mine = 1;
        for (int d = 0; d < n && mine; d++)
            mine = owner(idx[d], g[d], dist[d], darg[d], p[d]) == coord[d];
        if (mine)
            ref_flatten(old, base + linear(n, g, idx, order) * extent_of(old), 1, m);
    } while (next_index(n, idx, lo, g, order));
}

static void one(MPI_Datatype t, MPI_Aint base, struct ref_map *m)
{
    int ni, na, nt, combiner;
    MPI_Type_get_envelope(t, &ni, &na, &nt, &combiner);
    if (combiner == MPI_COMBINER_NAMED) {
        named(t, base, m);
        return;
    }
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nt + 1));
    MPI_Type_get_contents(t, ni, na, nt, ints, addrs, types);
    MPI_Datatype old = nt > 0 ? types[0] : MPI_DATATYPE_NULL;
    MPI_Aint ext = old != MPI_DATATYPE_NULL ? extent_of(old) : 0;
    switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        ref_flatten(old, base, 1, m);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        ref_flatten(old, base, (size_t)ints[0], m);
        break;
    case MPI_COMBINER_VECTOR:
        for (int i = 0; i < ints[0]; i++)
            ref_flatten(old, base + (MPI_Aint)i * ints[2] * ext, (size_t)ints[1], m);
        break;
    case MPI_COMBINER_HVECTOR:
        for (int i = 0; i < ints[0]; i++)
            ref_flatten(old, base + i * addrs[0], (size_t)ints[1], m);
        break;
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < ints[0]; i++)
            ref_flatten(old, base + ints[1 + ints[0] + i] * ext, (size_t)ints[1 + i], m);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < ints[0]; i++)
            ref_flatten(old, base + addrs[i], (size_t)ints[1 + i], m);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int i = 0; i < ints[0]; i++)
            ref_flatten(old, base + ints[2 + i] * ext, (size_t)ints[1], m);
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < ints[0]; i++)
            ref_flatten(types[i], base + addrs[i], (size_t)ints[1 + i], m);
        break;
    case MPI_COMBINER_SUBARRAY:
        subarray(ints, old, base, m);
        break;
    case MPI_COMBINER_DARRAY:
        darray(ints, old, base, m);
        break;
    default:
        abort();
    }
    for (int i = 0; i < nt; i++) {
        int ci, ca, ct, c;
        MPI_Type_get_envelope(types[i], &ci, &ca, &ct, &c);
        if (c != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
    free(ints);
    free(addrs);
    free(types);
}

void ref_flatten(MPI_Datatype t, MPI_Aint base, size_t count, struct ref_map *m)
{
    MPI_Aint ext = extent_of(t);
    for (size_t i = 0; i < count; i++)
        one(t, base + (MPI_Aint)i * ext, m);
}

void ref_free(struct ref_map *m)
{
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

size_t ref_bytes(const struct ref_map *m)
{
    size_t bytes = 0;
    for (size_t i = 0; i < m->n; i++)
        bytes += m->v[i].len;
    return bytes;
}

MPI_Aint *ref_stream(const struct ref_map *m)
{
    MPI_Aint *s = malloc(sizeof *s * (ref_bytes(m) + 1));
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++)
        for (size_t j = 0; j < m->v[i].len; j++)
            s[k++] = m->v[i].disp + (MPI_Aint)j;
    return s;
}

int ref_elements(const struct ref_map *m, size_t bytes)
{
    int n = 0;
    for (size_t i = 0; i < m->n && bytes > 0; i++) {
        if (m->v[i].len > bytes)
            return MPI_UNDEFINED;
        bytes -= m->v[i].len;
        n++;
    }
    return n;
}
