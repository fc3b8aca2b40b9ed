/* MPI-IO (DESIGN §11, MPI-2.2 chapter 13) within one node process.
 *
 * A file opened by a group of ranks is one shared `io_core` (one POSIX
 * descriptor used with pread/pwrite by every member, the shared file
 * pointer as an atomic counter, the collective meeting point, the byte-range
 * locks of atomic mode, the hints) plus one `strand_file` handle per member
 * (its view, individual file pointer, error handler, pending split
 * collective), which only its rank touches.
 *
 * Data moves as a contiguous DATA STREAM: the user's buffer when its type is
 * contiguous, else a staging buffer packed/unpacked by the datatype engine
 * (and converted for external32 or a user datarep). The view maps stream
 * bytes to file EXTENTS (offset, length), computed from the filetype
 * flattened once at MPI_File_set_view. Independent access moves extents
 * with pwritev/preadv (data sieving for dense reads); collective access is
 * two-phase: every member publishes its extents and stream, aggregators
 * copy pieces straight from/to the members' streams (shared address space)
 * and issue one large system call per collective-buffer window. */
#ifndef STRAND_IO_H
#define STRAND_IO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../core/core.h"

#define FILE_MAGIC 0x5346494cu      /* "SFIL" */

struct strand_comm;
struct strand_request;

/* A byte range of the file. */
struct io_extent {
    MPI_Offset off;
    size_t len;
};

/* A growable list of extents in access order. */
struct io_extents {
    struct io_extent *v;
    size_t n, cap;
};

/* One run of a flattened filetype: `len` bytes at `off` from the tile's
 * start; `before` data bytes of the tile precede it. */
struct io_run {
    MPI_Offset off;
    size_t len;
    size_t before;
};

struct io_datarep;

struct io_view {
    MPI_Offset disp;
    MPI_Datatype etype, filetype;   /* retained */
    char datarep[MPI_MAX_DATAREP_STRING];
    const struct io_datarep *rep;   /* NULL: native (or internal) */
    size_t esize;                   /* etype size in bytes */
    struct io_run *runs;            /* one filetype tile, in file order */
    size_t nruns;
    size_t tile_bytes;              /* data bytes per tile (filetype size) */
    MPI_Aint tile_extent;           /* tiles repeat this far apart */
};

/* Hints: what the program asked for, as used (MPI_File_get_info). */
enum io_switch { IO_AUTOMATIC, IO_ENABLE, IO_DISABLE };
enum { IO_EXTRA_HINTS = 16, IO_ERROR_SLOTS = 3, OVERSUBSCRIBED_YIELDS = 32, IO_GATHER_MAX = 5 };
struct io_hints {
    long cb_buffer_size;            /* bytes an aggregator moves per system call */
    int cb_nodes;                   /* aggregators */
    enum io_switch cb_read, cb_write;   /* romio_cb_read / romio_cb_write */
    enum io_switch ds_read;         /* romio_ds_read: data sieving of independent reads */
    long ind_rd_buffer_size;        /* data sieving window */
    long striping_unit;             /* accepted and reported; 0: not given */
    int striping_factor;
    /* Other hints, kept and reported back as given (access_style…). */
    int nextra;
    char *extra_key[IO_EXTRA_HINTS], *extra_value[IO_EXTRA_HINTS];
};

/* A held byte range (atomic mode, and writes against data sieving). */
struct io_range {
    MPI_Offset lo, hi;
    bool exclusive;
    struct io_range *next;
};

struct io_core {
    int fd;                         /* this node process's descriptor */
    /* Written through `fd` since its last fsync (or since the open): set
     * by every write and resize through it, taken by MPI_File_sync's
     * leader, which skips fsync when it was clear. */
    atomic_bool unsynced;
    char *path;
    int amode;
    int size;                       /* members */
    struct rank **members;          /* file rank -> rank (proxies for other node processes) */
    /* Members in this node process meet through memory; when the group
     * spans node processes (span.c) their leader (lowest local file rank)
     * speaks for them to the other leaders. */
    bool spans;
    int nlocal, leader;
    int nnodes, my_node;            /* node processes of the group, by lowest file rank */
    int *node_of;                   /* file rank -> node slot (spans only) */
    int *node_leader;               /* node slot -> its leader's file rank (spans only) */
    int64_t *gather[2];             /* io_allgather's buffers, IO_GATHER_MAX per member */
    /* The shared file pointer of a spanning group: 8 bytes in a hidden
     * file next to the file, updated under an fcntl lock (span.c). */
    int shfp_fd;
    char *shfp_path;
    pthread_mutex_t shfp_mutex;
    struct comm_core *comm_core;    /* the duplicate of the opening communicator */
    atomic_int refs;                /* open handles */
    bool atomic;                    /* atomic mode (set collectively) */
    struct io_hints hints;          /* set collectively */
    /* Collective meetings: a barrier, one slot per member, errors. */
    _Alignas(64) atomic_uint arrived;
    atomic_uint generation;
    void **slots;
    atomic_int coll_error[IO_ERROR_SLOTS];  /* by collective sequence (io_agree_error) */
    _Alignas(64) atomic_llong shared_fp;   /* the shared file pointer, in etypes */
    pthread_mutex_t lock_mutex;     /* atomic mode byte-range locks */
    pthread_cond_t lock_released;
    struct io_range *held;
};

/* A pending split collective (…_begin done, …_end not yet called). */
struct io_split {
    bool active;
    const void *buf;
    MPI_Status status;
    int error;
};

struct strand_file {
    uint32_t magic;
    struct io_core *core;
    int rank;                       /* in the file's group */
    MPI_Errhandler errhandler;
    struct io_view view;
    MPI_Offset fp;                  /* individual file pointer, in etypes */
    unsigned coll_seq;              /* collectives held on this handle */
    char *cb_buffer;                /* this member's collective buffer (aggregators), or NULL */
    size_t cb_buffer_size;
    struct io_split split;
    struct strand_comm *comm;       /* spans: this member's handle of the file's private communicator */
    unsigned gather_seq;            /* io_allgather calls on this handle */
    int lock_fd;                    /* spans: own descriptor for byte-range locks, or -1 */
    atomic_int pending;             /* nonblocking accesses queued or running (async.c) */
};

/* Makes room for element n of a growable array `v` of *cap elements:
 * returns the (possibly moved) array, or NULL when out of memory (`v` is
 * then unchanged). */
static inline void *io_grow(void *v, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return v;
    size_t grown = *cap ? 2 * *cap : 64;
    void *p = realloc(v, grown * elem);
    if (p != NULL)
        *cap = grown;
    return p;
}

static inline struct strand_file *file_lookup(MPI_File fh)
{
    return fh != MPI_FILE_NULL && fh->magic == FILE_MAGIC ? fh : NULL;
}

/* --- file.c */
/* Checks initialization and the handle; errors go to MPI_FILE_NULL's handler. */
struct strand_file *file_checked(MPI_File fh, const char *where, int *rc);
/* file_checked, then MPI_ERR_ARG when the output argument `out` is NULL. */
struct strand_file *file_query(MPI_File fh, const char *where, const void *out, int *rc);
/* Reports through the file's handler (MPI_FILE_NULL's when f is NULL). */
int file_error(struct strand_file *f, int code, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A member's handle on `core` (NULL when out of memory). */
struct strand_file *io_handle_create(struct io_core *core, int rank);
/* Frees a handle and drops its reference to the core (the last frees it). */
void io_handle_destroy(struct strand_file *f);
void io_core_free(struct io_core *core);
/* Opens the file as `amode` says: an MPI error class. */
int io_open_descriptor(const char *path, int amode, int *fd);
/* The MPI error class of a failed system call's errno. */
int io_errno_class(int err);
/* Every member of this node process waits until all of them arrived. */
void io_barrier(struct io_core *core);
/* Before a write or resize through core->fd: the next MPI_File_sync must
 * flush it (any thread; ordered before the sync by the sync's barrier). */
static inline void io_note_unsynced(struct io_core *core)
{
    atomic_store_explicit(&core->unsynced, true, memory_order_relaxed);
}
/* Agreement on an error: every member passes its own and gets the first
 * non-success class any member passed (collective). */
int io_agree_error(struct strand_file *f, int error);

/* --- span.c: groups spanning node processes (and what serves both kinds) */
/* Every member's `k` (<= IO_GATHER_MAX) values at every member: `all`
 * gets size * k values in file rank order (collective). */
void io_allgather(struct strand_file *f, const int64_t *mine, int k, int64_t *all);
/* A barrier over all members, in every node process. */
void io_sync_all(struct strand_file *f);
/* io_agree_error for spanning groups: the first error in file rank order. */
int io_agree_error_span(struct strand_file *f, int error);
/* The shared file pointer (etypes): *value gets it before adding `add`
 * (or it is set to *value when `store`). An MPI error class. */
int shared_fp_access(struct strand_file *f, MPI_Offset add, bool store, MPI_Offset *value);
/* The open of a group spanning node processes (collective): the
 * private communicator, this node process's core, the descriptors.
 * Every member returns the same error class. */
int span_open(struct strand_comm *c, const char *path, int amode, MPI_Info info, int argerror,
              struct strand_file **out);
/* After the closing barrier, member 0 removes the hidden file of a
 * spanning group's shared pointer and, with DELETE_ON_CLOSE, the file
 * (every member is done with it; other descriptors may still be open). */
void io_close_remove(struct strand_file *f);
/* Tags of the leaders' messages on the file's private communicator. */
enum { SPAN_TAG_GATHER = 1, SPAN_TAG_RELEASE, SPAN_TAG_SIZES, SPAN_TAG_PLAN, SPAN_TAG_DATA, SPAN_TAG_REPLY };
void span_send(struct strand_file *f, struct strand_request *req, const void *buf, size_t count,
               MPI_Datatype type, int dest, int tag);
void span_recv(struct strand_file *f, void *buf, size_t count, MPI_Datatype type, int source, int tag);

/* --- lock.c: byte ranges [lo, hi) held shared or exclusive; within one
 * node process a table, across node processes open-file-description
 * fcntl locks on the member's own descriptor. An MPI error class. */
int range_lock(struct strand_file *f, struct io_range *r, MPI_Offset lo, MPI_Offset hi, bool exclusive);
void range_unlock(struct strand_file *f, struct io_range *r);

/* --- hints.c */
void hints_default(struct io_hints *h, int members);
void hints_apply(struct io_hints *h, MPI_Info info, int members);
void hints_free(struct io_hints *h);
/* A new info object with every hint in use; MPI_ERR_NO_MEM on failure. */
int hints_to_info(const struct io_hints *h, MPI_Info *info);

/* --- view.c */
void view_set_default(struct io_view *v);
void view_clear(struct io_view *v);
/* Appends the file extents of `bytes` stream bytes starting `pos` bytes
 * into the view; adjacent extents merged. MPI_ERR_NO_MEM on failure. */
int view_extents(const struct io_view *v, MPI_Offset pos, size_t bytes, struct io_extents *out);
/* The absolute byte offset of view position `pos` (bytes into the stream). */
MPI_Offset view_byte_offset(const struct io_view *v, MPI_Offset pos);
void extents_free(struct io_extents *e);

/* --- datarep.c */
/* NULL for native/internal; a registered or the external32 representation. */
int datarep_find(const char *name, const struct io_datarep **rep);
/* Checks that data of `t` can be converted: MPI_ERR_CONVERSION when a
 * registered representation's extent function fails for one of its
 * predefined types, MPI_ERR_UNSUPPORTED_DATAREP when the representation
 * changes a size but lacks a conversion function; *why says which. */
int datarep_check_type(const struct io_datarep *rep, MPI_Datatype t, const char **why);
/* Bytes of one element of `t` in the file. */
size_t datarep_size(const struct io_datarep *rep, MPI_Datatype t);
/* How an etype or filetype lies in the file: elements of `memory` bytes
 * are `file` bytes there, and displacements are scaled by file/memory
 * when `scaled` (a portable type), else taken as they are.
 * MPI_ERR_UNSUPPORTED_DATAREP when the sizes change and the type is not
 * made of one padding-free predefined type. */
struct io_layout {
    size_t memory, file;
    bool scaled;
};
int datarep_layout(const struct io_datarep *rep, MPI_Datatype t, struct io_layout *out);
/* Converts `count` elements of `t` at `user` into the file form at `stream`
 * (writing) or back (reading). `position` is the access's view offset. */
int datarep_convert(const struct io_datarep *rep, bool writing, void *user, int count, MPI_Datatype t,
                    void *stream, MPI_Offset position);
int datarep_type_extent(const struct io_datarep *rep, MPI_Datatype t, MPI_Aint *extent);

/* --- access.c: moving data */
/* A prepared access: its stream and the file extents it maps to. */
struct io_access {
    void *buf;
    int count;
    MPI_Datatype type;
    bool writing;
    MPI_Offset position;            /* in etypes, within the view */
    char *stream;                   /* data stream (user buffer or staging) */
    char *staging;                  /* owned staging buffer, or NULL */
    size_t bytes;
    size_t element_file_bytes;      /* one element of `type` in the file, found at
                                     * the call (a registered representation's
                                     * extent function may call MPI: not on the
                                     * I/O thread) */
    struct io_extents ext;
    const char *why;                /* what was wrong, when access_prepare fails */
};
/* The checks of access_prepare: mode, count, type, buffer, offset, view,
 * representation; `why` says what was wrong. */
int access_check(struct strand_file *f, bool writing, MPI_Offset position, void *buf, int count, MPI_Datatype type,
                 const char **why);
/* Validates count/type/buffer against the file's mode and view, builds
 * the stream (packing or converting for writes) and the extents. */
int access_prepare(struct strand_file *f, const char *where, bool writing, MPI_Offset position, void *buf,
                   int count, MPI_Datatype type, struct io_access *a);
/* After the data moved: unpacks/converts reads, fills the status with the
 * bytes moved, frees staging. Returns `error` or a conversion error. */
int access_finish(struct strand_file *f, struct io_access *a, size_t moved, int error, MPI_Status *status);
/* Independent movement of a prepared access; `*moved` gets stream bytes
 * moved (a read stops at end of file). Atomic mode locks the range. */
int access_independent(struct strand_file *f, struct io_access *a, size_t *moved);
/* Collective (two-phase) movement: every member calls it, with its own
 * access (empty when its preparation failed with `error`); every member
 * returns the first error of any member. */
int access_collective(struct strand_file *f, struct io_access *a, int error, size_t *moved);
/* --- two-phase collective movement (access.c, exchange.c) */
enum { IO_ALIGN = 4096 };           /* aggregators' domains start at multiples of it */
/* What a member hands to a collective: its extents, where each extent's
 * data starts in its stream, and the stream. */
struct coll_part {
    const struct io_extent *ext;
    size_t *stream_at;
    size_t n;
    char *stream;
    int error;                      /* the member's own error: nobody moves data */
};

/* First extent of `part` that ends after `off` (extents are in file order). */
size_t coll_part_first_after(const struct coll_part *part, MPI_Offset off);
/* An aggregator moves [d0, d1) of the parts' pieces, window by window. */
int aggregate_domain(struct strand_file *f, struct coll_part **parts, int nparts, bool writing, MPI_Offset d0,
                     MPI_Offset d1);
/* Aggregator k of naggr: its equal, aligned share [d0, d1) of [lo, hi). */
void io_domain(int k, int naggr, MPI_Offset lo, MPI_Offset hi, MPI_Offset *d0, MPI_Offset *d1);
/* The collective of a spanning group (exchange.c): every member calls it
 * with its published part `me`; returns its error before agreement. */
int span_collective(struct strand_file *f, struct io_access *a, struct coll_part *me, size_t *moved);
/* A complete independent or collective operation at a view position. */
int io_transfer(struct strand_file *f, const char *where, bool writing, bool collective, MPI_Offset position,
                void *buf, int count, MPI_Datatype type, MPI_Status *status);
/* Bytes in the file of `memory_bytes` of data of `type` under the view's
 * representation. */
size_t access_file_bytes(const struct strand_file *f, MPI_Datatype type, size_t memory_bytes);
/* The number of etypes a (count, type) access covers; -1 with an error. */
int access_etypes(struct strand_file *f, const char *where, int count, MPI_Datatype type, MPI_Offset *n);


/* --- async.c: nonblocking independent accesses on the I/O thread */
/* Queues a prepared access (the job owns it on success; on failure the
 * caller still does) and gives an incomplete request that the I/O
 * thread completes. An MPI error class. */
int io_async_start(struct strand_file *f, struct io_access *a, MPI_Request *request);
/* Waits until none of the handle's nonblocking accesses is left. */
void io_async_drain(struct strand_file *f);

#endif
