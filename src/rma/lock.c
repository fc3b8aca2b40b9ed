/* Passive target synchronization: MPI_Win_lock / MPI_Win_unlock.
 *
 * Each target has a fair reader-writer ticket lock. A request takes a
 * ticket (`next`) and waits until `serving` reaches it. A reader then
 * joins `readers` and lets the next ticket in at once, so consecutive
 * readers hold the lock together; a writer also waits until `readers` is
 * zero and lets the next ticket in only when it unlocks. Tickets are
 * served in order, so neither readers nor writers starve.
 *
 * The target takes no part: its memory is all there is. A waiter that
 * sleeps records itself in `waiters[ticket % size]`; whoever advances
 * `serving` (or empties `readers`) wakes the holder of the serving ticket.
 * This is sound because every rank has at most one request per target (a
 * second lock on the same target is MPI_ERR_RMA_SYNC), so the tickets not
 * yet admitted are held by distinct ranks and never share a slot.
 *
 * An origin in another node process takes part through the progress
 * thread of the target's node: its LOCK frame takes a ticket for it, with
 * the origin's proxy rank in the waiter slot and the request in the
 * target's `remote_locks`; whoever would wake that proxy (an unlocker, or
 * the progress thread itself right after queuing) grants it instead,
 * once: the one whose compare-and-swap clears the request's waiting bit
 * (for the very ticket whose turn it checked) does the reader bookkeeping
 * and sends the grant. Local and remote holders thus exclude each other in
 * one lock. The frames such an origin sends after its LOCK (it does not
 * wait for the grant) are held by the target's progress thread until the
 * grant; the granter serves them once out of this code
 * (rma_remote_serve_held at the end of each operation that may grant).
 * Remote targets: remote.c sends LOCK/UNLOCK and waits for the answers at
 * unlock. */
#include <stdlib.h>

#include "remote.h"
#include "rma.h"

struct lock_wait {
    struct win_lock *lock;
    unsigned ticket;
    bool exclusive;
};

/* seq_cst loads: they pair with the unlocker's update and its read of the
 * waiter slot (one of the two sees the other). */
static bool lock_turn(void *arg)
{
    const struct lock_wait *lw = arg;
    if (atomic_load(&lw->lock->serving) != lw->ticket)
        return false;
    return !lw->exclusive || atomic_load(&lw->lock->readers) == 0;
}

static atomic_rank_ptr *waiter_slots(struct win_core *core, struct win_lock *lock)
{
    atomic_rank_ptr *slots = atomic_load_explicit(&lock->waiters, memory_order_acquire);
    if (slots != NULL)
        return slots;
    atomic_rank_ptr *fresh = calloc((size_t)core->size, sizeof *fresh);
    if (fresh == NULL)
        return NULL;
    if (atomic_compare_exchange_strong(&lock->waiters, &slots, fresh))
        return fresh;
    free(fresh);
    return slots;
}

static void remote_try_grant(struct win_core *core, int target, int origin);

/* The rank in the waiter slot of `ticket`, if that ticket was handed out
 * (it may be a stale entry of an earlier ticket: waking it is harmless). */
static struct rank *ticket_holder(struct win_core *core, struct win_lock *lock, unsigned ticket)
{
    if (atomic_load(&lock->next) == ticket)
        return NULL;
    atomic_rank_ptr *slots = atomic_load_explicit(&lock->waiters, memory_order_acquire);
    return slots != NULL ? atomic_load(&slots[ticket % (unsigned)core->size]) : NULL;
}

/* Wakes the holder of ticket `ticket`; a remote one is granted instead. */
static void wake_ticket(struct win_core *core, int target, unsigned ticket)
{
    struct rank *r = ticket_holder(core, &core->members[target].lock, ticket);
    if (r == NULL)
        return;
    if (r->remote == NULL)
        rank_wake(r);
    else
        remote_try_grant(core, target, win_rank_of(core, r));
}

/* A reader in: the next ticket may come in too. */
static void reader_enters(struct win_core *core, int target, unsigned ticket)
{
    struct win_lock *lock = &core->members[target].lock;
    atomic_fetch_add(&lock->readers, 1);
    atomic_fetch_add(&lock->serving, 1);
    wake_ticket(core, target, ticket + 1);
}

/* Grants a remote origin's waiting request if its turn has come. Its turn,
 * once come, stays until it is granted: only its holder moves `serving`
 * on or adds a reader. A shared grant lets the next ticket in, which may
 * be another remote request: that is granted in the same loop. */
static void remote_try_grant(struct win_core *core, int target, int origin)
{
    struct win_lock *lock = &core->members[target].lock;
    struct remote_lock *rows = atomic_load_explicit(&core->members[target].remote_locks, memory_order_acquire);
    while (rows != NULL && origin != MPI_UNDEFINED) {
        _Atomic uint64_t *state = &rows[origin].state;
        uint64_t seen = atomic_load(state);
        if (!(seen & 1))
            return;
        struct lock_wait lw = { lock, (unsigned)(seen >> 2), (seen >> 1) & 1 };
        if (!lock_turn(&lw) || !atomic_compare_exchange_strong(state, &seen, seen & ~(uint64_t)1))
            return;
        if (!lw.exclusive) {
            atomic_fetch_add(&lock->readers, 1);
            atomic_fetch_add(&lock->serving, 1);
        }
        rma_remote_lock_granted(core, target, origin);
        if (lw.exclusive)
            return;
        /* wake_ticket(lw.ticket + 1), with a remote holder handled here. */
        struct rank *r = ticket_holder(core, lock, lw.ticket + 1);
        if (r == NULL)
            return;
        if (r->remote == NULL) {
            rank_wake(r);
            return;
        }
        origin = win_rank_of(core, r);
    }
}

void lock_request_remote(struct win_core *core, int target, int origin, bool exclusive)
{
    struct win_member *m = &core->members[target];
    struct remote_lock *rows = atomic_load_explicit(&m->remote_locks, memory_order_acquire);
    if (rows == NULL) {
        /* Only the progress thread creates it. */
        rows = calloc((size_t)core->size, sizeof *rows);
        if (rows == NULL)
            strand_job_abort(1, "Strand MPI: out of memory for a lock request from another node process\n");
        for (int i = 0; i < core->size; i++)
            rows[i] = (struct remote_lock){ .core = core, .target = target, .origin = i };
        atomic_store_explicit(&m->remote_locks, rows, memory_order_release);
    }
    atomic_rank_ptr *slots = waiter_slots(core, &m->lock);
    if (slots == NULL)
        strand_job_abort(1, "Strand MPI: out of memory for a lock request from another node process\n");
    rma_remote_lock_request_pending(core, target, origin);
    unsigned ticket = atomic_fetch_add(&m->lock.next, 1);
    /* Request, then slot, then our own look: an unlocker that advanced
     * `serving` before the slot was filled is covered by that look. */
    atomic_store(&rows[origin].state, (uint64_t)ticket << 2 | (uint64_t)exclusive << 1 | 1);
    atomic_store(&slots[ticket % (unsigned)core->size], core->members[origin].rank);
    remote_try_grant(core, target, origin);
    rma_remote_serve_held();
}

int lock_acquire(struct strand_win *w, int target, bool exclusive)
{
    struct win_core *core = w->core;
    if (core->spans && win_member_is_remote(core, target)) {
        rma_remote_lock(w, target, exclusive);
        return MPI_SUCCESS;
    }
    struct win_lock *lock = &core->members[target].lock;
    /* Allocated before taking a ticket: a ticket cannot be given back. */
    atomic_rank_ptr *slots = waiter_slots(core, lock);
    if (slots == NULL)
        return MPI_ERR_NO_MEM;
    struct lock_wait lw = { lock, atomic_fetch_add(&lock->next, 1), exclusive };
    if (!lock_turn(&lw)) {
        atomic_store(&slots[lw.ticket % (unsigned)core->size], strand_self);
        rank_wait_until(strand_self, lock_turn, &lw);
    }
    if (!exclusive)
        reader_enters(core, target, lw.ticket);
    rma_remote_serve_held();
    return MPI_SUCCESS;
}

void lock_release_core(struct win_core *core, int target, bool exclusive)
{
    struct win_lock *lock = &core->members[target].lock;
    if (exclusive) {
        unsigned next = atomic_fetch_add(&lock->serving, 1) + 1;
        wake_ticket(core, target, next);
    } else if (atomic_fetch_sub(&lock->readers, 1) == 1) {
        /* The last reader out lets a writer that is already served in. */
        wake_ticket(core, target, atomic_load(&lock->serving));
    }
    rma_remote_serve_held();
}

void lock_release(struct strand_win *w, int target, bool exclusive)
{
    if (w->core->spans && win_member_is_remote(w->core, target))
        rma_remote_unlock(w, target, exclusive);
    else
        lock_release_core(w->core, target, exclusive);
}

/* MPI_ERR_RANK for a rank outside the window; MPI_PROC_NULL is accepted. */
static int target_rank_check(struct strand_win *w, int rank, const char *where)
{
    if (rank == MPI_PROC_NULL || (rank >= 0 && rank < w->core->size))
        return MPI_SUCCESS;
    return win_error(w, MPI_ERR_RANK, where, "rank %d is not in the window (size %d)", rank, w->core->size);
}

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    const char *where = "MPI_Win_lock";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
        return win_error(w, MPI_ERR_LOCKTYPE, where, "invalid lock type %d", lock_type);
    if (assert & ~MPI_MODE_NOCHECK)
        return win_error(w, MPI_ERR_ASSERT, where, "invalid assert 0x%x for a lock", (unsigned)assert);
    if ((rc = target_rank_check(w, rank, where)) != MPI_SUCCESS || rank == MPI_PROC_NULL)
        return rc;
    if (w->access_active || w->fence_ops)
        return win_error(w, MPI_ERR_RMA_SYNC, where, "an active target epoch is open on this window");
    if (w->target_state[rank] & TS_LOCKED)
        return win_error(w, MPI_ERR_RMA_SYNC, where, "rank %d is already locked by this process", rank);
    bool exclusive = lock_type == MPI_LOCK_EXCLUSIVE;
    /* MPI_MODE_NOCHECK: nobody holds or will request a conflicting lock. */
    if (!(assert & MPI_MODE_NOCHECK) && lock_acquire(w, rank, exclusive) != MPI_SUCCESS)
        return win_error(w, MPI_ERR_NO_MEM, where, "out of memory");
    w->target_state[rank] |= (exclusive ? TS_LOCK_EXCLUSIVE : TS_LOCK_SHARED) |
                             (assert & MPI_MODE_NOCHECK ? TS_LOCK_NOCHECK : 0);
    w->locks_held++;
    w->fence = FENCE_CLOSED;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_lock);

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    const char *where = "MPI_Win_unlock";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if ((rc = target_rank_check(w, rank, where)) != MPI_SUCCESS || rank == MPI_PROC_NULL)
        return rc;
    uint8_t state = w->target_state[rank];
    if (!(state & TS_LOCKED))
        return win_error(w, MPI_ERR_RMA_SYNC, where, "rank %d is not locked by this process", rank);
    /* Local operations were done when they were called; remote ones are
     * once answered (the release waits for that). */
    if (!(state & TS_LOCK_NOCHECK))
        lock_release(w, rank, state & TS_LOCK_EXCLUSIVE);
    else if (w->core->spans)
        rma_remote_drain(w);
    w->target_state[rank] = state & (uint8_t)~(TS_LOCKED | TS_LOCK_NOCHECK);
    w->locks_held--;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_unlock);
