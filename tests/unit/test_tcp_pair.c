/* The tie-break of one TCP connection per pair of node processes
 * (src/net/tcp_pair.h): both sides of a simultaneous open end up sending
 * on the same connection, the lower identity's; a connection that may
 * carry frames is never given up; nothing of ours is dropped for a
 * connection we did not make sure of. */
#include <stdint.h>

#include "net/tcp_pair.h"
#include "unit_support.h"

static void test_lower_identity_wins(void)
{
    CU_ASSERT_TRUE(pair_peer_wins(7, 3, 7, 1));       /* same job: node index */
    CU_ASSERT_FALSE(pair_peer_wins(7, 1, 7, 3));
    CU_ASSERT_TRUE(pair_peer_wins(9, 0, 8, 5));       /* other job: job id first */
    CU_ASSERT_FALSE(pair_peer_wins(8, 5, 9, 0));
    CU_ASSERT_FALSE(pair_peer_wins(UINT64_MAX, 0, UINT64_MAX, 0));   /* never both */
    /* Antisymmetric: exactly one of two distinct identities wins. */
    const uint64_t ids[][2] = { { 0, 0 }, { 0, 1 }, { 1, 0 }, { 5, 2 }, { UINT64_MAX, 1 }, { UINT64_MAX - 1, 3 } };
    int n = (int)(sizeof ids / sizeof ids[0]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j)
                CU_ASSERT_NOT_EQUAL(pair_peer_wins(ids[i][0], ids[i][1], ids[j][0], ids[j][1]),
                                    pair_peer_wins(ids[j][0], ids[j][1], ids[i][0], ids[i][1]));
}

static void test_choice(void)
{
    CU_ASSERT_EQUAL(pair_choose(PAIR_OURS_NONE, true), PAIR_ADOPT);
    CU_ASSERT_EQUAL(pair_choose(PAIR_OURS_NONE, false), PAIR_ADOPT);
    CU_ASSERT_EQUAL(pair_choose(PAIR_OURS_SETTING_UP, true), PAIR_ADOPT_REPLACING);
    CU_ASSERT_EQUAL(pair_choose(PAIR_OURS_SETTING_UP, false), PAIR_RECEIVE_ONLY);
    CU_ASSERT_EQUAL(pair_choose(PAIR_OURS_OPEN, true), PAIR_RECEIVE_ONLY);
    CU_ASSERT_EQUAL(pair_choose(PAIR_OURS_OPEN, false), PAIR_RECEIVE_ONLY);
}

/* Which connection each side sends on, given what each held when the
 * other's HELLO arrived. Neither answered yet: both take the lower one's.
 * One answered already: the answerer kept it receive-only (it held its
 * own), so each keeps sending on its own, whose frames are already on
 * it; two connections, each frame on one. A side that held none adopts. */
enum which { NEITHER, LOWERS, HIGHERS };

static enum which sends_on(enum pair_ours ours, bool peer_wins, enum which own, enum which theirs)
{
    enum pair_choice c = pair_choose(ours, peer_wins);
    return c == PAIR_RECEIVE_ONLY ? own : theirs;
}

static void test_simultaneous_open_agrees(void)
{
    /* Both opened one, neither answered yet when the other's HELLO came. */
    enum which lower = sends_on(PAIR_OURS_SETTING_UP, false, LOWERS, HIGHERS);
    enum which higher = sends_on(PAIR_OURS_SETTING_UP, true, HIGHERS, LOWERS);
    CU_ASSERT_EQUAL(lower, LOWERS);
    CU_ASSERT_EQUAL(higher, LOWERS);
    /* The higher one's was answered first (the lower kept it receive-only
     * and sends on its own): the higher keeps sending on its own. */
    CU_ASSERT_EQUAL(sends_on(PAIR_OURS_SETTING_UP, false, LOWERS, HIGHERS), LOWERS);
    CU_ASSERT_EQUAL(sends_on(PAIR_OURS_OPEN, true, HIGHERS, LOWERS), HIGHERS);
    /* Only one side called: the other adopts it. */
    CU_ASSERT_EQUAL(sends_on(PAIR_OURS_NONE, true, NEITHER, LOWERS), LOWERS);
    CU_ASSERT_EQUAL(sends_on(PAIR_OURS_NONE, false, NEITHER, HIGHERS), HIGHERS);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("tcp_pair", NULL, NULL);
    CU_add_test(s, "the lower identity's connection wins", test_lower_identity_wins);
    CU_add_test(s, "what an acceptor does with a caller", test_choice);
    CU_add_test(s, "a simultaneous open ends on one connection", test_simultaneous_open_agrees);
    return unit_run_registry();
}
