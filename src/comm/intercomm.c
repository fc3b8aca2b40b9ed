/* MPI_Intercomm_create: the two leaders exchange their groups over the
 * peer communicator (point-to-point, the user's tag); the leader with the
 * lower world rank builds both sides' cores and hands the other leader its
 * side; then each leader passes its side's core to its local group through
 * the local communicator's construction slot. */
#include <stdlib.h>

#include "comm.h"

/* What one leader tells the other first. */
struct leader_hello {
    int size;                       /* local group size */
    int leader_world_rank;
};

static int exchange(MPI_Comm peer, int remote_leader, int tag, void *out, int out_count, void *in,
                    int in_count, MPI_Datatype type)
{
    return PMPI_Sendrecv(out, out_count, type, remote_leader, tag, in, in_count, type, remote_leader, tag,
                         peer, MPI_STATUS_IGNORE);
}

static int world_ranks_of(struct rank **members, int n, int *out)
{
    for (int i = 0; i < n; i++)
        out[i] = members[i]->world_rank;
    return MPI_SUCCESS;
}

/* The leader's part: returns its side's core (one reference per local
 * member), or NULL with *rc set. */
static struct comm_core *leader_connect(struct strand_comm *local, MPI_Comm peer, int remote_leader, int tag,
                                        int *rc)
{
    struct comm_core *lc = local->core;
    struct leader_hello mine = { lc->local_size, strand_self->world_rank }, theirs;
    *rc = exchange(peer, remote_leader, tag, &mine, 2, &theirs, 2, MPI_INT);
    if (*rc != MPI_SUCCESS)
        return NULL;
    int *my_world = malloc((size_t)mine.size * sizeof *my_world);
    int *their_world = malloc((size_t)theirs.size * sizeof *their_world);
    struct rank **their_ranks = malloc((size_t)theirs.size * sizeof *their_ranks);
    struct comm_core *side = NULL;
    *rc = MPI_ERR_NO_MEM;
    if (my_world != NULL && their_world != NULL && their_ranks != NULL) {
        world_ranks_of(lc->local_members, mine.size, my_world);
        *rc = exchange(peer, remote_leader, tag, my_world, mine.size, their_world, theirs.size, MPI_INT);
    }
    for (int i = 0; *rc == MPI_SUCCESS && i < theirs.size; i++) {
        if (their_world[i] < 0 || their_world[i] >= strand_node.config.nranks)
            *rc = MPI_ERR_INTERN;
        else
            their_ranks[i] = strand_node.ranks[their_world[i]];
    }
    /* The builder passes its core by pointer: both groups must live in
     * this node process (doc/limits.md). Both leaders must reach the same
     * verdict: each looks at both groups and the other leader (leaders in
     * one node process see the same union; in two, each sees the other
     * remote). */
    if (*rc == MPI_SUCCESS && (theirs.leader_world_rank < 0 || theirs.leader_world_rank >= strand_node.config.nranks))
        *rc = MPI_ERR_INTERN;
    if (*rc == MPI_SUCCESS && (comm_members_span_nodes(their_ranks, theirs.size) ||
                               comm_members_span_nodes(lc->local_members, mine.size) ||
                               strand_node.ranks[theirs.leader_world_rank]->remote != NULL))
        *rc = MPI_ERR_UNSUPPORTED_OPERATION;
    if (*rc == MPI_SUCCESS) {
        /* Both leaders agree on who builds: the lower world rank. */
        bool builder = mine.leader_world_rank < theirs.leader_world_rank;
        if (builder) {
            side = comm_intercomm_pair_create(lc->local_members, mine.size, their_ranks, theirs.size);
            struct comm_core *other = side != NULL ? side->peer : NULL;
            *rc = PMPI_Send(&other, sizeof other, MPI_BYTE, remote_leader, tag, peer);
            if (side == NULL && *rc == MPI_SUCCESS)
                *rc = MPI_ERR_NO_MEM;
        } else {
            *rc = PMPI_Recv(&side, sizeof side, MPI_BYTE, remote_leader, tag, peer, MPI_STATUS_IGNORE);
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
