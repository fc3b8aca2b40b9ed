/* MPI_Intercomm_create: the two leaders exchange their groups over the
 * peer communicator (point-to-point, the user's tag) as rank identities
 * (identity.c: world id, rank, node process), since the groups may be in
 * different worlds (spawned or connected jobs) or node processes. The
 * group of the leader whose identity orders first is side 0.
 *
 * Both groups in this node process: side 0's leader builds both sides'
 * cores and hands the other leader its side; then each leader passes its
 * side's core to its local group through the local communicator's
 * construction slot.
 *
 * Some member in another node process: no pointer travels. The leaders
 * also swap their group's highest context id proposal and agree on the
 * larger. Every member then claims that id in its node process
 * (context_id_claim_global, for the construction named by side 0's
 * leader and its connection number); the leaders gather their group's
 * verdicts, swap them and tell their groups; if any claim failed, all
 * settle without keeping it and the leaders connect again with new
 * proposals.
 * A leader whose local group is in its own node process takes the core
 * for its whole group (comm_shared_core_take) and passes it through the
 * construction slot as above; a local group spanning node processes sent
 * its proposals to its leader and receives the outcome (error, id, side,
 * the remote group) by internal messages, each member then taking its
 * node process's copy of the core. */
#include <stdlib.h>
#include <string.h>

#include "../pt2pt/pt2pt.h"
#include "../util/bytes.h"
#include "comm.h"

/* What one leader tells the other first. */
struct leader_hello {
    int size;                       /* local group size */
    int proposal;                   /* the group's highest context id proposal (spanning case) */
    int group_bytes;                /* its identities, sent next */
    int leader_rank;                /* the leader's identity: its rank ... */
    uint32_t leader_gid[2];         /* ... and its world's id, low and high halves */
    uint32_t nonce;                 /* its node process's connection number */
};
enum { HELLO_INTS = 7 };

/* Connection numbers of this node process's leaders: with the leader's
 * identity, they name a construction for context id claims. */
static atomic_uint connections;

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

/* Whether the leader of `a` orders before that of `b` (side 0). */
static bool hello_first(const struct leader_hello *a, const struct leader_hello *b)
{
    uint64_t ga = (uint64_t)a->leader_gid[1] << 32 | a->leader_gid[0];
    uint64_t gb = (uint64_t)b->leader_gid[1] << 32 | b->leader_gid[0];
    return ga != gb ? ga < gb : a->leader_rank < b->leader_rank;
}

/* What the leaders found out, for their groups. */
struct connection {
    int rc;
    bool spans;                     /* some member of either group is in another node process */
    int side;                       /* spans: the local group's side */
    uint32_t id;                    /* spans: the agreed context id */
    struct context_claimant claimant;   /* spans: the construction's name for claims */
    int remote_size;
    struct bytes_out remote_ids;    /* identities of the remote group */
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
    struct bytes_out my_ids = { 0 };
    identity_encode(lc->local_members, lc->local_size, &my_ids);
    if (my_ids.failed || my_ids.len > INT32_MAX) {
        out->rc = MPI_ERR_NO_MEM;
        free(my_ids.data);
        return;
    }
    struct leader_hello mine = { lc->local_size, proposal, (int)my_ids.len, strand_self->world_rank,
                                 { (uint32_t)strand_self->world->gid, (uint32_t)(strand_self->world->gid >> 32) },
                                 atomic_fetch_add_explicit(&connections, 1, memory_order_relaxed) },
                        theirs;
    out->rc = exchange(peer, remote_leader, tag, &mine, HELLO_INTS, &theirs, HELLO_INTS, MPI_INT);
    struct rank **their_ranks = NULL;
    int their_size = 0;
    if (out->rc == MPI_SUCCESS && (theirs.group_bytes < 0 || theirs.size < 0))
        out->rc = MPI_ERR_INTERN;
    if (out->rc == MPI_SUCCESS) {
        out->remote_size = theirs.size;
        unsigned char *in = malloc((size_t)theirs.group_bytes + 1);
        out->rc = in == NULL ? MPI_ERR_NO_MEM
                             : exchange(peer, remote_leader, tag, my_ids.data, (int)my_ids.len, in,
                                        theirs.group_bytes, MPI_BYTE);
        if (out->rc == MPI_SUCCESS) {
            bytes_put(&out->remote_ids, in, (size_t)theirs.group_bytes);
            struct bytes_in ids = { in, (size_t)theirs.group_bytes, 0, false };
            out->rc = out->remote_ids.failed ? MPI_ERR_NO_MEM : identity_decode(&ids, &their_ranks, &their_size);
        }
        free(in);
        if (out->rc == MPI_SUCCESS && their_size != theirs.size)
            out->rc = MPI_ERR_INTERN;
    }
    free(my_ids.data);
    /* Both leaders see the same union of the two groups, so they take
     * the same branch. */
    out->spans = out->rc == MPI_SUCCESS && (comm_members_span_nodes(their_ranks, theirs.size) ||
                                            comm_members_span_nodes(lc->local_members, mine.size));
    out->side = hello_first(&mine, &theirs) ? 0 : 1;
    if (out->rc == MPI_SUCCESS && out->spans) {
        out->id = (uint32_t)mine.proposal > (uint32_t)theirs.proposal ? (uint32_t)mine.proposal
                                                                       : (uint32_t)theirs.proposal;
        context_id_seen_global(out->id);
        const struct leader_hello *first = out->side == 0 ? &mine : &theirs;
        out->claimant = (struct context_claimant){
            .leader_gid = (uint64_t)first->leader_gid[1] << 32 | first->leader_gid[0],
            .leader_nonce = (uint64_t)(uint32_t)first->leader_rank << 32 | first->nonce };
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
    identity_release(their_ranks, their_size);
}

struct comm_core *comm_intercomm_take(uint32_t id, int side, struct rank **local, int local_size,
                                      const unsigned char *remote_ids, size_t remote_len, int remote_size,
                                      int shares, int *rc)
{
    struct rank **remote = NULL;
    int nremote = 0;
    struct bytes_in ids = { remote_ids, remote_len, 0, false };
    *rc = identity_decode(&ids, &remote, &nremote);
    if (*rc == MPI_SUCCESS && remote_size >= 0 && nremote != remote_size)
        *rc = MPI_ERR_INTERN;
    struct comm_core *core0 = NULL;
    if (*rc == MPI_SUCCESS) {
        core0 = side == 0 ? comm_shared_core_take(id, local, local_size, remote, nremote, shares)
                          : comm_shared_core_take(id, remote, nremote, local, local_size, shares);
        if (core0 == NULL)
            *rc = MPI_ERR_NO_MEM;
    }
    identity_release(remote, nremote);
    return core0 == NULL || side == 0 ? core0 : core0->peer;
}

/* The caller's share of the spanning intercommunicator: `shares`
 * references of its node process's copy (one per member it serves). */
static struct comm_core *spanning_core_take(struct strand_comm *local, const struct connection *conn, int shares,
                                            int *rc)
{
    struct comm_core *lc = local->core;
    return comm_intercomm_take(conn->id, conn->side, lc->local_members, lc->local_size, conn->remote_ids.data,
                               conn->remote_ids.len, conn->remote_size, shares, rc);
}

/* The leaders swap whether a claim failed in their group: true when one
 * did on either side. */
static bool leaders_swap_failed(MPI_Comm peer, int remote_leader, int tag, int failed)
{
    int theirs = 0;
    bool swapped = exchange(peer, remote_leader, tag, &failed, 1, &theirs, 1, MPI_INT) == MPI_SUCCESS;
    return failed || theirs || !swapped;    /* no answer counts as a failed claim */
}

/* A local group within this node process: the leader connects (again
 * while a claim fails), every member takes the core it brings through the
 * construction slot. */
static int create_local_group(struct strand_comm *local, int local_leader, MPI_Comm peer_comm, int remote_leader,
                              int tag, struct build_result *res)
{
    struct build_request req = { .key = local_leader, .expect_size = -1 };
    if (local_leader < 0 || local_leader >= local->core->local_size) {
        req.error = MPI_ERR_RANK;
    } else if (local->rank == local_leader) {
        struct connection conn;
        for (bool again = false;; again = true) {
            conn = (struct connection){ .rc = MPI_SUCCESS };
            uint32_t proposal = again ? context_id_propose_global_again() : context_id_propose_global();
            leader_connect(local, peer_comm, remote_leader, tag, (int)proposal, &conn);
            if (conn.rc != MPI_SUCCESS || !conn.spans)
                break;
            /* One claim for the whole group: it is all in this node process. */
            bool claimed = context_id_claim_global(conn.id, &conn.claimant);
            bool failed = leaders_swap_failed(peer_comm, remote_leader, tag, !claimed);
            if (claimed)
                context_id_settle_global(conn.id, &conn.claimant, !failed);
            if (!failed)
                break;
            free(conn.remote_ids.data);
        }
        req.color = conn.rc;
        if (conn.rc == MPI_SUCCESS && conn.spans)
            req.input = spanning_core_take(local, &conn, local->core->local_size, &req.color);
        else if (conn.rc == MPI_SUCCESS)
            req.input = conn.core;
        free(conn.remote_ids.data);
    }
    return comm_build(local, BUILD_ADOPT, &req, NULL, res);
}

enum { OUTCOME_RC, OUTCOME_ID, OUTCOME_SIDE, OUTCOME_REMOTE_SIZE, OUTCOME_GID_LOW, OUTCOME_GID_HIGH,
       OUTCOME_NONCE_LOW, OUTCOME_NONCE_HIGH, OUTCOME_INTS };

/* The leader's outcome of a connection, as the ints it sends its group. */
static void outcome_pack(const struct connection *conn, int *outcome)
{
    outcome[OUTCOME_RC] = conn->rc;
    outcome[OUTCOME_ID] = (int)conn->id;
    outcome[OUTCOME_SIDE] = conn->side;
    outcome[OUTCOME_REMOTE_SIZE] = conn->remote_size;
    outcome[OUTCOME_GID_LOW] = (int)(uint32_t)conn->claimant.leader_gid;
    outcome[OUTCOME_GID_HIGH] = (int)(uint32_t)(conn->claimant.leader_gid >> 32);
    outcome[OUTCOME_NONCE_LOW] = (int)(uint32_t)conn->claimant.leader_nonce;
    outcome[OUTCOME_NONCE_HIGH] = (int)(uint32_t)(conn->claimant.leader_nonce >> 32);
}

static void outcome_unpack(const int *outcome, struct connection *conn)
{
    conn->rc = outcome[OUTCOME_RC];
    conn->id = (uint32_t)outcome[OUTCOME_ID];
    conn->side = outcome[OUTCOME_SIDE];
    conn->remote_size = outcome[OUTCOME_REMOTE_SIZE];
    conn->claimant = (struct context_claimant){
        .leader_gid = (uint64_t)(uint32_t)outcome[OUTCOME_GID_HIGH] << 32 | (uint32_t)outcome[OUTCOME_GID_LOW],
        .leader_nonce = (uint64_t)(uint32_t)outcome[OUTCOME_NONCE_HIGH] << 32 |
                        (uint32_t)outcome[OUTCOME_NONCE_LOW] };
    if (conn->rc == MPI_SUCCESS)
        context_id_seen_global(conn->id);
}

/* Every member's claim of the agreed id, the verdict of both groups back
 * at every member (through the leaders), the claim settled: true when the
 * id is kept. */
static bool spanning_group_claims(struct strand_comm *local, int local_leader, MPI_Comm peer_comm,
                                  int remote_leader, int tag, const struct connection *conn)
{
    bool claimed = context_id_claim_global(conn->id, &conn->claimant);
    int failed = (int)comm_leader_gather_max(local, local_leader, !claimed);
    if (local->rank == local_leader)
        failed = leaders_swap_failed(peer_comm, remote_leader, tag, failed);
    struct bytes_out none = { 0 };
    comm_leader_spread(local, local_leader, &failed, 1, &none);
    free(none.data);
    if (claimed)
        context_id_settle_global(conn->id, &conn->claimant, !failed);
    return !failed;
}

/* A local group spanning node processes: proposals go to the leader by
 * internal messages on the local communicator's collective context, the
 * outcome comes back the same way (again while a claim fails). */
static int create_spanning_group(struct strand_comm *local, int local_leader, MPI_Comm peer_comm,
                                 int remote_leader, int tag, struct build_result *res)
{
    if (local_leader < 0 || local_leader >= local->core->local_size)
        return MPI_ERR_RANK;        /* every member passed the same leader */
    struct connection conn;
    for (bool again = false;; again = true) {
        uint32_t proposal = again ? comm_leader_gather_max(local, local_leader, context_id_propose_global_again())
                                  : comm_leader_gather_proposals(local, local_leader);
        conn = (struct connection){ .rc = MPI_SUCCESS, .spans = true };
        int outcome[OUTCOME_INTS];
        if (local->rank == local_leader) {
            leader_connect(local, peer_comm, remote_leader, tag, (int)proposal, &conn);
            outcome_pack(&conn, outcome);
        }
        comm_leader_spread(local, local_leader, outcome, OUTCOME_INTS, &conn.remote_ids);
        if (local->rank != local_leader)
            outcome_unpack(outcome, &conn);
        if (conn.rc != MPI_SUCCESS ||
            spanning_group_claims(local, local_leader, peer_comm, remote_leader, tag, &conn))
            break;
        free(conn.remote_ids.data);
    }
    int rc = conn.rc;
    if (rc == MPI_SUCCESS) {
        res->core = spanning_core_take(local, &conn, 1, &rc);
        res->rank = local->rank;
    }
    free(conn.remote_ids.data);
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
