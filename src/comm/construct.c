/* Building communicators among local ranks.
 *
 * Every communicator's cores share a `comm_context`: the context id, the
 * member lists and a construction slot with one entry per member. A
 * collective constructor called on a communicator is a meeting in that
 * slot: each member writes its arguments into its own entry and counts
 * itself in; the last to arrive (the builder) reads all entries, creates
 * the new cores, writes each member's result into its entry, resets the
 * count, publishes the construction's sequence number and wakes the
 * others. Members call constructors on a communicator in the same order
 * (MPI requires it), so each handle's own count of constructions names the
 * meeting; a member can only start the next meeting after this one is
 * published, so one slot per communicator is enough.
 *
 * Total work is O(n) for a dup and O(n log n) for a split (one sort by the
 * builder); nobody scans another member's arguments but the builder. */
#include <stdlib.h>
#include <string.h>

#include "../coll/coll.h"
#include "../core/errhandler.h"
#include "../util/lock.h"
#include "../pt2pt/pt2pt.h"
#include "../util/bytes.h"
#include "comm.h"

struct build_entry {
    struct rank *rank;              /* the member, to wake it */
    struct build_request req;       /* written by the member */
    struct build_result result;     /* written by the builder */
};

struct build_slot {
    atomic_uint arrived;
    atomic_uint completed;          /* sequence number of the last finished meeting */
    int error;                      /* the builder's verdict for that meeting */
    int nentries;
    struct build_entry *entries;    /* side 0's members, then side 1's */
};

/* A dup needs nobody's arguments, so it is no meeting: the first member
 * to reach dup number d builds the copy and leaves it in ring slot
 * d % DUP_RING for the others; the last to take it frees the slot. A member
 * can thus run up to DUP_RING dups ahead of the slowest before it waits,
 * which bounds the copies alive at once. No lock: one load and one atomic
 * decrement per member, plus a compare-and-swap for the builder. */
enum { DUP_RING = 32 };
enum { DUP_FREE, DUP_BUILDING, DUP_READY };

struct dup_waiter {
    struct dup_waiter *next;
    struct rank *rank;
};

struct dup_slot {
    _Atomic uint64_t state;         /* dup number << 2 | phase; FREE: of the previous use */
    struct comm_core *core;         /* READY: side 0's core of the copy (NULL: out of memory) */
    atomic_int untaken;             /* READY: members still to take it */
    atomic_int nwaiters;
    struct dup_waiter *waiters;     /* under the context's waiters_lock */
};

struct comm_context {
    uint32_t context_id;
    bool owns_context_id;           /* false for the predefined communicators */
    bool holds_worlds;              /* references the spawned worlds of its members */
    atomic_int live_cores;
    struct build_slot slot;
    struct lite_lock waiters_lock;  /* this communicator's: only members that must wait take it */
    struct dup_slot dups[DUP_RING];
    struct comm_core cores[2];      /* cores[1]: intercomm side 1 */
    /* then: the member lists (side 0, side 1), then the slot entries */
};

static struct comm_context *context_alloc(int size0, int size1)
{
    size_t n = (size_t)size0 + (size_t)size1;
    struct comm_context *ctx = calloc(1, sizeof *ctx + n * sizeof(struct rank *) + n * sizeof(struct build_entry));
    if (ctx == NULL)
        return NULL;
    struct rank **lists = (struct rank **)(ctx + 1);
    ctx->slot.nentries = (int)n;
    ctx->slot.entries = (struct build_entry *)(lists + n);
    ctx->context_id = CONTEXT_ID_NONE;
    for (uint64_t i = 0; i < DUP_RING; i++)
        atomic_store_explicit(&ctx->dups[i].state, i << 2 | DUP_FREE, memory_order_relaxed);
    struct comm_core *c0 = &ctx->cores[0], *c1 = &ctx->cores[1];
    c0->context = c1->context = ctx;
    c0->local_members = lists;
    c0->local_size = size0;
    if (size1 == 0) {               /* intracommunicator */
        c0->members = lists;
        c0->size = size0;
        return ctx;
    }
    c1->local_members = lists + size0;
    c1->local_size = size1;
    c0->members = c1->local_members;
    c0->size = size1;
    c1->members = c0->local_members;
    c1->size = size0;
    c0->is_inter = c1->is_inter = true;
    c1->side = 1;
    c0->peer = c1;
    c1->peer = c0;
    return ctx;
}

/* Every member list of the context, as one array (see context_alloc). */
static struct rank **context_members(struct comm_context *ctx, int *n)
{
    *n = ctx->slot.nentries;
    return (struct rank **)(ctx + 1);
}

static void world_hold(struct world *w, bool hold)
{
    if (hold)
        world_retain(w);
    else
        world_release(w);
}

/* A spawned world lives while a communicator reaches its ranks (core.h).
 * Members of one world are mostly adjacent: one reference per run, taken
 * or dropped once the run is read (dropping the last may free its ranks). */
static void context_hold_worlds(struct comm_context *ctx, bool hold)
{
    int n;
    struct rank **members = context_members(ctx, &n);
    struct world *run = NULL;
    for (int i = 0; i < n; i++) {
        struct world *w = members[i]->world;
        if (w == run)
            continue;
        if (run != NULL)
            world_hold(run, hold);
        run = w;
    }
    if (run != NULL)
        world_hold(run, hold);
    ctx->holds_worlds = hold;
}

static void context_free(struct comm_context *ctx)
{
    if (ctx->owns_context_id)
        context_id_free(ctx->context_id);
    if (context_id_is_global(ctx->context_id))
        context_id_release_global(ctx->context_id);
    if (ctx->holds_worlds)
        context_hold_worlds(ctx, false);
    free(ctx);
}

/* Gives the context an id (unless fixed) and each core its references and
 * collective state. On failure nothing of the context remains. */
static struct comm_core *context_activate(struct comm_context *ctx, uint32_t fixed_id, int refs0, int refs1,
                                          bool hold_worlds)
{
    int ncores = ctx->cores[0].is_inter ? 2 : 1;
    if (fixed_id != CONTEXT_ID_NONE) {
        ctx->context_id = fixed_id;
        if (context_id_is_global(fixed_id))
            context_id_hold_global(fixed_id);
    } else {
        ctx->context_id = context_id_alloc();
        ctx->owns_context_id = ctx->context_id != CONTEXT_ID_NONE;
        if (!ctx->owns_context_id) {
            context_free(ctx);
            return NULL;
        }
    }
    int refs[2] = { refs0, refs1 }, live = 0;
    for (int i = 0; i < ncores; i++) {
        ctx->cores[i].context_id = ctx->context_id;
        atomic_store_explicit(&ctx->cores[i].refcount, refs[i], memory_order_relaxed);
    }
    /* One collective state for both groups of an intercommunicator. */
    int rc = ncores == 1 ? coll_comm_attach(&ctx->cores[0])
                         : coll_intercomm_attach(&ctx->cores[0], ctx->cores[0].local_size, &ctx->cores[1],
                                                 ctx->cores[1].local_size);
    if (rc != MPI_SUCCESS) {
        context_free(ctx);
        return NULL;
    }
    /* A side of an intercommunicator spanning node processes may have no
     * member in this one: nobody will release its core, so it is dead
     * from the start (the other side still reads its member list). */
    for (int i = 0; i < ncores; i++)
        if (refs[i] > 0)
            live++;
        else
            coll_comm_detach(&ctx->cores[i]);
    /* A world's predefined communicators do not hold it. */
    if (hold_worlds)
        context_hold_worlds(ctx, true);
    atomic_store_explicit(&ctx->live_cores, live, memory_order_release);
    return &ctx->cores[0];
}

/* Members in this node process. */
static int local_count(struct rank *const *members, int n)
{
    int local = 0;
    for (int i = 0; i < n; i++)
        local += members[i]->remote == NULL;
    return local;
}

/* The core(s) over group0 (and group1 for an intercommunicator: size1 >
 * 0). `id`: CONTEXT_ID_NONE for a fresh process-local id, every member
 * being in this node process (one reference each); else the id the node
 * processes agreed on, one reference per member in this node process. */
static struct comm_core *cores_create(struct rank **group0, int size0, struct rank **group1, int size1,
                                      uint32_t id)
{
    struct comm_context *ctx = context_alloc(size0, size1);
    if (ctx == NULL)
        return NULL;
    memcpy(ctx->cores[0].local_members, group0, (size_t)size0 * sizeof *group0);
    if (size1 > 0)
        memcpy(ctx->cores[1].local_members, group1, (size_t)size1 * sizeof *group1);
    bool agreed = id != CONTEXT_ID_NONE;
    return context_activate(ctx, id, agreed ? local_count(group0, size0) : size0,
                            agreed ? local_count(group1, size1) : size1, true);
}

struct comm_core *comm_intra_core_create(struct rank **members, int size, uint32_t fixed_id, int refs)
{
    struct comm_context *ctx = context_alloc(size, 0);
    if (ctx == NULL)
        return NULL;
    memcpy(ctx->cores[0].members, members, (size_t)size * sizeof *members);
    /* A fixed id: a world's MPI_COMM_WORLD or a rank's MPI_COMM_SELF. */
    return context_activate(ctx, fixed_id, refs, 0, fixed_id == CONTEXT_ID_NONE);
}

struct comm_core *comm_intercomm_pair_create(struct rank **group0, int size0, struct rank **group1, int size1)
{
    return cores_create(group0, size0, group1, size1, CONTEXT_ID_NONE);
}

void comm_core_release(struct comm_core *core)
{
    if (atomic_fetch_sub_explicit(&core->refcount, 1, memory_order_acq_rel) != 1)
        return;
    coll_comm_detach(core);
    struct comm_context *ctx = core->context;
    if (atomic_fetch_sub_explicit(&ctx->live_cores, 1, memory_order_acq_rel) == 1)
        context_free(ctx);
}

/* --- handles */

struct strand_comm *comm_handle_for(struct comm_core *core, int rank, const struct strand_comm *parent)
{
    struct strand_comm *c = calloc(1, sizeof *c);
    if (c == NULL) {
        comm_core_release(core);
        return NULL;
    }
    c->magic = COMM_MAGIC;
    c->core = core;
    c->rank = rank;
    c->public_handle = c;
    c->errhandler = parent != NULL ? parent->errhandler : MPI_ERRORS_ARE_FATAL;
    errhandler_retain(c->errhandler);
    atomic_store_explicit(&c->refs, 1, memory_order_relaxed);
    return c;
}

/* --- the meeting */

static int participant_index(const struct strand_comm *c)
{
    return c->core->side == 0 ? c->rank : c->core->size + c->rank;
}

struct build_wait {
    struct build_slot *slot;
    uint32_t seq;
};

static bool build_published(void *arg)
{
    struct build_wait *w = arg;
    return (int32_t)(atomic_load_explicit(&w->slot->completed, memory_order_acquire) - w->seq) >= 0;
}

static void results_clear(struct build_slot *slot)
{
    for (int i = 0; i < slot->nentries; i++)
        slot->entries[i].result = (struct build_result){ .core = NULL, .rank = MPI_UNDEFINED };
}

/* Undoes a partly built result: each member's reference is dropped. */
static void results_release(struct build_slot *slot)
{
    for (int i = 0; i < slot->nentries; i++)
        if (slot->entries[i].result.core != NULL)
            comm_core_release(slot->entries[i].result.core);
    results_clear(slot);
}

/* Side 0's core of a copy of the parent's group(s), with context id `id`
 * (see cores_create). */
static struct comm_core *dup_core(const struct comm_core *parent, uint32_t id)
{
    const struct comm_core *side0 = parent->side == 0 ? parent : parent->peer;
    return cores_create(side0->local_members, side0->local_size, side0->members,
                        parent->is_inter ? side0->size : 0, id);
}

/* After a slot changed state: wake the members sleeping on it. */
static void dup_notify(struct comm_context *ctx, struct dup_slot *slot)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&slot->nwaiters, memory_order_relaxed) == 0)
        return;
    lite_lock(&ctx->waiters_lock);
    for (struct dup_waiter *w = slot->waiters; w != NULL; w = w->next)
        rank_wake(w->rank);
    lite_unlock(&ctx->waiters_lock);
}

struct dup_wait {
    struct dup_slot *slot;
    uint64_t seen;
};

static bool dup_slot_changed(void *arg)
{
    struct dup_wait *w = arg;
    return atomic_load_explicit(&w->slot->state, memory_order_acquire) != w->seen;
}

/* Sleeps until the slot leaves state `seen`. */
static void dup_wait_change(struct comm_context *ctx, struct dup_slot *slot, uint64_t seen)
{
    struct dup_waiter me = { .rank = strand_self };
    lite_lock(&ctx->waiters_lock);
    me.next = slot->waiters;
    slot->waiters = &me;
    atomic_fetch_add_explicit(&slot->nwaiters, 1, memory_order_seq_cst);
    lite_unlock(&ctx->waiters_lock);
    struct dup_wait w = { slot, seen };
    rank_wait_until(strand_self, dup_slot_changed, &w);
    lite_lock(&ctx->waiters_lock);
    for (struct dup_waiter **p = &slot->waiters; *p != NULL; p = &(*p)->next)
        if (*p == &me) {
            *p = me.next;
            break;
        }
    atomic_fetch_sub_explicit(&slot->nwaiters, 1, memory_order_relaxed);
    lite_unlock(&ctx->waiters_lock);
}

/* Takes this member's share of dup number `d` (counted from DUP_RING),
 * which the first of the `local` members of this node process to arrive
 * builds with context id `id` (see dup_core). */
static int dup_take(struct comm_core *parent, uint64_t d, uint32_t id, int local, struct build_result *out)
{
    struct comm_context *ctx = parent->context;
    struct dup_slot *slot = &ctx->dups[d % DUP_RING];
    for (;;) {
        uint64_t s = atomic_load_explicit(&slot->state, memory_order_acquire);
        if (s == (d << 2 | DUP_READY))
            break;
        if (s == ((d - DUP_RING) << 2 | DUP_FREE)) {
            if (!atomic_compare_exchange_strong_explicit(&slot->state, &s, d << 2 | DUP_BUILDING,
                                                         memory_order_acq_rel, memory_order_acquire))
                continue;
            slot->core = dup_core(parent, id);
            atomic_store_explicit(&slot->untaken, local, memory_order_relaxed);
            atomic_store_explicit(&slot->state, d << 2 | DUP_READY, memory_order_release);
            dup_notify(ctx, slot);
            break;
        }
        /* Being built, or still holding the dup DUP_RING before ours. */
        dup_wait_change(ctx, slot, s);
    }
    struct comm_core *core = slot->core;    /* read before our share is given up */
    if (atomic_fetch_sub_explicit(&slot->untaken, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&slot->state, d << 2 | DUP_FREE, memory_order_release);
        dup_notify(ctx, slot);
    }
    if (core == NULL)
        return MPI_ERR_NO_MEM;
    *out = (struct build_result){ .core = parent->side == 0 ? core : core->peer, .rank = -1 };
    return MPI_SUCCESS;
}

static int build_dup(struct comm_core *parent, struct build_slot *slot)
{
    struct comm_core *core = dup_core(parent, CONTEXT_ID_NONE);
    if (core == NULL)
        return MPI_ERR_NO_MEM;
    const struct comm_core *side0 = core;
    int size0 = side0->local_size, size1 = core->is_inter ? side0->size : 0;
    for (int i = 0; i < size0; i++)
        slot->entries[i].result = (struct build_result){ .core = core, .rank = i };
    for (int i = 0; i < size1; i++)
        slot->entries[size0 + i].result = (struct build_result){ .core = core->peer, .rank = i };
    return MPI_SUCCESS;
}

struct split_record {
    int color, side, key, index;
};

static int split_record_cmp(const void *pa, const void *pb)
{
    const struct split_record *a = pa, *b = pb;
    if (a->color != b->color)
        return a->color < b->color ? -1 : 1;
    if (a->side != b->side)
        return a->side - b->side;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->index - b->index;
}

/* True when every member of `run` expects the run to have its size. */
static bool run_size_expected(const struct build_slot *slot, const struct split_record *run, int n)
{
    for (int i = 0; i < n; i++) {
        int expect = slot->entries[run[i].index].req.expect_size;
        if (expect >= 0 && expect != n)
            return false;
    }
    return true;
}

static void run_members(const struct build_slot *slot, const struct split_record *run, int n, struct rank **out)
{
    for (int i = 0; i < n; i++)
        out[i] = slot->entries[run[i].index].rank;
}

/* One color's members: side 0's records, then side 1's (intercomm). */
static int build_split_run(struct build_slot *slot, bool inter, const struct split_record *run, int n0, int n1,
                           struct rank **scratch)
{
    if (!run_size_expected(slot, run, n0) || !run_size_expected(slot, run + n0, n1))
        return MPI_ERR_GROUP;
    if (inter && (n0 == 0 || n1 == 0))
        return MPI_SUCCESS;         /* no partner group: MPI_COMM_NULL */
    run_members(slot, run, n0, scratch);
    run_members(slot, run + n0, n1, scratch + n0);
    struct comm_core *core = inter ? comm_intercomm_pair_create(scratch, n0, scratch + n0, n1)
                                   : comm_intra_core_create(scratch, n0, CONTEXT_ID_NONE, n0);
    if (core == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n0; i++)
        slot->entries[run[i].index].result = (struct build_result){ .core = core, .rank = i };
    for (int i = 0; i < n1; i++)
        slot->entries[run[n0 + i].index].result = (struct build_result){ .core = core->peer, .rank = i };
    return MPI_SUCCESS;
}

static int build_split(struct comm_core *parent, struct build_slot *slot)
{
    int n = slot->nentries;
    int size0 = parent->side == 0 ? parent->local_size : parent->size;
    struct split_record *records = malloc((size_t)n * sizeof *records);
    struct rank **scratch = malloc((size_t)n * sizeof *scratch);
    if (records == NULL || scratch == NULL) {
        free(records);
        free(scratch);
        return MPI_ERR_NO_MEM;
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        const struct build_request *req = &slot->entries[i].req;
        if (req->color != MPI_UNDEFINED)
            records[m++] = (struct split_record){ req->color, i >= size0, req->key, i };
    }
    qsort(records, (size_t)m, sizeof *records, split_record_cmp);
    int rc = MPI_SUCCESS;
    for (int start = 0; start < m && rc == MPI_SUCCESS;) {
        int end = start, n0 = 0;
        while (end < m && records[end].color == records[start].color) {
            n0 += records[end].side == 0;
            end++;
        }
        rc = build_split_run(slot, parent->is_inter, records + start, n0, end - start - n0, scratch);
        start = end;
    }
    free(records);
    free(scratch);
    return rc;
}

static int build_merge(struct comm_core *parent, struct build_slot *slot)
{
    struct comm_core *side0 = parent->side == 0 ? parent : parent->peer;
    int size0 = side0->local_size, size1 = side0->size;
    /* The group that passed high = true goes last; if both agree, side 0 first. */
    bool side0_last = slot->entries[0].req.high && !slot->entries[size0].req.high;
    struct rank **scratch = malloc((size_t)(size0 + size1) * sizeof *scratch);
    if (scratch == NULL)
        return MPI_ERR_NO_MEM;
    int first0 = side0_last ? size1 : 0, first1 = side0_last ? 0 : size0;
    memcpy(scratch + first0, side0->local_members, (size_t)size0 * sizeof *scratch);
    memcpy(scratch + first1, side0->members, (size_t)size1 * sizeof *scratch);
    struct comm_core *core = comm_intra_core_create(scratch, size0 + size1, CONTEXT_ID_NONE, size0 + size1);
    free(scratch);
    if (core == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < size0; i++)
        slot->entries[i].result = (struct build_result){ .core = core, .rank = first0 + i };
    for (int i = 0; i < size1; i++)
        slot->entries[size0 + i].result = (struct build_result){ .core = core, .rank = first1 + i };
    return MPI_SUCCESS;
}

/* Each member takes the core its leader brought (its own rank stays). */
static int build_adopt(struct build_slot *slot, int self_index)
{
    int leader = slot->entries[self_index].req.key;
    if (leader < 0 || leader >= slot->nentries)
        return MPI_ERR_RANK;
    const struct build_request *lreq = &slot->entries[leader].req;
    if (lreq->input == NULL)
        return lreq->color != MPI_SUCCESS ? lreq->color : MPI_ERR_OTHER;
    for (int i = 0; i < slot->nentries; i++)
        slot->entries[i].result = (struct build_result){ .core = lreq->input, .rank = i };
    return MPI_SUCCESS;
}

static int build_exchange(struct build_slot *slot, build_exchange_fn exchange)
{
    int n = slot->nentries;
    void **inputs = malloc((size_t)n * sizeof *inputs);
    void **outputs = calloc((size_t)n, sizeof *outputs);
    int rc = MPI_ERR_NO_MEM;
    if (inputs != NULL && outputs != NULL) {
        for (int i = 0; i < n; i++)
            inputs[i] = slot->entries[i].req.input;
        rc = exchange(n, inputs, outputs);
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
            slot->entries[i].result.output = outputs[i];
    }
    free(inputs);
    free(outputs);
    return rc;
}

/* A member with bad arguments still takes part, so nobody waits forever;
 * the construction then fails everywhere with its error. */
static int first_member_error(const struct build_slot *slot)
{
    for (int i = 0; i < slot->nentries; i++)
        if (slot->entries[i].req.error != MPI_SUCCESS)
            return slot->entries[i].req.error;
    return MPI_SUCCESS;
}

static int build_run(struct comm_core *parent, struct build_slot *slot, enum build_kind kind, int self_index,
                     build_exchange_fn exchange)
{
    results_clear(slot);
    int rc = first_member_error(slot);
    if (rc != MPI_SUCCESS)
        return rc;
    switch (kind) {
    case BUILD_DUP: rc = build_dup(parent, slot); break;
    case BUILD_SPLIT: rc = build_split(parent, slot); break;
    case BUILD_MERGE: rc = parent->is_inter ? build_merge(parent, slot) : MPI_ERR_COMM; break;
    case BUILD_ADOPT: rc = build_adopt(slot, self_index); break;
    default: rc = MPI_ERR_INTERN; break;
    }
    if (rc == MPI_SUCCESS && exchange != NULL) {
        rc = build_exchange(slot, exchange);
        if (rc != MPI_SUCCESS && kind != BUILD_ADOPT)
            results_release(slot);
    } else if (rc != MPI_SUCCESS && kind != BUILD_ADOPT) {
        results_release(slot);
    }
    return rc;
}

/* --- communicators spanning node processes
 *
 * No member may read another's memory and no pointer travels: the members
 * exchange their arguments (and context id proposals) as ints, every
 * member computes the same result from them, and each node process builds
 * its own copy of the new core(s) (the same member lists, proxies
 * included) with the id they agreed on. Messages are library-internal, on
 * the parent's collective context, which is safe because the call is
 * collective on the parent. */

/* Participant i of `core`'s communicator: side 0's members, then side 1's. */
static struct rank *participant_rank(const struct comm_core *core, int i)
{
    const struct comm_core *side0 = core->side == 0 ? core : core->peer;
    return i < side0->local_size ? side0->local_members[i] : side0->members[i - side0->local_size];
}

static int participants(const struct comm_core *core)
{
    return core->local_size + (core->is_inter ? core->size : 0);
}

/* Every participant's `nfields` ints, in participant order, at every
 * member: gathered at (local) member 0, swapped between the two groups'
 * members 0 over an intercommunicator, and sent back. */
static void spanning_allgather(struct strand_comm *c, const int *mine, int nfields, int *all)
{
    struct comm_core *core = c->core;
    struct comm_local_view view;
    struct strand_comm *local = comm_local_view(c, &view);
    uint32_t context = core->context_id + 1;
    int lsize = core->local_size, n = participants(core);
    int own = core->side == 0 ? 0 : core->size, other = core->side == 0 ? lsize : 0;
    struct strand_request r, s;
    if (c->rank != 0) {
        pt2pt_isend_internal(&r, local, context, mine, nfields, MPI_INT, 0, COMM_TAG_GATHER);
        pt2pt_wait_internal(&r);
        pt2pt_irecv_internal(&r, local, context, all, nfields * n, MPI_INT, 0, COMM_TAG_SPREAD);
        pt2pt_wait_internal(&r);
        return;
    }
    memcpy(all + own * nfields, mine, (size_t)nfields * sizeof *all);
    for (int i = 1; i < lsize; i++) {
        pt2pt_irecv_internal(&r, local, context, all + (own + i) * nfields, nfields, MPI_INT, i, COMM_TAG_GATHER);
        pt2pt_wait_internal(&r);
    }
    if (core->is_inter) {
        pt2pt_irecv_internal(&r, c, context, all + other * nfields, nfields * core->size, MPI_INT, 0,
                             COMM_TAG_LEADERS);
        pt2pt_isend_internal(&s, c, context, all + own * nfields, nfields * lsize, MPI_INT, 0, COMM_TAG_LEADERS);
        pt2pt_wait_internal(&s);
        pt2pt_wait_internal(&r);
    }
    for (int i = 1; i < lsize; i++) {
        pt2pt_isend_internal(&r, local, context, all, nfields * n, MPI_INT, i, COMM_TAG_SPREAD);
        pt2pt_wait_internal(&r);
    }
}

uint32_t comm_leader_gather_proposals(struct strand_comm *local, int leader)
{
    return comm_leader_gather_max(local, leader, context_id_propose_global());
}

uint32_t comm_leader_gather_max(struct strand_comm *local, int leader, uint32_t value)
{
    uint32_t context = local->core->context_id + 1;
    struct strand_request r;
    if (local->rank != leader) {
        pt2pt_isend_internal(&r, local, context, &value, 1, MPI_UINT32_T, leader, COMM_TAG_GATHER);
        pt2pt_wait_internal(&r);
        return value;
    }
    for (int i = 0; i < local->core->size; i++) {
        uint32_t theirs;
        if (i == leader)
            continue;
        pt2pt_irecv_internal(&r, local, context, &theirs, 1, MPI_UINT32_T, i, COMM_TAG_GATHER);
        pt2pt_wait_internal(&r);
        if (theirs > value)
            value = theirs;
    }
    return value;
}

void comm_leader_spread(struct strand_comm *local, int leader, int *ints, int nints, struct bytes_out *bytes)
{
    uint32_t context = local->core->context_id + 1;
    struct strand_request r;
    int len;
    if (local->rank != leader) {
        pt2pt_irecv_internal(&r, local, context, ints, nints, MPI_INT, leader, COMM_TAG_SPREAD);
        pt2pt_wait_internal(&r);
        pt2pt_irecv_internal(&r, local, context, &len, 1, MPI_INT, leader, COMM_TAG_SPREAD);
        pt2pt_wait_internal(&r);
        *bytes = (struct bytes_out){ .data = malloc((size_t)len + 1), .len = (size_t)len, .cap = (size_t)len + 1 };
        if (bytes->data == NULL)
            strand_job_abort(1, "Strand MPI: out of memory while building a communicator\n");
        if (len > 0) {
            pt2pt_irecv_internal(&r, local, context, bytes->data, len, MPI_BYTE, leader, COMM_TAG_SPREAD);
            pt2pt_wait_internal(&r);
        }
        return;
    }
    len = (int)bytes->len;
    for (int i = 0; i < local->core->size; i++) {
        if (i == leader)
            continue;
        pt2pt_isend_internal(&r, local, context, ints, nints, MPI_INT, i, COMM_TAG_SPREAD);
        pt2pt_wait_internal(&r);
        pt2pt_isend_internal(&r, local, context, &len, 1, MPI_INT, i, COMM_TAG_SPREAD);
        pt2pt_wait_internal(&r);
        if (len > 0) {
            pt2pt_isend_internal(&r, local, context, bytes->data, len, MPI_BYTE, i, COMM_TAG_SPREAD);
            pt2pt_wait_internal(&r);
        }
    }
}

/* The agreed context id from every participant's proposal (field `field`
 * of `all`); this node process will never propose it or below again. */
static uint32_t agreed_id(const int *all, int n, int nfields, int field)
{
    uint32_t agreed = 0;
    for (int i = 0; i < n; i++)
        if ((uint32_t)all[nfields * i + field] > agreed)
            agreed = (uint32_t)all[nfields * i + field];
    context_id_seen_global(agreed);
    return agreed;
}

/* The largest of every participant's `mine`, at every participant. */
static uint32_t spanning_max(struct strand_comm *parent, uint32_t mine)
{
    int n = participants(parent->core), value = (int)mine;
    int *all = malloc((size_t)n * sizeof *all);
    if (all == NULL)
        strand_job_abort(1, "Strand MPI: out of memory while agreeing on a context id\n");
    spanning_allgather(parent, &value, 1, all);
    uint32_t highest = 0;
    for (int i = 0; i < n; i++)
        if ((uint32_t)all[i] > highest)
            highest = (uint32_t)all[i];
    free(all);
    return highest;
}

/* A context id every node process of `parent` agrees on; `again` after a
 * failed claim. */
static uint32_t agree_context_id(struct strand_comm *parent, bool again)
{
    uint32_t id = spanning_max(parent, again ? context_id_propose_global_again() : context_id_propose_global());
    context_id_seen_global(id);
    return id;
}

/* Whether every participant of `parent` claimed `id` in its node process
 * (context_id_claim_global); `claims`: false for a participant that will
 * not be a member of the new communicator (it only hears the verdict).
 * Every participant calls it, and all get the same answer. */
static bool id_claimed_everywhere(struct strand_comm *parent, uint32_t id, bool claims)
{
    struct context_claimant construction = { .parent = parent->core->context };
    bool failed_here = claims && !context_id_claim_global(id, &construction);
    bool everywhere = spanning_max(parent, failed_here) == 0;
    if (claims)
        context_id_settle_global(id, &construction, everywhere);
    return everywhere;
}

/* `id` (agreed by the caller), or the first id agreed afterwards that
 * every participant could claim: all of them are members of the new
 * communicator (dup, merge). */
static uint32_t claim_context_id(struct strand_comm *parent, uint32_t id)
{
    while (!id_claimed_everywhere(parent, id, true))
        id = agree_context_id(parent, true);
    return id;
}

/* Cores of communicators spanning node processes, being handed out to
 * the local members of each: the first to arrive builds, the last to take
 * removes the entry. Keyed by the agreed context id, unique per process. */
struct shared_core {
    uint32_t id;
    struct comm_core *core;         /* NULL: out of memory, for everyone */
    int untaken;
    struct shared_core *next;
};
static struct lite_lock shared_cores_lock = LITE_LOCK_INIT;
static struct shared_core *shared_cores;

struct comm_core *comm_shared_core_take(uint32_t id, struct rank **group0, int size0, struct rank **group1,
                                        int size1, int shares)
{
    lite_lock(&shared_cores_lock);
    struct shared_core **link = &shared_cores;
    while (*link != NULL && (*link)->id != id)
        link = &(*link)->next;
    struct shared_core *e = *link;
    if (e == NULL) {
        e = malloc(sizeof *e);
        if (e == NULL) {
            lite_unlock(&shared_cores_lock);
            return NULL;
        }
        *e = (struct shared_core){ id, cores_create(group0, size0, group1, size1, id),
                                   local_count(group0, size0) + local_count(group1, size1), NULL };
        *link = e;
    }
    struct comm_core *core = e->core;
    e->untaken -= shares;
    if (e->untaken <= 0) {
        *link = e->next;
        free(e);
    }
    lite_unlock(&shared_cores_lock);
    return core;
}

/* The caller's core of a spanning communicator built by every node
 * process (side 0's core from comm_shared_core_take). */
static struct comm_core *own_side(struct comm_core *core0, int side)
{
    return core0 == NULL || side == 0 ? core0 : core0->peer;
}

enum { SPLIT_ERROR, SPLIT_COLOR, SPLIT_KEY, SPLIT_EXPECT, SPLIT_PROPOSAL, SPLIT_FIELDS };

/* One color's run of records (side 0's, then side 1's): every member
 * expected this size for its side. */
static bool spanning_run_expected(const int *all, const struct split_record *run, int n)
{
    for (int i = 0; i < n; i++) {
        int expect = all[SPLIT_FIELDS * run[i].index + SPLIT_EXPECT];
        if (expect >= 0 && expect != n)
            return false;
    }
    return true;
}

/* The index of the caller's color among the sorted records, or -1 when it
 * gets no communicator (MPI_UNDEFINED, or an intercommunicator color
 * without members on one side). */
static int own_color(const struct comm_core *core, const struct split_record *records, int m, int self)
{
    for (int start = 0, end, color = 0; start < m; start = end, color++) {
        int n0 = 0;
        bool mine = false;
        for (end = start; end < m && records[end].color == records[start].color; end++) {
            n0 += records[end].side == 0;
            mine = mine || records[end].index == self;
        }
        if (mine)
            return core->is_inter && (n0 == 0 || n0 == end - start) ? -1 : color;
    }
    return -1;
}

/* The base of `ncolors` consecutive ids (color c gets base + 2c), each
 * claimed in every node process that holds members of its color: `base`
 * when possible, else bases agreed again until one is. */
static uint32_t claim_color_ids(struct strand_comm *parent, uint32_t base, int ncolors, int color)
{
    for (;;) {
        if (ncolors > 0)
            context_id_seen_global(base + 2 * (uint32_t)(ncolors - 1));
        if (id_claimed_everywhere(parent, base + 2 * (uint32_t)(color < 0 ? 0 : color), color >= 0))
            return base;
        base = agree_context_id(parent, true);
    }
}

/* Split (and create, and the topology constructors) of a communicator
 * spanning node processes: every member computes the same groups (per
 * color; on an intercommunicator, side 0's and side 1's members of a
 * color pair up) from everyone's request, with one agreed context id per
 * color, and each node process builds its own core(s) of each group. */
static int split_spanning(struct strand_comm *parent, const struct build_request *req, struct build_result *out)
{
    struct comm_core *core = parent->core;
    int n = participants(core), size0 = core->side == 0 ? core->local_size : core->size;
    int self = core->side == 0 ? parent->rank : size0 + parent->rank;
    int *all = malloc((size_t)SPLIT_FIELDS * (size_t)n * sizeof *all);
    struct split_record *records = malloc((size_t)n * sizeof *records);
    struct rank **members = malloc((size_t)n * sizeof *members);
    if (all == NULL || records == NULL || members == NULL)
        strand_job_abort(1, "Strand MPI: out of memory while splitting a communicator\n");
    int mine[SPLIT_FIELDS] = { req->error, req->color, req->key, req->expect_size,
                               (int)context_id_propose_global() };
    spanning_allgather(parent, mine, SPLIT_FIELDS, all);
    uint32_t base = agreed_id(all, n, SPLIT_FIELDS, SPLIT_PROPOSAL);
    *out = (struct build_result){ .core = NULL, .rank = -1 };
    int rc = MPI_SUCCESS, m = 0;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = all[SPLIT_FIELDS * i + SPLIT_ERROR];
    for (int i = 0; i < n; i++)
        if (all[SPLIT_FIELDS * i + SPLIT_COLOR] != MPI_UNDEFINED)
            records[m++] = (struct split_record){ all[SPLIT_FIELDS * i + SPLIT_COLOR], i >= size0,
                                                  all[SPLIT_FIELDS * i + SPLIT_KEY], i };
    qsort(records, (size_t)m, sizeof *records, split_record_cmp);
    /* Every member reaches the same verdict, and skips the same ids. */
    int ncolors = 0;
    for (int start = 0, end; start < m && rc == MPI_SUCCESS; start = end, ncolors++) {
        int n0 = 0;
        for (end = start; end < m && records[end].color == records[start].color; end++)
            n0 += records[end].side == 0;
        if (!spanning_run_expected(all, records + start, n0) ||
            !spanning_run_expected(all, records + start + n0, end - start - n0))
            rc = MPI_ERR_GROUP;     /* members passed different groups */
    }
    if (rc == MPI_SUCCESS && ncolors > 0)
        base = claim_color_ids(parent, base, ncolors, own_color(core, records, m, self));
    for (int start = 0, end, color = 0; start < m && rc == MPI_SUCCESS; start = end, color++) {
        int n0 = 0, me = -1;
        for (end = start; end < m && records[end].color == records[start].color; end++) {
            n0 += records[end].side == 0;
            members[end - start] = participant_rank(core, records[end].index);
            if (records[end].index == self)
                me = end - start;
        }
        int n1 = end - start - n0;
        if (me < 0 || (core->is_inter && (n0 == 0 || n1 == 0)))
            continue;               /* not a member, or no partner group: MPI_COMM_NULL */
        struct comm_core *core0 = comm_shared_core_take(base + 2 * (uint32_t)color, members, n0, members + n0,
                                                        n1, 1);
        out->core = own_side(core0, core->side);
        out->rank = me < n0 ? me : me - n0;
        if (out->core == NULL)
            rc = MPI_ERR_NO_MEM;
    }
    free(all);
    free(records);
    free(members);
    return rc;
}

/* MPI_Intercomm_merge across node processes: the group whose members
 * passed high = true goes last (side 0 first when both agree). */
static int merge_spanning(struct strand_comm *parent, const struct build_request *req, struct build_result *out)
{
    struct comm_core *core = parent->core, *side0 = core->side == 0 ? core : core->peer;
    int n = participants(core), size0 = side0->local_size, size1 = side0->size;
    int *all = malloc(2 * (size_t)n * sizeof *all);
    struct rank **members = malloc((size_t)n * sizeof *members);
    if (all == NULL || members == NULL)
        strand_job_abort(1, "Strand MPI: out of memory while merging an intercommunicator\n");
    int mine[2] = { req->high, (int)context_id_propose_global() };
    spanning_allgather(parent, mine, 2, all);
    uint32_t id = claim_context_id(parent, agreed_id(all, n, 2, 1));
    bool side0_last = all[0] && !all[2 * size0];
    int first0 = side0_last ? size1 : 0, first1 = side0_last ? 0 : size0;
    memcpy(members + first0, side0->local_members, (size_t)size0 * sizeof *members);
    memcpy(members + first1, side0->members, (size_t)size1 * sizeof *members);
    out->core = comm_shared_core_take(id, members, n, NULL, 0, 1);
    out->rank = (core->side == 0 ? first0 : first1) + parent->rank;
    free(all);
    free(members);
    return out->core != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* MPI_Comm_dup: the agreed id, then the dup ring as for local members
 * (each node process builds its own copy). */
static int dup_spanning(struct strand_comm *parent, struct build_result *out)
{
    struct comm_core *core = parent->core;
    uint32_t id = claim_context_id(parent, agree_context_id(parent, false));
    int local = local_count(core->local_members, core->local_size) +
                (core->is_inter ? local_count(core->members, core->size) : 0);
    uint64_t d = atomic_fetch_add_explicit(&parent->dup_count, 1, memory_order_relaxed);
    int rc = dup_take(core, DUP_RING + d, id, local, out);
    out->rank = parent->rank;
    return rc;
}

int comm_build(struct strand_comm *parent, enum build_kind kind, const struct build_request *req,
               build_exchange_fn exchange, struct build_result *out)
{
    struct comm_core *core = parent->core;
    struct build_slot *slot = &core->context->slot;
    if (comm_core_spans_nodes(core)) {
        /* Every member sees the same answer, so all fail together. */
        if (exchange != NULL)
            return MPI_ERR_UNSUPPORTED_OPERATION;
        switch (kind) {
        case BUILD_DUP: return dup_spanning(parent, out);
        case BUILD_SPLIT: return split_spanning(parent, req, out);
        case BUILD_MERGE: return core->is_inter ? merge_spanning(parent, req, out) : MPI_ERR_COMM;
        default: return MPI_ERR_UNSUPPORTED_OPERATION;
        }
    }
    if (kind == BUILD_DUP && exchange == NULL && req->error == MPI_SUCCESS) {
        uint64_t d = atomic_fetch_add_explicit(&parent->dup_count, 1, memory_order_relaxed);
        int rc = dup_take(core, DUP_RING + d, CONTEXT_ID_NONE, slot->nentries, out);
        out->rank = parent->rank;
        return rc;
    }
    int me = participant_index(parent);
    struct build_entry *entry = &slot->entries[me];
    /* Written at the first meeting only (the entry always names this
     * rank): the builder of the meeting before may still be reading it to
     * wake the members after this one saw that meeting end. */
    if (entry->rank == NULL)
        entry->rank = strand_self;
    entry->req = *req;
    uint32_t seq = ++parent->build_seq;
    /* acq_rel: the builder's increment acquires every member's entry. */
    unsigned arrived = atomic_fetch_add_explicit(&slot->arrived, 1, memory_order_acq_rel) + 1;
    if (arrived == (unsigned)slot->nentries) {
        slot->error = build_run(core, slot, kind, me, exchange);
        atomic_store_explicit(&slot->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&slot->completed, seq, memory_order_release);
        for (int i = 0; i < slot->nentries; i++)
            if (i != me)
                rank_wake(slot->entries[i].rank);
    } else {
        struct build_wait w = { slot, seq };
        rank_wait_until(strand_self, build_published, &w);
    }
    *out = entry->result;
    return slot->error;
}
