/* One-sided communication (DESIGN §9, MPI-2.2 chapter 11).
 *
 * A window is a shared `win_core` (every member's base, size and
 * displacement unit, readable by all local ranks, and the atomic words of
 * the three synchronization protocols) plus one `strand_win` handle per
 * member rank (its error handler, name, attributes, and the state of its
 * own epochs, which only it touches).
 *
 * Data operations to a local target are copies done at once by the
 * origin, so an epoch's operations are complete when the call returns;
 * synchronization only has to order them against the target's own loads
 * and stores:
 *  - fence: an epoch barrier over per-generation arrival counters;
 *  - post/start/complete/wait: per-pair (target, origin) counters;
 *  - lock/unlock: a fair reader-writer ticket lock per target.
 * Waiters spin briefly, then sleep (rank_wait_until); whoever changes a
 * word a rank may wait on wakes it. Operations reach the target through
 * the target's `win_target_ops` table: `rma_local_ops` for a target in
 * this node process, `rma_remote_ops` (remote.c) for one in another.
 *
 * A window whose members span node processes ("spanning") has one core
 * per node process, all under the same window id: local members' entries
 * are memory, remote members' entries know only their size and
 * displacement unit. Operations on a remote target are frames served by
 * its node's progress thread (remote.c); the same atomic words serve
 * local and remote origins there, so exclusion and accumulate atomicity
 * hold between them. Every frame is answered, and an origin's sync calls
 * wait until all its frames are (then the data is at the target). */
#ifndef STRAND_RMA_H
#define STRAND_RMA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../core/core.h"
#include "../op/op.h"
#include "../util/lock.h"

#define WIN_MAGIC 0x5357494eu        /* "SWIN" */

/* Fence generations: a member may run this many fences ahead of the
 * slowest (with MPI_MODE_NOPRECEDE) before it waits; arrival counters and
 * asserts are rings of this size. */
enum { FENCE_RING = 4 };

/* Windows of at most this many members, in a node whose ranks each have
 * a core, fence by polling each member's arrival word (no shared counter
 * to pass around); others count arrivals on one counter, and only the
 * last arriver wakes the sleepers (one wake per member and fence). */
enum { FENCE_FLAGS_MAX = 4 };

struct strand_win;

/* One data operation, as the origin described it. */
struct rma_op {
    void *origin;
    int origin_count;
    MPI_Datatype origin_type;
    int target;                     /* rank in the window */
    MPI_Aint offset;                /* bytes from the target's base */
    int target_count;
    MPI_Datatype target_type;
    struct op_plan plan;            /* accumulate only */
    bool exclusive;                 /* the origin holds an exclusive lock on the target */
};

/* How data reaches a target. Every member of a window in this node
 * process uses `rma_local_ops` (direct memory). */
struct win_target_ops {
    int (*put)(struct strand_win *w, const struct rma_op *op);
    int (*get)(struct strand_win *w, const struct rma_op *op);
    int (*accumulate)(struct strand_win *w, const struct rma_op *op);
};
extern const struct win_target_ops rma_local_ops;
extern const struct win_target_ops rma_remote_ops;     /* remote.c */

typedef _Atomic(struct rank *) atomic_rank_ptr;

/* Passive target: tickets are served in order; a reader lets the next
 * ticket in at once, a writer waits until it is served and no reader
 * holds the lock. `waiters[t % size]` is the rank holding ticket t that
 * may be asleep (allocated on first contention). */
struct win_lock {
    _Alignas(64) atomic_uint next;  /* next ticket to hand out */
    atomic_uint serving;            /* the ticket allowed in */
    atomic_uint readers;            /* shared holders */
    _Atomic(atomic_rank_ptr *) waiters;
};

/* Active target, one pair (this target, origin o): how many exposure
 * epochs the target opened to o, and how many access epochs o closed. */
struct pscw_pair {
    atomic_uint posted;             /* written by the target */
    atomic_uint completed;          /* written by the origin */
};

/* A member's fence arrival, written by it alone, on its own cache line
 * (origins read the member's base and size on every operation). */
struct fence_word {
    _Alignas(64) atomic_uint arrived;   /* last fence generation this member reached */
    atomic_int assert[FENCE_RING];      /* its assert at generation k, in [k % FENCE_RING] */
};

struct held_frame;

/* A lock request of an origin in another node process, waiting in the
 * target's ticket lock (lock.c); granted by whoever finds its turn come.
 * One word, (ticket << 2) | (exclusive << 1) | waiting, so that a grant
 * claims exactly the request whose turn it checked (compare-and-swap),
 * never a newer request of the same origin.
 *
 * The origin does not wait for the grant (MPI_Win_lock returns at once):
 * its operations and UNLOCK follow the LOCK, and the frames of that origin
 * to this target that arrive while its request waits are held here, in
 * order, until the grant; the granter then serves them (remote.c). */
struct remote_lock {
    _Atomic uint64_t state;
    struct lite_lock hold_lock;     /* the fields below but the last three */
    bool pending;                   /* a LOCK was served, its grant is not done yet: frames are held */
    struct held_frame *head, *tail;
    bool draining;                  /* someone serves the held frames: new ones queue behind */
    struct remote_lock *next_drain; /* on a thread's list of rows to serve */
    struct win_core *core;          /* the row's window, target and origin */
    int target, origin;
};

struct win_member {
    _Alignas(64) char *base;        /* NULL for a member in another node process */
    MPI_Aint size;
    int disp_unit;
    atomic_uint remote_pending;     /* as an origin: its frames not yet answered (remote.c) */
    struct rank *rank;
    const struct win_target_ops *ops;
    _Atomic(struct pscw_pair *) pscw;   /* pairs with every origin (allocated on first use) */
    _Atomic(struct remote_lock *) remote_locks; /* as a target: requests of remote origins, by origin */
    struct fence_word fence;
    struct win_lock lock;
};

/* A member's position in the window, for translating groups. */
struct win_index_entry {
    struct rank *rank;
    int index;
};

struct win_core {
    uint64_t id;                    /* agreed at creation; names the window between node processes */
    bool spans;                     /* some member is in another node process */
    int size;
    struct win_member *members;
    struct rank **ranks;            /* window rank -> rank (MPI_Win_get_group) */
    struct win_index_entry *index;  /* sorted by rank pointer */
    atomic_int refs;                /* member handles */
    bool fence_flags;               /* fence polls the members' words (FENCE_FLAGS_MAX) */
    /* Spanning windows (fence.c): the members by node process, nodes
     * numbered by their lowest member, that member being the node's
     * leader; every member's assert at the last fence, written by this
     * node's leader; the leader's buffers for the exchange among leaders. */
    int nnodes, my_node;
    int *node_first;                /* node -> first position in node_members; [nnodes] = size */
    int *node_members;              /* window ranks grouped by node, each node in rank order */
    int *span_asserts;              /* by window rank */
    int *span_buf;                  /* by position in node_members */
    struct strand_request *span_reqs;   /* 2 x (nnodes - 1) */
    _Alignas(64) atomic_uint fence_arrivals[FENCE_RING];
    _Alignas(64) atomic_uint fence_done;    /* every member reached this generation */
};

/* What the calling rank knows about each target of its window. */
enum {
    TS_ACCESS = 1,                  /* in the current start group */
    TS_POSTED = 2,                  /* ... and its post was seen (or NOCHECK) */
    TS_LOCK_SHARED = 4,
    TS_LOCK_EXCLUSIVE = 8,
    TS_LOCK_NOCHECK = 16,           /* locked with MPI_MODE_NOCHECK: nothing to release */
};
#define TS_LOCKED (TS_LOCK_SHARED | TS_LOCK_EXCLUSIVE)

enum fence_state {
    FENCE_CLOSED,                   /* no fence epoch: before the first fence, after NOSUCCEED, or another epoch began */
    FENCE_OPEN,                     /* every member's arrival at the last fence is known */
    FENCE_OPEN_UNSYNCED,            /* NOPRECEDE: check each target's arrival on first use */
};

/* A member's own view of the fence generations. */
struct fence_cursor {
    unsigned gen;                   /* fences this member has called */
    unsigned synced;                /* every member is known to have reached this one */
};

struct strand_win {
    uint32_t magic;
    struct rank *owner;
    struct win_core *core;
    int rank;                       /* the owner's rank in the window */
    MPI_Errhandler errhandler;
    struct attribute *attrs;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Aint attr_size;             /* storage for MPI_WIN_SIZE / MPI_WIN_DISP_UNIT */
    int attr_disp_unit;
    /* Epochs of the owner. */
    struct fence_cursor fence_cur;
    enum fence_state fence;
    bool fence_ops;                 /* RMA calls since the last fence */
    bool access_active;             /* between start and complete */
    bool expose_active;             /* between post and wait/test */
    int access_size, expose_size;
    int *access_group;              /* window ranks (allocated on first use, `size` entries) */
    int *expose_group;
    int locks_held;
    uint8_t *target_state;          /* TS_* per target */
    struct strand_comm *comm;       /* spanning windows: the communicator (retained) fences and frees meet on */
    const int *fence_asserts;       /* spanning windows: every member's assert at the last fence (the core's) */
};

/* NULL unless `win` is a live window handle of the calling rank. */
static inline struct strand_win *win_lookup(MPI_Win win)
{
    if (win == MPI_WIN_NULL || strand_self == NULL || win->magic != WIN_MAGIC || win->owner != strand_self)
        return NULL;
    return win;
}

/* Checks initialization and the handle; reports MPI_ERR_WIN otherwise. */
struct strand_win *win_checked(MPI_Win win, const char *where, int *rc);

#define win_error(w, code, where, ...) error_report_object((w)->errhandler, (w), (code), (where), __VA_ARGS__)

/* Wakes every member that sleeps (the caller changed a word they may wait on). */
void win_wake_members(struct win_core *core);

/* Waits until *word has reached `want` (counters wrap: compared as a
 * signed difference); acquires what was released with the update. */
void win_wait_counter(atomic_uint *word, unsigned want);

/* The window rank of a rank (MPI_UNDEFINED for non-members). */
int win_rank_of(const struct win_core *core, const struct rank *r);

/* The core of window `id` in this node process, NULL if none (any thread;
 * the caller knows the window cannot be freed meanwhile). */
struct win_core *win_registry_find(uint64_t id);

/* All members of `c` meet and exchange `bytes` each (library-internal
 * messages on its collective context, with a tag of their own): `all`
 * gets every member's data in rank order once everyone arrived. */
/* Collectives use tag 0 there, communicator constructors 1 and 2 (construct.c). */
enum { WIN_TAG_CREATE = 16, WIN_TAG_BARRIER = 17, WIN_TAG_FENCE = 18 };
void win_exchange(struct strand_comm *c, int tag, const void *mine, int bytes, void *all);

static inline bool win_member_is_remote(const struct win_core *core, int member)
{
    return core->members[member].ops != &rma_local_ops;
}

/* --- synchronization (fence.c, pscw.c, lock.c) */
/* One fence generation (the cursor is advanced here): arrive, and if
 * `wait` wait until every member has arrived. */
void fence_pass_core(struct win_core *core, int rank, struct fence_cursor *cur, bool wait);
/* A spanning window's fence (also its free's barrier): every member's
 * frames answered, asserts exchanged, all members arrived. */
void fence_spanning(struct strand_win *w, int assert);
/* Spanning windows: the node plan and the fence's buffers (window.c, at
 * creation); MPI_ERR_NO_MEM. */
int fence_spanning_setup(struct win_core *core);
void fence_spanning_free(struct win_core *core);
static inline void fence_pass(struct strand_win *w, bool wait)
{
    fence_pass_core(w->core, w->rank, &w->fence_cur, wait);
}
/* Before the first operation on `target` in a NOPRECEDE fence epoch. */
void fence_await_target(struct strand_win *w, int target);
/* The assert `target` gave to the fence that opened the current epoch. */
int fence_target_assert(struct strand_win *w, int target);
/* Before the first operation on `target` in an access epoch. */
int pscw_await_post(struct strand_win *w, int target);
int lock_acquire(struct strand_win *w, int target, bool exclusive);
void lock_release(struct strand_win *w, int target, bool exclusive);
/* Target side of passive target for remote origins (progress thread):
 * queue `origin`'s request in `target`'s lock (granted through
 * rma_remote_lock_granted when its turn comes), and release it. */
void lock_request_remote(struct win_core *core, int target, int origin, bool exclusive);
void lock_release_core(struct win_core *core, int target, bool exclusive);
/* The pairs of target t with every origin (allocated on first use); NULL when out of memory. */
struct pscw_pair *pscw_row(struct win_core *core, int t);

/* --- accumulate (accumulate.c) */
/* dst[i] = src[i] op dst[i] for `n` elements of the plan's element type,
 * each element atomic with respect to other accumulates unless `exclusive`. */
void acc_apply(const struct op_plan *plan, void *dst, const void *src, size_t n, bool exclusive);

#endif
