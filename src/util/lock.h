/* A small mutex for short critical sections (a mailbox's queues, a pool):
 * one atomic exchange when uncontended, a short spin, then futex sleep so
 * that an oversubscribed node does not burn the holder's time slice.
 * States: 0 free, 1 held, 2 held with sleepers. */
#ifndef STRAND_UTIL_LOCK_H
#define STRAND_UTIL_LOCK_H

#include <stdbool.h>

#include "futex.h"

struct lite_lock {
    atomic_uint state;
};

#define LITE_LOCK_INIT { 0 }

void lite_lock_slow(struct lite_lock *lock);

static inline void lite_lock(struct lite_lock *lock)
{
    unsigned expected = 0;
    if (atomic_compare_exchange_strong_explicit(&lock->state, &expected, 1,
                                                memory_order_acquire, memory_order_relaxed))
        return;
    lite_lock_slow(lock);
}

/* Takes the lock only if it is free: true when taken. */
static inline bool lite_trylock(struct lite_lock *lock)
{
    unsigned expected = 0;
    return atomic_compare_exchange_strong_explicit(&lock->state, &expected, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

static inline void lite_unlock(struct lite_lock *lock)
{
    if (atomic_exchange_explicit(&lock->state, 0, memory_order_release) == 2)
        futex_wake_one(&lock->state);
}

#endif
