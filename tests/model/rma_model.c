/* Exhaustive model check of the RMA synchronization protocols of
 * src/rma: the passive-target lock (lock.c), post/start/complete/wait
 * (pscw.c) and the fence in both its variants (fence.c), each with the
 * sleep/wake handshake of src/core/wait.c. Every interleaving of the
 * protocols' atomic steps is explored for 2-3 processes (explore.h).
 * One CUnit test per protocol; a failure prints a counterexample trace.
 * Run by `make check` (tests/model/Makefile.inc); `--full` adds the
 * largest configurations (minutes), MODEL_VERBOSE=1 prints each one. */
#include <CUnit/Basic.h>
#include <stdlib.h>
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

/* The checker must be able to fail: each planted flaw is caught (the
 * counterexample goes to stdout with MODEL_VERBOSE, else nowhere). */
static void expect_caught(int mutant, const char *what)
{
    struct explore_stats stats = { 0, 0, 0 };
    FILE *out = getenv("MODEL_VERBOSE") != NULL ? stdout : tmpfile();
    bool caught = check_lock_mutant(mutant, &stats, out != NULL ? out : stdout);
    printf("\n%s %s (%lu states explored)\n", caught ? "caught" : "MISSED", what, stats.states);
    if (out != NULL && out != stdout)
        fclose(out);
    CU_ASSERT_TRUE(caught);
}

static void test_hold_only_waiting(void) { expect_caught(1, "frames held only while the request is pending"); }
static void test_never_hold(void) { expect_caught(2, "operations applied before the grant"); }
static void test_grant_forgets(void) { expect_caught(3, "a grant that forgets the held frames"); }
static void test_grant_any_word(void) { expect_caught(4, "a grant that claims a newer request"); }
static void test_pscw(void) { run_check("pscw", check_pscw); }
static void test_fence(void) { run_check("fence", check_fence); }

int main(int argc, char **argv)
{
    model_full = argc > 1 && strcmp(argv[1], "--full") == 0;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("rma protocol models", NULL, NULL);
    CU_add_test(s, "lock: mutual exclusion, no lost wake-up", test_lock);
    CU_add_test(s, "lock: catches frames held only while the request is pending", test_hold_only_waiting);
    CU_add_test(s, "lock: catches operations applied before the grant", test_never_hold);
    CU_add_test(s, "lock: catches a grant that forgets the held frames", test_grant_forgets);
    CU_add_test(s, "lock: catches a grant that claims a newer request", test_grant_any_word);
    CU_add_test(s, "pscw: puts after post, visible after wait", test_pscw);
    CU_add_test(s, "fence: barrier, NOPRECEDE, ring bound", test_fence);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    int failures = (int)CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures == 0 ? 0 : 1;
}
