/* The algorithm table of communicator cores whose members span node
 * processes: every collective over library-internal point-to-point
 * messages on the communicator's collective context (context_id + 1), so
 * local and remote members are reached alike (a local member through its
 * mailbox, a remote one through src/net).
 *
 * Correctness first: linear algorithms through one root, reductions in
 * rank order (valid for non-commutative ops). A hierarchical table (the
 * shared-memory algorithms inside each node process, one leader per node
 * over the network) is the next step; see doc/architecture.md. Messages
 * of one collective between two members are matched in order (MPI's
 * non-overtaking rule), so every message uses one tag. */
#include <stdlib.h>
#include <string.h>

#include "../datatype/datatype.h"
#include "../pt2pt/pt2pt.h"
#include "p2p.h"

/* On an intercommunicator the peers are the remote group: the caller is
 * none of them (self = -1). */
static struct p2p p2p_of(const struct coll_ctx *ctx)
{
    struct strand_comm *c = ctx->comm;
    return (struct p2p){ c, c->core->context_id + 1, c->rank, c->core->size, ctx->inter ? -1 : c->rank,
                         COMM_TAG_COLL };
}

struct strand_request *p2p_requests_alloc(int n)
{
    size_t bytes = ((size_t)(n > 0 ? n : 1) * sizeof(struct strand_request) + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes);
}

void p2p_wait_all(struct strand_request *reqs, int n)
{
    for (int i = 0; i < n; i++)
        pt2pt_wait_internal(&reqs[i]);
}

void p2p_send_to(const struct p2p *p, struct strand_request *req, const void *buf, int count, MPI_Datatype type,
                 int dest)
{
    pt2pt_isend_internal(req, p->comm, p->context, buf, count, type, dest, p->tag);
}

void p2p_recv_from(const struct p2p *p, struct strand_request *req, void *buf, int count, MPI_Datatype type,
                   int source)
{
    pt2pt_irecv_internal(req, p->comm, p->context, buf, count, type, source, p->tag);
}

/* ---- storage for `count` elements of a (possibly derived) type ---- */

/* Kernels of pair types write whole elements, padding included: the
 * storage covers both the true and the declared bounds of every element. */
char *p2p_typed_alloc(MPI_Datatype t, size_t count, char **base)
{
    MPI_Aint lo = t->lb < t->true_lb ? t->lb : t->true_lb;
    MPI_Aint hi = t->ub > t->true_ub ? t->ub : t->true_ub;
    MPI_Aint extent = dt_extent(t) > 0 ? dt_extent(t) : 0;
    size_t span = (size_t)(hi - lo) + (count > 0 ? count - 1 : 0) * (size_t)extent;
    *base = malloc(span > 0 ? span : 1);
    return *base == NULL ? NULL : *base - lo;
}

/* ---- barrier ---- */

void p2p_fan_in(const struct p2p *p)
{
    struct strand_request req;
    for (int i = 1; i < p->size && p->rank == 0; i++) {
        p2p_recv_from(p, &req, NULL, 0, MPI_BYTE, i);
        pt2pt_wait_internal(&req);
    }
    if (p->rank != 0) {
        p2p_send_to(p, &req, NULL, 0, MPI_BYTE, 0);
        pt2pt_wait_internal(&req);
    }
}

int p2p_fan_out(const struct p2p *p)
{
    struct strand_request req;
    if (p->rank != 0) {
        p2p_recv_from(p, &req, NULL, 0, MPI_BYTE, 0);
        pt2pt_wait_internal(&req);
        return MPI_SUCCESS;
    }
    struct strand_request *reqs = p2p_requests_alloc(p->size);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 1; i < p->size; i++)
        p2p_send_to(p, &reqs[i - 1], NULL, 0, MPI_BYTE, i);
    p2p_wait_all(reqs, p->size - 1);
    free(reqs);
    return MPI_SUCCESS;
}

static int p2p_barrier(struct coll_ctx *ctx, struct coll_args *args)
{
    (void)args;
    struct p2p p = p2p_of(ctx);
    p2p_fan_in(&p);
    return p2p_fan_out(&p);
}

/* ---- data movement: one block per (sender, receiver) pair ---- */

struct block {
    char *buf;
    int count;
    MPI_Datatype type;
};

static struct block side_block(const struct coll_side *s, int peer)
{
    switch (s->layout) {
    case LAYOUT_SAME:
        return (struct block){ s->buf, s->count, s->type };
    case LAYOUT_INDEXED:
        return (struct block){ s->buf + (MPI_Aint)peer * s->count * dt_extent(s->type), s->count, s->type };
    case LAYOUT_V:
        return (struct block){ s->buf + (MPI_Aint)s->displs[peer] * dt_extent(s->type), s->counts[peer], s->type };
    case LAYOUT_W:
        return (struct block){ s->buf + s->displs[peer], s->counts[peer], s->types[peer] };
    default:
        return (struct block){ NULL, 0, MPI_BYTE };
    }
}

/* Whether the caller (`role` in a rooted collective) sends to /
 * receives from `peer` in this collective. */
static bool talks_to(const struct coll_args *args, enum coll_role role, int peer, bool sending)
{
    switch (args->kind) {
    case COLL_BCAST:
    case COLL_SCATTER:
    case COLL_SCATTERV:
        return sending ? role == ROLE_ROOT : role == ROLE_MEMBER && peer == args->root;
    case COLL_GATHER:
    case COLL_GATHERV:
        return sending ? role == ROLE_MEMBER && peer == args->root : role == ROLE_ROOT;
    default:
        return true;
    }
}

int p2p_move(struct coll_ctx *ctx, struct coll_args *args)
{
    struct p2p p = p2p_of(ctx);
    return p2p_move_over(&p, coll_role_of(ctx, args->root), args);
}

int p2p_move_over(const struct p2p *pp, enum coll_role role, struct coll_args *args)
{
    struct p2p p = *pp;
    struct strand_request *reqs = p2p_requests_alloc(2 * p.size);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    /* In place (alltoall): the receive buffer holds what goes out; set the
     * outgoing blocks aside before anything arrives. */
    char *outgoing = NULL;
    size_t *offsets = NULL;
    if (args->in_place) {
        offsets = malloc((size_t)(p.size + 1) * sizeof *offsets);
        size_t total = 0;
        for (int i = 0; i < p.size && offsets != NULL; i++) {
            struct block b = side_block(&args->recv, i);
            offsets[i] = total;
            total += (size_t)b.count * b.type->size;
        }
        outgoing = offsets == NULL ? NULL : malloc(total > 0 ? total : 1);
        if (outgoing == NULL) {
            free(offsets);
            free(reqs);
            return MPI_ERR_NO_MEM;
        }
        for (int i = 0; i < p.size; i++) {
            struct block b = side_block(&args->recv, i);
            if (i != p.self)
                dt_pack(outgoing + offsets[i], b.buf, (size_t)b.count, b.type);
        }
    }
    int n = 0;
    for (int i = 0; i < p.size; i++) {
        if (i == p.self || args->recv.layout == LAYOUT_NONE || !talks_to(args, role, i, false))
            continue;
        struct block b = side_block(&args->recv, i);
        p2p_recv_from(&p, &reqs[n++], b.buf, b.count, b.type, i);
    }
    for (int k = 1; k <= p.size; k++) {
        int i = (p.rank + k) % p.size;  /* start after self: spreads the load on one receiver */
        if (i == p.self || !talks_to(args, role, i, true))
            continue;
        if (args->in_place) {
            struct block b = side_block(&args->recv, i);
            p2p_send_to(&p, &reqs[n++], outgoing + offsets[i], (int)((size_t)b.count * b.type->size), MPI_BYTE, i);
        } else if (args->send.layout != LAYOUT_NONE) {
            struct block b = side_block(&args->send, i);
            p2p_send_to(&p, &reqs[n++], b.buf, b.count, b.type, i);
        }
    }
    if (p.self >= 0 && !args->skip_self && !args->in_place && args->send.layout != LAYOUT_NONE &&
        args->recv.layout != LAYOUT_NONE) {
        struct block from = side_block(&args->send, p.rank), to = side_block(&args->recv, p.rank);
        dt_copy(to.buf, (size_t)to.count, to.type, from.buf, (size_t)from.count, from.type);
    }
    p2p_wait_all(reqs, n);
    free(outgoing);
    free(offsets);
    free(reqs);
    return MPI_SUCCESS;
}

/* ---- reductions, in rank order ---- */

/* Elements of the whole vector a member contributes. */
size_t p2p_vector_count(const struct coll_args *args, int size)
{
    if (args->kind == COLL_REDUCE_SCATTER_BLOCK)
        return args->count * (size_t)size;
    if (args->kind == COLL_REDUCE_SCATTER) {
        size_t total = 0;
        for (int i = 0; i < size; i++)
            total += (size_t)args->recvcounts[i];
        return total;
    }
    return args->count;
}

/* result (at root, `count` elements) = x0 op x1 op ... op x(n-1): fed from
 * the highest rank down, since a kernel computes inout = in op inout. */
int p2p_reduce_to(const struct p2p *p, const struct coll_args *args, size_t count, int root, char *result)
{
    const struct op_plan *plan = &args->plan;
    MPI_Datatype t = plan->type;
    struct strand_request req;
    if (p->rank != root) {
        p2p_send_to(p, &req, args->input, (int)count, t, root);
        pt2pt_wait_internal(&req);
        return MPI_SUCCESS;
    }
    char *tmp_base, *tmp = p2p_typed_alloc(t, count, &tmp_base);
    if (tmp == NULL)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (int i = p->size - 1; i >= 0 && rc == MPI_SUCCESS; i--) {
        char *into = i == p->size - 1 ? result : tmp;
        if (i == root) {
            if (into != args->input)
                dt_copy(into, count, t, args->input, count, t);
        } else {
            p2p_recv_from(p, &req, into, (int)count, t, i);
            pt2pt_wait_internal(&req);
        }
        if (i != p->size - 1)
            rc = op_reduce_buffers(plan, tmp, result, count);
    }
    free(tmp_base);
    return rc;
}

int p2p_bcast_from(const struct p2p *p, char *buf, size_t count, MPI_Datatype t, int root)
{
    struct strand_request *reqs = p2p_requests_alloc(p->size);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    int n = 0;
    if (p->rank == root) {
        for (int i = 0; i < p->size; i++)
            if (i != root)
                p2p_send_to(p, &reqs[n++], buf, (int)count, t, i);
    } else {
        p2p_recv_from(p, &reqs[n++], buf, (int)count, t, root);
    }
    p2p_wait_all(reqs, n);
    free(reqs);
    return MPI_SUCCESS;
}

static int p2p_reduce(struct coll_ctx *ctx, struct coll_args *args)
{
    struct p2p p = p2p_of(ctx);
    MPI_Datatype t = args->plan.type;
    if (args->kind == COLL_REDUCE) {
        /* The root's output may be its input (in place): reduce apart, then store. */
        char *base = NULL, *acc = p.rank == args->root ? p2p_typed_alloc(t, args->count, &base) : NULL;
        if (p.rank == args->root && acc == NULL)
            return MPI_ERR_NO_MEM;
        int rc = p2p_reduce_to(&p, args, args->count, args->root, acc);
        if (rc == MPI_SUCCESS && acc != NULL)
            dt_copy(args->output, args->count, t, acc, args->count, t);
        free(base);
        return rc;
    }
    size_t total = p2p_vector_count(args, p.size);
    char *base = NULL, *acc = p.rank == 0 ? p2p_typed_alloc(t, total, &base) : NULL;
    if (p.rank == 0 && acc == NULL)
        return MPI_ERR_NO_MEM;
    int rc = p2p_reduce_to(&p, args, total, 0, acc);
    if (rc == MPI_SUCCESS && args->kind == COLL_ALLREDUCE) {
        if (p.rank == 0)
            dt_copy(args->output, total, t, acc, total, t);
        rc = p2p_bcast_from(&p, args->output, total, t, 0);
    } else if (rc == MPI_SUCCESS) {
        rc = p2p_scatter_blocks(&p, args, acc);
    }
    free(base);
    return rc;
}

int p2p_scatter_blocks(const struct p2p *p, const struct coll_args *args, char *acc)
{
    MPI_Datatype t = args->plan.type;
    struct coll_args scatter;
    coll_args_init(&scatter, COLL_SCATTERV, 0);
    int *counts = malloc(2 * (size_t)p->size * sizeof *counts);
    if (counts == NULL)
        return MPI_ERR_NO_MEM;
    int *displs = counts + p->size;
    for (int i = 0, at = 0; i < p->size; i++) {
        counts[i] = args->recvcounts != NULL ? args->recvcounts[i] : (int)args->count;
        displs[i] = at;
        at += counts[i];
    }
    if (p->rank == 0)
        scatter.send = (struct coll_side){ .layout = LAYOUT_V, .buf = acc, .counts = counts, .displs = displs,
                                           .type = t };
    scatter.recv = (struct coll_side){ .layout = LAYOUT_SAME, .buf = args->output, .count = counts[p->rank],
                                       .type = t };
    int rc = p2p_move_over(p, p->rank == 0 ? ROLE_ROOT : ROLE_MEMBER, &scatter);
    free(counts);
    return rc;
}

/* Scan and exscan: a chain. Member i receives x0 op ... op x(i-1) from
 * i - 1 and passes x0 op ... op xi on. */
static int p2p_prefix(struct coll_ctx *ctx, struct coll_args *args)
{
    struct p2p p = p2p_of(ctx);
    const struct op_plan *plan = &args->plan;
    MPI_Datatype t = plan->type;
    size_t count = args->count;
    char *in_base, *partial = p2p_typed_alloc(t, count, &in_base);
    char *acc_base, *acc = p2p_typed_alloc(t, count, &acc_base);
    int rc = partial == NULL || acc == NULL ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    struct strand_request req;
    if (rc == MPI_SUCCESS) {
        dt_copy(acc, count, t, args->input, count, t);
        if (p.rank > 0) {
            p2p_recv_from(&p, &req, partial, (int)count, t, p.rank - 1);
            pt2pt_wait_internal(&req);
            if (args->kind == COLL_EXSCAN)
                dt_copy(args->output, count, t, partial, count, t);
            rc = op_reduce_buffers(plan, partial, acc, count);
        }
        if (rc == MPI_SUCCESS && args->kind == COLL_SCAN)
            dt_copy(args->output, count, t, acc, count, t);
        if (rc == MPI_SUCCESS && p.rank + 1 < p.size) {
            p2p_send_to(&p, &req, acc, (int)count, t, p.rank + 1);
            pt2pt_wait_internal(&req);
        }
    }
    free(in_base);
    free(acc_base);
    return rc;
}

const struct coll_algorithms coll_p2p_algorithms = {
    .name = "point-to-point (spans node processes)",
    .run = {
        [COLL_BARRIER] = p2p_barrier,
        P2P_MOVE_ENTRIES,
        [COLL_REDUCE] = p2p_reduce,
        [COLL_ALLREDUCE] = p2p_reduce,
        [COLL_REDUCE_SCATTER] = p2p_reduce,
        [COLL_REDUCE_SCATTER_BLOCK] = p2p_reduce,
        [COLL_SCAN] = p2p_prefix,
        [COLL_EXSCAN] = p2p_prefix,
    },
};
