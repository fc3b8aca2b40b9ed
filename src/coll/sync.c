/* Waiting inside collectives: spin briefly, then sleep on the flag's
 * futex word, so that hundreds of oversubscribed ranks progress at the
 * speed of the work. A flag is woken with one system call however many
 * ranks sleep on it, and with none when nobody sleeps. */
#include <sched.h>
#include <stdlib.h>

#include "../util/futex.h"
#include "coll_impl.h"

/* Epoch flags only move forward, and a waiter may see them move past its
 * target (the setter can go on to the next collective before the waiter
 * looks), so they are compared as serial numbers; counts exactly. */
static inline bool flag_done(unsigned value, unsigned target, bool serial)
{
    return serial ? (int)(value - target) >= 0 : value == target;
}

static bool flag_check(struct coll_flag *f, unsigned target, bool serial)
{
    return flag_done(atomic_load_explicit(&f->value, memory_order_acquire), target, serial);
}

static int yield_limit = -1;

static void flag_wait(struct coll_flag *f, unsigned target, bool serial)
{
    for (int i = 0; i < strand_node.spin_limit; i++) {
        if (flag_check(f, target, serial))
            return;
        cpu_relax();
    }
    if (yield_limit < 0) {
        const char *e = getenv("COLL_YIELDS");
        yield_limit = e ? atoi(e) : 0;
    }
    for (int i = 0; i < yield_limit; i++) {
        if (flag_check(f, target, serial))
            return;
        sched_yield();
    }
    for (;;) {
        atomic_fetch_add_explicit(&f->sleepers, 1, memory_order_seq_cst);
        unsigned seen = atomic_load_explicit(&f->value, memory_order_seq_cst);
        /* The kernel rechecks the word, so a change after this load is not lost. */
        if (!flag_done(seen, target, serial))
            futex_wait(&f->value, seen);
        atomic_fetch_sub_explicit(&f->sleepers, 1, memory_order_relaxed);
        if (flag_done(atomic_load_explicit(&f->value, memory_order_acquire), target, serial))
            return;
    }
}

void coll_flag_wait_epoch(struct coll_flag *f, unsigned epoch)
{
    flag_wait(f, epoch, true);
}

void coll_flag_wait_zero(struct coll_flag *f)
{
    flag_wait(f, 0, false);
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

bool coll_gate_enter(struct coll_ctx *ctx)
{
    struct coll_gate *g = &ctx->cc->gate;
    uint64_t use = ++ctx->me->gate_uses;
    /* acq_rel: the last arriver sees every member's writes before the gate,
     * and its release of `round` hands them (and its own) to all waiters. A
     * member cannot enter use k+1 before use k opened (every member either
     * waits for the gate or for someone who did), so the count never mixes
     * uses. */
    uint64_t before = atomic_fetch_add_explicit(&g->arrived, 1, memory_order_acq_rel);
    return before + 1 == use * (uint64_t)ctx->cc->nslots;
}

void coll_gate_open(struct coll_ctx *ctx)
{
    coll_flag_set(&ctx->cc->gate.round, (unsigned)ctx->me->gate_uses);
}

void coll_gate_wait(struct coll_ctx *ctx)
{
    coll_flag_wait_epoch(&ctx->cc->gate.round, (unsigned)ctx->me->gate_uses);
}

void coll_gate_pass(struct coll_ctx *ctx)
{
    if (coll_gate_enter(ctx))
        coll_gate_open(ctx);
    else
        coll_gate_wait(ctx);
}
