/* Sleeping and waking: rank_wait_until must return once another thread
 * makes the condition true and calls rank_wake, whether the waiter is still
 * spinning or already asleep; lite_lock must exclude. */
#include <pthread.h>
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
    return unit_run_registry();
}
