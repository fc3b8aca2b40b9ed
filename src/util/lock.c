#include "lock.h"

enum { LOCK_SPINS = 100 };

void lite_lock_slow(struct lite_lock *lock)
{
    for (int i = 0; i < LOCK_SPINS; i++) {
        unsigned expected = 0;
        if (atomic_load_explicit(&lock->state, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&lock->state, &expected, 1,
                                                  memory_order_acquire, memory_order_relaxed))
            return;
        cpu_relax();
    }
    /* Announce a sleeper (2) whenever we take or wait on the lock, so the
     * holder's unlock knows to wake someone. */
    while (atomic_exchange_explicit(&lock->state, 2, memory_order_acquire) != 0)
        futex_wait(&lock->state, 2);
}
