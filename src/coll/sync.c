/* Waiting inside collectives: spin briefly, then sleep on the flag's
 * futex word, so that hundreds of oversubscribed ranks progress at the
 * speed of the work. A flag is woken with one system call however many
 * ranks sleep on it, and with none when nobody sleeps.
 *
 * Setting a flag must not miss a sleeper: the setter stores the value and
 * then reads `sleepers`, the sleeper increments `sleepers` and then reads
 * the value, and one of them must see the other's write. With a core per
 * rank, setting is the hot path (a staged bcast sets two flags per call)
 * and a fence there stalls until the flag's cache line came back from the
 * rank polling it; so the setter only keeps its compiler order and the
 * rare sleeper pays instead, with membarrier(), which runs a full barrier
 * on every running thread of the process. Oversubscribed, ranks sleep all
 * the time and the setter fences. */
#include <linux/membarrier.h>
#include <sched.h>

#include "../util/futex.h"
#include "coll_impl.h"

enum barrier_mode { MODE_UNSET, MODE_SETTER_FENCES, MODE_SLEEPER_MEMBARRIER };
static _Atomic int barrier_mode = MODE_UNSET;

static int membarrier(int cmd)
{
    return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

static enum barrier_mode mode(void)
{
    int m = atomic_load_explicit(&barrier_mode, memory_order_relaxed);
    if (STRAND_LIKELY(m != MODE_UNSET))
        return (enum barrier_mode)m;
    /* Every thread computes the same answer; registering twice is harmless. */
    m = MODE_SETTER_FENCES;
    if (strand_node.config.nranks <= strand_node.ncores &&
        membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
        m = MODE_SLEEPER_MEMBARRIER;
    atomic_store_explicit(&barrier_mode, m, memory_order_relaxed);
    return (enum barrier_mode)m;
}

/* Epoch flags only move forward, and a waiter may see them move past its
 * target (the setter can go on to the next collective before the waiter
 * looks), so they are compared as serial numbers; counts exactly. */
static inline bool flag_done(unsigned value, unsigned target, bool serial)
{
    return serial ? (int)(value - target) >= 0 : value == target;
}

static bool word_check(atomic_uint *value, unsigned target, bool serial)
{
    return flag_done(atomic_load_explicit(value, memory_order_acquire), target, serial);
}

/* Oversubscribed, yielding before sleeping (strand_node.yield_limit, see
 * node.c) also lets a writer that is ahead fill more staging entries
 * before the reader comes back. Yielding in every wait, not only for
 * staged data, took 64-rank barrier from 307 to ~125 us and 4-rank 8-byte
 * allreduce from 18 to 5.7 us. */

static void word_sleep(atomic_uint *value, atomic_uint *sleepers, unsigned target, bool serial)
{
    bool membarrier_first = mode() == MODE_SLEEPER_MEMBARRIER;
    for (;;) {
        atomic_fetch_add_explicit(sleepers, 1, memory_order_seq_cst);
        if (membarrier_first)
            membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
        unsigned seen = atomic_load_explicit(value, memory_order_seq_cst);
        /* The kernel rechecks the word, so a change after this load is not lost. */
        if (!flag_done(seen, target, serial))
            futex_wait(value, seen);
        atomic_fetch_sub_explicit(sleepers, 1, memory_order_relaxed);
        if (word_check(value, target, serial))
            return;
    }
}

static void word_wait(atomic_uint *value, atomic_uint *sleepers, unsigned target, bool serial)
{
    for (int i = 0; i < strand_node.spin_limit; i++) {
        if (word_check(value, target, serial))
            return;
        cpu_relax();
    }
    for (int i = 0; i < strand_node.yield_limit; i++) {
        if (word_check(value, target, serial))
            return;
        sched_yield();
    }
    word_sleep(value, sleepers, target, serial);
}

void coll_flag_wait_epoch(struct coll_flag *f, unsigned epoch)
{
    word_wait(&f->value, &f->sleepers, epoch, true);
}

void coll_flag_wait_zero(struct coll_flag *f)
{
    word_wait(&f->value, &f->sleepers, 0, false);
}

void coll_staged_wait_epoch(atomic_uint *value, atomic_uint *sleepers, unsigned epoch)
{
    word_wait(value, sleepers, epoch, true);
}

static void word_wake(atomic_uint *value, atomic_uint *sleepers)
{
    /* Pairs with the sleeper's increment of `sleepers` before its last check. */
    if (mode() == MODE_SLEEPER_MEMBARRIER)
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(sleepers, memory_order_relaxed) != 0)
        futex_wake_all(value);
}

void coll_word_set(atomic_uint *value, atomic_uint *sleepers, unsigned v)
{
    atomic_store_explicit(value, v, memory_order_release);
    word_wake(value, sleepers);
}

void coll_flag_set(struct coll_flag *f, unsigned value)
{
    coll_word_set(&f->value, &f->sleepers, value);
}

void coll_flag_count_down(struct coll_flag *f)
{
    if (atomic_fetch_sub_explicit(&f->value, 1, memory_order_acq_rel) == 1)
        word_wake(&f->value, &f->sleepers);
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
