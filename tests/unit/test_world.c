/* Worlds (src/core/world.c) and rank identities (src/core/identity.c): a
 * spawned world lives while a communicator reaches its ranks (and while
 * its creator and rank threads hold it), and goes when the last
 * reference does; ids are unique and never reused; ranks know their world
 * and rank_uid is unique; intercommunicator cores between worlds hold each
 * spawned world once per run of its members. Identity lists resolve back
 * to the same ranks in this process, to proxies of a foreign world for
 * ranks elsewhere (which go with their last holder), and malformed lists
 * are refused without a crash. */
#include "comm/comm.h"
#include "net/net.h"
#include "util/bytes.h"
#include "unit_support.h"

static struct world *find(uint64_t gid)
{
    registry_read_lock();
    struct world *w = world_find_retain(gid);
    registry_read_unlock();
    if (w != NULL)
        world_release(w);
    return w;
}

static void test_world_lives_while_reached(void)
{
    unit_node_create(2, 1024);
    int appnums[3] = { 0, 1, 1 };
    uint64_t gid = net_new_world_id();
    struct world *w = world_create(gid, 3, appnums, CONTEXT_ID_NONE, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    uint32_t id = w->id;
    CU_ASSERT(id != 0);
    CU_ASSERT_PTR_EQUAL(find(gid), w);
    CU_ASSERT_EQUAL(w->appnums[2], 1);
    CU_ASSERT_PTR_EQUAL(w->ranks[1]->world, w);
    CU_ASSERT_EQUAL(w->ranks[1]->world_rank, 1);
    CU_ASSERT(rank_uid(w->ranks[0]) != rank_uid(strand_node.ranks[0]));
    CU_ASSERT(w->context_id != COMM_CONTEXT_WORLD);
    CU_ASSERT_EQUAL(atomic_load(&w->refs), 1);      /* the creator's */
    /* the parents (initial world) and the children: one core per side */
    struct comm_core *side0 = comm_intercomm_pair_create(strand_node.ranks, 2, w->ranks, 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(side0);
    CU_ASSERT_EQUAL(atomic_load(&w->refs), 2);      /* + one run of its members */
    /* a second communicator over a mix: [child0, parent0, child2] is two runs */
    struct rank *mix[3] = { w->ranks[0], strand_node.ranks[0], w->ranks[2] };
    struct comm_core *mixed = comm_intra_core_create(mix, 3, CONTEXT_ID_NONE, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mixed);
    CU_ASSERT_EQUAL(atomic_load(&w->refs), 4);
    comm_core_release(mixed);
    CU_ASSERT_EQUAL(atomic_load(&w->refs), 2);
    world_release(w);
    /* drop every member's reference to both sides: the world goes */
    struct comm_core *side1 = side0->peer;
    for (int i = 0; i < 2; i++)
        comm_core_release(side0);
    for (int i = 0; i < 3; i++)
        comm_core_release(side1);
    CU_ASSERT_PTR_NULL(find(gid));
    /* ids are not reused */
    struct world *w2 = world_create(net_new_world_id(), 1, NULL, CONTEXT_ID_NONE, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w2);
    CU_ASSERT(w2->id > id);
    world_release(w2);
    unit_node_destroy();
}

/* Ranks of two worlds of this process come back as themselves. */
static void test_identities_here(void)
{
    unit_node_create(3, 1024);
    struct world *w = world_create(net_new_world_id(), 2, NULL, CONTEXT_ID_NONE, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    struct rank *members[4] = { strand_node.ranks[2], w->ranks[1], strand_node.ranks[0], w->ranks[0] };
    struct bytes_out out = { 0 };
    identity_encode(members, 4, &out);
    CU_ASSERT_FATAL(!out.failed);
    struct bytes_in in = { out.data, out.len, 0, false };
    struct rank **back = NULL;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(identity_decode(&in, &back, &n), MPI_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_PTR_EQUAL(back[i], members[i]);
    CU_ASSERT_EQUAL(atomic_load(&w->refs), 3);      /* the creator's and two members' */
    identity_release(back, n);
    CU_ASSERT_EQUAL(atomic_load(&w->refs), 1);
    CU_ASSERT(identity_compare(strand_node.ranks[0], strand_node.ranks[2]) < 0);
    CU_ASSERT(identity_compare(w->ranks[1], w->ranks[1]) == 0);
    /* every truncation of the list is refused, and so is garbage */
    for (size_t len = 0; len < out.len; len++) {
        struct bytes_in cut = { out.data, len, 0, false };
        CU_ASSERT(identity_decode(&cut, &back, &n) != MPI_SUCCESS);
    }
    unsigned char junk[64];
    for (unsigned seed = 1; seed < 2000; seed++) {
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (unsigned char)((seed * 2654435761u) >> (i % 24));
        memcpy(junk, out.data, 4);  /* a plausible process count */
        struct bytes_in bad = { junk, sizeof junk, 0, false };
        if (identity_decode(&bad, &back, &n) == MPI_SUCCESS)
            identity_release(back, n);  /* a junk list that names real ranks: still no crash */
    }
    world_release(w);
    free(out.data);
    unit_node_destroy();
}

/* Ranks of another job's world become proxies in its node process; the
 * foreign world goes with its last holder, and the peer stays. */
static void test_identities_elsewhere(void)
{
    unit_node_create(1, 1024);
    uint64_t job = 0x5eed0001, gid = 0xabcdef12345ull;
    struct bytes_out out = { 0 };
    bytes_put_u32(&out, 1);                 /* one process */
    bytes_put_u64(&out, job);
    bytes_put_u32(&out, 2);                 /* its node 2 */
    bytes_put_u32(&out, 4321);
    bytes_put_str(&out, "127.0.0.1");
    bytes_put_u32(&out, 1);                 /* one world of 8 ranks */
    bytes_put_u64(&out, gid);
    bytes_put_u32(&out, 8);
    bytes_put_u32(&out, 2);                 /* members: ranks 5 and 1 */
    for (int r = 5; r >= 1; r -= 4) {
        bytes_put_u32(&out, 0);
        bytes_put_u32(&out, (uint32_t)r);
        bytes_put_u32(&out, 0);
    }
    struct bytes_in in = { out.data, out.len, 0, false };
    struct rank **back = NULL;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(identity_decode(&in, &back, &n), MPI_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    struct net_peer *peer = back[0]->remote;
    CU_ASSERT_PTR_NOT_NULL_FATAL(peer);
    CU_ASSERT(peer->foreign && peer->job_id == job && peer->job_node == 2 && peer->port == 4321);
    CU_ASSERT_PTR_EQUAL(back[1]->remote, peer);
    CU_ASSERT(back[0]->world->foreign && back[0]->world->gid == gid && back[0]->world_rank == 5);
    CU_ASSERT_EQUAL(atomic_load(&peer->users), 2);
    CU_ASSERT(strand_node.has_proxies);
    /* a second resolution finds the same proxies */
    struct bytes_in again = { out.data, out.len, 0, false };
    struct rank **back2 = NULL;
    int n2 = 0;
    CU_ASSERT_EQUAL_FATAL(identity_decode(&again, &back2, &n2), MPI_SUCCESS);
    CU_ASSERT_PTR_EQUAL(back2[0], back[0]);
    CU_ASSERT_PTR_EQUAL(net_peer_get(job, 2, "ignored", 1), peer);
    identity_release(back2, n2);
    identity_release(back, n);
    CU_ASSERT_PTR_NULL(find(gid));
    CU_ASSERT_EQUAL(atomic_load(&peer->users), 0);
    /* a rank said to run here but unknown is refused */
    struct bytes_out here = { 0 };
    bytes_put_u32(&here, 1);
    bytes_put_u64(&here, net_self_job_id());
    bytes_put_u32(&here, (uint32_t)net_self_node());
    bytes_put_u32(&here, 1);
    bytes_put_str(&here, "127.0.0.1");
    bytes_put_u32(&here, 1);
    bytes_put_u64(&here, gid);
    bytes_put_u32(&here, 8);
    bytes_put_u32(&here, 1);
    bytes_put_u32(&here, 0);
    bytes_put_u32(&here, 3);
    bytes_put_u32(&here, 0);
    struct bytes_in stale = { here.data, here.len, 0, false };
    CU_ASSERT_EQUAL(identity_decode(&stale, &back, &n), MPI_ERR_OTHER);
    free(here.data);
    free(out.data);
    unit_node_destroy();
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("world", NULL, NULL);
    CU_add_test(s, "a spawned world lives while reached", test_world_lives_while_reached);
    CU_add_test(s, "identities of ranks here", test_identities_here);
    CU_add_test(s, "identities of ranks elsewhere", test_identities_elsewhere);
    return unit_run_registry();
}
