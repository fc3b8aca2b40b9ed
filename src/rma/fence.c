/* MPI_Win_fence: an epoch barrier over atomic words.
 *
 * Every member counts its fences (generations). Arriving at generation k,
 * a member publishes k (and its assert) in its own member entry and adds
 * one to the arrival counter of k; the member that brings it to `size`
 * resets the counter and publishes k in `fence_done`. Waiting for
 * `fence_done >= k` then means every member finished the epoch before k:
 * operations are copies done by the origin at once, so nothing else is
 * left to complete.
 *
 * MPI_MODE_NOPRECEDE (no operation precedes, on any member) skips that
 * wait; the member then checks, before its first operation on a target,
 * that the target reached generation k (its loads and stores before the
 * fence must not race with what we put there). A member may thus run a few
 * generations ahead; counters are a ring of FENCE_RING, and a member waits
 * for generation k - FENCE_RING before reusing its counter. */
#include "rma.h"

#define FENCE_ASSERTS (MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

static void wait_done(struct win_core *core, unsigned gen)
{
    win_wait_counter(&core->fence_done, gen);
}

static void fence_publish(struct win_member *m, unsigned gen, int assert)
{
    atomic_store_explicit(&m->fence_assert[gen % FENCE_RING], assert, memory_order_relaxed);
    atomic_store_explicit(&m->fence_arrived, gen, memory_order_release);
}

static void fence_arrive(struct win_core *core, int rank, unsigned k, int assert)
{
    /* The counter of k was last used by generation k - FENCE_RING. */
    wait_done(core, k - FENCE_RING);
    fence_publish(&core->members[rank], k, assert);
    atomic_uint *arrivals = &core->fence_arrivals[k % FENCE_RING];
    /* acq_rel: the last arriver sees every member's stores before the fence
     * and hands them to all waiters through its release of fence_done. */
    if (atomic_fetch_add_explicit(arrivals, 1, memory_order_acq_rel) + 1 == (unsigned)core->size) {
        atomic_store_explicit(arrivals, 0, memory_order_relaxed);
        atomic_store_explicit(&core->fence_done, k, memory_order_release);
        win_wake_members(core);
    }
}

void fence_pass_core(struct win_core *core, int rank, unsigned *gen, bool wait)
{
    unsigned k = ++*gen;
    fence_arrive(core, rank, k, 0);
    if (wait)
        wait_done(core, k);
}

void fence_await_target(struct strand_win *w, int target)
{
    unsigned arrived = atomic_load_explicit(&w->core->members[target].fence_arrived, memory_order_acquire);
    if ((int)(arrived - w->fence_gen) < 0)
        wait_done(w->core, w->fence_gen);
}

int fence_target_assert(struct strand_win *w, int target)
{
    /* The target reached our generation (the epoch is open); it cannot be
     * FENCE_RING generations further before our operations are done. */
    return atomic_load_explicit(&w->core->members[target].fence_assert[w->fence_gen % FENCE_RING],
                                memory_order_relaxed);
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
     * anyway (wait for everyone), then say so. */
    bool misused = (assert & MPI_MODE_NOPRECEDE) && w->fence_ops;
    bool wait = !(assert & MPI_MODE_NOPRECEDE) || misused;
    unsigned k = ++w->fence_gen;
    fence_arrive(w->core, w->rank, k, assert);
    if (wait)
        wait_done(w->core, k);
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
