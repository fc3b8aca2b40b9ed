/* Handing a root's result to the members of its communicator: a
 * construction meeting (src/comm/construct.c) that builds no communicator
 * (every member leaves with MPI_UNDEFINED) and whose exchange function
 * passes the root's outcome to everyone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    free(o->errcodes);
    free(o);
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
    struct dpm_outcome *o = outcome_share(c, root, c->rank == root ? at_root(c, arg) : NULL);
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
