/* Worlds (src/core/world.c): a spawned world lives while a communicator
 * reaches its ranks (and while its rank threads run), and goes when the
 * last reference does; ids are unique and never reused; ranks know their
 * world and rank_uid is unique; intercommunicator cores between worlds hold
 * each spawned world once per run of its members. */
#include "comm/comm.h"
#include "unit_support.h"

static void test_world_lives_while_reached(void)
{
    unit_node_create(2, 1024);
    int appnums[3] = { 0, 1, 1 };
    struct world *w = world_create(3, appnums);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    uint32_t id = w->id;
    CU_ASSERT(id != 0);
    CU_ASSERT_PTR_EQUAL(world_lookup(id), w);
    CU_ASSERT_EQUAL(w->appnums[2], 1);
    CU_ASSERT_PTR_EQUAL(w->ranks[1]->world, w);
    CU_ASSERT_EQUAL(w->ranks[1]->world_rank, 1);
    CU_ASSERT(rank_uid(w->ranks[0]) != rank_uid(strand_node.ranks[0]));
    CU_ASSERT(w->context_id != COMM_CONTEXT_WORLD);
    /* the parents (initial world) and the children: one core per side */
    struct comm_core *side0 = comm_intercomm_pair_create(strand_node.ranks, 2, w->ranks, 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(side0);
    CU_ASSERT_EQUAL(atomic_load(&w->refs), 1);      /* one run of its members */
    /* a second communicator over a mix: [child0, parent0, child2] is two runs */
    struct rank *mix[3] = { w->ranks[0], strand_node.ranks[0], w->ranks[2] };
    struct comm_core *mixed = comm_intra_core_create(mix, 3, CONTEXT_ID_NONE, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mixed);
    CU_ASSERT_EQUAL(atomic_load(&w->refs), 3);
    comm_core_release(mixed);
    CU_ASSERT_EQUAL(atomic_load(&w->refs), 1);
    /* drop every member's reference to both sides: the world goes */
    struct comm_core *side1 = side0->peer;
    for (int i = 0; i < 2; i++)
        comm_core_release(side0);
    for (int i = 0; i < 3; i++)
        comm_core_release(side1);
    CU_ASSERT_PTR_NULL(world_lookup(id));
    /* ids are not reused */
    struct world *w2 = world_create(1, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w2);
    CU_ASSERT(w2->id > id);
    world_retain(w2);
    world_release(w2);
    unit_node_destroy();
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("world", NULL, NULL);
    CU_add_test(s, "a spawned world lives while reached", test_world_lives_while_reached);
    return unit_run_registry();
}
