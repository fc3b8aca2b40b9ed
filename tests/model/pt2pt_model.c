/* Exhaustive model check of the point-to-point matching engine
 * (src/pt2pt/mailbox.c) with two threads on the receiving rank and two
 * senders, including the sleep/wake handshake of src/core/wait.c (see
 * model_mailbox.c); the mailbox's biased lock (model_biased_lock.c); and
 * the ring of a lane (model_lane.c), an offer (model_offer.c) and a wait
 * that names the completion it needs (model_awaited.c). Run by `make check`; `--full` explores every
 * eager/rendezvous pattern (minutes). A failure prints the trace. */
#include <CUnit/Basic.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"

bool model_full;

typedef bool (*model_check)(struct explore_stats *stats, FILE *out);
typedef bool (*mutant_check)(int mutant, struct explore_stats *stats, FILE *out);

static void expect_checked(model_check check, const char *name)
{
    struct explore_stats stats = { 0, 0, 0 };
    bool ok = check(&stats, stdout);
    printf("\n%s %s: %lu states, %lu transitions, %lu final states\n", ok ? "checked" : "FAILED", name,
           stats.states, stats.transitions, stats.finals);
    CU_ASSERT_TRUE(ok);
}

/* The checker must be able to fail: each planted flaw is caught. The
 * counterexamples go to tests/logs (or stdout with MODEL_VERBOSE). */
static void expect_caught(mutant_check check, int mutant, const char *what)
{
    struct explore_stats stats = { 0, 0, 0 };
    FILE *out = getenv("MODEL_VERBOSE") != NULL ? stdout : tmpfile();
    bool caught = check(mutant, &stats, out != NULL ? out : stdout);
    printf("\n%s %s (%lu states explored)\n", caught ? "caught" : "MISSED", what, stats.states);
    if (out != NULL && out != stdout)
        fclose(out);
    CU_ASSERT_TRUE(caught);
}

static void test_mailbox(void) { expect_checked(check_mailbox, "mailbox"); }
static void test_biased_lock(void) { expect_checked(check_biased_lock, "biased lock"); }
static void test_lane(void) { expect_checked(check_lane, "lane"); }
static void test_offer(void) { expect_checked(check_offer, "offer"); }
static void test_awaited(void) { expect_checked(check_awaited, "awaited"); }

static void test_lock_no_membarrier(void) { expect_caught(check_biased_lock_mutant, 1, "revocation without membarrier"); }
static void test_lock_no_recheck(void) { expect_caught(check_biased_lock_mutant, 2, "owner that does not load `biased` again"); }
static void test_lock_no_wait(void) { expect_caught(check_biased_lock_mutant, 3, "revocation that does not wait for the owner"); }
static void test_lock_bias_outside(void) { expect_caught(check_biased_lock_mutant, 4, "re-bias outside the lock"); }
static void test_lock_no_retreat(void) { expect_caught(check_biased_lock_mutant, 5, "revoked owner that leaves its flag set"); }

static void test_lane_no_clear(void) { expect_caught(check_lane_mutant, 1, "producer that does not clear the successor slot"); }
static void test_lane_no_successor_room(void) { expect_caught(check_lane_mutant, 2, "room check without the successor slot"); }
static void test_lane_wrap_room(void) { expect_caught(check_lane_mutant, 3, "room check from the tail of a wrapping message"); }
static void test_lane_publish_first(void) { expect_caught(check_lane_mutant, 4, "publish before the data"); }
static void test_lane_consumed_early(void) { expect_caught(check_lane_mutant, 5, "consumer that gives slots back before copying"); }
static void test_answer_freed_early(void) { expect_caught(check_lane_mutant, 6, "consumer that frees the answer slot before copying"); }
static void test_answer_unchecked(void) { expect_caught(check_lane_mutant, 7, "producer that writes the answer slot unchecked"); }

static void test_offer_signal_early(void) { expect_caught(check_offer_mutant, 1, "receiver that signals the send before it copies"); }
static void test_offer_withdraw_store(void) { expect_caught(check_offer_mutant, 2, "withdrawal by a store, not a swap"); }
static void test_offer_eager_late(void) { expect_caught(check_offer_mutant, 3, "withdrawal that publishes its copy after the swap"); }
static void test_offer_no_head(void) { expect_caught(check_offer_mutant, 4, "sender that does not check the consumer's head"); }
static void test_offer_cancel_store(void) { expect_caught(check_offer_mutant, 5, "cancel by a store, not a swap"); }

static void test_awaited_no_repick(void) { expect_caught(check_awaited_mutant, 1, "sleeper that does not pick again after counting itself"); }
static void test_awaited_stale(void) { expect_caught(check_awaited_mutant, 2, "plain wait that leaves the last `awaited`"); }
static void test_awaited_named_only(void) { expect_caught(check_awaited_mutant, 3, "completer that wakes only for the completion named"); }

static void test_prober_not_woken(void) { expect_caught(check_mailbox_mutant, 1, "probers not woken"); }
static void test_wake_before_done(void) { expect_caught(check_mailbox_mutant, 2, "wake before DONE"); }
static void test_post_unlocked(void) { expect_caught(check_mailbox_mutant, 3, "search and post in two critical sections"); }
static void test_no_sleeper_barrier(void) { expect_caught(check_mailbox_mutant, 4, "sleeper without membarrier (lane wake without fence)"); }
static void test_no_drain_first(void) { expect_caught(check_mailbox_mutant, 5, "mailbox path that does not drain the lanes first"); }
static void test_drain_before_post(void) { expect_caught(check_mailbox_mutant, 6, "post that drains the lanes before appending the receive"); }

int main(int argc, char **argv)
{
    model_full = argc > 1 && strcmp(argv[1], "--full") == 0;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("pt2pt protocol model", NULL, NULL);
    CU_add_test(s, "mailbox: matching, order, no lost message or wake-up (2 receiving threads)", test_mailbox);
    CU_add_test(s, "catches a sender that does not wake probers", test_prober_not_woken);
    CU_add_test(s, "catches a wake-up before DONE is stored", test_wake_before_done);
    CU_add_test(s, "catches a search and post in two critical sections", test_post_unlocked);
    CU_add_test(s, "catches a sleeper that skips membarrier", test_no_sleeper_barrier);
    CU_add_test(s, "catches a mailbox path that does not drain the lanes first", test_no_drain_first);
    CU_add_test(s, "catches a post that drains the lanes before appending the receive", test_drain_before_post);
    CU_add_test(s, "mailbox lock: biased owner and other threads exclude each other", test_biased_lock);
    CU_add_test(s, "catches a revocation without membarrier", test_lock_no_membarrier);
    CU_add_test(s, "catches an owner that enters on its first load", test_lock_no_recheck);
    CU_add_test(s, "catches a revocation that does not wait for the owner", test_lock_no_wait);
    CU_add_test(s, "catches a re-bias outside the lock", test_lock_bias_outside);
    CU_add_test(s, "catches a revoked owner that leaves its flag set", test_lock_no_retreat);
    CU_add_test(s, "lane: order over ring and answer slot, no slot reused early, no stale slot polled", test_lane);
    CU_add_test(s, "catches a producer that does not clear the successor slot", test_lane_no_clear);
    CU_add_test(s, "catches a room check that forgets the successor slot", test_lane_no_successor_room);
    CU_add_test(s, "catches a room check from the tail of a wrapping message", test_lane_wrap_room);
    CU_add_test(s, "catches a publish before the data", test_lane_publish_first);
    CU_add_test(s, "catches a consumer that gives slots back before it copies", test_lane_consumed_early);
    CU_add_test(s, "catches a consumer that frees the answer slot before it copies", test_answer_freed_early);
    CU_add_test(s, "catches a producer that writes the answer slot without checking it is free", test_answer_unchecked);
    CU_add_test(s, "offer: one copy, taken or withdrawn or cancelled, no buffer or slot used after reuse", test_offer);
    CU_add_test(s, "catches a receiver that signals the send before it copies", test_offer_signal_early);
    CU_add_test(s, "catches a withdrawal by a store instead of a swap", test_offer_withdraw_store);
    CU_add_test(s, "catches a withdrawal that publishes its copy after the swap", test_offer_eager_late);
    CU_add_test(s, "catches a sender that does not check the consumer's head", test_offer_no_head);
    CU_add_test(s, "catches a cancel by a store instead of a swap", test_offer_cancel_store);
    CU_add_test(s, "awaited: a wait for several completions is woken by the one it names, never lost", test_awaited);
    CU_add_test(s, "catches a sleeper that does not pick again after counting itself", test_awaited_no_repick);
    CU_add_test(s, "catches a plain wait that leaves the last `awaited`", test_awaited_stale);
    CU_add_test(s, "catches a completer that wakes only for the completion named", test_awaited_named_only);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    int failures = (int)CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures == 0 ? 0 : 1;
}
