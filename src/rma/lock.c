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
 * yet admitted are held by distinct ranks and never share a slot. */
#include <stdlib.h>

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

/* Wakes the holder of ticket `ticket`, if that ticket was handed out. */
static void wake_ticket(struct win_core *core, struct win_lock *lock, unsigned ticket)
{
    if (atomic_load(&lock->next) == ticket)
        return;
    atomic_rank_ptr *slots = atomic_load_explicit(&lock->waiters, memory_order_acquire);
    struct rank *r = slots != NULL ? atomic_load(&slots[ticket % (unsigned)core->size]) : NULL;
    if (r != NULL)
        rank_wake(r);
}

int lock_acquire(struct strand_win *w, int target, bool exclusive)
{
    struct win_core *core = w->core;
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
    if (!exclusive) {
        atomic_fetch_add(&lock->readers, 1);
        atomic_fetch_add(&lock->serving, 1);
        wake_ticket(core, lock, lw.ticket + 1);
    }
    return MPI_SUCCESS;
}

void lock_release(struct strand_win *w, int target, bool exclusive)
{
    struct win_core *core = w->core;
    struct win_lock *lock = &core->members[target].lock;
    if (exclusive) {
        unsigned next = atomic_fetch_add(&lock->serving, 1) + 1;
        wake_ticket(core, lock, next);
        return;
    }
    /* The last reader out lets a writer that is already served in. */
    if (atomic_fetch_sub(&lock->readers, 1) == 1)
        wake_ticket(core, lock, atomic_load(&lock->serving));
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
    /* Operations were done when they were called: releasing is all. */
    if (!(state & TS_LOCK_NOCHECK))
        lock_release(w, rank, state & TS_LOCK_EXCLUSIVE);
    w->target_state[rank] = state & (uint8_t)~(TS_LOCKED | TS_LOCK_NOCHECK);
    w->locks_held--;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_unlock);
