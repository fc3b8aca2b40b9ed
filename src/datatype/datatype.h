/* Datatypes: one representation for every data path. A type is described
 * for ONE element as a flattened list of (displacement, length) byte blocks
 * in type-map order; `count` elements repeat it every `extent` bytes. The
 * copy engine walks a source and a destination layout at once, so a send
 * layout is copied straight into a receive layout with no pack buffer. */
#ifndef STRAND_DATATYPE_H
#define STRAND_DATATYPE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include "mpi.h"

struct attribute;

struct dt_block {
    MPI_Aint disp;
    size_t len;
};

/* Basic element kinds, for reductions and external32. */
enum dt_basic {
    DT_BASIC_NONE, DT_BASIC_CHAR, DT_BASIC_SIGNED_CHAR, DT_BASIC_UNSIGNED_CHAR, DT_BASIC_BYTE,
    DT_BASIC_SHORT, DT_BASIC_UNSIGNED_SHORT, DT_BASIC_INT, DT_BASIC_UNSIGNED, DT_BASIC_LONG,
    DT_BASIC_UNSIGNED_LONG, DT_BASIC_LONG_LONG, DT_BASIC_UNSIGNED_LONG_LONG, DT_BASIC_FLOAT,
    DT_BASIC_DOUBLE, DT_BASIC_LONG_DOUBLE, DT_BASIC_WCHAR, DT_BASIC_BOOL, DT_BASIC_INT8,
    DT_BASIC_INT16, DT_BASIC_INT32, DT_BASIC_INT64, DT_BASIC_UINT8, DT_BASIC_UINT16,
    DT_BASIC_UINT32, DT_BASIC_UINT64, DT_BASIC_FLOAT_COMPLEX, DT_BASIC_DOUBLE_COMPLEX,
    DT_BASIC_LONG_DOUBLE_COMPLEX, DT_BASIC_PACKED, DT_BASIC_LOGICAL,
    DT_BASIC_PAIR, /* MINLOC/MAXLOC pair types: see `pair_value` */
    DT_BASIC_MARKER /* MPI_LB, MPI_UB */
};

struct strand_datatype {
    size_t size;                /* bytes of data in one element */
    MPI_Aint lb, ub;            /* extent = ub - lb */
    MPI_Aint true_lb, true_ub;
    int nblocks;
    struct dt_block *blocks;    /* one element, type-map order, adjacent blocks merged */
    bool contiguous;            /* one block at disp lb, size == extent */
    bool committed;
    bool predefined;
    enum dt_basic basic;        /* predefined types: what one element is */
    enum dt_basic pair_value;   /* pair types: the value's kind (index is int) */
    int combiner;
    atomic_int refcount;        /* derived types: handle + pending operations */
    char name[MPI_MAX_OBJECT_NAME];
    struct attribute *attrs;    /* cached attributes (src/comm/attr.h) */
    struct dt_block single_block; /* storage for one-block types */
};

static inline MPI_Aint dt_extent(MPI_Datatype t) { return t->ub - t->lb; }

/* Returns MPI_SUCCESS or MPI_ERR_TYPE; `why` gets a short reason. */
int dt_check_usable(MPI_Datatype t, const char **why);
/* MPI_ERR_BUFFER when buf is NULL although data would be read there. */
bool dt_buffer_is_invalid(const void *buf, int count, MPI_Datatype t);

/* Copies min(bytes of src, capacity of dst) bytes of typed data from one
 * layout to another; returns the bytes copied. */
size_t dt_copy(void *dst, size_t dcount, MPI_Datatype dtype,
               const void *src, size_t scount, MPI_Datatype stype);
/* Packs `count` elements into contiguous `out`; returns bytes written. */
size_t dt_pack(void *out, const void *src, size_t count, MPI_Datatype t);
/* Unpacks up to `bytes` from contiguous `in` into the layout; returns bytes used. */
size_t dt_unpack(void *dst, size_t count, MPI_Datatype t, const void *in, size_t bytes);

/* Element counts for MPI_Get_count / MPI_Get_elements from a byte count. */
int dt_count_from_bytes(MPI_Datatype t, size_t bytes);
int dt_elements_from_bytes(MPI_Datatype t, size_t bytes);

void dt_retain(MPI_Datatype t);
void dt_release(MPI_Datatype t);

#endif
