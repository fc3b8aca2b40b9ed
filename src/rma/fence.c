/* MPI_Win_fence: an epoch barrier over atomic words.
 *
 * Every member counts its fences (generations). Arriving at generation k,
 * a member publishes k (and its assert) in its own fence word. Waiting
 * until every member has arrived at k then means every member finished
 * the epoch before k: operations are copies done by the origin at once,
 * so nothing else is left to complete. How "every member arrived" is seen
 * depends on the window's size:
 *  - small windows (FENCE_FLAGS_MAX, ranks not outnumbering cores): a
 *    member polls the others' fence
 *    words, and every arriver wakes the members that sleep (after its
 *    first look at the others: arrive_flags). A 2-member
 *    fence costs each side one store and one read of the other's line,
 *    in parallel, instead of two serialized read-modify-writes of a
 *    shared counter plus the read of a "done" word;
 *  - otherwise: each arriver adds one to the arrival counter of k;
 *    the member that brings it to `size` resets it and publishes k in
 *    `fence_done`, and alone wakes the sleepers (one wake per member per
 *    fence, which matters when ranks outnumber cores).
 *
 * MPI_MODE_NOPRECEDE (no operation precedes, on any member) skips the
 * wait; the member then checks, before its first operation on a target,
 * that the target reached generation k (its loads and stores before the
 * fence must not race with what we put there). A member may thus run a few
 * generations ahead; counters and asserts are rings of FENCE_RING, and a
 * member waits for generation k - FENCE_RING before reusing them. A fence
 * with both MPI_MODE_NOPRECEDE and MPI_MODE_NOSUCCEED (all members give
 * both) neither ends nor opens an epoch: it touches no shared word.
 *
 * tests/model/rma_model.c checks both variants over every interleaving.
 *
 * A window spanning node processes fences hierarchically: each member
 * waits until its frames are answered (its remote operations are done)
 * and publishes its assert in its fence word; the members of one node
 * process count their arrivals on the core's counter; the node's leader
 * (its lowest member), once all arrived, swaps the node's asserts with
 * every other node's leader (one message each way per pair of nodes, all
 * at once), writes every member's assert into the core and publishes
 * `fence_done`, which the others wait for. The asserts serve the NOPUT
 * check. The same serves as the barrier of MPI_Win_free. */
#include <stdlib.h>

#include "../comm/comm.h"
#include "../net/net.h"
#include "../pt2pt/pt2pt.h"
#include "../util/futex.h"
#include "remote.h"
#include "rma.h"

#define FENCE_ASSERTS (MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

struct arrival_wait {
    struct win_core *core;
    unsigned gen;
    int next;                       /* members before this one have arrived */
};

/* Every member has reached `gen` (progress kept in `next`: words only grow). */
static bool all_arrived(void *arg)
{
    struct arrival_wait *a = arg;
    for (; a->next < a->core->size; a->next++) {
        unsigned arrived = atomic_load_explicit(&a->core->members[a->next].fence.arrived, memory_order_acquire);
        if ((int)(arrived - a->gen) < 0)
            return false;
    }
    return true;
}

/* Waits until every member has arrived at generation k. */
static void wait_all(struct win_core *core, struct fence_cursor *cur, unsigned k)
{
    if ((int)(k - cur->synced) <= 0)
        return;
    if (core->fence_flags) {
        struct arrival_wait a = { core, k, 0 };
        if (!all_arrived(&a))
            rank_wait_until(strand_self, all_arrived, &a);
    } else {
        win_wait_counter(&core->fence_done, k);
    }
    cur->synced = k;
}

static void fence_publish(struct fence_word *word, unsigned gen, int assert)
{
    atomic_store_explicit(&word->assert[gen % FENCE_RING], assert, memory_order_relaxed);
    atomic_store_explicit(&word->arrived, gen, memory_order_release);
}

/* Counter variant: counts the arrival at k; the last arriver publishes k. */
static void count_arrival(struct win_core *core, unsigned k)
{
    atomic_uint *arrivals = &core->fence_arrivals[k % FENCE_RING];
    /* acq_rel: the last arriver sees every member's stores before the fence
     * and hands them to all waiters through its release of fence_done. */
    if (atomic_fetch_add_explicit(arrivals, 1, memory_order_acq_rel) + 1 == (unsigned)core->size) {
        atomic_store_explicit(arrivals, 0, memory_order_relaxed);
        atomic_store_explicit(&core->fence_done, k, memory_order_release);
        win_wake_members(core);
    }
}

/* Polled-words variant: publish, look for the others, then wake the sleepers.
 * Waking after the look rather than before it keeps the fence that orders
 * our store before the load of each `sleepers` off the critical path: by
 * then the store has left the store buffer. A sleeper is still woken
 * before we could sleep ourselves (the look is a bounded spin), and at
 * once when we do not wait. True if every member has arrived. */
static bool arrive_flags(struct win_core *core, unsigned k, bool wait, struct arrival_wait *a)
{
    *a = (struct arrival_wait){ core, k, 0 };
    bool all = false;
    for (int i = 0; wait && i < strand_node.spin_limit && !(all = all_arrived(a)); i++)
        cpu_relax();
    win_wake_members(core);
    return all;
}

/* Arrives at the next generation; if `wait`, waits until every member has. */
static void fence_arrive(struct win_core *core, int rank, struct fence_cursor *cur, int assert, bool wait)
{
    unsigned k = ++cur->gen;
    /* The ring entries of k were last used by generation k - FENCE_RING. */
    wait_all(core, cur, k - FENCE_RING);
    fence_publish(&core->members[rank].fence, k, assert);
    if (!core->fence_flags) {
        count_arrival(core, k);
        if (wait)
            wait_all(core, cur, k);
        return;
    }
    struct arrival_wait a;
    bool all = arrive_flags(core, k, wait, &a);
    if (!wait)
        return;
    if (!all)
        rank_wait_until(strand_self, all_arrived, &a);
    cur->synced = k;
}

void fence_pass_core(struct win_core *core, int rank, struct fence_cursor *cur, bool wait)
{
    fence_arrive(core, rank, cur, 0, wait);
}

void fence_await_target(struct strand_win *w, int target)
{
    struct fence_cursor *cur = &w->fence_cur;
    atomic_uint *arrived = &w->core->members[target].fence.arrived;
    if ((int)(atomic_load_explicit(arrived, memory_order_acquire) - cur->gen) >= 0)
        return;
    /* Polled words: every arriver wakes everyone, so the target's own word
     * can be waited on; with the counter, wakes come when all have arrived. */
    if (w->core->fence_flags)
        win_wait_counter(arrived, cur->gen);
    else
        wait_all(w->core, cur, cur->gen);
}

int fence_target_assert(struct strand_win *w, int target)
{
    if (w->fence_asserts != NULL)
        return w->fence_asserts[target];
    /* The target reached our generation (the epoch is open); it cannot be
     * FENCE_RING generations further before our operations are done. */
    return atomic_load_explicit(&w->core->members[target].fence.assert[w->fence_cur.gen % FENCE_RING],
                                memory_order_relaxed);
}

/* ---- windows spanning node processes ---- */

/* The node process a member lives in: its peer, or NULL for this one.
 * (Not an index: peers of other jobs, in a window of a communicator joining
 * jobs, are numbered after this job's node processes.) */
static const struct net_peer *member_process(const struct win_core *core, int m)
{
    return core->members[m].rank->remote;
}

/* Members grouped by node process, in order of first appearance: node_of[m]
 * is m's group; returns the number of groups, and this process's in *mine. */
static int group_by_process(const struct win_core *core, int *node_of, const struct net_peer **seen, int *mine)
{
    int groups = 0;
    *mine = -1;
    for (int m = 0; m < core->size; m++) {
        const struct net_peer *p = member_process(core, m);
        int g = 0;
        while (g < groups && seen[g] != p)
            g++;
        if (g == groups)
            seen[groups++] = p;
        if (p == NULL)
            *mine = g;
        node_of[m] = g;
    }
    return groups;
}

int fence_spanning_setup(struct win_core *core)
{
    int n = core->size;
    const struct net_peer **seen = malloc((size_t)n * sizeof *seen);
    int *node_of = malloc((size_t)n * sizeof *node_of);
    int *next = malloc((size_t)n * sizeof *next);
    core->node_first = calloc((size_t)n + 1, sizeof *core->node_first);
    core->node_members = malloc((size_t)n * sizeof *core->node_members);
    core->span_asserts = calloc((size_t)n, sizeof *core->span_asserts);
    core->span_buf = malloc((size_t)n * sizeof *core->span_buf);
    int rc = MPI_ERR_NO_MEM;
    if (seen == NULL || node_of == NULL || next == NULL || core->node_first == NULL || core->node_members == NULL ||
        core->span_asserts == NULL || core->span_buf == NULL)
        goto out;
    core->nnodes = group_by_process(core, node_of, seen, &core->my_node);
    for (int m = 0; m < n; m++)
        core->node_first[node_of[m] + 1]++;
    for (int g = 0; g < core->nnodes; g++)
        core->node_first[g + 1] += core->node_first[g];
    for (int g = 0; g < core->nnodes; g++)
        next[g] = core->node_first[g];
    for (int m = 0; m < n; m++)
        core->node_members[next[node_of[m]]++] = m;
    size_t reqs = 2 * (size_t)(core->nnodes - 1) * sizeof *core->span_reqs;
    core->span_reqs = aligned_alloc(64, (reqs + 63) / 64 * 64);
    if (core->span_reqs != NULL)
        rc = MPI_SUCCESS;
out:
    free(seen);
    free(node_of);
    free(next);
    return rc;
}

void fence_spanning_free(struct win_core *core)
{
    free(core->node_first);
    free(core->node_members);
    free(core->span_asserts);
    free(core->span_buf);
    free(core->span_reqs);
}

/* The leader's part of generation k, once every member of its node
 * arrived: its node's asserts to every other leader, theirs back
 * (library-internal messages on the window communicator's collective
 * context, tag WIN_TAG_FENCE), every member's into span_asserts. */
static void leaders_exchange(struct strand_win *w, unsigned k)
{
    struct win_core *core = w->core;
    struct strand_comm *c = w->comm;
    uint32_t context = c->core->context_id + 1;
    int me = core->my_node, first = core->node_first[me], mine = core->node_first[me + 1] - first;
    for (int p = first; p < first + mine; p++)
        core->span_buf[p] = atomic_load_explicit(&core->members[core->node_members[p]].fence.assert[k % FENCE_RING],
                                                 memory_order_relaxed);
    int nreq = 0;
    for (int g = 0; g < core->nnodes; g++) {
        if (g == me)
            continue;
        int at = core->node_first[g], count = core->node_first[g + 1] - at, leader = core->node_members[at];
        pt2pt_irecv_internal(&core->span_reqs[nreq++], c, context, core->span_buf + at, count, MPI_INT, leader,
                             WIN_TAG_FENCE);
        pt2pt_isend_internal(&core->span_reqs[nreq++], c, context, core->span_buf + first, mine, MPI_INT, leader,
                             WIN_TAG_FENCE);
    }
    for (int i = 0; i < nreq; i++)
        pt2pt_wait_internal(&core->span_reqs[i]);
    for (int p = 0; p < core->size; p++)
        core->span_asserts[core->node_members[p]] = core->span_buf[p];
}

void fence_spanning(struct strand_win *w, int assert)
{
    struct win_core *core = w->core;
    unsigned k = ++w->fence_cur.gen;
    int me = core->my_node, local = core->node_first[me + 1] - core->node_first[me];
    int leader = core->node_members[core->node_first[me]];
    rma_remote_drain(w);
    fence_publish(&core->members[w->rank].fence, k, assert);
    /* One generation at a time (every member waits for fence_done), so
     * the leader may reset the counter before publishing k. acq_rel: the
     * leader sees every local member's assert and stores. */
    atomic_uint *arrivals = &core->fence_arrivals[k % FENCE_RING];
    unsigned arrived = atomic_fetch_add_explicit(arrivals, 1, memory_order_acq_rel) + 1;
    if (w->rank != leader) {
        if (arrived == (unsigned)local)
            rank_wake(core->members[leader].rank);
        win_wait_counter(&core->fence_done, k);
    } else {
        win_wait_counter(arrivals, (unsigned)local);
        atomic_store_explicit(arrivals, 0, memory_order_relaxed);
        leaders_exchange(w, k);
        atomic_store_explicit(&core->fence_done, k, memory_order_release);
        win_wake_members(core);
    }
    w->fence_cur.synced = k;
}

int PMPI_Win_fence(int assert, MPI_Win win)
{
    const char *where = "MPI_Win_fence";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if (assert & ~FENCE_ASSERTS)
        return win_error(w, MPI_ERR_ASSERT, where, "invalid assert 0x%x for a fence", (unsigned)assert);
    if (w->access_active || w->expose_active || w->locks_held > 0)
        return win_error(w, MPI_ERR_RMA_SYNC, where, "a %s epoch is open on this window",
                         w->locks_held > 0 ? "lock" : w->access_active ? "start/complete" : "post/wait");
    /* NOPRECEDE with our own operations pending is wrong: complete them
     * anyway (wait for everyone, unless the others skip this fence), then
     * say so. */
    bool misused = (assert & MPI_MODE_NOPRECEDE) && w->fence_ops;
    bool noop = (assert & MPI_MODE_NOPRECEDE) && (assert & MPI_MODE_NOSUCCEED);
    bool wait = !(assert & MPI_MODE_NOPRECEDE) || misused || w->core->spans;
    if (noop)
        ;
    else if (w->core->spans)
        fence_spanning(w, assert);
    else
        fence_arrive(w->core, w->rank, &w->fence_cur, assert, wait);
    w->fence_ops = false;
    if (assert & MPI_MODE_NOSUCCEED)
        w->fence = FENCE_CLOSED;
    else
        w->fence = wait ? FENCE_OPEN : FENCE_OPEN_UNSYNCED;
    if (misused)
        return win_error(w, MPI_ERR_RMA_SYNC, where,
                         "MPI_MODE_NOPRECEDE given, but this rank made RMA calls since the last fence");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_fence);
