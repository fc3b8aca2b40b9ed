/* Spin-then-sleep waiting for every blocking call. */
#include "../util/futex.h"
#include "core.h"

void rank_wake_slow(struct rank *r)
{
    atomic_fetch_add_explicit(&r->waiter.seq, 1, memory_order_release);
    futex_wake_all(&r->waiter.seq);
}

void rank_wait_until(struct rank *self, rank_wait_cond done, void *arg)
{
    for (int i = 0; i < strand_node.spin_limit; i++) {
        if (done(arg))
            return;
        cpu_relax();
    }
    for (;;) {
        unsigned seq = atomic_load_explicit(&self->waiter.seq, memory_order_acquire);
        /* seq_cst increment: a waker that misses it will still see done(). */
        atomic_fetch_add_explicit(&self->waiter.sleepers, 1, memory_order_seq_cst);
        if (done(arg)) {
            atomic_fetch_sub_explicit(&self->waiter.sleepers, 1, memory_order_relaxed);
            return;
        }
        futex_wait(&self->waiter.seq, seq);
        atomic_fetch_sub_explicit(&self->waiter.sleepers, 1, memory_order_relaxed);
        if (done(arg))
            return;
    }
}
