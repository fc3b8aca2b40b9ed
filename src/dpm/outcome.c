/* Handing a root's result to the members of its communicator.
 *
 * A communicator all in this node process: a construction meeting
 * (src/comm/construct.c) that builds no communicator (every member leaves
 * with MPI_UNDEFINED) and whose exchange function passes the root's
 * outcome, and the new core with one reference per member, to everyone.
 *
 * A communicator spanning node processes: the members' context id
 * proposals go to the root first (the new intercommunicator's id must be
 * free in all of them), the root's outcome (error, message, error codes,
 * the agreed id, the members' side and the other group's identities)
 * comes back by library-internal messages, and every member takes its
 * node process's copy of the new core (comm_intercomm_take). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/bytes.h"
#include "dpm.h"

struct dpm_outcome *dpm_outcome_alloc(int members, int nerrcodes)
{
    struct dpm_outcome *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->errcodes = calloc((size_t)(nerrcodes > 0 ? nerrcodes : 1), sizeof *o->errcodes);
    if (o->errcodes == NULL) {
        free(o);
        return NULL;
    }
    o->nerrcodes = nerrcodes;
    atomic_store(&o->untaken, members);
    return o;
}

static void outcome_free(struct dpm_outcome *o)
{
    free(o->remote.data);
    free(o->errcodes);
    free(o);
}

void dpm_outcome_describe(struct dpm_outcome *o, uint32_t id, int side, const unsigned char *remote, size_t len)
{
    o->described = true;
    context_id_seen_global(id);     /* never proposed by this process again */
    o->id = id;
    o->side = side;
    o->remote.len = 0;
    bytes_put(&o->remote, remote, len);
    if (o->remote.failed) {
        o->error = MPI_ERR_NO_MEM;
        snprintf(o->message, sizeof o->message, "out of memory");
    }
}

/* A described intercommunicator, built by the root for members all in
 * its node process: one reference per member. */
static void outcome_build_here(struct dpm_outcome *o, const struct strand_comm *comm)
{
    if (o->error != MPI_SUCCESS || o->core != NULL || !o->described)
        return;
    int rc;
    o->core = comm_intercomm_take(o->id, o->side, comm->core->local_members, comm->core->local_size, o->remote.data,
                                  o->remote.len, -1, comm->core->local_size, &rc);
    if (o->core == NULL) {
        o->error = rc;
        snprintf(o->message, sizeof o->message, "cannot build the intercommunicator (%s)", error_class_name(rc));
    }
}

/* Only the root passes an outcome: the one non-NULL input. */
static int pass_root_outcome(int n, void *const *inputs, void **outputs)
{
    void *root = NULL;
    for (int i = 0; i < n && root == NULL; i++)
        root = inputs[i];
    for (int i = 0; i < n; i++)
        outputs[i] = root;
    return MPI_SUCCESS;
}

static struct dpm_outcome *outcome_share(struct strand_comm *comm, int root, struct dpm_outcome *mine)
{
    struct build_request req = { .color = MPI_UNDEFINED, .expect_size = -1 };
    req.input = comm->rank == root ? mine : NULL;
    struct build_result res = { 0 };
    if (comm_build(comm, BUILD_SPLIT, &req, pass_root_outcome, &res) != MPI_SUCCESS)
        return NULL;
    return res.output;
}

enum { SPREAD_ERROR, SPREAD_ID, SPREAD_SIDE, SPREAD_NERRCODES, SPREAD_INTS };

/* The root's outcome as the members of a spanning communicator get it:
 * ints, then the message, the error codes and the other group. */
static void outcome_pack(const struct dpm_outcome *o, int *ints, struct bytes_out *out)
{
    ints[SPREAD_ERROR] = o->error;
    ints[SPREAD_ID] = (int)o->id;
    ints[SPREAD_SIDE] = o->side;
    ints[SPREAD_NERRCODES] = o->nerrcodes;
    bytes_put_str(out, o->message);
    for (int i = 0; i < o->nerrcodes; i++)
        bytes_put_u32(out, (uint32_t)o->errcodes[i]);
    bytes_put(out, o->remote.data, o->remote.len);
    if (out->failed)
        strand_job_abort(1, "Strand MPI: out of memory while handing out a new intercommunicator\n");
}

static struct dpm_outcome *outcome_unpack(const int *ints, const struct bytes_out *packed)
{
    int nerrcodes = ints[SPREAD_NERRCODES] > 0 ? ints[SPREAD_NERRCODES] : 0;
    struct dpm_outcome *o = dpm_outcome_alloc(1, nerrcodes);
    if (o == NULL)
        strand_job_abort(1, "Strand MPI: out of memory while taking a new intercommunicator\n");
    struct bytes_in in = { packed->data, packed->len, 0, false };
    o->error = ints[SPREAD_ERROR];
    bytes_get_str(&in, o->message, sizeof o->message);
    for (int i = 0; i < nerrcodes; i++)
        o->errcodes[i] = (int)bytes_get_u32(&in);
    if (o->error == MPI_SUCCESS)
        dpm_outcome_describe(o, (uint32_t)ints[SPREAD_ID], ints[SPREAD_SIDE], packed->data + in.pos,
                             bytes_left(&in));
    if (in.bad)
        strand_job_abort(1, "Strand MPI: internal error: a malformed outcome of a dynamic-process call\n");
    return o;
}

/* A spanning communicator: every member leaves with its own outcome and
 * its share of the new core. */
static struct dpm_outcome *outcome_spread(struct strand_comm *c, int root, dpm_root_fn at_root, void *arg)
{
    struct dpm_root_context ctx = { .spans = true, .proposal = comm_leader_gather_proposals(c, root) };
    struct dpm_outcome *o = NULL;
    int ints[SPREAD_INTS] = { MPI_ERR_NO_MEM, 0, 0, 0 };
    struct bytes_out packed = { 0 };
    if (c->rank == root) {
        o = at_root(c, arg, &ctx);
        if (o == NULL)
            strand_job_abort(1, "Strand MPI: out of memory in a dynamic-process call\n");
        atomic_store(&o->untaken, 1);
        outcome_pack(o, ints, &packed);
    }
    comm_leader_spread(c, root, ints, SPREAD_INTS, &packed);
    if (c->rank != root)
        o = outcome_unpack(ints, &packed);
    free(packed.data);
    if (o->error == MPI_SUCCESS && o->described) {
        int rc;
        o->core = comm_intercomm_take(o->id, o->side, c->core->local_members, c->core->local_size, o->remote.data,
                                      o->remote.len, -1, 1, &rc);
        if (o->core == NULL) {
            o->error = rc;
            snprintf(o->message, sizeof o->message, "cannot build the intercommunicator (%s)", error_class_name(rc));
        }
    }
    return o;
}

/* A member's end: its handle of the new intercommunicator (rank = its rank
 * in comm) into *newcomm (MPI_COMM_NULL on error), the error codes if
 * `errcodes` is not NULL; drops its share; returns the error, with the
 * message in `why`. */
static int outcome_take(struct dpm_outcome *o, struct strand_comm *comm, MPI_Comm *newcomm, int *errcodes,
                        char *why, size_t whylen)
{
    *newcomm = MPI_COMM_NULL;
    if (errcodes != NULL)
        memcpy(errcodes, o->errcodes, (size_t)o->nerrcodes * sizeof *errcodes);
    int rc = o->error;
    snprintf(why, whylen, "%s", o->message);
    if (rc == MPI_SUCCESS && o->core != NULL) {
        struct strand_comm *c = comm_handle_for(o->core, comm->rank, comm);
        if (c == NULL) {
            rc = MPI_ERR_NO_MEM;
            snprintf(why, whylen, "out of memory");
        } else {
            *newcomm = c;
        }
    }
    if (atomic_fetch_sub(&o->untaken, 1) == 1)
        outcome_free(o);
    return rc;
}

int dpm_rooted_collective(const char *where, MPI_Comm comm, int root, dpm_root_fn at_root, void *arg,
                          MPI_Comm *newcomm, int *errcodes)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, where, &rc);
    if (c == NULL)
        return rc;
    if (c->core->is_inter)
        return error_report(comm, MPI_ERR_COMM, where, "comm must be an intra-communicator");
    if (root < 0 || root >= c->core->local_size)
        return error_report(comm, MPI_ERR_ROOT, where, "invalid root %d", root);
    /* A member with a NULL result pointer still takes part (the root may
     * be waiting for it), then fails. */
    struct dpm_outcome *o;
    if (comm_core_spans_nodes(c->core)) {
        o = outcome_spread(c, root, at_root, arg);
    } else {
        struct dpm_outcome *mine = NULL;
        if (c->rank == root) {
            struct dpm_root_context ctx = { .spans = false, .proposal = context_id_propose_global() };
            mine = at_root(c, arg, &ctx);
            if (mine != NULL)
                outcome_build_here(mine, c);
        }
        o = outcome_share(c, root, mine);
    }
    MPI_Comm result = MPI_COMM_NULL;
    char why[512] = "out of memory";
    rc = o != NULL ? outcome_take(o, c, &result, errcodes, why, sizeof why) : MPI_ERR_NO_MEM;
    if (newcomm == NULL) {
        if (result != MPI_COMM_NULL)
            comm_handle_discard(result);
        return error_report(comm, MPI_ERR_ARG, where, "the new communicator's address must not be NULL");
    }
    *newcomm = result;
    return rc != MPI_SUCCESS ? error_report(comm, rc, where, "%s", why) : MPI_SUCCESS;
}
