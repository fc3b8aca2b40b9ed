/* General active target synchronization: MPI_Win_post / start / complete /
 * wait / test, with per-pair counters (only the pairs in the groups meet).
 *
 * For the pair (target t, origin o), t counts the exposure epochs it
 * opened to o (`posted`) and o the access epochs to t it closed
 * (`completed`); each counter has one writer. o's access epoch number k is
 * `completed + 1`, so before its first operation on t it waits for
 * `posted >= k`. Win_start itself does not wait (MPI allows either): a
 * target that o never touches is never waited for. Win_complete adds one
 * to `completed` of every pair, Win_wait waits for `completed == posted`
 * on its pairs. Counters are released and acquired, so the target's
 * stores before post precede o's operations, and o's operations precede
 * the target's loads after wait.
 *
 * Spanning windows: each node process keeps its own copy of the pairs
 * with a member elsewhere; the side that writes a counter counts it up in
 * its copy and, for a remote peer, sends POST or COMPLETE, whose progress
 * thread counts up the peer's copy (and wakes the member). Complete sends
 * COMPLETE after the operations (served in order before it) and waits
 * until all its frames are answered. */
#include <stdlib.h>

#include "../comm/comm.h"
#include "remote.h"
#include "rma.h"

/* The pairs of target t with every origin, allocated by whoever needs them first. */
struct pscw_pair *pscw_row(struct win_core *core, int t)
{
    _Atomic(struct pscw_pair *) *slot = &core->members[t].pscw;
    struct pscw_pair *row = atomic_load_explicit(slot, memory_order_acquire);
    if (row != NULL)
        return row;
    struct pscw_pair *fresh = calloc((size_t)core->size, sizeof *fresh);
    if (fresh == NULL)
        return NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &row, fresh, memory_order_acq_rel, memory_order_acquire))
        return fresh;
    free(fresh);
    return row;
}

/* Translates `group` into window ranks in `*list` (allocated once per
 * handle with room for every member); MPI_SUCCESS or an error reported. */
static int group_translate(struct strand_win *w, MPI_Group group, int **list, int *n, const char *where)
{
    struct strand_group *g = group_lookup(group);
    if (g == NULL)
        return win_error(w, MPI_ERR_GROUP, where, "invalid group");
    if (g->size > w->core->size)
        return win_error(w, MPI_ERR_GROUP, where, "the group has %d members, the window %d", g->size,
                         w->core->size);
    if (*list == NULL && (*list = malloc((size_t)w->core->size * sizeof **list)) == NULL)
        return win_error(w, MPI_ERR_NO_MEM, where, "out of memory");
    for (int i = 0; i < g->size; i++) {
        int r = win_rank_of(w->core, g->members[i]);
        if (r == MPI_UNDEFINED)
            return win_error(w, MPI_ERR_GROUP, where, "member %d of the group is not in the window", i);
        (*list)[i] = r;
    }
    *n = g->size;
    return MPI_SUCCESS;
}

static void wake_ranks(struct win_core *core, const int *list, int n)
{
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < n; i++) {
        struct rank *r = core->members[list[i]].rank;
        if (atomic_load_explicit(&r->waiter.sleepers, memory_order_relaxed) != 0)
            rank_wake_slow(r);
    }
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    const char *where = "MPI_Win_post";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT))
        return win_error(w, MPI_ERR_ASSERT, where, "invalid assert 0x%x for a post", (unsigned)assert);
    if (w->expose_active)
        return win_error(w, MPI_ERR_RMA_SYNC, where, "an exposure epoch is already open (call MPI_Win_wait)");
    if (w->fence_ops)
        return win_error(w, MPI_ERR_RMA_SYNC, where, "RMA calls of a fence epoch are not completed by a fence");
    rc = group_translate(w, group, &w->expose_group, &w->expose_size, where);
    if (rc != MPI_SUCCESS)
        return rc;
    struct pscw_pair *row = pscw_row(w->core, w->rank);
    if (row == NULL)
        return win_error(w, MPI_ERR_NO_MEM, where, "out of memory");
    /* Even with MPI_MODE_NOCHECK (matching starts say NOCHECK too and do
     * not look), the count must stay exact for the epochs after; and an
     * origin that wrongly waits must not sleep forever. */
    for (int i = 0; i < w->expose_size; i++) {
        int o = w->expose_group[i];
        atomic_fetch_add_explicit(&row[o].posted, 1, memory_order_release);
        if (w->core->spans && win_member_is_remote(w->core, o))
            rma_remote_post(w, o);
    }
    wake_ranks(w->core, w->expose_group, w->expose_size);
    w->expose_active = true;
    w->fence = FENCE_CLOSED;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_post);

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    const char *where = "MPI_Win_start";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if (assert & ~MPI_MODE_NOCHECK)
        return win_error(w, MPI_ERR_ASSERT, where, "invalid assert 0x%x for a start", (unsigned)assert);
    if (w->access_active || w->locks_held > 0)
        return win_error(w, MPI_ERR_RMA_SYNC, where, "an access epoch is already open (%s)",
                         w->access_active ? "call MPI_Win_complete" : "a lock is held");
    if (w->fence_ops)
        return win_error(w, MPI_ERR_RMA_SYNC, where, "RMA calls of a fence epoch are not completed by a fence");
    rc = group_translate(w, group, &w->access_group, &w->access_size, where);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < w->access_size; i++)
        if (pscw_row(w->core, w->access_group[i]) == NULL)
            return win_error(w, MPI_ERR_NO_MEM, where, "out of memory");
    uint8_t mark = TS_ACCESS | (assert & MPI_MODE_NOCHECK ? TS_POSTED : 0);
    for (int i = 0; i < w->access_size; i++)
        w->target_state[w->access_group[i]] |= mark;
    w->access_active = true;
    w->fence = FENCE_CLOSED;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_start);

int pscw_await_post(struct strand_win *w, int target)
{
    struct pscw_pair *pair = &atomic_load_explicit(&w->core->members[target].pscw, memory_order_relaxed)[w->rank];
    unsigned epoch = atomic_load_explicit(&pair->completed, memory_order_relaxed) + 1;
    win_wait_counter(&pair->posted, epoch);
    w->target_state[target] |= TS_POSTED;
    return MPI_SUCCESS;
}

int PMPI_Win_complete(MPI_Win win)
{
    const char *where = "MPI_Win_complete";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if (!w->access_active)
        return win_error(w, MPI_ERR_RMA_SYNC, where, "no access epoch is open (call MPI_Win_start first)");
    for (int i = 0; i < w->access_size; i++) {
        int t = w->access_group[i];
        struct pscw_pair *row = atomic_load_explicit(&w->core->members[t].pscw, memory_order_relaxed);
        atomic_fetch_add_explicit(&row[w->rank].completed, 1, memory_order_release);
        if (w->core->spans && win_member_is_remote(w->core, t))
            rma_remote_complete(w, t);
        w->target_state[t] &= (uint8_t)~(TS_ACCESS | TS_POSTED);
    }
    wake_ranks(w->core, w->access_group, w->access_size);
    if (w->core->spans)
        rma_remote_drain(w);
    w->access_active = false;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_complete);

struct expose_wait {
    struct pscw_pair *row;
    const int *origins;
    int n;
};

/* Every origin of the exposure epoch has completed it. */
static bool exposure_done(void *arg)
{
    const struct expose_wait *e = arg;
    for (int i = 0; i < e->n; i++) {
        struct pscw_pair *p = &e->row[e->origins[i]];
        unsigned posted = atomic_load_explicit(&p->posted, memory_order_relaxed);
        if ((int)(atomic_load_explicit(&p->completed, memory_order_acquire) - posted) < 0)
            return false;
    }
    return true;
}

static struct strand_win *exposure_checked(MPI_Win win, const char *where, int *rc, struct expose_wait *e)
{
    struct strand_win *w = win_checked(win, where, rc);
    if (w == NULL)
        return NULL;
    if (!w->expose_active) {
        *rc = win_error(w, MPI_ERR_RMA_SYNC, where, "no exposure epoch is open (call MPI_Win_post first)");
        return NULL;
    }
    *e = (struct expose_wait){ atomic_load_explicit(&w->core->members[w->rank].pscw, memory_order_relaxed),
                               w->expose_group, w->expose_size };
    return w;
}

int PMPI_Win_wait(MPI_Win win)
{
    int rc;
    struct expose_wait e;
    struct strand_win *w = exposure_checked(win, "MPI_Win_wait", &rc, &e);
    if (w == NULL)
        return rc;
    if (!exposure_done(&e))
        rank_wait_until(strand_self, exposure_done, &e);
    w->expose_active = false;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_wait);

int PMPI_Win_test(MPI_Win win, int *flag)
{
    int rc;
    struct expose_wait e;
    struct strand_win *w = exposure_checked(win, "MPI_Win_test", &rc, &e);
    if (w == NULL)
        return rc;
    if (flag == NULL)
        return win_error(w, MPI_ERR_ARG, "MPI_Win_test", "flag must not be NULL");
    *flag = exposure_done(&e);
    if (*flag)
        w->expose_active = false;
    else
        rank_poll_missed(strand_self);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_test);
