/* Internals of src/comm: context id recycling, the dup ring (dup needs no
 * meeting, so one thread can act as every member), groups, keyvals, info,
 * Dims_create, user error codes. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "unit_support.h"

static void test_context_ids_recycle(void)
{
    uint32_t a = context_id_alloc(), b = context_id_alloc();
    CU_ASSERT(a % 2 == 0 && b % 2 == 0 && a != b);
    CU_ASSERT(a >= COMM_CONTEXT_FIRST_FREE && b >= COMM_CONTEXT_FIRST_FREE);
    context_id_free(a);
    uint32_t c = context_id_alloc();
    CU_ASSERT_EQUAL(c, a);      /* the freed id is reused first */
    /* 10,000 alloc/free pairs use no new ids */
    uint32_t top = context_id_alloc();
    context_id_free(top);
    for (int i = 0; i < 10000; i++) {
        uint32_t x = context_id_alloc();
        CU_ASSERT(x <= top);
        context_id_free(x);
    }
    context_id_free(b);
    context_id_free(c);
}

/* Claims of global ids: one construction may claim an id from several
 * participants, another may not until the id is free again; a kept id
 * stays in use while a context holds it. */
static void test_global_id_claims(void)
{
    int parent_a, parent_b;
    struct context_claimant a = { .parent = &parent_a }, b = { .parent = &parent_b };
    struct context_claimant leader = { .leader_gid = 7, .leader_nonce = 1 };
    uint32_t id = context_id_propose_global();

    CU_ASSERT_TRUE(context_id_claim_global(id, &a));
    CU_ASSERT_TRUE(context_id_claim_global(id, &a));        /* a second local participant */
    CU_ASSERT_FALSE(context_id_claim_global(id, &b));
    CU_ASSERT_FALSE(context_id_claim_global(id, &leader));
    context_id_settle_global(id, &b, false);                /* b's failed claim: no effect */
    context_id_settle_global(id, &a, false);
    CU_ASSERT_FALSE(context_id_claim_global(id, &b));       /* one of a's claims is still pending */
    context_id_settle_global(id, &a, false);
    CU_ASSERT_TRUE(context_id_claim_global(id, &b));        /* free again */

    context_id_settle_global(id, &b, true);                 /* kept: in use before its context exists */
    CU_ASSERT_FALSE(context_id_claim_global(id, &b));
    CU_ASSERT_FALSE(context_id_claim_global(id, &a));
    context_id_hold_global(id);
    context_id_release_global(id);
    CU_ASSERT_TRUE(context_id_claim_global(id, &leader));   /* its context freed */
    context_id_settle_global(id, &leader, false);

    /* An id held without a claim (a spawned job's) is in use too. */
    uint32_t held = context_id_propose_global();
    context_id_hold_global(held);
    CU_ASSERT_FALSE(context_id_claim_global(held, &a));
    context_id_release_global(held);
    CU_ASSERT_TRUE(context_id_claim_global(held, &a));
    context_id_settle_global(held, &a, false);

    /* A proposal after a failed claim skips ahead, and stays one of this
     * process's own: later proposals are above it. */
    for (int i = 0; i < 100; i++) {
        uint32_t before = context_id_propose_global(), again = context_id_propose_global_again();
        uint32_t after = context_id_propose_global();
        CU_ASSERT_TRUE(again > before && after > again);
        CU_ASSERT_EQUAL((again - before) % 2, 0);
        CU_ASSERT_TRUE(again - before <= 2 + 2 * 64);
    }
}

static void test_dup_without_meeting(void)
{
    unit_node_create(4, 1024);
    MPI_Comm dups[4];
    for (int r = 0; r < 4; r++) {
        unit_act_as(r);
        CU_ASSERT_EQUAL(MPI_Comm_dup(MPI_COMM_WORLD, &dups[r]), MPI_SUCCESS);
        int rank;
        MPI_Comm_rank(dups[r], &rank);
        CU_ASSERT_EQUAL(rank, r);
    }
    /* every member's handle shares one core with a fresh context */
    for (int r = 1; r < 4; r++)
        CU_ASSERT_PTR_EQUAL(dups[r]->core, dups[0]->core);
    CU_ASSERT_NOT_EQUAL(dups[0]->core->context_id, COMM_CONTEXT_WORLD);
    CU_ASSERT_EQUAL(atomic_load(&dups[0]->core->refcount), 4);
    /* a message on the dup arrives on the dup only */
    unit_act_as(0);
    int v = 42, w = 0, flag = 0;
    MPI_Send(&v, 1, MPI_INT, 1, 0, dups[0]);
    unit_act_as(1);
    MPI_Iprobe(0, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CU_ASSERT_FALSE(flag);
    MPI_Recv(&w, 1, MPI_INT, 0, 0, dups[1], MPI_STATUS_IGNORE);
    CU_ASSERT_EQUAL(w, 42);
    for (int r = 0; r < 4; r++) {
        unit_act_as(r);
        CU_ASSERT_EQUAL(MPI_Comm_free(&dups[r]), MPI_SUCCESS);
    }
    /* one member may run DUP_RING-1 dups ahead without waiting */
    unit_act_as(2);
    MPI_Comm ahead[20];
    for (int i = 0; i < 20; i++)
        CU_ASSERT_EQUAL(MPI_Comm_dup(MPI_COMM_WORLD, &ahead[i]), MPI_SUCCESS);
    for (int i = 0; i < 20; i++)
        MPI_Comm_free(&ahead[i]);
    for (int r = 0; r < 4; r++) {
        if (r == 2)
            continue;
        unit_act_as(r);
        for (int i = 0; i < 20; i++) {
            MPI_Comm d;
            CU_ASSERT_EQUAL(MPI_Comm_dup(MPI_COMM_WORLD, &d), MPI_SUCCESS);
            MPI_Comm_free(&d);
        }
    }
    unit_node_destroy();
}

static void test_self_split_and_groups(void)
{
    unit_node_create(3, 1024);
    unit_act_as(1);
    MPI_Comm s;
    CU_ASSERT_EQUAL(MPI_Comm_split(MPI_COMM_SELF, 5, 0, &s), MPI_SUCCESS);   /* a meeting of one */
    int size, result;
    MPI_Comm_size(s, &size);
    CU_ASSERT_EQUAL(size, 1);
    MPI_Comm_compare(s, MPI_COMM_SELF, &result);
    CU_ASSERT_EQUAL(result, MPI_CONGRUENT);
    MPI_Comm_free(&s);
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int r2[2] = { 2, 1 };
    MPI_Group_incl(world, 2, r2, &g);
    CU_ASSERT_EQUAL(g->self_rank, 1);       /* rank 1 is second */
    CU_ASSERT_PTR_EQUAL(g->members[0], strand_node.ranks[2]);
    CU_ASSERT_EQUAL(group_compare_members(g->members, 2, world->members + 1, 2), MPI_SIMILAR);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    unit_node_destroy();
}

static void test_dims_create(void)
{
    unit_node_create(1, 1024);
    int d[3] = { 0, 0, 0 };
    MPI_Dims_create(60, 3, d);
    CU_ASSERT(d[0] == 5 && d[1] == 4 && d[2] == 3);
    int e[2] = { 0, 0 };
    MPI_Dims_create(1 << 30, 2, e);
    CU_ASSERT(e[0] == 1 << 15 && e[1] == 1 << 15);
    int p[2] = { 0, 0 };
    MPI_Dims_create(2147483647, 2, p);      /* a prime */
    CU_ASSERT(p[0] == 2147483647 && p[1] == 1);
    unit_node_destroy();
}

/* Reference by exhaustive enumeration: every non-increasing factorization
 * of n into k factors; the best has the least spread (largest - smallest),
 * then the largest smallest factor, then the largest next smallest, ... */
struct dims_reference {
    int k;
    int current[4], best[4];
    int best_spread;
};

static bool dims_reference_better(const struct dims_reference *r)
{
    int spread = r->current[0] - r->current[r->k - 1];
    if (r->best_spread < 0 || spread != r->best_spread)
        return r->best_spread < 0 || spread < r->best_spread;
    for (int i = r->k - 1; i >= 0; i--)
        if (r->current[i] != r->best[i])
            return r->current[i] > r->best[i];
    return false;
}

static void dims_reference_enumerate(struct dims_reference *r, int depth, int remaining, int ceiling)
{
    if (depth == r->k - 1) {
        if (remaining > ceiling)
            return;
        r->current[depth] = remaining;
        if (dims_reference_better(r)) {
            r->best_spread = r->current[0] - remaining;
            memcpy(r->best, r->current, sizeof r->best);
        }
        return;
    }
    for (int f = 1; f <= ceiling && f <= remaining; f++)
        if (remaining % f == 0) {
            r->current[depth] = f;
            dims_reference_enumerate(r, depth + 1, remaining / f, f);
        }
}

/* Among equally balanced decompositions, MPI_Dims_create picks the one
 * whose smaller factors are largest (MPICH's choice too). */
static void test_dims_create_tie_breaking(void)
{
    unit_node_create(1, 1024);
    int d3[3] = { 0, 0, 0 };
    MPI_Dims_create(5040, 3, d3);           /* 20x18x14 is as balanced */
    CU_ASSERT(d3[0] == 21 && d3[1] == 16 && d3[2] == 15);
    int d4[4] = { 0, 0, 0, 0 };
    MPI_Dims_create(5616, 4, d4);           /* 13x12x6x6 is as balanced */
    CU_ASSERT(d4[0] == 13 && d4[1] == 9 && d4[2] == 8 && d4[3] == 6);
    int mismatches = 0;
    for (int k = 2; k <= 4; k++)
        for (int n = 1; n <= (k == 4 ? 1500 : 3000); n++) {
            struct dims_reference r = { .k = k, .best_spread = -1 };
            dims_reference_enumerate(&r, 0, n, n);
            int d[4] = { 0, 0, 0, 0 };
            MPI_Dims_create(n, k, d);
            if (memcmp(d, r.best, (size_t)k * sizeof *d) != 0)
                mismatches++;
        }
    CU_ASSERT_EQUAL(mismatches, 0);
    unit_node_destroy();
}

static void test_keyvals_and_info(void)
{
    unit_node_create(2, 1024);
    int k1, k2;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k1, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL);
    CU_ASSERT(k1 != k2 && k1 > MPI_WIN_DISP_UNIT);
    int old = k1;
    MPI_Comm_free_keyval(&k1);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k1, NULL);
    CU_ASSERT_EQUAL(k1, old);       /* ids of released keyvals are reused */
    MPI_Comm_free_keyval(&k1);
    MPI_Comm_free_keyval(&k2);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "a", "1");
    char v[4];
    int flag;
    MPI_Info_get(info, "a", 3, v, &flag);
    CU_ASSERT(flag && strcmp(v, "1") == 0);
    MPI_Info_free(&info);
    int cls, code, got;
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    MPI_Error_class(code, &got);
    CU_ASSERT_EQUAL(got, cls);
    unit_node_destroy();
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("comm", NULL, NULL);
    CU_add_test(s, "context ids are recycled", test_context_ids_recycle);
    CU_add_test(s, "global context ids are claimed", test_global_id_claims);
    CU_add_test(s, "dup needs no meeting", test_dup_without_meeting);
    CU_add_test(s, "self split and groups", test_self_split_and_groups);
    CU_add_test(s, "dims_create", test_dims_create);
    CU_add_test(s, "dims_create breaks ties like MPICH", test_dims_create_tie_breaking);
    CU_add_test(s, "keyvals, info, error codes", test_keyvals_and_info);
    return unit_run_registry();
}
