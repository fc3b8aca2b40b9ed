/* biased_lock.h: the paths that take the lite_lock. */
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "biased_lock.h"

void biased_lock_owner_slow(struct biased_lock *l, bool may_bias)
{
    lite_lock(&l->lock);
    if (!may_bias)
        return;
    if (l->quiet_needed == 0)
        l->quiet_needed = BIASED_QUIET_FIRST;
    if (l->others != l->others_seen) {
        l->others_seen = l->others;
        l->quiet = 0;
        return;
    }
    if (++l->quiet < l->quiet_needed)
        return;
    /* Nobody else for a while: the owner's next entries take no atomic.
     * (The owner holds the lite_lock now, so no other thread is inside.) */
    l->quiet = 0;
    atomic_store_explicit(&l->biased, 1, memory_order_relaxed);
}

void biased_lock_other(struct biased_lock *l)
{
    lite_lock(&l->lock);
    l->others++;
    if (!atomic_load_explicit(&l->biased, memory_order_relaxed))
        return;
    atomic_store_explicit(&l->biased, 0, memory_order_relaxed);
    /* The owner's owner_inside store, if made before its load of `biased`
     * saw 1, is visible after this; any later entry of the owner sees 0. */
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    for (unsigned spins = 0; atomic_load_explicit(&l->owner_inside, memory_order_acquire); spins++) {
        if (spins < 1000)
            cpu_relax();
        else
            sched_yield();      /* the owner was preempted inside */
    }
    if (l->quiet_needed < BIASED_QUIET_MAX)
        l->quiet_needed *= 2;
}
