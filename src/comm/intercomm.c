/* MPI_Intercomm_create: the two leaders exchange their groups over the
 * peer communicator (point-to-point, the user's tag) as (world id, world
 * rank) pairs, since the groups may be in different worlds (spawned jobs);
 * the leader with the lower rank_uid builds both sides' cores and hands the other leader its
 * side; then each leader passes its side's core to its local group through
 * the local communicator's construction slot. */
#include <stdlib.h>

#include "../pt2pt/pt2pt.h"
#include "comm.h"

/* What one leader tells the other first. */
struct leader_hello {
    int size;                       /* local group size */
    int leader_uid;                 /* rank_uid: unique in the node process */
};

/* The leaders' messages: the matching engine on the peer communicator's
 * context and the user's tag (as MPI_Sendrecv would send them), without an
 * MPI entry point, so errors name MPI_Intercomm_create. Either direction
 * may be empty (out_count or in_count < 0). */
static int exchange(MPI_Comm peer, int remote_leader, int tag, const void *out, int out_count, void *in,
                    int in_count, MPI_Datatype type)
{
    struct strand_comm *c = comm_resolve(peer);
    struct strand_request send, recv;
    if (in_count >= 0)
        pt2pt_irecv_internal(&recv, c, c->core->context_id, in, in_count, type, remote_leader, tag);
    if (out_count >= 0) {
        pt2pt_isend_internal(&send, c, c->core->context_id, out, out_count, type, remote_leader, tag);
        pt2pt_wait_internal(&send);
    }
    if (in_count < 0)
        return MPI_SUCCESS;
    pt2pt_wait_internal(&recv);
    return recv.status.MPI_ERROR;
}

/* Two ints per member: its world's id and its rank there. */
static void identities_of(struct rank **members, int n, int *out)
{
    for (int i = 0; i < n; i++) {
        out[2 * i] = (int)members[i]->world->id;
        out[2 * i + 1] = members[i]->world_rank;
    }
}

static struct rank *rank_of_identity(const int *id)
{
    struct world *w = world_lookup((uint32_t)id[0]);
    return w != NULL && id[1] >= 0 && id[1] < w->size ? w->ranks[id[1]] : NULL;
}

/* The leader's part: returns its side's core (one reference per local
 * member), or NULL with *rc set. */
static struct comm_core *leader_connect(struct strand_comm *local, MPI_Comm peer, int remote_leader, int tag,
                                        int *rc)
{
    struct comm_core *lc = local->core;
    struct leader_hello mine = { lc->local_size, rank_uid(strand_self) }, theirs;
    *rc = exchange(peer, remote_leader, tag, &mine, 2, &theirs, 2, MPI_INT);
    if (*rc != MPI_SUCCESS)
        return NULL;
    int *my_world = malloc(2 * (size_t)mine.size * sizeof *my_world);
    int *their_world = malloc(2 * (size_t)theirs.size * sizeof *their_world);
    struct rank **their_ranks = malloc((size_t)theirs.size * sizeof *their_ranks);
    struct comm_core *side = NULL;
    *rc = MPI_ERR_NO_MEM;
    if (my_world != NULL && their_world != NULL && their_ranks != NULL) {
        identities_of(lc->local_members, mine.size, my_world);
        *rc = exchange(peer, remote_leader, tag, my_world, 2 * mine.size, their_world, 2 * theirs.size,
                       MPI_INT);
    }
    for (int i = 0; *rc == MPI_SUCCESS && i < theirs.size; i++) {
        their_ranks[i] = rank_of_identity(&their_world[2 * i]);
        if (their_ranks[i] == NULL)
            *rc = MPI_ERR_INTERN;
    }
    /* The builder passes its core by pointer: both groups must live in
     * this node process (doc/limits.md). Both leaders must reach the same
     * verdict: each looks at both groups and the other leader (leaders in
     * one node process see the same union; in two, each sees the other
     * remote). */
    if (*rc == MPI_SUCCESS && (comm_members_span_nodes(their_ranks, theirs.size) ||
                               comm_members_span_nodes(lc->local_members, mine.size) ||
                               comm_resolve(peer)->core->members[remote_leader]->remote != NULL))
        *rc = MPI_ERR_UNSUPPORTED_OPERATION;
    if (*rc == MPI_SUCCESS) {
        /* Both leaders agree on who builds: the lower uid. */
        bool builder = mine.leader_uid < theirs.leader_uid;
        if (builder) {
            side = comm_intercomm_pair_create(lc->local_members, mine.size, their_ranks, theirs.size);
            struct comm_core *other = side != NULL ? side->peer : NULL;
            *rc = exchange(peer, remote_leader, tag, &other, sizeof other, NULL, -1, MPI_BYTE);
            if (side == NULL && *rc == MPI_SUCCESS)
                *rc = MPI_ERR_NO_MEM;
        } else {
            *rc = exchange(peer, remote_leader, tag, NULL, -1, &side, sizeof side, MPI_BYTE);
            if (*rc == MPI_SUCCESS && side == NULL)
                *rc = MPI_ERR_NO_MEM;
        }
    }
    free(my_world);
    free(their_world);
    free(their_ranks);
    return *rc == MPI_SUCCESS ? side : NULL;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm *newintercomm)
{
    const char *where = "MPI_Intercomm_create";
    int rc;
    struct strand_comm *local = comm_checked(local_comm, where, &rc);
    if (local == NULL)
        return rc;
    if (local->core->is_inter)
        return error_report(local_comm, MPI_ERR_COMM, where, "local_comm must be an intra-communicator");
    if (newintercomm == NULL)
        return error_report(local_comm, MPI_ERR_ARG, where, "newintercomm must not be NULL");
    *newintercomm = MPI_COMM_NULL;
    struct build_request req = { .key = local_leader, .expect_size = -1 };
    if (local_leader < 0 || local_leader >= local->core->local_size)
        req.error = MPI_ERR_RANK;
    else if (local->rank == local_leader) {
        struct strand_comm *peer = comm_lookup(peer_comm);
        if (peer == NULL)
            req.color = MPI_ERR_COMM;
        else if (remote_leader < 0 || remote_leader >= peer->core->size)
            req.color = MPI_ERR_RANK;
        else if (tag < 0)
            req.color = MPI_ERR_TAG;
        else
            req.input = leader_connect(local, peer_comm, remote_leader, tag, &req.color);
    }
    struct build_result res;
    rc = comm_build(local, BUILD_ADOPT, &req, NULL, &res);
    if (rc != MPI_SUCCESS)
        return error_report(local_comm, rc, where, "%s",
                            rc == MPI_ERR_UNSUPPORTED_OPERATION ? COMM_SPANS_NODES_TEXT
                                                                : "invalid arguments, or the leaders could not connect");
    struct strand_comm *c = comm_handle_for(res.core, res.rank, local);
    if (c == NULL)
        return error_report(local_comm, MPI_ERR_NO_MEM, where, "out of memory");
    *newintercomm = c;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Intercomm_create);
