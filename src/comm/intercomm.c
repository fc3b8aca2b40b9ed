/* MPI_Intercomm_create: the two leaders exchange their groups over the
 * peer communicator (point-to-point, the user's tag) as (world id, world
 * rank) pairs, since the groups may be in different worlds (spawned jobs)
 * or node processes.
 *
 * Both groups in this node process: the leader with the lower rank_uid
 * builds both sides' cores and hands the other leader its side; then each
 * leader passes its side's core to its local group through the local
 * communicator's construction slot.
 *
 * Some member in another node process: nothing travels but ints. The
 * leaders also swap their group's highest context id proposal and agree on
 * the larger; the group of the leader with the lower rank_uid is side 0.
 * A leader whose local group is in its own node process takes the core
 * for its whole group (comm_shared_core_take) and passes it through the
 * construction slot as above; a local group spanning node processes sent
 * its proposals to its leader and receives the outcome (error, id, side,
 * the remote group) by internal messages, each member then taking its
 * node process's copy of the core. */
#include <stdlib.h>
#include <string.h>

#include "../pt2pt/pt2pt.h"
#include "comm.h"

/* What one leader tells the other first. */
struct leader_hello {
    int size;                       /* local group size */
    int leader_uid;                 /* rank_uid: the same in every node process for world 0 */
    int proposal;                   /* the group's highest context id proposal (spanning case) */
};
enum { HELLO_INTS = 3 };

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

static int ranks_of_identities(const int *ids, int n, struct rank **out)
{
    for (int i = 0; i < n; i++)
        if ((out[i] = rank_of_identity(&ids[2 * i])) == NULL)
            return MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

/* What the leaders found out, for their groups. */
struct connection {
    int rc;
    bool spans;                     /* some member of either group is in another node process */
    int side;                       /* spans: the local group's side */
    uint32_t id;                    /* spans: the agreed context id */
    int remote_size;
    int *remote_ids;                /* identities of the remote group (malloc'ed) */
    struct comm_core *core;         /* not spanning: the local group's core */
};

/* The leader's part, after checking its own arguments. `proposal`: its
 * group's highest context id proposal. */
static void leader_connect(struct strand_comm *local, MPI_Comm peer, int remote_leader, int tag, int proposal,
                           struct connection *out)
{
    struct comm_core *lc = local->core;
    struct strand_comm *p = comm_lookup(peer);
    out->rc = p == NULL                                                ? MPI_ERR_COMM
              : remote_leader < 0 || remote_leader >= p->core->size ? MPI_ERR_RANK
              : tag < 0                                              ? MPI_ERR_TAG
                                                                     : MPI_SUCCESS;
    if (out->rc != MPI_SUCCESS)
        return;
    struct leader_hello mine = { lc->local_size, rank_uid(strand_self), proposal }, theirs;
    out->rc = exchange(peer, remote_leader, tag, &mine, HELLO_INTS, &theirs, HELLO_INTS, MPI_INT);
    if (out->rc != MPI_SUCCESS)
        return;
    int *my_ids = malloc(2 * (size_t)mine.size * sizeof *my_ids);
    out->remote_ids = malloc(2 * (size_t)theirs.size * sizeof *out->remote_ids);
    struct rank **their_ranks = malloc((size_t)theirs.size * sizeof *their_ranks);
    out->remote_size = theirs.size;
    out->rc = MPI_ERR_NO_MEM;
    if (my_ids != NULL && out->remote_ids != NULL && their_ranks != NULL) {
        identities_of(lc->local_members, mine.size, my_ids);
        out->rc = exchange(peer, remote_leader, tag, my_ids, 2 * mine.size, out->remote_ids, 2 * theirs.size,
                           MPI_INT);
    }
    if (out->rc == MPI_SUCCESS)
        out->rc = ranks_of_identities(out->remote_ids, theirs.size, their_ranks);
    /* Both leaders see the same union of the two groups, so they take
     * the same branch. */
    out->spans = out->rc == MPI_SUCCESS && (comm_members_span_nodes(their_ranks, theirs.size) ||
                                            comm_members_span_nodes(lc->local_members, mine.size));
    out->side = mine.leader_uid < theirs.leader_uid ? 0 : 1;
    if (out->rc == MPI_SUCCESS && out->spans) {
        out->id = (uint32_t)mine.proposal > (uint32_t)theirs.proposal ? (uint32_t)mine.proposal
                                                                       : (uint32_t)theirs.proposal;
        context_id_seen_global(out->id);
    } else if (out->rc == MPI_SUCCESS) {
        /* Both leaders agree on who builds: the lower uid (side 0). */
        struct comm_core *side = NULL;
        if (out->side == 0) {
            side = comm_intercomm_pair_create(lc->local_members, mine.size, their_ranks, theirs.size);
            struct comm_core *other = side != NULL ? side->peer : NULL;
            out->rc = exchange(peer, remote_leader, tag, &other, sizeof other, NULL, -1, MPI_BYTE);
        } else {
            out->rc = exchange(peer, remote_leader, tag, NULL, -1, &side, sizeof side, MPI_BYTE);
        }
        if (out->rc == MPI_SUCCESS && side == NULL)
            out->rc = MPI_ERR_NO_MEM;
        out->core = side;
    }
    free(my_ids);
    free(their_ranks);
}

/* The caller's share of the spanning intercommunicator: `shares`
 * references of its node process's copy (one per member it serves). */
static struct comm_core *spanning_core_take(struct strand_comm *local, const struct connection *conn, int shares,
                                            int *rc)
{
    struct comm_core *lc = local->core;
    struct rank **remote = malloc((size_t)conn->remote_size * sizeof *remote);
    *rc = remote == NULL ? MPI_ERR_NO_MEM : ranks_of_identities(conn->remote_ids, conn->remote_size, remote);
    struct comm_core *core0 = NULL;
    if (*rc == MPI_SUCCESS) {
        core0 = conn->side == 0
                    ? comm_shared_core_take(conn->id, lc->local_members, lc->local_size, remote, conn->remote_size,
                                            shares)
                    : comm_shared_core_take(conn->id, remote, conn->remote_size, lc->local_members, lc->local_size,
                                            shares);
        if (core0 == NULL)
            *rc = MPI_ERR_NO_MEM;
    }
    free(remote);
    return core0 == NULL || conn->side == 0 ? core0 : core0->peer;
}

/* A local group within this node process: the leader connects, every
 * member takes the core it brings through the construction slot. */
static int create_local_group(struct strand_comm *local, int local_leader, MPI_Comm peer_comm, int remote_leader,
                              int tag, struct build_result *res)
{
    struct build_request req = { .key = local_leader, .expect_size = -1 };
    if (local_leader < 0 || local_leader >= local->core->local_size) {
        req.error = MPI_ERR_RANK;
    } else if (local->rank == local_leader) {
        struct connection conn = { .rc = MPI_SUCCESS };
        leader_connect(local, peer_comm, remote_leader, tag, (int)context_id_propose_global(), &conn);
        req.color = conn.rc;
        if (conn.rc == MPI_SUCCESS && conn.spans)
            req.input = spanning_core_take(local, &conn, local->core->local_size, &req.color);
        else if (conn.rc == MPI_SUCCESS)
            req.input = conn.core;
        free(conn.remote_ids);
    }
    return comm_build(local, BUILD_ADOPT, &req, NULL, res);
}

enum { OUTCOME_RC, OUTCOME_ID, OUTCOME_SIDE, OUTCOME_REMOTE_SIZE, OUTCOME_INTS };

/* A local group spanning node processes: proposals go to the leader by
 * internal messages on the local communicator's collective context, the
 * outcome comes back the same way. */
static int create_spanning_group(struct strand_comm *local, int local_leader, MPI_Comm peer_comm,
                                 int remote_leader, int tag, struct build_result *res)
{
    if (local_leader < 0 || local_leader >= local->core->local_size)
        return MPI_ERR_RANK;        /* every member passed the same leader */
    uint32_t context = local->core->context_id + 1;
    int proposal = (int)context_id_propose_global(), outcome[OUTCOME_INTS];
    struct connection conn = { .rc = MPI_SUCCESS, .spans = true };
    struct strand_request r;
    if (local->rank != local_leader) {
        pt2pt_isend_internal(&r, local, context, &proposal, 1, MPI_INT, local_leader, COMM_TAG_GATHER);
        pt2pt_wait_internal(&r);
        pt2pt_irecv_internal(&r, local, context, outcome, OUTCOME_INTS, MPI_INT, local_leader, COMM_TAG_SPREAD);
        pt2pt_wait_internal(&r);
        conn = (struct connection){ .rc = outcome[OUTCOME_RC], .spans = true, .id = (uint32_t)outcome[OUTCOME_ID],
                                    .side = outcome[OUTCOME_SIDE], .remote_size = outcome[OUTCOME_REMOTE_SIZE] };
        if (conn.rc == MPI_SUCCESS) {
            conn.remote_ids = malloc(2 * (size_t)conn.remote_size * sizeof *conn.remote_ids);
            if (conn.remote_ids == NULL)
                strand_job_abort(1, "Strand MPI: out of memory in MPI_Intercomm_create\n");
            pt2pt_irecv_internal(&r, local, context, conn.remote_ids, 2 * conn.remote_size, MPI_INT, local_leader,
                                 COMM_TAG_SPREAD);
            pt2pt_wait_internal(&r);
            context_id_seen_global(conn.id);
        }
    } else {
        for (int i = 0; i < local->core->size; i++) {
            if (i == local_leader)
                continue;
            int theirs;
            pt2pt_irecv_internal(&r, local, context, &theirs, 1, MPI_INT, i, COMM_TAG_GATHER);
            pt2pt_wait_internal(&r);
            if ((uint32_t)theirs > (uint32_t)proposal)
                proposal = theirs;
        }
        leader_connect(local, peer_comm, remote_leader, tag, proposal, &conn);
        outcome[OUTCOME_RC] = conn.rc;
        outcome[OUTCOME_ID] = (int)conn.id;
        outcome[OUTCOME_SIDE] = conn.side;
        outcome[OUTCOME_REMOTE_SIZE] = conn.remote_size;
        for (int i = 0; i < local->core->size; i++) {
            if (i == local_leader)
                continue;
            pt2pt_isend_internal(&r, local, context, outcome, OUTCOME_INTS, MPI_INT, i, COMM_TAG_SPREAD);
            pt2pt_wait_internal(&r);
            if (conn.rc == MPI_SUCCESS) {
                pt2pt_isend_internal(&r, local, context, conn.remote_ids, 2 * conn.remote_size, MPI_INT, i,
                                     COMM_TAG_SPREAD);
                pt2pt_wait_internal(&r);
            }
        }
    }
    int rc = conn.rc;
    if (rc == MPI_SUCCESS) {
        res->core = spanning_core_take(local, &conn, 1, &rc);
        res->rank = local->rank;
    }
    free(conn.remote_ids);
    return rc;
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
    struct build_result res;
    rc = comm_core_spans_nodes(local->core)
             ? create_spanning_group(local, local_leader, peer_comm, remote_leader, tag, &res)
             : create_local_group(local, local_leader, peer_comm, remote_leader, tag, &res);
    if (rc != MPI_SUCCESS)
        return error_report(local_comm, rc, where, "invalid arguments, or the leaders could not connect");
    struct strand_comm *c = comm_handle_for(res.core, res.rank, local);
    if (c == NULL)
        return error_report(local_comm, MPI_ERR_NO_MEM, where, "out of memory");
    *newintercomm = c;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Intercomm_create);
