/* Waiting inside collectives: spin briefly, then sleep on the flag's
 * futex word, so that hundreds of oversubscribed ranks progress at the
 * speed of the work. A flag is woken with one system call however many
 * ranks sleep on it, and with none when nobody sleeps. */
#include "../util/futex.h"
#include "coll_impl.h"

void coll_flag_wait(struct coll_flag *f, unsigned target)
{
    for (int i = 0; i < strand_node.spin_limit; i++) {
        if (atomic_load_explicit(&f->value, memory_order_acquire) == target)
            return;
        cpu_relax();
    }
    for (;;) {
        atomic_fetch_add_explicit(&f->sleepers, 1, memory_order_seq_cst);
        unsigned seen = atomic_load_explicit(&f->value, memory_order_seq_cst);
        /* The kernel rechecks the word, so a change after this load is not lost. */
        if (seen != target)
            futex_wait(&f->value, seen);
        atomic_fetch_sub_explicit(&f->sleepers, 1, memory_order_relaxed);
        if (atomic_load_explicit(&f->value, memory_order_acquire) == target)
            return;
    }
}

static void flag_wake(struct coll_flag *f)
{
    /* Pairs with the waiter's increment of `sleepers` before its last check. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&f->sleepers, memory_order_relaxed) != 0)
        futex_wake_all(&f->value);
}

void coll_flag_set(struct coll_flag *f, unsigned value)
{
    atomic_store_explicit(&f->value, value, memory_order_release);
    flag_wake(f);
}

void coll_flag_count_down(struct coll_flag *f)
{
    if (atomic_fetch_sub_explicit(&f->value, 1, memory_order_acq_rel) == 1)
        flag_wake(f);
}

void coll_gate_pass(struct coll_ctx *ctx)
{
    struct coll_gate *g = &ctx->cc->gate;
    uint64_t use = ++ctx->me->gate_uses;
    /* acq_rel: the last arriver sees every member's writes before the gate,
     * and its release of `round` hands them to all waiters. A member cannot
     * arrive for use k+1 before use k completed, so the count never mixes uses. */
    uint64_t before = atomic_fetch_add_explicit(&g->arrived, 1, memory_order_acq_rel);
    if (before + 1 == use * (uint64_t)ctx->cc->nslots)
        coll_flag_set(&g->round, (unsigned)use);
    else
        coll_flag_wait(&g->round, (unsigned)use);
}
