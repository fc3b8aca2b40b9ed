/* Communicators and groups (DESIGN §7).
 *
 * A communicator is a shared `comm_core` (members, context id, collective
 * state) plus one `strand_comm` handle per member rank (its own rank number,
 * error handler, name, attributes, topology). MPI_Comm values are pointers to
 * handles, except MPI_COMM_WORLD and MPI_COMM_SELF, which are constants that
 * every rank shares and that resolve to the calling rank's own handle.
 *
 * An inter-communicator has two cores, one per side, sharing one context
 * id: a side's `members` is the group it sends to (the remote group), so
 * point-to-point code indexes `core->members[dest]` for intra- and
 * inter-communicators alike; `local_members` is the side's own group. */
#ifndef STRAND_COMM_H
#define STRAND_COMM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "../core/core.h"

#define COMM_MAGIC 0x53434f4du      /* "SCOM" */
#define GROUP_MAGIC 0x53475250u     /* "SGRP" */

struct coll_core;
struct comm_context;
struct attribute;
struct topo;

/* Context ids come in pairs: `context_id` (even) matches point-to-point
 * messages, `context_id + 1` messages internal to collectives. */
struct comm_core {
    uint32_t context_id;            /* point-to-point matching context */
    int size;                       /* ranks in `members` */
    struct rank **members;          /* comm rank -> rank (the remote group for an intercomm) */
    atomic_int refcount;            /* handles (and internal users) of this core */
    struct coll_core *coll;         /* shared collective state (src/coll) */
    bool is_inter;
    int side;                       /* intercomm: 0 or 1; intracomm: 0 */
    int local_size;                 /* == size for an intracomm */
    struct rank **local_members;    /* == members for an intracomm */
    struct comm_core *peer;         /* intercomm: the other side's core; else NULL */
    struct comm_context *context;   /* what the core(s) of one communicator share */
};

struct strand_comm {
    uint32_t magic;
    struct comm_core *core;
    int rank;                       /* the owning rank's number in its (local) group */
    MPI_Comm public_handle;         /* what the user holds: MPI_COMM_WORLD/SELF or this pointer */
    MPI_Errhandler errhandler;
    struct attribute *attrs;        /* newest first (deleted last-in first-out) */
    struct topo *topo;              /* NULL when the communicator has no topology */
    uint32_t build_seq;             /* meetings (constructors but dup) held on this communicator */
    /* MPI_Comm_dup calls on this communicator. Atomic: threads of one rank
     * may dup the same communicator at once (MPI_THREAD_MULTIPLE), and each
     * must take its own dup number; the k-th number on every member is
     * the same new communicator. */
    _Atomic uint64_t dup_count;
    atomic_int refs;                /* the user's reference + pending internal users */
    char name[MPI_MAX_OBJECT_NAME];
};

struct strand_group {
    uint32_t magic;
    int size;
    int self_rank;                  /* the owning rank's position, or MPI_UNDEFINED */
    bool predefined;
    struct rank **members;          /* group rank -> rank */
};

/* Marks a handle dead just before its memory is freed; volatile so that
 * the compiler cannot drop the store as dead. Later use of the stale handle
 * then fails the magic check instead of reading a live-looking object. */
static inline void handle_magic_clear(uint32_t *magic)
{
    *(volatile uint32_t *)magic = 0;
}

/* Context ids of the predefined communicators; others come after. */
enum { COMM_CONTEXT_WORLD = 0, COMM_CONTEXT_SELF = 2, COMM_CONTEXT_FIRST_FREE = 4 };

static inline struct strand_comm *comm_resolve(MPI_Comm c)
{
    if (c == MPI_COMM_WORLD)
        return strand_self->comm_world;
    if (c == MPI_COMM_SELF)
        return strand_self->comm_self;
    return c;
}

/* NULL when the handle is not a live communicator. */
static inline struct strand_comm *comm_lookup(MPI_Comm c)
{
    if (c == MPI_COMM_NULL || strand_self == NULL)
        return NULL;
    struct strand_comm *comm = comm_resolve(c);
    return comm != NULL && comm->magic == COMM_MAGIC ? comm : NULL;
}

/* True when some member lives in another node process (a proxy rank):
 * constructors then exchange messages instead of meeting in memory. */
static inline bool comm_members_span_nodes(struct rank *const *members, int n)
{
    if (!__atomic_load_n(&strand_node.has_proxies, __ATOMIC_RELAXED))
        return false;   /* no rank of another node process is known here: no scan */
    for (int i = 0; i < n; i++)
        if (members[i]->remote != NULL)
            return true;
    return false;
}

/* Whether any member of either group of the communicator lives in another
 * node process. */
static inline bool comm_core_spans_nodes(const struct comm_core *core)
{
    return comm_members_span_nodes(core->members, core->size) ||
           (core->is_inter && comm_members_span_nodes(core->local_members, core->local_size));
}

/* The text of MPI_ERR_UNSUPPORTED_OPERATION from a constructor. */
#define COMM_SPANS_NODES_TEXT \
    "the communicator spans several node processes: this constructor is not supported across them yet " \
    "(see doc/limits.md)"

/* Tags of library-internal messages on a communicator's collective
 * context (context_id + 1). On an intercommunicator, messages within the
 * caller's own group (through comm_local_view) and messages to the remote
 * group are told apart by their tags only: a source rank number names a
 * member of either group. */
enum comm_internal_tag {
    COMM_TAG_COLL = 0,              /* collectives (src/coll), to the peer group */
    COMM_TAG_COLL_LOCAL = 1,        /* intercomm collectives, within the own group */
    COMM_TAG_GATHER = 2,            /* constructors: members -> (local) member 0 */
    COMM_TAG_SPREAD = 3,            /* constructors: (local) member 0 -> members */
    COMM_TAG_LEADERS = 4,           /* constructors: local member 0 <-> remote member 0 */
    COMM_TAG_TOPO = 5,              /* MPI_Dist_graph_create: edges and adjacency */
};

/* A stand-in handle addressing the caller's own group of an
 * intercommunicator (an intracommunicator's is itself) with the
 * communicator's context id, for library-internal messages among the
 * group's members; valid while `c` is. Used only where a communicator
 * spans node processes. */
struct comm_local_view {
    struct strand_comm comm;
    struct comm_core core;
};
static inline struct strand_comm *comm_local_view(struct strand_comm *c, struct comm_local_view *v)
{
    if (!c->core->is_inter)
        return c;
    v->core = (struct comm_core){ .context_id = c->core->context_id, .size = c->core->local_size,
                                  .members = c->core->local_members, .local_size = c->core->local_size,
                                  .local_members = c->core->local_members, .context = c->core->context };
    v->comm = (struct strand_comm){ .magic = COMM_MAGIC, .core = &v->core, .rank = c->rank,
                                    .public_handle = c->public_handle, .errhandler = c->errhandler };
    return &v->comm;
}

/* Size of the caller's own group (MPI_Comm_size). */
static inline int comm_local_size(const struct strand_comm *c) { return c->core->local_size; }

/* A world's start (src/core/world.c): each rank's SELF handle
 * (rank_create), then the world core (context id w->context_id) with every
 * rank's WORLD handle. comm_world_destroy drops the world's reference. */
int comm_world_create(struct world *w);
int comm_rank_handles_create(struct rank *r);
void comm_rank_handles_destroy(struct rank *r);
void comm_world_destroy(struct world *w);
/* MPI_Finalize: deletes the attributes of MPI_COMM_SELF, then of
 * MPI_COMM_WORLD (MPI-2.2 §8.7.1); returns the first callback error. */
int comm_finalize_rank(struct rank *r);

/* Handle references for operations that outlive MPI_Comm_free (pending
 * requests): the handle's memory stays valid until the last release. */
void comm_retain(struct strand_comm *c);
void comm_release(struct strand_comm *c);
/* The same for a reference that a thread of `self`, the handle's rank,
 * takes and drops (a point-to-point request's, once per message). Without
 * MPI_THREAD_MULTIPLE only one thread at a time uses the rank's handles
 * (other threads touch `refs` only before the rank starts or after it
 * ended), so a plain load and store do: the atomic increment is a full
 * barrier, which on a sender waited for the previous message's stores. */
void comm_last_release(struct strand_comm *c);     /* after the last reference went */
static inline void comm_retain_by_owner(struct strand_comm *c, const struct rank *self)
{
    if (self->thread_level == MPI_THREAD_MULTIPLE) {
        comm_retain(c);
        return;
    }
    int refs = atomic_load_explicit(&c->refs, memory_order_relaxed);
    atomic_store_explicit(&c->refs, refs + 1, memory_order_relaxed);
}
static inline void comm_release_by_owner(struct strand_comm *c, const struct rank *self)
{
    if (self->thread_level == MPI_THREAD_MULTIPLE) {
        comm_release(c);
        return;
    }
    int refs = atomic_load_explicit(&c->refs, memory_order_relaxed) - 1;
    atomic_store_explicit(&c->refs, refs, memory_order_relaxed);
    if (refs == 0)
        comm_last_release(c);
}

/* Argument check shared by the MPI_Comm_* entry points: reports
 * MPI_ERR_COMM on MPI_COMM_WORLD and returns NULL when `comm` is not live. */
struct strand_comm *comm_checked(MPI_Comm comm, const char *where, int *rc);

/* --- groups (group.c) */
/* A new group of `size` members (uninitialized) owned by the calling rank. */
struct strand_group *group_alloc(int size);
/* Fills in self_rank for the calling rank. */
void group_find_self(struct strand_group *g);
struct strand_group *group_from_members(struct rank **members, int size);
struct strand_group *group_lookup(MPI_Group g);
void group_destroy(struct strand_group *g);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL for two member lists. */
int group_compare_members(struct rank **a, int na, struct rank **b, int nb);

/* --- construction (construct.c): collective over all members of `parent`
 * (both groups of an intercommunicator). Members meet in the parent's
 * construction slot; the last to arrive builds the new core(s) for
 * everyone in O(n log n) and wakes the others. */
struct build_request {
    int error;                      /* the caller's arguments were bad: everyone fails */
    int color;                      /* split: MPI_UNDEFINED leaves the caller out */
    int key;                        /* split: ordering key (ties: parent rank);
                                       adopt: the leader's rank */
    int expect_size;                /* split: size the result must have, or -1 */
    int high;                       /* merge */
    void *input;                    /* adopt: the leader's core; exchange: its input */
};
enum build_kind {
    BUILD_DUP,                      /* same groups, same order */
    BUILD_SPLIT,                    /* by (color, key) on each side */
    BUILD_MERGE,                    /* intercomm -> intracomm, low side first */
    BUILD_ADOPT,                    /* every member takes the core its leader passes */
};
struct build_result {
    struct comm_core *core;         /* NULL: the caller is not a member */
    int rank;
    void *output;                   /* from the exchange function */
};
/* Run by the builder over every member's `input` (parent rank order) to
 * compute every member's `output`; returns an MPI error class. */
typedef int (*build_exchange_fn)(int n, void *const *inputs, void **outputs);
int comm_build(struct strand_comm *parent, enum build_kind kind, const struct build_request *req,
               build_exchange_fn exchange, struct build_result *out);
/* A new intracommunicator core over `members` holding `refs` references,
 * with a fresh context id unless `fixed_id` is not CONTEXT_ID_NONE (a world's
 * MPI_COMM_WORLD or a rank's MPI_COMM_SELF, which do not hold its world). */
struct comm_core *comm_intra_core_create(struct rank **members, int size, uint32_t fixed_id, int refs);
/* Builds, then gives the caller its handle (MPI_COMM_NULL if it is not a
 * member); reports errors through `comm`. `dup` copies attributes and
 * topology from the parent. */
int comm_construct(MPI_Comm comm, const char *where, struct strand_comm *parent, enum build_kind kind,
                   const struct build_request *req, bool dup, MPI_Comm *newcomm);
/* A new intercommunicator pair (side 0: `local`, side 1: `remote`) with a
 * fresh context id; each core holds one reference per member of its side. */
struct comm_core *comm_intercomm_pair_create(struct rank **group0, int size0, struct rank **group1,
                                             int size1);
/* Communicators spanning node processes: the core(s) over group0 (and
 * group1 when size1 > 0: an intercommunicator) with the agreed context id
 * `id`, built once per node process by the first of its members to come;
 * the caller takes `shares` of its references (one per member it hands
 * the core to). Returns side 0's core; NULL when out of memory. */
struct comm_core *comm_shared_core_take(uint32_t id, struct rank **group0, int size0, struct rank **group1,
                                        int size1, int shares);
/* Constructors whose members are in several node processes, through
 * library-internal messages on the collective context of `local` (an
 * intracommunicator, or comm_local_view of an intercommunicator's own
 * group); every member calls them, `leader` is one of them. */
/* Every member gives a value; the leader gets the highest of all, the
 * others their own. */
uint32_t comm_leader_gather_max(struct strand_comm *local, int leader, uint32_t mine);
/* The same for every member's context id proposal. */
uint32_t comm_leader_gather_proposals(struct strand_comm *local, int leader);
/* The leader's `nints` ints and `bytes` reach every member: a member's
 * `ints` and `bytes` (malloc'd, freed by the caller) are filled. */
struct bytes_out;
void comm_leader_spread(struct strand_comm *local, int leader, int *ints, int nints, struct bytes_out *bytes);
/* An intercommunicator built by every node process of its members with
 * the agreed context id `id` (intercomm.c): the caller's group `local`
 * is side `side`, the other group given by its identities (identity.c,
 * remote_len bytes; remote_size members, or -1 for any). Returns the
 * caller's side with `shares` references of this process's copy (one per
 * member it hands it to); NULL with *rc set on failure. */
struct comm_core *comm_intercomm_take(uint32_t id, int side, struct rank **local, int local_size,
                                      const unsigned char *remote_ids, size_t remote_len, int remote_size,
                                      int shares, int *rc);
/* A handle of the calling rank for a core the builder gave it a reference
 * to; inherits the parent's error handler. NULL when out of memory (the
 * reference is dropped). */
struct strand_comm *comm_handle_for(struct comm_core *core, int rank, const struct strand_comm *parent);
/* Drops one reference to a core; the last one destroys it. */
void comm_core_release(struct comm_core *core);
/* MPI_Comm_free's work (also MPI_Comm_disconnect's): delete callbacks,
 * then the handle; errors are reported as `where`'s. */
int comm_free_handle(struct strand_comm *c, const char *where);
/* Frees a handle that was never given to the user. */
void comm_handle_discard(struct strand_comm *c);

/* --- context ids (context_id.c): even ids, recycled; CONTEXT_ID_NONE when exhausted */
#define CONTEXT_ID_NONE UINT32_MAX
uint32_t context_id_alloc(void);
void context_id_free(uint32_t id);
/* Communicators spanning node processes take ids from a separate space
 * (>= CONTEXT_ID_GLOBAL_BASE, never recycled): a member proposes the
 * next id of its process, the maximum proposal is agreed on, and every
 * process then skips past it. */
#define CONTEXT_ID_GLOBAL_BASE 0x40000000u
static inline bool context_id_is_global(uint32_t id)
{
    return id >= CONTEXT_ID_GLOBAL_BASE && id != CONTEXT_ID_NONE;
}
uint32_t context_id_propose_global(void);
/* A proposal after a failed claim (below): a random number of ids
 * further on, so that two constructions that failed on the same id do
 * not keep meeting on the same maximum. */
uint32_t context_id_propose_global_again(void);
void context_id_seen_global(uint32_t id);

/* Two constructions over different communicators can agree on the same
 * id at the same moment (proposals of different node processes coincide;
 * ranks are threads, so this needs no MPI_THREAD_MULTIPLE). Before using
 * an agreed id, each participant claims it in its own node process; the
 * construction keeps it only if every participant's claim succeeded,
 * otherwise all settle without keeping and agree again on higher ids.
 *
 * A construction is named by a claimant that every participant of it
 * in one node process passes alike and no concurrent construction does:
 * the parent's `comm_context` for the constructors of construct.c, the
 * side-0 leader's identity and connection number for
 * MPI_Intercomm_create.
 *
 * context_id_claim_global: true when `id` is unused here or claimed by
 *   the same construction, still pending. Every successful claim is
 *   settled exactly once by the same participant.
 * context_id_settle_global: ends one participant's claim; with `keep` the
 *   id stays in use for the context built with it.
 * context_id_hold_global / context_id_release_global: a context built
 *   with a global id (context_id_is_global) holds it from activation to its free, whether or not
 *   it was claimed (spawned and connected jobs agree on ids without
 *   claims), so later claims see it in use.
 * Any thread; each call takes a process-wide lock for a scan of the ids
 * in use here. */
struct context_claimant {
    const void *parent;             /* construct.c: the parent's comm_context; else NULL */
    uint64_t leader_gid;            /* MPI_Intercomm_create: side 0's leader's world id, */
    uint64_t leader_nonce;          /* its world rank << 32 | its connection number */
};
bool context_id_claim_global(uint32_t id, const struct context_claimant *construction);
void context_id_settle_global(uint32_t id, const struct context_claimant *construction, bool keep);
void context_id_hold_global(uint32_t id);
void context_id_release_global(uint32_t id);

#endif
