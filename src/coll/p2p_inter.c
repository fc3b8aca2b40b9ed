/* The algorithm table of intercommunicators whose groups span node
 * processes (MPI-2.2 §5.2.2): library-internal messages on the
 * communicator's collective context, to the remote group through the
 * communicator itself, within the own group through comm_local_view (a
 * different tag: a source rank number names a member of either group).
 *
 * Data movement goes straight between the two groups (p2p_move: a root
 * passes MPI_ROOT, its group's other members MPI_PROC_NULL and do nothing).
 * Reductions combine each group's inputs at its member 0 in rank order
 * (non-commutative ops are exact); the two members 0 swap results, and
 * deliver them to the root or to their group. */
#include <stdlib.h>

#include "../pt2pt/pt2pt.h"
#include "p2p.h"

static struct p2p remote_of(const struct coll_ctx *ctx)
{
    struct strand_comm *c = ctx->comm;
    return (struct p2p){ c, c->core->context_id + 1, c->rank, c->core->size, -1, COMM_TAG_COLL };
}

static struct p2p local_of(const struct coll_ctx *ctx, struct comm_local_view *view)
{
    struct strand_comm *c = ctx->comm;
    return (struct p2p){ comm_local_view(c, view), c->core->context_id + 1, c->rank, c->core->local_size, c->rank,
                         COMM_TAG_COLL_LOCAL };
}

/* The two groups' members 0 swap `out` for `in`. */
static void leaders_swap(const struct p2p *remote, const void *out, size_t out_count, void *in, size_t in_count,
                         MPI_Datatype t)
{
    struct strand_request r, s;
    p2p_recv_from(remote, &r, in, (int)in_count, t, 0);
    p2p_send_to(remote, &s, out, (int)out_count, t, 0);
    pt2pt_wait_internal(&s);
    pt2pt_wait_internal(&r);
}

static int inter_barrier(struct coll_ctx *ctx, struct coll_args *args)
{
    (void)args;
    struct comm_local_view view;
    struct p2p local = local_of(ctx, &view), remote = remote_of(ctx);
    p2p_fan_in(&local);
    if (local.rank == 0)
        leaders_swap(&remote, NULL, 0, NULL, 0, MPI_BYTE);
    return p2p_fan_out(&local);
}

/* The own group's inputs (count elements each) combined at member 0:
 * returns the storage there (free *base), NULL elsewhere; *rc set. */
static char *group_reduce(const struct p2p *local, const struct coll_args *args, size_t count, char **base,
                          int *rc)
{
    *base = NULL;
    char *acc = local->rank == 0 ? p2p_typed_alloc(args->plan.type, count, base) : NULL;
    *rc = local->rank == 0 && acc == NULL ? MPI_ERR_NO_MEM : p2p_reduce_to(local, args, count, 0, acc);
    return acc;
}

static int inter_reduce(struct coll_ctx *ctx, struct coll_args *args)
{
    struct comm_local_view view;
    struct p2p local = local_of(ctx, &view), remote = remote_of(ctx);
    MPI_Datatype t = args->plan.type;
    struct strand_request req;
    enum coll_role role = coll_role_of(ctx, args->root);
    if (role == ROLE_IDLE)
        return MPI_SUCCESS;
    if (role == ROLE_ROOT) {
        p2p_recv_from(&remote, &req, args->output, (int)args->count, t, 0);
        pt2pt_wait_internal(&req);
        return MPI_SUCCESS;
    }
    char *base;
    int rc;
    char *acc = group_reduce(&local, args, args->count, &base, &rc);
    if (acc != NULL) {
        p2p_send_to(&remote, &req, acc, (int)args->count, t, args->root);
        pt2pt_wait_internal(&req);
    }
    free(base);
    return rc;
}

static int inter_allreduce(struct coll_ctx *ctx, struct coll_args *args)
{
    struct comm_local_view view;
    struct p2p local = local_of(ctx, &view), remote = remote_of(ctx);
    MPI_Datatype t = args->plan.type;
    char *base;
    int rc;
    char *acc = group_reduce(&local, args, args->count, &base, &rc);
    if (acc != NULL)
        leaders_swap(&remote, acc, args->count, args->output, args->count, t);
    free(base);
    int brc = p2p_bcast_from(&local, args->output, args->count, t, 0);
    return rc != MPI_SUCCESS ? rc : brc;
}

/* Each group's result is the other group's inputs combined, scattered by
 * its own block sizes: so a group's inputs have as many elements as the
 * other group's blocks add up to, which members 0 swap first. */
static int inter_reduce_scatter(struct coll_ctx *ctx, struct coll_args *args)
{
    struct comm_local_view view;
    struct p2p local = local_of(ctx, &view), remote = remote_of(ctx);
    MPI_Datatype t = args->plan.type;
    int own_total = (int)p2p_vector_count(args, local.size), in_total = 0;
    if (local.rank == 0)
        leaders_swap(&remote, &own_total, 1, &in_total, 1, MPI_INT);
    int rc = p2p_bcast_from(&local, (char *)&in_total, 1, MPI_INT, 0);
    char *base = NULL, *result_base = NULL, *result = NULL;
    char *acc = rc == MPI_SUCCESS ? group_reduce(&local, args, (size_t)in_total, &base, &rc) : NULL;
    if (acc != NULL) {
        result = p2p_typed_alloc(t, (size_t)own_total, &result_base);
        if (result == NULL)
            rc = MPI_ERR_NO_MEM;
        else
            leaders_swap(&remote, acc, (size_t)in_total, result, (size_t)own_total, t);
    }
    if (rc == MPI_SUCCESS)
        rc = p2p_scatter_blocks(&local, args, result);
    free(base);
    free(result_base);
    return rc;
}

const struct coll_algorithms coll_p2p_inter_algorithms = {
    .name = "point-to-point intercommunicator (spans node processes)",
    .run = {
        [COLL_BARRIER] = inter_barrier,
        P2P_MOVE_ENTRIES,
        [COLL_REDUCE] = inter_reduce,
        [COLL_ALLREDUCE] = inter_allreduce,
        [COLL_REDUCE_SCATTER] = inter_reduce_scatter,
        [COLL_REDUCE_SCATTER_BLOCK] = inter_reduce_scatter,
    },
};
