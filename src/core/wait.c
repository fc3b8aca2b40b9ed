/* Spin-then-sleep waiting for every blocking call.
 *
 * No lost wake-up: a waker stores what the sleeper waits for, then loads
 * `sleepers`; a sleeper increments `sleepers`, then checks its condition
 * once more before futex_wait. Each side needs its store ordered before
 * its load. rank_wake does that with a full fence on the waker's side.
 * rank_wake_light (a sender's hot path, once per small message) uses only
 * a compiler barrier: the sleeper, which is rare, issues membarrier()
 * instead, which runs a full barrier on every CPU running a thread of the
 * process. Then if the waker's load of `sleepers` saw 0, its earlier store
 * was visible before membarrier returned, so the sleeper's check sees it. */
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../net/net.h"
#include "../pt2pt/pt2pt.h"
#include "../util/futex.h"
#include "core.h"

bool waiting_setup(void)
{
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

static void sleeper_barrier(void)
{
    if (strand_node.light_wakes)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

/* A rank's threads sleep on its word only inside MPI calls, so a rank not
 * at MPI_THREAD_MULTIPLE has at most one sleeper: the kernel is asked to
 * wake one, and stops at the first match. Asked for all, FUTEX_WAKE walks
 * its whole hash bucket, and with a thousand ranks asleep on two CPUs the
 * buckets are long (a process's private futex hash has 16 there;
 * doc/performance.md §25). Threads of an MPI_THREAD_MULTIPLE rank each
 * wait for their own condition: all are woken, and each re-checks. */
void rank_wake_slow(struct rank *r)
{
    atomic_fetch_add_explicit(&r->waiter.seq, 1, memory_order_release);
    /* Our caller saw a sleeper, which set the level before it slept: the
     * fence orders that load of `sleepers` before this load of the level. */
    atomic_thread_fence(memory_order_acquire);
    if (__atomic_load_n(&r->thread_level, __ATOMIC_RELAXED) == MPI_THREAD_MULTIPLE)
        futex_wake_all(&r->waiter.seq);
    else
        futex_wake_one(&r->waiter.seq);
}

/* The sleeping part of a wait.  Why `awaited` needs no lock: a completer
 * stores DONE, fences, then loads `sleepers` and `awaited`; this thread
 * stores `awaited`, increments `sleepers` (seq_cst), then checks `done`
 * and asks `pick` again.  Either the completer sees the increment (and so
 * this episode's `awaited`), or these checks see its DONE.  A completer
 * skips the wake only for another completion than `awaited`, and this
 * thread sleeps only if `awaited` is still not done when it checks after
 * the increment: whoever completes it wakes the rank. */
static void sleep_until(struct rank *self, rank_wait_cond done, rank_wait_pick pick, void *arg)
{
    if (self->thread_level == MPI_THREAD_MULTIPLE)
        pick = NULL;
    for (;;) {
        unsigned seq = atomic_load_explicit(&self->waiter.seq, memory_order_acquire);
        const void *awaited = pick != NULL ? pick(arg) : NULL;
        atomic_store_explicit(&self->waiter.awaited, awaited, memory_order_relaxed);
        /* seq_cst increment: a waker that misses it will still see done(). */
        atomic_fetch_add_explicit(&self->waiter.sleepers, 1, memory_order_seq_cst);
        sleeper_barrier();
        if (done(arg)) {
            atomic_fetch_sub_explicit(&self->waiter.sleepers, 1, memory_order_relaxed);
            return;
        }
        if (awaited != NULL && pick(arg) != awaited) {
            /* it completed before we counted ourselves asleep: pick again */
            atomic_fetch_sub_explicit(&self->waiter.sleepers, 1, memory_order_relaxed);
            continue;
        }
        futex_wait(&self->waiter.seq, seq);
        atomic_fetch_sub_explicit(&self->waiter.sleepers, 1, memory_order_relaxed);
        if (done(arg))
            return;
    }
}

/* ---- two ranks per core: yield, then poll ----
 *
 * With two ranks per core, a waiter that yields hands its core to the
 * other rank of that core, which often waits too: then each yields the
 * core back at once, a switch every ~2 µs, and whichever of them the next
 * message is for runs only half of the time. So a rank that comes back
 * from sched_yield polls a while before it yields again: in a chain of
 * hand-offs (a token ring) the rank that yielded is the one whose turn is
 * over, and the one polling is the one the next message is for. It stops
 * polling as soon as this CPU's `cpu_wanted` count is above zero: raised
 * by a waker for a rank that yielded here, and by each rank from the end
 * of one wait to the start of the next (on the CPU it left its wait on),
 * so a rank with work does not wait for the poller. The counts are hints
 * (a rank may have moved to another CPU since): the polls are bounded, and
 * a stale count costs one round of them (doc/performance.md §33). */

void rank_want_cpu(struct rank *r, int cpu_plus_1)
{
    int none = 0;
    if (cpu_plus_1 <= strand_node.ncpu_slots &&
        atomic_compare_exchange_strong_explicit(&r->waiter.wanted_on, &none, cpu_plus_1, memory_order_relaxed,
                                                memory_order_relaxed))
        atomic_fetch_add_explicit(&strand_node.cpu_wanted[cpu_plus_1 - 1].count, 1, memory_order_relaxed);
}

/* The rank runs: its own count, if a waker raised one, is spent. */
static void want_spent(struct rank *self)
{
    if (atomic_load_explicit(&self->waiter.wanted_on, memory_order_relaxed) == 0)
        return;
    int cpu_plus_1 = atomic_exchange_explicit(&self->waiter.wanted_on, 0, memory_order_relaxed);
    if (cpu_plus_1 != 0)
        atomic_fetch_sub_explicit(&strand_node.cpu_wanted[cpu_plus_1 - 1].count, 1, memory_order_relaxed);
}

static int current_cpu_plus_1(void)
{
    int cpu = sched_getcpu();
    return cpu >= 0 && cpu < strand_node.ncpu_slots ? cpu + 1 : 0;
}

/* A rank that runs outside a wait counts as having work on the CPU it
 * left its last wait on: a waiter that gets the CPU while the kernel
 * preempted that rank yields it back at once. */
static void busy_begin(struct rank *self)
{
    int cpu_plus_1 = current_cpu_plus_1();
    atomic_store_explicit(&self->waiter.busy_on, cpu_plus_1, memory_order_relaxed);
    if (cpu_plus_1 != 0)
        atomic_fetch_add_explicit(&strand_node.cpu_wanted[cpu_plus_1 - 1].count, 1, memory_order_relaxed);
}

static void busy_end(struct rank *self)
{
    int cpu_plus_1 = atomic_load_explicit(&self->waiter.busy_on, memory_order_relaxed);
    if (cpu_plus_1 == 0)
        return;
    atomic_store_explicit(&self->waiter.busy_on, 0, memory_order_relaxed);
    atomic_fetch_sub_explicit(&strand_node.cpu_wanted[cpu_plus_1 - 1].count, 1, memory_order_relaxed);
}

/* Yields, announcing the CPU whose run queue this rank joins. */
static void yield_announced(struct rank *self)
{
    atomic_store_explicit(&self->waiter.yielded_on, current_cpu_plus_1(), memory_order_relaxed);
    sched_yield();
    atomic_store_explicit(&self->waiter.yielded_on, 0, memory_order_relaxed);
    want_spent(self);
}

/* Polls up to `polls` times; true when done, false when the polls ran out
 * or a rank that yielded on this CPU has work. */
static bool poll_while_cpu_unwanted(rank_wait_cond done, void *arg, int polls)
{
    int cpu_plus_1 = current_cpu_plus_1();
    if (cpu_plus_1 == 0)
        return false;
    const atomic_int *wanted = &strand_node.cpu_wanted[cpu_plus_1 - 1].count;
    for (int i = 0; i < polls; i++) {
        if (done(arg))
            return true;
        if (atomic_load_explicit(wanted, memory_order_relaxed) > 0)
            return false;
        cpu_relax();
    }
    return false;
}

/* One yield of a waiter: announced where waiters poll after yielding
 * (polls > 0), so that a waker can tell this CPU it has work. */
static void yield_core(struct rank *self, int polls)
{
    if (polls == 0)
        sched_yield();
    else
        yield_announced(self);
}

/* The yielding part of a wait; true when done. */
static bool yield_until(struct rank *self, rank_wait_cond done, void *arg)
{
    int polls = strand_node.wait_polls_after_yield;
    for (int i = 0; i < strand_node.wait_yield_limit; i++) {
        if (done(arg))
            return true;
        yield_core(self, polls);
        if (polls != 0 && poll_while_cpu_unwanted(done, arg, polls))
            return true;
    }
    return false;
}

/* A program that polls (MPI_Iprobe, MPI_Test* in a loop) spins inside no
 * wait of ours. With more ranks than cores the rank it polls for is often
 * runnable but not running, and a poller that keeps the core spins out its
 * whole time slice first: hypre's exchange loop (Iprobe, Testall, Test)
 * made AMG's setup at 64 ranks on 2 cores take 100 s, slower than MPICH's
 * busy-polling processes. So a poll that found nothing hands the core on,
 * as Open MPI does when oversubscribed (mpi_yield_when_idle); announced,
 * as in yield_until, where waiters poll after their yields. */
void rank_poll_missed(struct rank *self)
{
    if (__atomic_load_n(&strand_node.yield_limit, __ATOMIC_RELAXED) == 0)
        return;                 /* each rank has a core: keep it */
    yield_core(self, __atomic_load_n(&strand_node.wait_polls_after_yield, __ATOMIC_RELAXED));
}

void rank_wait_until(struct rank *self, rank_wait_cond done, void *arg)
{
    rank_wait_until_picked(self, done, NULL, arg);
}

void rank_waits_over(struct rank *self)
{
    busy_end(self);
    want_spent(self);
}

/* The waiting part of rank_wait_until_picked, after its first check. */
static void wait_blocked(struct rank *self, rank_wait_cond done, rank_wait_pick pick, void *arg)
{
    /* In a job over several node processes the spinning waiter also reads
     * the network itself (src/net/net.h): no wake-up for what it awaits. */
    bool polling = net_wait_begin();
    for (int i = 0; i < strand_node.spin_limit; i++) {
        if (done(arg)) {
            if (polling)
                net_wait_end(false);
            return;
        }
        if (polling)
            net_wait_poll();
        cpu_relax();
    }
    if (polling)
        net_wait_end(true);
    if (yield_until(self, done, arg))
        return;
    /* Nobody would wake this thread to withdraw its offers (lane.h). */
    pt2pt_before_sleep(self);
    sleep_until(self, done, pick, arg);
}

void rank_wait_until_picked(struct rank *self, rank_wait_cond done, rank_wait_pick pick, void *arg)
{
    if (done(arg))
        return;
    bool counted = strand_node.wait_polls_after_yield != 0 && self->thread_level != MPI_THREAD_MULTIPLE;
    busy_end(self);             /* (also a count left from before the polls were turned off) */
    wait_blocked(self, done, pick, arg);
    if (counted)
        busy_begin(self);
}
