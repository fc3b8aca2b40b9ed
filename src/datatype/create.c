/* Derived datatype objects: one generic constructor (dt_create) that keeps
 * the arguments and computes size, bounds and element counts; the MPI
 * constructors validate their input and call it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../comm/attr.h"
#include "datatype.h"
#include "typemap.h"

int dt_error(int code, const char *where, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return error_report(MPI_COMM_WORLD, code, where, "%s", message);
}

int dt_check_arg(const char *where, MPI_Datatype t)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (t == MPI_DATATYPE_NULL)
        return dt_error(MPI_ERR_TYPE, where, "MPI_DATATYPE_NULL is not a datatype");
    if (!dt_valid(t))
        return dt_error(MPI_ERR_TYPE, where, "invalid datatype handle");
    return MPI_SUCCESS;
}

/* Bounds of a type map under construction (MPI-2.2 §4.1.6-4.1.7). */
struct bounds {
    bool any;                   /* some entry contributed natural bounds */
    MPI_Aint lb, ub;
    bool data;                  /* some entry carries data */
    MPI_Aint true_lb, true_ub;
    bool sticky_lb, sticky_ub;
    MPI_Aint slb, sub;
};

static MPI_Aint min_aint(MPI_Aint a, MPI_Aint b) { return a < b ? a : b; }
static MPI_Aint max_aint(MPI_Aint a, MPI_Aint b) { return a > b ? a : b; }

/* Adds `n` consecutive copies of `c` at `disp`; false on overflow. */
static bool bounds_add(struct bounds *b, MPI_Datatype c, MPI_Aint disp, size_t n)
{
    if (n == 0)
        return true;
    MPI_Aint span, last;
    if (n > (size_t)INT64_MAX || __builtin_mul_overflow((MPI_Aint)(n - 1), dt_extent(c), &span) ||
        __builtin_add_overflow(disp, span, &last))
        return false;
    MPI_Aint lo = min_aint(disp, last), hi = max_aint(disp, last);
    MPI_Aint v;
    if (c == MPI_LB || c->sticky_lb) {
        if (__builtin_add_overflow(lo, c->lb, &v))
            return false;
        b->slb = b->sticky_lb ? min_aint(b->slb, v) : v;
        b->sticky_lb = true;
    }
    if (c == MPI_UB || c->sticky_ub) {
        if (__builtin_add_overflow(hi, c->ub, &v))
            return false;
        b->sub = b->sticky_ub ? max_aint(b->sub, v) : v;
        b->sticky_ub = true;
    }
    /* A child with no data and no markers (e.g. a zero-count type) adds nothing. */
    if (c->size == 0 && c->basic != DT_BASIC_MARKER && !c->sticky_lb && !c->sticky_ub)
        return true;
    MPI_Aint l, u;
    if (__builtin_add_overflow(lo, c->lb, &l) || __builtin_add_overflow(hi, c->ub, &u))
        return false;
    b->lb = b->any ? min_aint(b->lb, l) : l;
    b->ub = b->any ? max_aint(b->ub, u) : u;
    b->any = true;
    if (c->size > 0) {
        if (__builtin_add_overflow(lo, c->true_lb, &l) || __builtin_add_overflow(hi, c->true_ub, &u))
            return false;
        b->true_lb = b->data ? min_aint(b->true_lb, l) : l;
        b->true_ub = b->data ? max_aint(b->true_ub, u) : u;
        b->data = true;
    }
    return true;
}

/* Accumulates size, element count, alignment and element kind of blocks. */
struct content {
    size_t size, nelements, align;
    bool mixed;
    MPI_Datatype uniform;
};

static bool content_add(struct content *c, MPI_Datatype t, size_t n)
{
    size_t bytes, elems;
    if (__builtin_mul_overflow(n, t->size, &bytes) || __builtin_add_overflow(c->size, bytes, &c->size) ||
        __builtin_mul_overflow(n, t->nelements, &elems) ||
        __builtin_add_overflow(c->nelements, elems, &c->nelements))
        return false;
    if (n == 0 || t->size == 0)
        return true;
    if (t->align > c->align)
        c->align = t->align;
    if (c->uniform == NULL && !c->mixed)
        c->uniform = t->uniform;
    else if (c->uniform != t->uniform)
        c->mixed = true;
    return true;
}

static void *copy_array(void *to, const void *from, size_t bytes)
{
    if (bytes > 0)
        memcpy(to, from, bytes);
    return to;
}

static MPI_Datatype alloc_type(const struct dt_args *a)
{
    MPI_Datatype t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    size_t ibytes = (size_t)a->nints * sizeof(int), abytes = (size_t)a->naddrs * sizeof(MPI_Aint);
    size_t tbytes = (size_t)a->ntypes * sizeof(MPI_Datatype);
    /* One allocation for the three argument arrays, addresses first (alignment). */
    char *args = malloc(abytes + tbytes + ibytes + 1);
    if (args == NULL) {
        free(t);
        return NULL;
    }
    t->addrs = copy_array(args, a->addrs, abytes);
    t->types = copy_array(args + abytes, a->types, tbytes);
    t->ints = copy_array(args + abytes + tbytes, a->ints, ibytes);
    t->nints = a->nints;
    t->naddrs = a->naddrs;
    t->ntypes = a->ntypes;
    t->combiner = a->combiner;
    t->magic = DT_MAGIC;
    atomic_init(&t->refcount, 1);
    for (int i = 0; i < a->ntypes; i++)
        dt_retain(a->types[i]);
    t->inner = a->inner;
    if (t->inner != NULL)
        dt_retain(t->inner);
    return t;
}

/* Adds every block to the bounds and the content. For vectors only the first
 * and last block can be extreme, so the bounds see just those two. */
static bool measure(MPI_Datatype t, struct bounds *b, struct content *c)
{
    if (typemap_is_vector(t)) {
        struct typemap_block first, last;
        size_t n = typemap_nblocks(t);
        if (n == 0)
            return true;
        size_t total;
        if (!typemap_block(t, 0, &first) || !typemap_block(t, n - 1, &last) ||
            __builtin_mul_overflow(n, first.n, &total))
            return false;
        return bounds_add(b, first.type, first.disp, first.n) && bounds_add(b, last.type, last.disp, last.n) &&
               content_add(c, first.type, total);
    }
    size_t n = typemap_nblocks(t);
    for (size_t i = 0; i < n; i++) {
        struct typemap_block blk;
        if (!typemap_block(t, i, &blk) || !bounds_add(b, blk.type, blk.disp, blk.n) ||
            !content_add(c, blk.type, blk.n))
            return false;
    }
    return true;
}

static void set_bounds(MPI_Datatype t, const struct bounds *b, size_t align)
{
    t->sticky_lb = b->sticky_lb;
    t->sticky_ub = b->sticky_ub;
    t->lb = b->sticky_lb ? b->slb : b->any ? b->lb : 0;
    t->ub = b->sticky_ub ? b->sub : b->any ? b->ub : 0;
    t->true_lb = b->data ? b->true_lb : 0;
    t->true_ub = b->data ? b->true_ub : 0;
    /* Structs round their extent up to the strictest alignment of their
     * members, as a C compiler pads a struct (the epsilon of §4.1.6). */
    if (t->combiner == MPI_COMBINER_STRUCT && !b->sticky_ub && b->any && align > 1) {
        MPI_Aint extent = t->ub - t->lb, rem = extent % (MPI_Aint)align;
        if (rem != 0)
            t->ub += (MPI_Aint)align - (rem < 0 ? rem + (MPI_Aint)align : rem);
    }
}

int dt_create(const struct dt_args *a, MPI_Datatype *out, const char **why)
{
    MPI_Datatype t = alloc_type(a);
    if (t == NULL) {
        *why = "out of memory";
        return MPI_ERR_NO_MEM;
    }
    struct bounds b = { 0 };
    struct content c = { .align = 1 };
    if (!measure(t, &b, &c)) {
        dt_release(t);
        *why = "the type's size or extent overflows the address range";
        return MPI_ERR_ARG;
    }
    t->size = c.size;
    t->nelements = c.nelements;
    t->align = c.align;
    t->uniform = c.mixed ? NULL : c.uniform;
    t->basic = DT_BASIC_NONE;
    set_bounds(t, &b, c.align);
    if (a->combiner == MPI_COMBINER_RESIZED) {
        t->lb = a->addrs[0];
        if (__builtin_add_overflow(a->addrs[0], a->addrs[1], &t->ub)) {
            dt_release(t);
            *why = "lb + extent overflows";
            return MPI_ERR_ARG;
        }
        t->sticky_lb = t->sticky_ub = true;
    }
    *out = t;
    return MPI_SUCCESS;
}

/* ---- internal constructors (also used by subarray and darray) ---- */

int dt_make_contiguous(int count, MPI_Datatype old, MPI_Datatype *out, const char **why)
{
    int ints[1] = { count };
    struct dt_args a = { MPI_COMBINER_CONTIGUOUS, 1, 0, 1, ints, NULL, &old, NULL };
    return dt_create(&a, out, why);
}

int dt_make_hvector(int count, int blocklen, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *out,
                    const char **why)
{
    int ints[2] = { count, blocklen };
    struct dt_args a = { MPI_COMBINER_HVECTOR, 2, 1, 1, ints, &stride, &old, NULL };
    return dt_create(&a, out, why);
}

int dt_make_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out, const char **why)
{
    MPI_Aint addrs[2] = { lb, extent };
    struct dt_args a = { MPI_COMBINER_RESIZED, 0, 2, 1, NULL, addrs, &old, NULL };
    return dt_create(&a, out, why);
}

int dt_make_struct(int count, const int *blocklens, const MPI_Aint *disps, const MPI_Datatype *types,
                   MPI_Datatype *out, const char **why)
{
    int *ints = malloc(sizeof(int) * ((size_t)count + 1));
    if (ints == NULL) {
        *why = "out of memory";
        return MPI_ERR_NO_MEM;
    }
    ints[0] = count;
    copy_array(ints + 1, blocklens, sizeof(int) * (size_t)count);
    struct dt_args a = { MPI_COMBINER_STRUCT, count + 1, count, count, ints, disps, types, NULL };
    int rc = dt_create(&a, out, why);
    free(ints);
    return rc;
}

/* ---- argument checks shared by the MPI constructors ---- */

static int check_new(const char *where, MPI_Datatype old, MPI_Datatype *newtype)
{
    int rc = dt_check_arg(where, old);
    if (rc != MPI_SUCCESS)
        return rc;
    if (newtype == NULL)
        return dt_error(MPI_ERR_ARG, where, "newtype must not be NULL");
    return MPI_SUCCESS;
}

static int check_count(const char *where, int count, const char *what)
{
    if (count < 0)
        return dt_error(MPI_ERR_COUNT, where, "negative %s %d", what, count);
    return MPI_SUCCESS;
}

static int check_blocklens(const char *where, int count, const int *blocklens)
{
    if (count > 0 && blocklens == NULL)
        return dt_error(MPI_ERR_ARG, where, "array_of_blocklengths is NULL");
    for (int i = 0; i < count; i++)
        if (blocklens[i] < 0)
            return dt_error(MPI_ERR_ARG, where, "negative block length %d at index %d", blocklens[i], i);
    return MPI_SUCCESS;
}

static int finish(const char *where, int rc, const char *why)
{
    if (rc == MPI_SUCCESS)
        return rc;
    return dt_error(rc, where, "%s", why != NULL ? why : "cannot create the datatype");
}

static int create_checked(const char *where, const struct dt_args *a, MPI_Datatype *newtype)
{
    const char *why = NULL;
    return finish(where, dt_create(a, newtype, &why), why);
}

/* ---- MPI constructors ---- */

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *where = "MPI_Type_contiguous";
    int rc = check_new(where, oldtype, newtype);
    if (rc == MPI_SUCCESS)
        rc = check_count(where, count, "count");
    if (rc != MPI_SUCCESS)
        return rc;
    const char *why = NULL;
    return finish(where, dt_make_contiguous(count, oldtype, newtype, &why), why);
}
STRAND_MPI_ALIAS(MPI_Type_contiguous);

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *where = "MPI_Type_vector";
    int rc = check_new(where, oldtype, newtype);
    if (rc == MPI_SUCCESS)
        rc = check_count(where, count, "count");
    if (rc == MPI_SUCCESS)
        rc = check_blocklens(where, 1, &blocklength);
    if (rc != MPI_SUCCESS)
        return rc;
    int ints[3] = { count, blocklength, stride };
    struct dt_args a = { MPI_COMBINER_VECTOR, 3, 0, 1, ints, NULL, &oldtype, NULL };
    return create_checked(where, &a, newtype);
}
STRAND_MPI_ALIAS(MPI_Type_vector);

static int hvector(const char *where, int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                   MPI_Datatype *newtype)
{
    int rc = check_new(where, oldtype, newtype);
    if (rc == MPI_SUCCESS)
        rc = check_count(where, count, "count");
    if (rc == MPI_SUCCESS)
        rc = check_blocklens(where, 1, &blocklength);
    if (rc != MPI_SUCCESS)
        return rc;
    const char *why = NULL;
    return finish(where, dt_make_hvector(count, blocklength, stride, oldtype, newtype, &why), why);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return hvector("MPI_Type_create_hvector", count, blocklength, stride, oldtype, newtype);
}
STRAND_MPI_ALIAS(MPI_Type_create_hvector);

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return hvector("MPI_Type_hvector", count, blocklength, stride, oldtype, newtype);
}
STRAND_MPI_ALIAS(MPI_Type_hvector);

/* Indexed family: ints = count, [blocklengths], [int displacements]. */
static int indexed(const char *where, int combiner, int count, const int *blocklens, const void *disps,
                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int rc = check_new(where, oldtype, newtype);
    if (rc == MPI_SUCCESS)
        rc = check_count(where, count, "count");
    if (rc == MPI_SUCCESS)
        rc = check_blocklens(where, combiner == MPI_COMBINER_INDEXED_BLOCK ? 1 : count, blocklens);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count > 0 && disps == NULL)
        return dt_error(MPI_ERR_ARG, where, "array_of_displacements is NULL");
    bool int_disps = combiner != MPI_COMBINER_HINDEXED;
    size_t nbl = combiner == MPI_COMBINER_INDEXED_BLOCK ? 1 : (size_t)count;
    size_t nints = 1 + nbl + (int_disps ? (size_t)count : 0);
    if (nints > INT32_MAX)
        return dt_error(MPI_ERR_COUNT, where, "count %d is too large", count);
    int *ints = malloc(nints * sizeof(int));
    if (ints == NULL)
        return dt_error(MPI_ERR_NO_MEM, where, "out of memory");
    ints[0] = count;
    copy_array(ints + 1, blocklens, nbl * sizeof(int));
    if (int_disps)
        copy_array(ints + 1 + nbl, disps, (size_t)count * sizeof(int));
    struct dt_args a = { combiner, (int)nints, int_disps ? 0 : count, 1, ints,
                         int_disps ? NULL : disps, &oldtype, NULL };
    rc = create_checked(where, &a, newtype);
    free(ints);
    return rc;
}

int PMPI_Type_indexed(int count, int array_of_blocklengths[], int array_of_displacements[],
                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, array_of_blocklengths,
                   array_of_displacements, oldtype, newtype);
}
STRAND_MPI_ALIAS(MPI_Type_indexed);

int PMPI_Type_create_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count, array_of_blocklengths,
                   array_of_displacements, oldtype, newtype);
}
STRAND_MPI_ALIAS(MPI_Type_create_hindexed);

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed("MPI_Type_hindexed", MPI_COMBINER_HINDEXED, count, array_of_blocklengths,
                   array_of_displacements, oldtype, newtype);
}
STRAND_MPI_ALIAS(MPI_Type_hindexed);

int PMPI_Type_create_indexed_block(int count, int blocklength, int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count, &blocklength,
                   array_of_displacements, oldtype, newtype);
}
STRAND_MPI_ALIAS(MPI_Type_create_indexed_block);

static int type_struct(const char *where, int count, const int *blocklens, const MPI_Aint *disps,
                       const MPI_Datatype *types, MPI_Datatype *newtype)
{
    int rc = error_check_initialized(where);
    if (rc == MPI_SUCCESS)
        rc = check_count(where, count, "count");
    if (rc == MPI_SUCCESS)
        rc = check_blocklens(where, count, blocklens);
    if (rc != MPI_SUCCESS)
        return rc;
    if (newtype == NULL)
        return dt_error(MPI_ERR_ARG, where, "newtype must not be NULL");
    if (count > 0 && (disps == NULL || types == NULL))
        return dt_error(MPI_ERR_ARG, where, "NULL array of displacements or of types");
    for (int i = 0; i < count; i++)
        if (types[i] == MPI_DATATYPE_NULL || !dt_valid(types[i]))
            return dt_error(MPI_ERR_TYPE, where, "invalid datatype at index %d", i);
    if (count == INT32_MAX)
        return dt_error(MPI_ERR_COUNT, where, "count %d is too large", count);
    const char *why = NULL;
    return finish(where, dt_make_struct(count, blocklens, disps, types, newtype, &why), why);
}

int PMPI_Type_create_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                            MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return type_struct("MPI_Type_create_struct", count, array_of_blocklengths, array_of_displacements,
                       array_of_types, newtype);
}
STRAND_MPI_ALIAS(MPI_Type_create_struct);

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return type_struct("MPI_Type_struct", count, array_of_blocklengths, array_of_displacements,
                       array_of_types, newtype);
}
STRAND_MPI_ALIAS(MPI_Type_struct);

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    const char *where = "MPI_Type_create_resized";
    int rc = check_new(where, oldtype, newtype);
    if (rc != MPI_SUCCESS)
        return rc;
    const char *why = NULL;
    return finish(where, dt_make_resized(oldtype, lb, extent, newtype, &why), why);
}
STRAND_MPI_ALIAS(MPI_Type_create_resized);

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *where = "MPI_Type_dup";
    int rc = check_new(where, oldtype, newtype);
    if (rc != MPI_SUCCESS)
        return rc;
    struct dt_args a = { MPI_COMBINER_DUP, 0, 0, 1, NULL, NULL, &oldtype, NULL };
    MPI_Datatype t;
    rc = create_checked(where, &a, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    /* A duplicate keeps the committed state of its original. */
    if (oldtype->committed) {
        rc = dt_layout_build(t);
        if (rc != MPI_SUCCESS) {
            dt_release(t);
            return dt_error(rc, where, "cannot build the type's layout");
        }
        t->committed = true;
    }
    /* Cached attributes go through their copy callbacks (MPI-2.2 §6.7.4). */
    rc = attr_type_copy(oldtype, t);
    if (rc != MPI_SUCCESS) {
        dt_release(t);
        return dt_error(rc, where, "an attribute copy callback failed with code %d", rc);
    }
    *newtype = t;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Type_dup);

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    const char *where = "MPI_Type_commit";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (datatype == NULL)
        return dt_error(MPI_ERR_ARG, where, "datatype must not be NULL");
    rc = dt_check_arg(where, *datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Datatype t = *datatype;
    if (t->committed)
        return MPI_SUCCESS;
    rc = dt_layout_build(t);
    if (rc != MPI_SUCCESS)
        return dt_error(rc, where, rc == MPI_ERR_NO_MEM ? "out of memory building the layout"
                                                        : "the type is nested too deeply");
    t->committed = true;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Type_commit);

int PMPI_Type_free(MPI_Datatype *datatype)
{
    const char *where = "MPI_Type_free";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (datatype == NULL)
        return dt_error(MPI_ERR_ARG, where, "datatype must not be NULL");
    rc = dt_check_arg(where, *datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((*datatype)->predefined)
        return dt_error(MPI_ERR_TYPE, where, "%s is predefined and cannot be freed", (*datatype)->name);
    /* The caller's attributes are deleted first; a failing delete callback
     * keeps the type. */
    rc = attr_type_delete_all(*datatype);
    if (rc != MPI_SUCCESS)
        return dt_error(rc, where, "an attribute delete callback failed with code %d", rc);
    /* Pending operations and types built from this one keep their own
     * references: the object lives until the last one is dropped. */
    dt_release(*datatype);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Type_free);
