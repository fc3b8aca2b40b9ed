/* Sleeping and waking: rank_wait_until must return once another thread
 * makes the condition true and calls rank_wake, whether the waiter is still
 * spinning or already asleep; lite_lock must exclude; the per-CPU counts
 * of the polls after a yield must balance. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/lock.h"
#include "unit_support.h"

static atomic_int flag;

static bool flag_set(void *arg)
{
    (void)arg;
    return atomic_load(&flag) != 0;
}

struct waker_args {
    struct rank *target;
    int delay_us;
};

static void *waker(void *argp)
{
    struct waker_args *a = argp;
    usleep((useconds_t)a->delay_us);
    atomic_store(&flag, 1);
    rank_wake(a->target);
    return NULL;
}

static void wait_with_delay(int delay_us)
{
    unit_node_create(1, 1024);
    atomic_store(&flag, 0);
    struct waker_args a = { strand_node.ranks[0], delay_us };
    pthread_t t;
    pthread_create(&t, NULL, waker, &a);
    rank_wait_until(strand_node.ranks[0], flag_set, NULL);
    CU_ASSERT_EQUAL(atomic_load(&flag), 1);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(atomic_load(&strand_node.ranks[0]->waiter.sleepers), 0);
    unit_node_destroy();
}

static void test_wake_while_spinning(void) { wait_with_delay(0); }
static void test_wake_after_sleeping(void) { wait_with_delay(50000); }

static void test_many_wake_rounds(void)
{
    for (int i = 0; i < 200; i++)
        wait_with_delay(i % 3 == 0 ? 100 : 0);
}

/* ---- two ranks per core: yield, then poll (wait.c) ---- */

enum { RING_RANKS = 4, RING_ROUNDS = 2000 };
static atomic_int token_holder;

static bool token_is_mine(void *arg)
{
    return atomic_load(&token_holder) == (int)(intptr_t)arg;
}

static void *ring_member(void *arg)
{
    int me = (int)(intptr_t)arg, next = (me + 1) % RING_RANKS;
    struct rank *self = strand_node.ranks[me];
    strand_self = self;
    for (int round = 0; round < RING_ROUNDS; round++) {
        rank_wait_until(self, token_is_mine, arg);
        atomic_store(&token_holder, next);
        rank_wake(strand_node.ranks[next]);
    }
    return NULL;
}

/* A token ring of 4 ranks on this machine's CPUs with the polls after a
 * yield on: every pass arrives, and once all stopped each CPU's count is
 * exactly the ranks counted on it (busy after their last wait, or marked
 * by a waker and not yet run): no count leaks however wakers and waiters
 * raced. */
static void test_polls_after_yield_counts_balance(void)
{
    unit_node_create(RING_RANKS, 1024);
    struct node *n = &strand_node;
    int cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
    n->cpu_wanted = aligned_alloc(_Alignof(struct cpu_wanted), (size_t)cpus * sizeof *n->cpu_wanted);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n->cpu_wanted);
    memset(n->cpu_wanted, 0, (size_t)cpus * sizeof *n->cpu_wanted);
    n->ncpu_slots = cpus;
    n->spin_limit = 1;
    n->wait_yield_limit = 32;
    n->wait_polls_after_yield = 300;
    for (int i = 0; i < RING_RANKS; i++)
        n->ranks[i]->thread_level = MPI_THREAD_SINGLE;
    atomic_store(&token_holder, 0);
    pthread_t t[RING_RANKS];
    for (intptr_t i = 0; i < RING_RANKS; i++)
        pthread_create(&t[i], NULL, ring_member, (void *)i);
    for (int i = 0; i < RING_RANKS; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(atomic_load(&token_holder), 0);  /* RING_ROUNDS full turns */
    int busy = 0;
    for (int c = 0; c < cpus; c++) {
        int counted = 0;
        for (int i = 0; i < RING_RANKS; i++) {
            counted += atomic_load(&n->ranks[i]->waiter.busy_on) == c + 1;
            counted += atomic_load(&n->ranks[i]->waiter.wanted_on) == c + 1;
        }
        CU_ASSERT_EQUAL(atomic_load(&n->cpu_wanted[c].count), counted);
        for (int i = 0; i < RING_RANKS; i++)
            busy += atomic_load(&n->ranks[i]->waiter.busy_on) == c + 1;
    }
    CU_ASSERT_EQUAL(busy, RING_RANKS);      /* each left its last wait */
    for (int i = 0; i < RING_RANKS; i++)
        CU_ASSERT_EQUAL(atomic_load(&n->ranks[i]->waiter.yielded_on), 0);
    /* Ranks that end give everything back. */
    for (int i = 0; i < RING_RANKS; i++)
        rank_waits_over(n->ranks[i]);
    for (int c = 0; c < cpus; c++)
        CU_ASSERT_EQUAL(atomic_load(&n->cpu_wanted[c].count), 0);
    free(n->cpu_wanted);
    n->cpu_wanted = NULL;
    n->ncpu_slots = 0;
    n->wait_yield_limit = 0;
    n->wait_polls_after_yield = 0;
    n->spin_limit = 100;
    unit_node_destroy();
}

static struct lite_lock counter_lock = LITE_LOCK_INIT;
static long counter;

static void *bump(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200000; i++) {
        lite_lock(&counter_lock);
        counter++;
        lite_unlock(&counter_lock);
    }
    return NULL;
}

static void test_lite_lock_excludes(void)
{
    pthread_t t[4];
    counter = 0;
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, bump, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(counter, 800000);
    CU_ASSERT_EQUAL(atomic_load(&counter_lock.state), 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("wait", NULL, NULL);
    CU_add_test(s, "wake while spinning", test_wake_while_spinning);
    CU_add_test(s, "wake after sleeping", test_wake_after_sleeping);
    CU_add_test(s, "200 wake rounds", test_many_wake_rounds);
    CU_add_test(s, "lite_lock excludes", test_lite_lock_excludes);
    CU_add_test(s, "polls after a yield: counts balance", test_polls_after_yield_counts_balance);
    return unit_run_registry();
}
