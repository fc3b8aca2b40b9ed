/* Exhaustive model check of the RMA synchronization protocols of
 * src/rma: the passive-target lock (lock.c), post/start/complete/wait
 * (pscw.c) and the fence in both its variants (fence.c), each with the
 * sleep/wake handshake of src/core/wait.c. Every interleaving of the
 * protocols' atomic steps is explored for 2-3 processes (explore.h).
 * One CUnit test per protocol; a failure prints a counterexample trace.
 * Run by `make check` (tests/model/Makefile.inc); `--full` adds the
 * largest configurations (minutes), MODEL_VERBOSE=1 prints each one. */
#include <CUnit/Basic.h>
#include <string.h>

#include "models.h"

bool model_full;

static void run_check(const char *name, bool (*check)(struct explore_stats *, FILE *))
{
    struct explore_stats stats = { 0, 0, 0 };
    bool ok = check(&stats, stdout);
    printf("\n%s %s: %lu states, %lu transitions, %lu final states\n", ok ? "checked" : "FAILED", name,
           stats.states, stats.transitions, stats.finals);
    CU_ASSERT_TRUE(ok);
}

static void test_lock(void) { run_check("lock", check_lock); }
static void test_pscw(void) { run_check("pscw", check_pscw); }
static void test_fence(void) { run_check("fence", check_fence); }

int main(int argc, char **argv)
{
    model_full = argc > 1 && strcmp(argv[1], "--full") == 0;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("rma protocol models", NULL, NULL);
    CU_add_test(s, "lock: mutual exclusion, no lost wake-up", test_lock);
    CU_add_test(s, "pscw: puts after post, visible after wait", test_pscw);
    CU_add_test(s, "fence: barrier, NOPRECEDE, ring bound", test_fence);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    int failures = (int)CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures == 0 ? 0 : 1;
}
