/* Stress of the RMA synchronization protocols with real threads: each
 * rank of a unit node (unit_support.h) runs on its own pthread, calls the
 * MPI RMA functions, and checks the protocols' promises:
 *  - lock: a plain (non-atomic) counter in rank 0's window, read and
 *    written with MPI_Get/MPI_Put under exclusive locks, ends exact; no
 *    shared holder is ever inside while an exclusive holder is, and no two
 *    exclusive holders are;
 *  - PSCW on changing subsets: the target's wait returns only after every
 *    origin's complete, with every origin's put visible; the target's own
 *    stores before post are never overwritten by an early put;
 *  - fence, on small windows with a core per rank (per-member arrival
 *    words) and on a large or oversubscribed one (arrival counter), with
 *    MPI_MODE_NOPRECEDE epochs: after the closing
 *    fence every put of the epoch is visible, and a member's own store
 *    before the opening fence is never overtaken by an epoch's put.
 * Built as well under ThreadSanitizer (./configure --enable-tsan), where it
 * is the race check of these protocols (privatized MPI programs cannot run
 * under TSan). STRAND_STRESS_SCALE=N multiplies the iteration counts. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "unit_support.h"

enum { MAX_RANKS = 8 };

static atomic_int exclusive_in, shared_in;

struct rank_start {
    void (*body)(int rank, int size);
    int rank, size;
};

static void *rank_thread(void *arg)
{
    struct rank_start *start = arg;
    unit_act_as(start->rank);
    start->body(start->rank, start->size);
    return NULL;
}

/* Runs body on one thread per rank of an n-rank unit node that has
 * `cores` cores (the fence variant depends on it). */
static void run_ranks_on(int n, int cores, void (*body)(int rank, int size))
{
    unit_node_create(n, 1024);
    strand_node.ncores = cores;
    atomic_store(&unit_stress_failures, 0);
    pthread_t threads[MAX_RANKS];
    struct rank_start starts[MAX_RANKS];
    for (int i = 0; i < n; i++) {
        starts[i] = (struct rank_start){ body, i, n };
        CU_ASSERT_EQUAL_FATAL(pthread_create(&threads[i], NULL, rank_thread, &starts[i]), 0);
    }
    for (int i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
    unit_node_destroy();
    CU_ASSERT_EQUAL(atomic_load(&unit_stress_failures), 0);
}

static void run_ranks(int n, void (*body)(int rank, int size))
{
    run_ranks_on(n, n, body);
}

/* --- lock */

static void exclusive_increment(MPI_Win win)
{
    long value = -1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    UNIT_EXPECT(atomic_fetch_add(&exclusive_in, 1) == 0);
    UNIT_EXPECT(atomic_load(&shared_in) == 0);
    MPI_Get(&value, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
    sched_yield();  /* widen the window another holder would have to hit */
    value++;
    MPI_Put(&value, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
    atomic_fetch_sub(&exclusive_in, 1);
    MPI_Win_unlock(0, win);
}

static void shared_read(MPI_Win win, long *last)
{
    long value = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    atomic_fetch_add(&shared_in, 1);
    UNIT_EXPECT(atomic_load(&exclusive_in) == 0);
    MPI_Get(&value, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
    sched_yield();
    UNIT_EXPECT(atomic_load(&exclusive_in) == 0);
    atomic_fetch_sub(&shared_in, 1);
    MPI_Win_unlock(0, win);
    UNIT_EXPECT(value >= *last);  /* the counter only grows */
    *last = value;
}

static void lock_body(int rank, int size)
{
    long counter = 0;
    MPI_Win win;
    MPI_Win_create(&counter, sizeof counter, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int iterations = unit_stress_scaled(1500);
    long last = 0;
    int increments = 0;
    for (int i = 0; i < iterations; i++) {
        /* A different mix of exclusive and shared on every rank. */
        if ((i + rank) % 3 != 0) {
            exclusive_increment(win);
            increments++;
        } else {
            shared_read(win, &last);
        }
    }
    int total = 0;
    MPI_Allreduce(&increments, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Win_free(&win);  /* a fence: every increment is visible to rank 0 */
    if (rank == 0)
        UNIT_EXPECT(counter == total);
    (void)size;
}

static void test_lock_counter(void)
{
    run_ranks(4, lock_body);
    run_ranks(2, lock_body);
}

/* --- PSCW */

/* The members of `all` (size n) whose bit is set in `mask`. */
static MPI_Group group_of(MPI_Group all, unsigned mask, int n)
{
    int ranks[MAX_RANKS], count = 0;
    for (int i = 0; i < n; i++)
        if (mask >> i & 1)
            ranks[count++] = i;
    MPI_Group g;
    MPI_Group_incl(all, count, ranks, &g);
    return g;
}

static int value_of(int round, int origin)
{
    return round * 100 + origin + 1;
}

static void pscw_body(int rank, int size)
{
    int slots[MAX_RANKS] = { 0 };
    MPI_Win win;
    MPI_Win_create(slots, sizeof slots, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Group all;
    MPI_Comm_group(MPI_COMM_WORLD, &all);
    int rounds = unit_stress_scaled(400);
    for (int r = 0; r < rounds; r++) {
        int target = r % size;
        /* Origins: a subset that changes every round (never empty). */
        unsigned origins = ((unsigned)(r * 7 + 3) & ((1u << size) - 1)) & ~(1u << target);
        if (origins == 0)
            origins = 1u << ((target + 1) % size);
        if (rank == target) {
            for (int o = 0; o < size; o++)
                slots[o] = -1;  /* our stores before post: no put may land before them */
            MPI_Group g = group_of(all, origins, size);
            MPI_Win_post(g, 0, win);
            MPI_Win_wait(win);
            MPI_Group_free(&g);
            for (int o = 0; o < size; o++)
                UNIT_EXPECT(slots[o] == (origins >> o & 1 ? value_of(r, o) : -1));
        } else if (origins >> rank & 1) {
            int value = value_of(r, rank);
            MPI_Group g = group_of(all, 1u << target, size);
            MPI_Win_start(g, 0, win);
            MPI_Put(&value, 1, MPI_INT, target, rank, 1, MPI_INT, win);
            MPI_Win_complete(win);
            MPI_Group_free(&g);
        }
    }
    MPI_Group_free(&all);
    MPI_Win_free(&win);
}

static void test_pscw_subsets(void)
{
    run_ranks(4, pscw_body);
    run_ranks(3, pscw_body);
}

/* --- fence */

/* Epoch k puts into word k % 2 of the next rank: the check of epoch k - 1's
 * word after fence k, and the clearing store, never conflict with epoch k. */
static void fence_body(int rank, int size)
{
    int words[2] = { 0, 0 };
    MPI_Win win;
    MPI_Win_create(words, sizeof words, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int epochs = unit_stress_scaled(600);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    for (int k = 1; k <= epochs; k++) {
        /* Every fifth epoch is followed by one without operations, whose
         * closing fence is then NOPRECEDE. */
        bool puts = k % 5 != 0;
        int value = k * 10 + rank;
        if (puts)
            MPI_Put(&value, 1, MPI_INT, next, k % 2, 1, MPI_INT, win);
        bool next_puts = (k + 1) % 5 != 0;
        /* Clear the word the next epoch puts into: our store, before the fence. */
        if (next_puts)
            words[(k + 1) % 2] = -1;
        MPI_Win_fence(puts ? 0 : MPI_MODE_NOPRECEDE, win);
        if (puts)
            UNIT_EXPECT(words[k % 2] == k * 10 + prev);
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_free(&win);
}

static void test_fence_small(void)
{
    run_ranks_on(2, 2, fence_body);
    run_ranks_on(4, 4, fence_body);
}

static void test_fence_counter(void)
{
    run_ranks_on(6, 6, fence_body);
    run_ranks_on(3, 2, fence_body);     /* oversubscribed */
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("rma stress (threads)", NULL, NULL);
    CU_add_test(s, "exclusive/shared locks: exact counter, exclusion", test_lock_counter);
    CU_add_test(s, "PSCW on changing subsets", test_pscw_subsets);
    CU_add_test(s, "fence, per-member words (2 and 4 ranks)", test_fence_small);
    CU_add_test(s, "fence, arrival counter (6 ranks; 3 ranks on 2 cores)", test_fence_counter);
    return unit_run_registry();
}
