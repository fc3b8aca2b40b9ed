/* A lock one thread (its owner) usually takes alone: while no other
 * thread has wanted it for a while, the owner enters and leaves with plain
 * stores, no atomic instruction ("biased"). Another thread revokes the
 * bias: under the underlying lite_lock it clears `biased`, runs a
 * process-wide memory barrier (membarrier), and waits until the owner is
 * out. From then on the owner takes the lite_lock too, until it has
 * entered `quiet_needed` times with no other thread in between; then it
 * biases the lock again. Each revocation doubles `quiet_needed` (up to
 * BIASED_QUIET_MAX), so a lock that others keep wanting settles as an
 * ordinary lite_lock and pays at most one barrier per BIASED_QUIET_MAX
 * owner entries.
 *
 * Why it is exclusive (asymmetric Dekker): the owner stores
 * owner_inside = 1, then loads `biased` (a compiler barrier between: no
 * fence); the other thread stores biased = 0, then membarrier(), then
 * loads owner_inside. membarrier runs a full barrier on every CPU running
 * a thread of the process: if the owner's store came before that barrier,
 * the other thread sees owner_inside = 1 and waits; if after, the owner's
 * load comes after it too and sees biased = 0, so it takes the lite_lock.
 * The model checker's tests/model/model_biased_lock.c explores this with
 * the owner's store buffer.
 *
 * Requirements: the process registered for
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED, and the owner is one thread; the
 * owner says so with `may_bias` (false: it takes the lite_lock, and the
 * lock is never biased). Any thread may be "other", the owner included
 * (it then costs a revocation if biased). */
#ifndef STRAND_UTIL_BIASED_LOCK_H
#define STRAND_UTIL_BIASED_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "lock.h"

enum { BIASED_QUIET_FIRST = 64, BIASED_QUIET_MAX = 4096 };

struct biased_lock {
    struct lite_lock lock;           /* other threads; the owner while not biased */
    _Atomic uint8_t biased;          /* written under `lock` */
    _Atomic uint8_t owner_inside;    /* the owner, in the lock while biased */
    uint16_t others;                 /* entries of other threads (wraps), under `lock` */
    uint16_t others_seen;            /* the owner's: `others` at its last entry */
    uint16_t quiet;                  /* the owner's: its entries since another's */
    uint16_t quiet_needed;           /* to bias again; 0 until the first entry */
};

/* Slow paths (biased_lock.c). */
void biased_lock_owner_slow(struct biased_lock *l, bool may_bias);
void biased_lock_other(struct biased_lock *l);

/* The owner's entry; returns whether it holds the lock biased, to pass to
 * biased_unlock_owner. */
static inline bool biased_lock_owner(struct biased_lock *l, bool may_bias)
{
    if (atomic_load_explicit(&l->biased, memory_order_relaxed)) {
        atomic_store_explicit(&l->owner_inside, 1, memory_order_relaxed);
        /* The store may still sit in this CPU's store buffer when the load
         * runs: the revoking thread's membarrier drains it (see above). */
        atomic_signal_fence(memory_order_seq_cst);
        if (__builtin_expect(atomic_load_explicit(&l->biased, memory_order_acquire) != 0, 1))
            return true;
        atomic_store_explicit(&l->owner_inside, 0, memory_order_release);
    }
    biased_lock_owner_slow(l, may_bias);
    return false;
}

static inline void biased_unlock_owner(struct biased_lock *l, bool was_biased)
{
    if (was_biased)
        atomic_store_explicit(&l->owner_inside, 0, memory_order_release);
    else
        lite_unlock(&l->lock);
}

static inline void biased_unlock_other(struct biased_lock *l)
{
    lite_unlock(&l->lock);
}

#endif
