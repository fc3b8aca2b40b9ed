/* Datatypes: one representation for every data path.
 *
 * A type keeps the arguments it was built from (for MPI_Type_get_contents,
 * element counting and external32), its bounds, and, once committed, a
 * compact LAYOUT of one element: a small tree of ops, each either a strided
 * BLOCK (`count` pieces of `len` contiguous bytes, `stride` apart) or a LOOP
 * (`count` iterations, `stride` apart, of a body of ops). A vector of a
 * million doubles is ONE op; `count` elements of a message repeat the layout
 * every `extent` bytes. The copy engine walks a source and a destination
 * layout at once, so a send layout is copied straight into a receive layout
 * with no pack buffer. */
#ifndef STRAND_DATATYPE_H
#define STRAND_DATATYPE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mpi.h"

struct attribute;

#define DT_MAGIC 0x44545950u        /* "DTYP" */
/* Loops of one iteration are inlined and empty ops dropped, so every loop
 * level at least doubles the data: 62 levels cannot fit in memory. */
#define DT_MAX_DEPTH 62

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

/* One op of a layout. BLOCK when nbody == 0, LOOP otherwise. */
struct dt_op {
    MPI_Aint disp;          /* from the base of the enclosing iteration */
    MPI_Aint stride;        /* between pieces (BLOCK) or iterations (LOOP) */
    size_t count;           /* pieces or iterations, >= 1 */
    size_t len;             /* BLOCK: bytes per piece; LOOP: data bytes per iteration */
    uint32_t body, nbody;   /* LOOP: its body is ops[body .. body + nbody) */
};

struct dt_layout {
    struct dt_op *ops;      /* top-level ops first: ops[0 .. ntop) */
    uint32_t nops, ntop;
    int depth;              /* deepest LOOP nesting */
};

struct strand_datatype {
    uint32_t magic;
    size_t size;                /* bytes of data in one element */
    MPI_Aint lb, ub;            /* extent = ub - lb */
    MPI_Aint true_lb, true_ub;
    bool sticky_lb, sticky_ub;  /* bounds set by MPI_LB/MPI_UB markers or a resize (MPI-2.2 §4.1.7) */
    size_t align;               /* strictest alignment of the basic elements (struct padding) */
    size_t nelements;           /* basic elements in one element (MPI_Get_elements) */
    MPI_Datatype uniform;       /* the predefined type every basic element is, or NULL if mixed */
    struct dt_layout layout;    /* one element; built at commit (predefined: static) */
    bool contiguous;            /* one block at lb of `size` bytes, size == extent */
    bool committed;
    bool predefined;            /* named types and MPI_Type_create_f90_* results: never freed */
    enum dt_basic basic;        /* predefined types: what one element is */
    enum dt_basic pair_value;   /* pair types: the value's kind (index is int) */
    size_t value_size;          /* pair types: bytes of the value part */
    int combiner;
    /* The constructor's arguments, exactly as MPI_Type_get_contents returns
     * them; child types are retained. */
    int nints, naddrs, ntypes;
    int *ints;
    MPI_Aint *addrs;
    MPI_Datatype *types;
    MPI_Datatype inner;         /* subarray/darray: the same type map built from simpler constructors */
    atomic_int refcount;        /* derived types: handle + parents + pending operations */
    char name[MPI_MAX_OBJECT_NAME];
    struct attribute *attrs;    /* cached attributes (src/comm/attr.h) */
    struct dt_op single_op[2];  /* predefined layouts (pair types have two blocks) */
};

static inline MPI_Aint dt_extent(MPI_Datatype t) { return t->ub - t->lb; }

/* True when `t` points at a live datatype object. */
bool dt_valid(MPI_Datatype t);
/* Returns MPI_SUCCESS or MPI_ERR_TYPE; `why` gets a short reason. */
int dt_check_usable(MPI_Datatype t, const char **why);
/* MPI_ERR_BUFFER when buf is NULL although data would be read there. */
bool dt_buffer_is_invalid(const void *buf, int count, MPI_Datatype t);

/* Copies min(bytes of src, capacity of dst) bytes of typed data from one
 * layout to another; returns the bytes copied. */
size_t dt_copy(void *dst, size_t dcount, MPI_Datatype dtype,
               const void *src, size_t scount, MPI_Datatype stype);
/* The same, with contiguous data stored past the cache (util/cache.h):
 * for large copies whose destination will not be read soon. */
size_t dt_copy_streaming(void *dst, size_t dcount, MPI_Datatype dtype,
                         const void *src, size_t scount, MPI_Datatype stype);
/* Packs `count` elements into contiguous `out`; returns bytes written. */
size_t dt_pack(void *out, const void *src, size_t count, MPI_Datatype t);
/* Unpacks up to `bytes` from contiguous `in` into the layout; returns bytes used. */
size_t dt_unpack(void *dst, size_t count, MPI_Datatype t, const void *in, size_t bytes);

/* A stream: the packed bytes of `count` elements of `t` at `buf`, moved a
 * part at a time, in order (a large message in bounded pieces). The type
 * must stay committed and the buffer valid until dt_stream_free. One
 * thread at a time. dt_stream_new returns NULL when out of memory; pack
 * and unpack move the next min(bytes, what is left) bytes and return it. */
struct dt_stream;
struct dt_stream *dt_stream_new(const void *buf, size_t count, MPI_Datatype t);
size_t dt_stream_pack(struct dt_stream *s, void *out, size_t bytes);
size_t dt_stream_unpack(struct dt_stream *s, const void *in, size_t bytes);
void dt_stream_free(struct dt_stream *s);

/* external32 (external32.c), for MPI-IO views: bytes of one element in
 * external32, and conversion of `count` elements between memory (any
 * layout) and contiguous external32 data; MPI_ERR_CONVERSION with `why`. */
size_t dt_external32_size(MPI_Datatype t);
int dt_external32_convert(void *native, size_t count, MPI_Datatype t, void *external, bool packing,
                          const char **why);

/* Element counts for MPI_Get_count / MPI_Get_elements from a byte count. */
int dt_count_from_bytes(MPI_Datatype t, size_t bytes);
int dt_elements_from_bytes(MPI_Datatype t, size_t bytes);

/* References of derived types (handle, parents, pending operations);
 * predefined types and MPI_DATATYPE_NULL are not counted, which the
 * inline test settles without a call (once per message in pt2pt). */
void dt_retain_derived(MPI_Datatype t);
void dt_release_derived(MPI_Datatype t);
static inline void dt_retain(MPI_Datatype t)
{
    if (t != MPI_DATATYPE_NULL && !t->predefined)
        dt_retain_derived(t);
}
static inline void dt_release(MPI_Datatype t)
{
    if (t != MPI_DATATYPE_NULL && !t->predefined)
        dt_release_derived(t);
}

/* --- inside src/datatype --- */

/* layout.c: builds t->layout (and `contiguous`) from the constructor tree. */
int dt_layout_build(MPI_Datatype t);
void dt_layout_free(struct dt_layout *l);

/* Visits the type map of `count` elements at `base` in order: `fn` gets
 * runs of `n` consecutive elements of one predefined type. Returns the first
 * non-zero result of `fn`. */
typedef int (*dt_visit_fn)(MPI_Datatype named, char *addr, size_t n, void *arg);
int dt_visit(MPI_Datatype t, char *base, size_t count, dt_visit_fn fn, void *arg);

/* create.c: a new derived type from constructor arguments (arrays copied,
 * child types retained); bounds and size computed. MPI_SUCCESS or an error
 * class, with `why` set. */
struct dt_args {
    int combiner;
    int nints, naddrs, ntypes;
    const int *ints;
    const MPI_Aint *addrs;
    const MPI_Datatype *types;
    MPI_Datatype inner;         /* subarray/darray only */
};
int dt_create(const struct dt_args *a, MPI_Datatype *out, const char **why);
/* Internal constructors used to express subarray and darray. */
int dt_make_contiguous(int count, MPI_Datatype old, MPI_Datatype *out, const char **why);
int dt_make_hvector(int count, int blocklen, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *out,
                    const char **why);
int dt_make_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out, const char **why);
int dt_make_struct(int count, const int *blocklens, const MPI_Aint *disps, const MPI_Datatype *types,
                   MPI_Datatype *out, const char **why);

/* Reports through MPI_COMM_WORLD's handler. */
int dt_error(int code, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Checks initialization and that t is a datatype (committed or not). */
int dt_check_arg(const char *where, MPI_Datatype t);

#endif
