/* The hierarchical algorithm table of communicator cores whose members
 * span node processes. A core's members fall into nodes (the members of
 * one node process); nodes are numbered by their lowest communicator rank
 * and each has a leader, that member. Every collective runs in up to
 * three phases: the shared-address-space engines among this node
 * process's members (on `local`, a collective state no communicator owns,
 * built when the core is attached), one member per node over the network
 * (library-internal messages on the collective context, see p2p.c), and
 * the shared-address-space engines again. Among the nodes' members,
 * trees (bcast, reduce) and recursive doubling (allreduce) take
 * log2(nodes) steps.
 *
 * For rooted collectives the root stands for its own node (so its data
 * never takes a local detour); every other node is represented by its
 * leader. Every member computes the same representatives from the root
 * and the node table, so no agreement is needed.
 *
 * Exactness: a reduction combines whole nodes, so it keeps rank order
 * only when every node's members are consecutive in communicator order;
 * a non-commutative reduction over interleaved nodes, and every scan over
 * them, runs p2p.c's rank-order algorithms instead. Alltoall(v,w) also
 * runs p2p.c's: its volume crosses the network once either way. For the
 * gather(v)/scatter(v) pattern see rooted_plan_make. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../datatype/datatype.h"
#include "../net/net.h"
#include "../pt2pt/pt2pt.h"
#include "p2p.h"

/* Blocks up to this size take the hierarchical alltoall (measured: doc/performance.md). */
enum { COLL_HIER_ALLTOALL_MAX_BLOCK = 4096 };

struct coll_hier {
    int nnodes;
    int my_node;                /* this node process's node */
    bool contiguous;            /* every node's members are consecutive in rank order */
    int *node_of;               /* comm rank -> node */
    int *local_index;           /* comm rank -> its position among its node's members */
    int *leader;                /* node -> its lowest comm rank */
    int *node_first;            /* node -> first position in by_node; [nnodes] = size */
    int *by_node;               /* comm ranks grouped by node, each node in rank order */
    struct coll_core *local;    /* this node's members: shared-address-space state */
};

/* Which node process a member lives in: 0 for this one, else the peer's index + 1. */
static int node_key(const struct rank *r)
{
    return r->remote != NULL ? r->remote->node + 1 : 0;
}

struct coll_hier *coll_hier_create(struct comm_core *core)
{
    int n = core->size, keys = 1;
    for (int i = 0; i < n; i++)
        if (node_key(core->members[i]) + 1 > keys)
            keys = node_key(core->members[i]) + 1;
    struct coll_hier *h = malloc(sizeof *h + (5 * (size_t)n + 1) * sizeof(int));
    int *node_by_key = malloc((size_t)keys * sizeof *node_by_key);
    if (h == NULL || node_by_key == NULL) {
        free(h);
        free(node_by_key);
        return NULL;
    }
    int *ints = (int *)(h + 1);
    h->node_of = ints;
    h->local_index = ints + n;
    h->leader = ints + 2 * n;
    h->node_first = ints + 3 * n;
    h->by_node = ints + 4 * n + 1;
    for (int k = 0; k < keys; k++)
        node_by_key[k] = -1;
    h->nnodes = 0;
    h->contiguous = true;
    for (int i = 0; i < n; i++) {
        int *node = &node_by_key[node_key(core->members[i])];
        if (*node < 0) {
            *node = h->nnodes;
            h->leader[h->nnodes++] = i;
        }
        h->node_of[i] = *node;
        if (i > 0 && h->node_of[i] < h->node_of[i - 1])
            h->contiguous = false;
    }
    h->my_node = node_by_key[0];
    free(node_by_key);
    /* Group the ranks by node (a counting sort keeps rank order inside each). */
    for (int g = 0; g <= h->nnodes; g++)
        h->node_first[g] = 0;
    for (int i = 0; i < n; i++)
        h->node_first[h->node_of[i] + 1]++;
    for (int g = 0; g < h->nnodes; g++)
        h->node_first[g + 1] += h->node_first[g];
    int *next = malloc((size_t)h->nnodes * sizeof *next);
    if (next == NULL) {
        free(h);
        return NULL;
    }
    for (int g = 0; g < h->nnodes; g++)
        next[g] = h->node_first[g];
    for (int i = 0; i < n; i++) {
        int g = h->node_of[i];
        h->local_index[i] = next[g] - h->node_first[g];
        h->by_node[next[g]++] = i;
    }
    free(next);
    h->local = h->my_node >= 0 ? coll_state_create_local(h->node_first[h->my_node + 1] - h->node_first[h->my_node])
                               : NULL;
    if (h->local == NULL) {
        free(h);
        return NULL;
    }
    return h;
}

void coll_hier_destroy(struct coll_hier *h)
{
    if (h != NULL) {
        coll_state_free_local(h->local);
        free(h);
    }
}

/* ---- the node table ---- */

static int node_size(const struct coll_hier *h, int node)
{
    return h->node_first[node + 1] - h->node_first[node];
}

/* Who stands for `node` among the nodes: the root for its own node, else the leader. */
static int rep_of(const struct coll_hier *h, int node, int root)
{
    return root >= 0 && h->node_of[root] == node ? root : h->leader[node];
}

static bool order_kept(const struct coll_hier *h, const struct coll_args *args)
{
    return h->contiguous || args->plan.op->commutative;
}

/* Runs a collective among this node process's members of the core (every
 * one of them must run the same sequence of them). */
static int local_run(const struct coll_ctx *ctx, struct coll_args *sub)
{
    const struct coll_hier *h = ctx->cc->hier;
    int lr = h->local_index[ctx->rank], members = node_size(h, h->my_node);
    struct coll_ctx local = { .comm = ctx->comm, .cc = h->local, .me = &h->local->slots[lr], .inter = false,
                              .rank = lr, .self = lr, .local_base = 0, .local_size = members,
                              .peer_base = 0, .peer_size = members };
    return coll_run(&local, sub);
}

static void side_same(struct coll_side *s, void *buf, int count, MPI_Datatype type)
{
    s->layout = LAYOUT_SAME;
    s->buf = buf;
    s->count = count;
    s->type = type;
}

/* Local bcast of (buf, count, type) from this node's member `from`. */
static int local_bcast(const struct coll_ctx *ctx, int from, void *buf, int count, MPI_Datatype type)
{
    const struct coll_hier *h = ctx->cc->hier;
    struct coll_args sub;
    coll_args_init(&sub, COLL_BCAST, h->local_index[from]);
    side_same(ctx->rank == from ? &sub.send : &sub.recv, buf, count, type);
    return local_run(ctx, &sub);
}

/* Local reduce of every member's `input` into `output` at member `to`. */
static int local_reduce(const struct coll_ctx *ctx, const struct coll_args *args, int to, size_t count,
                        char *output)
{
    const struct coll_hier *h = ctx->cc->hier;
    struct coll_args sub;
    coll_args_init(&sub, COLL_REDUCE, h->local_index[to]);
    sub.count = count;
    sub.input = args->input;
    sub.output = ctx->rank == to ? output : NULL;
    sub.in_place = sub.output == sub.input;
    sub.plan = args->plan;
    return local_run(ctx, &sub);
}

static void wait_all(struct strand_request *reqs, int n)
{
    for (int i = 0; i < n; i++)
        coll_msg_wait(&reqs[i]);
}

/* ---- among the nodes ---- */

/* Dissemination barrier of the leaders: ceil(log2(nodes)) rounds. */
static void nodes_barrier(const struct coll_ctx *ctx, const struct coll_hier *h)
{
    int n = h->nnodes, me = h->my_node;
    for (int k = 1; k < n; k <<= 1) {
        struct strand_request reqs[2];
        coll_msg_send(ctx->comm, &reqs[0], NULL, 0, MPI_BYTE, h->leader[(me + k) % n]);
        coll_msg_recv(ctx->comm, &reqs[1], NULL, 0, MPI_BYTE, h->leader[(me - k + n) % n]);
        wait_all(reqs, 2);
    }
}

/* Binomial tree rooted at node `top` (numbered relative to it): receives
 * from the parent (unless the top), then starts the sends to the children
 * in `reqs` (log2(nodes) of them at most) and returns how many. */
static int nodes_tree_down(const struct coll_ctx *ctx, const struct coll_hier *h, int top, int root, void *buf,
                           int count, MPI_Datatype type, struct strand_request *reqs)
{
    int n = h->nnodes, vr = (h->my_node - top + n) % n, mask = 1, k = 0;
    for (; mask < n; mask <<= 1)
        if (vr & mask) {
            struct strand_request req;
            coll_msg_recv(ctx->comm, &req, buf, count, type, rep_of(h, (vr - mask + top) % n, root));
            coll_msg_wait(&req);
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            coll_msg_send(ctx->comm, &reqs[k++], buf, count, type, rep_of(h, (vr + mask + top) % n, root));
    return k;
}

enum { TREE_SENDS_MAX = 32 };   /* log2 of any node count */

/* acc = other op acc (`other` holds the nodes before) or acc op other
 * (the nodes after; formed in `other`, and the two buffers swap roles). */
static int combine_in_order(const struct op_plan *plan, size_t count, char **acc, char **other, bool other_first)
{
    if (other_first)
        return op_reduce_buffers(plan, *other, *acc, count);
    int rc = op_reduce_buffers(plan, *acc, *other, count);
    char *swap = *acc;
    *acc = *other;
    *other = swap;
    return rc;
}

/* Binomial reduction to node `top` (numbered relative to it; from node 0
 * it combines whole nodes in rank order): `acc` holds this node's part on
 * entry and, at the top, the result on return. */
static int nodes_tree_reduce(const struct coll_ctx *ctx, const struct coll_hier *h, const struct op_plan *plan,
                             size_t count, char *acc, int top, int root)
{
    int n = h->nnodes, vr = (h->my_node - top + n) % n;
    MPI_Datatype t = plan->type;
    char *tmp_base, *tmp = p2p_typed_alloc(t, count, &tmp_base);
    if (tmp == NULL)
        return MPI_ERR_NO_MEM;
    char *result = acc;
    int rc = MPI_SUCCESS;
    struct strand_request req;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            coll_msg_send(ctx->comm, &req, acc, (int)count, t, rep_of(h, (vr - mask + top) % n, root));
            coll_msg_wait(&req);
            break;
        }
        if (vr + mask < n) {
            coll_msg_recv(ctx->comm, &req, tmp, (int)count, t, rep_of(h, (vr + mask + top) % n, root));
            coll_msg_wait(&req);
            /* The child holds the next nodes. */
            int rc2 = combine_in_order(plan, count, &acc, &tmp, false);
            rc = rc != MPI_SUCCESS ? rc : rc2;
        }
    }
    if (acc != result && vr == 0)
        dt_copy(result, count, t, acc, count, t);
    free(tmp_base);
    return rc;
}

/* Recursive doubling among the leaders (rank order kept: the lower
 * range is always the left operand); node counts that are not a power of
 * two fold their first pairs in first. `buf` holds this node's part on
 * entry and the whole result on return. */
static int nodes_allreduce(const struct coll_ctx *ctx, const struct coll_hier *h, const struct op_plan *plan,
                           size_t count, char *buf)
{
    int n = h->nnodes, me = h->my_node, pof2 = 1;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    int rem = n - pof2, newrank;
    MPI_Datatype t = plan->type;
    char *tmp_base, *tmp = p2p_typed_alloc(t, count, &tmp_base);
    if (tmp == NULL)
        return MPI_ERR_NO_MEM;
    char *acc = buf;
    int rc = MPI_SUCCESS;
    struct strand_request reqs[2];
    if (me < 2 * rem && me % 2 == 0) {
        coll_msg_send(ctx->comm, &reqs[0], acc, (int)count, t, h->leader[me + 1]);
        coll_msg_wait(&reqs[0]);
        newrank = -1;
    } else if (me < 2 * rem) {
        coll_msg_recv(ctx->comm, &reqs[0], tmp, (int)count, t, h->leader[me - 1]);
        coll_msg_wait(&reqs[0]);
        rc = op_reduce_buffers(plan, tmp, acc, count);
        newrank = me / 2;
    } else {
        newrank = me - rem;
    }
    for (int mask = 1; newrank >= 0 && mask < pof2; mask <<= 1) {
        int partner_new = newrank ^ mask;
        int partner = partner_new < rem ? partner_new * 2 + 1 : partner_new + rem;
        coll_msg_send(ctx->comm, &reqs[0], acc, (int)count, t, h->leader[partner]);
        coll_msg_recv(ctx->comm, &reqs[1], tmp, (int)count, t, h->leader[partner]);
        wait_all(reqs, 2);
        if (rc == MPI_SUCCESS)
            rc = combine_in_order(plan, count, &acc, &tmp, partner < me);
    }
    if (acc != buf)
        dt_copy(buf, count, t, acc, count, t);
    if (me < 2 * rem) {
        if (me % 2 == 0)
            coll_msg_recv(ctx->comm, &reqs[0], buf, (int)count, t, h->leader[me + 1]);
        else
            coll_msg_send(ctx->comm, &reqs[0], buf, (int)count, t, h->leader[me - 1]);
        coll_msg_wait(&reqs[0]);
    }
    free(tmp_base);
    return rc;
}

/* ---- the collectives ---- */

static int hier_barrier(struct coll_ctx *ctx, struct coll_args *args)
{
    const struct coll_hier *h = ctx->cc->hier;
    local_run(ctx, args);
    if (ctx->rank == h->leader[h->my_node])
        nodes_barrier(ctx, h);
    struct coll_args release;
    coll_args_init(&release, COLL_BARRIER, 0);
    return local_run(ctx, &release);
}

static int hier_bcast(struct coll_ctx *ctx, struct coll_args *args)
{
    const struct coll_hier *h = ctx->cc->hier;
    int root = args->root, rep = rep_of(h, h->my_node, root);
    const struct coll_side *s = ctx->rank == root ? &args->send : &args->recv;
    struct strand_request reqs[TREE_SENDS_MAX];
    int sends = 0;
    if (ctx->rank == rep)
        sends = nodes_tree_down(ctx, h, h->node_of[root], root, s->buf, s->count, s->type, reqs);
    int rc = local_bcast(ctx, rep, s->buf, s->count, s->type);
    wait_all(reqs, sends);
    return rc;
}

static int hier_reduce(struct coll_ctx *ctx, struct coll_args *args)
{
    const struct coll_hier *h = ctx->cc->hier;
    if (!order_kept(h, args))
        return coll_p2p_algorithms.run[args->kind](ctx, args);
    int root = args->root, root_node = h->node_of[root], rep = rep_of(h, h->my_node, root);
    MPI_Datatype t = args->plan.type;
    size_t count = args->count;
    char *base = NULL, *acc = NULL;
    if (ctx->rank == root) {
        acc = args->output;
    } else if (ctx->rank == rep) {
        acc = p2p_typed_alloc(t, count, &base);
        if (acc == NULL)
            return MPI_ERR_NO_MEM;
    }
    int rc = local_reduce(ctx, args, rep, count, acc);
    if (ctx->rank == rep) {
        /* Commutative: the tree is rooted at the root's node; else at node 0
         * (whole nodes in rank order), which then hands the result on. */
        int top = args->plan.op->commutative ? root_node : 0;
        int rc2 = nodes_tree_reduce(ctx, h, &args->plan, count, acc, top, root);
        rc = rc != MPI_SUCCESS ? rc : rc2;
        struct strand_request req;
        if (top != root_node && h->my_node == top) {
            coll_msg_send(ctx->comm, &req, acc, (int)count, t, root);
            coll_msg_wait(&req);
        } else if (top != root_node && ctx->rank == root) {
            coll_msg_recv(ctx->comm, &req, acc, (int)count, t, rep_of(h, top, root));
            coll_msg_wait(&req);
        }
    }
    free(base);
    return rc;
}

static int hier_allreduce(struct coll_ctx *ctx, struct coll_args *args)
{
    const struct coll_hier *h = ctx->cc->hier;
    if (!order_kept(h, args))
        return coll_p2p_algorithms.run[args->kind](ctx, args);
    int leader = h->leader[h->my_node];
    int rc = local_reduce(ctx, args, leader, args->count, args->output);
    if (ctx->rank == leader) {
        int rc2 = nodes_allreduce(ctx, h, &args->plan, args->count, args->output);
        rc = rc != MPI_SUCCESS ? rc : rc2;
    }
    int rc2 = local_bcast(ctx, leader, args->output, (int)args->count, args->plan.type);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* Reduce_scatter(_block): the whole vector is reduced to every leader as
 * in allreduce, then each leader scatters its node's blocks. */
static int hier_reduce_scatter(struct coll_ctx *ctx, struct coll_args *args)
{
    const struct coll_hier *h = ctx->cc->hier;
    if (!order_kept(h, args))
        return coll_p2p_algorithms.run[args->kind](ctx, args);
    int leader = h->leader[h->my_node], members = node_size(h, h->my_node);
    int size = h->node_first[h->nnodes];
    MPI_Datatype t = args->plan.type;
    size_t total = p2p_vector_count(args, size);
    char *base = NULL, *acc = NULL;
    int *counts = NULL;
    if (ctx->rank == leader) {
        acc = p2p_typed_alloc(t, total, &base);
        counts = malloc(2 * (size_t)members * sizeof *counts);
        if (acc == NULL || counts == NULL) {
            free(base);
            free(counts);
            return MPI_ERR_NO_MEM;
        }
    }
    int rc = local_reduce(ctx, args, leader, total, acc);
    struct coll_args scatter;
    coll_args_init(&scatter, COLL_SCATTERV, 0);
    if (ctx->rank == leader) {
        int rc2 = nodes_allreduce(ctx, h, &args->plan, total, acc);
        rc = rc != MPI_SUCCESS ? rc : rc2;
        /* My node's blocks, in the order of its members. */
        int *displs = counts + members;
        for (int c = 0, at = 0; c < size; c++) {
            int block = args->recvcounts != NULL ? args->recvcounts[c] : (int)args->count;
            if (h->node_of[c] == h->my_node) {
                counts[h->local_index[c]] = block;
                displs[h->local_index[c]] = at;
            }
            at += block;
        }
        scatter.send = (struct coll_side){ .layout = LAYOUT_V, .buf = acc, .counts = counts, .displs = displs,
                                           .type = t };
    }
    side_same(&scatter.recv, args->output, (int)args->count, t);
    int rc2 = local_run(ctx, &scatter);
    free(counts);
    free(base);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* Scan and exscan, nodes consecutive in rank order: a local scan, a
 * chain through the last member of every node (each passes the prefix of
 * all nodes up to its own), a local bcast of the prefix of the nodes
 * before, combined in front of each local result. */
static int hier_prefix(struct coll_ctx *ctx, struct coll_args *args)
{
    const struct coll_hier *h = ctx->cc->hier;
    if (!h->contiguous)
        return coll_p2p_algorithms.run[args->kind](ctx, args);
    const struct op_plan *plan = &args->plan;
    MPI_Datatype t = plan->type;
    size_t count = args->count;
    int me = h->my_node, members = node_size(h, me), lr = h->local_index[ctx->rank];
    bool exclusive = args->kind == COLL_EXSCAN, last = lr == members - 1;
    int last_of_node = h->by_node[h->node_first[me + 1] - 1];
    char *carry_base = NULL, *carry = NULL, *prefix_base = NULL, *prefix = NULL;
    if (last)
        carry = p2p_typed_alloc(t, count, &carry_base);
    if (me > 0)
        prefix = p2p_typed_alloc(t, count, &prefix_base);
    if ((last && carry == NULL) || (me > 0 && prefix == NULL)) {
        free(carry_base);
        free(prefix_base);
        return MPI_ERR_NO_MEM;
    }
    if (last && exclusive)
        dt_copy(carry, count, t, args->input, count, t);  /* my input, before an in-place exscan */
    struct coll_args sub;
    coll_args_init(&sub, args->kind, 0);
    sub.count = count;
    sub.input = args->input;
    sub.output = args->output;
    sub.in_place = args->in_place;
    sub.plan = *plan;
    int rc = local_run(ctx, &sub);
    if (last) {
        /* carry = everything of my node: the exclusive prefix and my input, or my inclusive one. */
        if (!exclusive)
            dt_copy(carry, count, t, args->output, count, t);
        else if (lr > 0 && rc == MPI_SUCCESS)
            rc = op_reduce_buffers(plan, args->output, carry, count);
        struct strand_request req;
        if (me > 0) {
            coll_msg_recv(ctx->comm, &req, prefix, (int)count, t, h->by_node[h->node_first[me] - 1]);
            coll_msg_wait(&req);
            if (rc == MPI_SUCCESS)
                rc = op_reduce_buffers(plan, prefix, carry, count);
        }
        if (me + 1 < h->nnodes) {
            coll_msg_send(ctx->comm, &req, carry, (int)count, t, h->by_node[h->node_first[me + 2] - 1]);
            coll_msg_wait(&req);
        }
    }
    if (me > 0) {
        int rc2 = local_bcast(ctx, last_of_node, prefix, (int)count, t);
        rc = rc != MPI_SUCCESS ? rc : rc2;
        if (exclusive && lr == 0)
            dt_copy(args->output, count, t, prefix, count, t);
        else if (rc == MPI_SUCCESS)
            rc = op_reduce_buffers(plan, prefix, args->output, count);
    }
    free(carry_base);
    free(prefix_base);
    return rc;
}

/* Bytes of one member's block in gather, scatter, allgather (every block
 * has the same signature); false when the whole set of blocks would not
 * fit one message, which p2p.c then carries block by block. */
static bool block_bytes(const struct coll_ctx *ctx, const struct coll_side *s, size_t *bytes)
{
    const struct coll_hier *h = ctx->cc->hier;
    *bytes = (size_t)s->count * s->type->size;
    return *bytes * (size_t)h->node_first[h->nnodes] <= INT_MAX &&
           (size_t)s->count * (size_t)h->node_first[h->nnodes] <= INT_MAX;
}

/* Byte offsets of every member's block of `s` packed in node order
 * (by_node positions; [size] = the total); NULL when out of memory. */
static size_t *packed_offsets(const struct coll_hier *h, const struct coll_side *s)
{
    int size = h->node_first[h->nnodes];
    size_t *off = malloc(((size_t)size + 1) * sizeof *off);
    if (off == NULL)
        return NULL;
    off[0] = 0;
    for (int pos = 0; pos < size; pos++) {
        char *buf;
        int count;
        MPI_Datatype type;
        bool some = coll_side_block(s, h->by_node[pos], &buf, &count, &type);
        off[pos + 1] = off[pos] + (some ? (size_t)count * type->size : 0);
    }
    return off;
}

/* Copies every member's block but `skip`'s between `packed` (laid out
 * by `off`) and the per-member layout `s`, one way or the other. */
static void blocks_unpack(const struct coll_hier *h, const struct coll_side *s, const char *packed,
                          const size_t *off, int skip)
{
    for (int pos = 0; pos < h->node_first[h->nnodes]; pos++) {
        char *buf;
        int count;
        MPI_Datatype type;
        int c = h->by_node[pos];
        if (c != skip && coll_side_block(s, c, &buf, &count, &type))
            dt_unpack(buf, (size_t)count, type, packed + off[pos], off[pos + 1] - off[pos]);
    }
}

static void blocks_pack(const struct coll_hier *h, const struct coll_side *s, char *packed, const size_t *off,
                        int skip)
{
    for (int pos = 0; pos < h->node_first[h->nnodes]; pos++) {
        char *buf;
        int count;
        MPI_Datatype type;
        int c = h->by_node[pos];
        if (c != skip && coll_side_block(s, c, &buf, &count, &type))
            dt_pack(packed + off[pos], buf, (size_t)count, type);
    }
}

/* A rooted gather or scatter (v or not), as one node sees it: its
 * representative `rep` and the byte offsets of its members' packed blocks
 * (`local`, members + 1 entries, at the representative only); at the root
 * also every member's (`all`, in node order). */
struct rooted_plan {
    int rep, first, members;
    size_t *all, *local;
    int *counts, *displs;           /* the local blocks as a v layout of bytes */
};

static void rooted_plan_free(struct rooted_plan *p)
{
    free(p->all);
    free(p->local);
    free(p->counts);
}

/* `root_side`: the root's per-member layout; `my_bytes`: the caller's
 * own block. Without the v variants every block has the caller's size;
 * with them the representative learns its members' sizes from a local
 * gather (every member of the node takes part). */
static int rooted_plan_make(const struct coll_ctx *ctx, const struct coll_args *args, const struct coll_side *root_side,
                            size_t my_bytes, struct rooted_plan *p)
{
    const struct coll_hier *h = ctx->cc->hier;
    int me = h->my_node;
    bool vector = args->kind == COLL_GATHERV || args->kind == COLL_SCATTERV, is_rep;
    *p = (struct rooted_plan){ .rep = rep_of(h, me, args->root), .first = h->node_first[me],
                               .members = node_size(h, me) };
    is_rep = ctx->rank == p->rep;
    if (ctx->rank == args->root && (p->all = packed_offsets(h, root_side)) == NULL)
        return MPI_ERR_NO_MEM;
    uint64_t mine = my_bytes, *sizes = NULL;
    if (is_rep) {
        p->local = malloc(((size_t)p->members + 1) * sizeof *p->local);
        p->counts = malloc(2 * (size_t)p->members * sizeof *p->counts);
        sizes = malloc((size_t)p->members * sizeof *sizes);
        if (p->local == NULL || p->counts == NULL || sizes == NULL) {
            free(sizes);
            return MPI_ERR_NO_MEM;
        }
    }
    int rc = MPI_SUCCESS;
    if (vector) {
        struct coll_args sub;
        coll_args_init(&sub, COLL_GATHER, h->local_index[p->rep]);
        side_same(&sub.send, &mine, 1, MPI_UINT64_T);
        if (is_rep) {
            side_same(&sub.recv, sizes, 1, MPI_UINT64_T);
            sub.recv.layout = LAYOUT_INDEXED;
        }
        rc = local_run(ctx, &sub);
    }
    if (is_rep) {
        p->displs = p->counts + p->members;
        p->local[0] = 0;
        for (int i = 0; i < p->members; i++) {
            size_t b = p->all != NULL ? p->all[p->first + i + 1] - p->all[p->first + i] : vector ? sizes[i] : my_bytes;
            p->local[i + 1] = p->local[i] + b;
            p->counts[i] = (int)b;
            p->displs[i] = (int)p->local[i];
        }
    }
    free(sizes);
    return rc;
}

/* Gather(v): each node's members gather to its representative (packed,
 * in node order), which sends the node's blocks in one message to the
 * root; the root unpacks them. */
static int hier_gather(struct coll_ctx *ctx, struct coll_args *args)
{
    const struct coll_hier *h = ctx->cc->hier;
    int root = args->root, me = h->my_node;
    bool is_root = ctx->rank == root;
    struct coll_side mine = args->send;
    if (is_root && args->skip_self) {
        char *buf;
        int count;
        MPI_Datatype type;
        coll_side_block(&args->recv, root, &buf, &count, &type);
        side_same(&mine, buf, count, type);
    }
    size_t bytes;
    if (args->kind == COLL_GATHER && !block_bytes(ctx, is_root ? &args->recv : &args->send, &bytes))
        return coll_p2p_algorithms.run[args->kind](ctx, args);
    struct rooted_plan p;
    int rc = rooted_plan_make(ctx, args, &args->recv, (size_t)mine.count * mine.type->size, &p);
    char *packed = NULL;
    if (rc == MPI_SUCCESS && ctx->rank == p.rep &&
        (packed = malloc((is_root ? p.all[h->node_first[h->nnodes]] : p.local[p.members]) + 1)) == NULL)
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        rooted_plan_free(&p);
        return rc;
    }
    struct coll_args sub;
    coll_args_init(&sub, COLL_GATHERV, h->local_index[p.rep]);
    sub.send = mine;
    if (ctx->rank == p.rep)
        sub.recv = (struct coll_side){ .layout = LAYOUT_V, .buf = is_root ? packed + p.all[p.first] : packed,
                                       .counts = p.counts, .displs = p.displs, .type = MPI_BYTE };
    rc = local_run(ctx, &sub);
    if (ctx->rank == p.rep && !is_root) {
        struct strand_request req;
        coll_msg_send(ctx->comm, &req, packed, (int)p.local[p.members], MPI_BYTE, root);
        coll_msg_wait(&req);
    } else if (is_root) {
        struct strand_request *reqs = p2p_requests_alloc(h->nnodes);
        if (reqs == NULL) {
            free(packed);
            rooted_plan_free(&p);
            return MPI_ERR_NO_MEM;
        }
        int n = 0;
        for (int g = 0; g < h->nnodes; g++) {
            size_t at = p.all[h->node_first[g]], end = p.all[h->node_first[g + 1]];
            if (g != me)
                coll_msg_recv(ctx->comm, &reqs[n++], packed + at, (int)(end - at), MPI_BYTE, h->leader[g]);
        }
        wait_all(reqs, n);
        free(reqs);
        blocks_unpack(h, &args->recv, packed, p.all, args->skip_self ? root : -1);
    }
    free(packed);
    rooted_plan_free(&p);
    return rc;
}

/* Scatter(v): the root packs every block (in node order) and sends each
 * node its blocks in one message; each node's representative scatters
 * them. */
static int hier_scatter(struct coll_ctx *ctx, struct coll_args *args)
{
    const struct coll_hier *h = ctx->cc->hier;
    int root = args->root, me = h->my_node;
    bool is_root = ctx->rank == root;
    size_t bytes;
    if (args->kind == COLL_SCATTER && !block_bytes(ctx, is_root ? &args->send : &args->recv, &bytes))
        return coll_p2p_algorithms.run[args->kind](ctx, args);
    size_t my_bytes = args->recv.layout == LAYOUT_NONE ? 0 : (size_t)args->recv.count * args->recv.type->size;
    struct rooted_plan p;
    int rc = rooted_plan_make(ctx, args, &args->send, my_bytes, &p);
    char *packed = NULL;
    if (rc == MPI_SUCCESS && ctx->rank == p.rep &&
        (packed = malloc((is_root ? p.all[h->node_first[h->nnodes]] : p.local[p.members]) + 1)) == NULL)
        rc = MPI_ERR_NO_MEM;
    struct strand_request *reqs = NULL;
    if (rc == MPI_SUCCESS && is_root && (reqs = p2p_requests_alloc(h->nnodes)) == NULL)
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        free(packed);
        rooted_plan_free(&p);
        return rc;
    }
    int n = 0;
    if (is_root) {
        blocks_pack(h, &args->send, packed, p.all, args->skip_self ? root : -1);
        for (int g = 0; g < h->nnodes; g++) {
            size_t at = p.all[h->node_first[g]], end = p.all[h->node_first[g + 1]];
            if (g != me)
                coll_msg_send(ctx->comm, &reqs[n++], packed + at, (int)(end - at), MPI_BYTE, h->leader[g]);
        }
    } else if (ctx->rank == p.rep) {
        struct strand_request req;
        coll_msg_recv(ctx->comm, &req, packed, (int)p.local[p.members], MPI_BYTE, root);
        coll_msg_wait(&req);
    }
    struct coll_args sub;
    coll_args_init(&sub, COLL_SCATTERV, h->local_index[p.rep]);
    sub.recv = args->recv;
    sub.skip_self = args->skip_self;
    if (ctx->rank == p.rep)
        sub.send = (struct coll_side){ .layout = LAYOUT_V, .buf = is_root ? packed + p.all[p.first] : packed,
                                       .counts = p.counts, .displs = p.displs, .type = MPI_BYTE };
    rc = local_run(ctx, &sub);
    wait_all(reqs, n);
    free(reqs);
    free(packed);
    rooted_plan_free(&p);
    return rc;
}

/* Allgather(v) (every member knows every block's size): gather to each
 * leader (its node's section of the packed blocks), the leaders exchange
 * their sections, and each node gets the whole: allgather bcasts the
 * leader's receive buffer (one run of the type), allgatherv the packed
 * blocks, which every member unpacks. */
static int hier_allgather(struct coll_ctx *ctx, struct coll_args *args)
{
    const struct coll_hier *h = ctx->cc->hier;
    int me = h->my_node, leader = h->leader[me], size = h->node_first[h->nnodes];
    int first = h->node_first[me], members = node_size(h, me);
    bool whole = args->kind == COLL_ALLGATHER;
    size_t *off = packed_offsets(h, &args->recv);
    if (off == NULL)
        return MPI_ERR_NO_MEM;
    if (off[size] > INT_MAX || (whole && (size_t)args->recv.count * (size_t)size > INT_MAX)) {
        free(off);
        return coll_p2p_algorithms.run[args->kind](ctx, args);
    }
    char *packed = NULL;
    int *counts = NULL;
    if (ctx->rank == leader || !whole) {
        packed = malloc(off[size] + 1);
        counts = malloc(2 * (size_t)members * sizeof *counts);
        if (packed == NULL || counts == NULL) {
            free(packed);
            free(counts);
            free(off);
            return MPI_ERR_NO_MEM;
        }
    }
    struct coll_args sub;
    coll_args_init(&sub, COLL_GATHERV, 0);
    sub.send = args->send;
    if (ctx->rank == leader) {
        int *displs = counts + members;
        for (int i = 0; i < members; i++) {
            counts[i] = (int)(off[first + i + 1] - off[first + i]);
            displs[i] = (int)(off[first + i] - off[first]);
        }
        sub.recv = (struct coll_side){ .layout = LAYOUT_V, .buf = packed + off[first], .counts = counts,
                                       .displs = displs, .type = MPI_BYTE };
    }
    int rc = local_run(ctx, &sub);
    if (ctx->rank == leader) {
        struct strand_request *reqs = p2p_requests_alloc(2 * h->nnodes);
        if (reqs == NULL) {
            free(packed);
            free(counts);
            free(off);
            return MPI_ERR_NO_MEM;
        }
        int n = 0;
        for (int k = 1; k < h->nnodes; k++) {
            int g = (me + k) % h->nnodes, gfirst = h->node_first[g], gend = h->node_first[g + 1];
            coll_msg_recv(ctx->comm, &reqs[n++], packed + off[gfirst], (int)(off[gend] - off[gfirst]), MPI_BYTE,
                          h->leader[g]);
            coll_msg_send(ctx->comm, &reqs[n++], packed + off[first], (int)(off[first + members] - off[first]),
                          MPI_BYTE, h->leader[g]);
        }
        wait_all(reqs, n);
        free(reqs);
    }
    int skip = args->skip_self ? ctx->rank : -1, rc2;
    if (whole) {
        if (ctx->rank == leader)
            blocks_unpack(h, &args->recv, packed, off, skip);
        rc2 = local_bcast(ctx, leader, args->recv.buf, args->recv.count * size, args->recv.type);
    } else {
        rc2 = local_bcast(ctx, leader, packed, (int)off[size], MPI_BYTE);
        blocks_unpack(h, &args->recv, packed, off, skip);
    }
    free(packed);
    free(counts);
    free(off);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* ---- alltoall ---- */

/* Positions of the members of other nodes than `me`, nodes in order: the
 * first of node g (g != me). */
static int remote_offset(const struct coll_hier *h, int g)
{
    int me = h->my_node;
    return h->node_first[g] - (g > me ? node_size(h, me) : 0);
}

/* Packs (or unpacks) the caller's blocks of `s` for (from) every member
 * of another node, in remote position order, into (from) `packed`, `b`
 * bytes each. */
static void remote_blocks_move(const struct coll_hier *h, const struct coll_side *s, char *packed, size_t b,
                               bool packing)
{
    for (int pos = 0; pos < h->node_first[h->nnodes]; pos++) {
        int peer = h->by_node[pos];
        if (h->node_of[peer] == h->my_node)
            continue;
        char *buf;
        int count;
        MPI_Datatype type;
        coll_side_block(s, peer, &buf, &count, &type);
        if (packing)
            dt_pack(packed, buf, (size_t)count, type);
        else
            dt_unpack(buf, (size_t)count, type, packed, b);
        packed += b;
    }
}

/* Local copy of the blocks between this node's members (shm engines). */
static int alltoall_local(const struct coll_ctx *ctx, const struct coll_args *args, int *ints)
{
    const struct coll_hier *h = ctx->cc->hier;
    int first = h->node_first[h->my_node], members = node_size(h, h->my_node);
    int *scounts = ints, *sdispls = ints + members, *rcounts = ints + 2 * members, *rdispls = ints + 3 * members;
    for (int l = 0; l < members; l++) {
        int d = h->by_node[first + l];
        scounts[l] = args->send.count;
        sdispls[l] = d * args->send.count;
        rcounts[l] = args->recv.count;
        rdispls[l] = d * args->recv.count;
    }
    struct coll_args sub;
    coll_args_init(&sub, COLL_ALLTOALLV, 0);
    sub.send = (struct coll_side){ .layout = LAYOUT_V, .buf = args->send.buf, .counts = scounts, .displs = sdispls,
                                   .type = args->send.type };
    sub.recv = (struct coll_side){ .layout = LAYOUT_V, .buf = args->recv.buf, .counts = rcounts, .displs = rdispls,
                                   .type = args->recv.type };
    return local_run(ctx, &sub);
}

/* The leader's part: `gathered` holds, for each local member i, its
 * blocks for every remote member (remote position order); one message to
 * each other node's leader with that node's blocks ([i][j of that node]),
 * one from each ([i of that node][j local]); `spread` gets them as
 * [j local][remote position of the source]. */
static int alltoall_leaders(const struct coll_ctx *ctx, size_t b, const char *gathered, char *spread)
{
    const struct coll_hier *h = ctx->cc->hier;
    int me = h->my_node, members = node_size(h, me), remote = h->node_first[h->nnodes] - members;
    size_t whole = (size_t)members * (size_t)remote * b;
    char *out = h->nnodes == 2 ? (char *)gathered : malloc(whole), *in = malloc(whole);
    struct strand_request *reqs = p2p_requests_alloc(2 * h->nnodes);
    if (out == NULL || in == NULL || reqs == NULL) {
        if (out != gathered)
            free(out);
        free(in);
        free(reqs);
        return MPI_ERR_NO_MEM;
    }
    int n = 0;
    for (int g = 0; g < h->nnodes; g++) {
        if (g == me)
            continue;
        size_t at = (size_t)remote_offset(h, g) * (size_t)members * b, gsize = (size_t)node_size(h, g);
        if (out != gathered)
            for (int i = 0; i < members; i++)
                memcpy(out + at + (size_t)i * gsize * b, gathered + ((size_t)i * (size_t)remote + (size_t)remote_offset(h, g)) * b,
                       gsize * b);
        coll_msg_recv(ctx->comm, &reqs[n++], in + at, (int)((size_t)members * gsize * b), MPI_BYTE, h->leader[g]);
        coll_msg_send(ctx->comm, &reqs[n++], out + at, (int)((size_t)members * gsize * b), MPI_BYTE, h->leader[g]);
    }
    wait_all(reqs, n);
    for (int g = 0; g < h->nnodes; g++) {
        if (g == me)
            continue;
        int r0 = remote_offset(h, g), gsize = node_size(h, g);
        const char *from = in + (size_t)r0 * (size_t)members * b;
        for (int i = 0; i < gsize; i++)
            for (int j = 0; j < members; j++)
                memcpy(spread + ((size_t)j * (size_t)remote + (size_t)(r0 + i)) * b,
                       from + ((size_t)i * (size_t)members + (size_t)j) * b, b);
    }
    if (out != gathered)
        free(out);
    free(in);
    free(reqs);
    return MPI_SUCCESS;
}

/* Alltoall with small blocks: the blocks between members of one node
 * move in memory; each member packs its blocks for other nodes, the
 * node's leader gathers them, swaps one message with every other node's
 * leader, and scatters to each member what it receives from other nodes.
 * One message per pair of nodes instead of one per pair of members in
 * them, for a few copies in memory: worth it while blocks are small
 * (doc/performance.md). Every member knows every block's size (the same
 * for all), so all make the same choice; alltoallv/w, whose block sizes
 * only their sender and receiver know, and in-place alltoall go
 * point-to-point. */
static int hier_alltoall(struct coll_ctx *ctx, struct coll_args *args)
{
    const struct coll_hier *h = ctx->cc->hier;
    if (args->in_place)
        return p2p_move(ctx, args);
    size_t b = (size_t)args->send.count * args->send.type->size;
    int size = h->node_first[h->nnodes], me = h->my_node, members = node_size(h, me), remote = size - members;
    int leader = h->leader[me];
    if (b == 0 || b > COLL_HIER_ALLTOALL_MAX_BLOCK ||
        (size_t)size * (size_t)size * b > INT_MAX || (size_t)size * (size_t)args->send.count > INT_MAX ||
        (size_t)size * (size_t)args->recv.count > INT_MAX)
        return p2p_move(ctx, args);
    size_t mine = (size_t)remote * b;
    bool is_leader = ctx->rank == leader;
    int *ints = malloc(4 * (size_t)members * sizeof *ints);
    char *packed = malloc(2 * mine), *gathered = NULL, *spread = NULL;
    if (is_leader) {
        gathered = malloc((size_t)members * mine);
        spread = malloc((size_t)members * mine);
    }
    int rc = ints == NULL || packed == NULL || (is_leader && (gathered == NULL || spread == NULL)) ? MPI_ERR_NO_MEM
                                                                                                   : MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
        /* The other members cannot be told: run nothing rather than half. */
        strand_job_abort(1, "Strand MPI: out of memory in a hierarchical MPI_Alltoall\n");
    }
    rc = alltoall_local(ctx, args, ints);
    remote_blocks_move(h, &args->send, packed, b, true);
    struct coll_args sub;
    coll_args_init(&sub, COLL_GATHER, h->local_index[leader]);
    side_same(&sub.send, packed, (int)mine, MPI_BYTE);
    if (is_leader) {
        side_same(&sub.recv, gathered, (int)mine, MPI_BYTE);
        sub.recv.layout = LAYOUT_INDEXED;
    }
    int rc2 = local_run(ctx, &sub);
    rc = rc != MPI_SUCCESS ? rc : rc2;
    if (is_leader) {
        rc2 = alltoall_leaders(ctx, b, gathered, spread);
        rc = rc != MPI_SUCCESS ? rc : rc2;
    }
    char *in = packed + mine;
    coll_args_init(&sub, COLL_SCATTER, h->local_index[leader]);
    side_same(&sub.recv, in, (int)mine, MPI_BYTE);
    if (is_leader) {
        side_same(&sub.send, spread, (int)mine, MPI_BYTE);
        sub.send.layout = LAYOUT_INDEXED;
    }
    rc2 = local_run(ctx, &sub);
    rc = rc != MPI_SUCCESS ? rc : rc2;
    remote_blocks_move(h, &args->recv, in, b, false);
    free(ints);
    free(packed);
    free(gathered);
    free(spread);
    return rc;
}

const struct coll_algorithms coll_hier_algorithms = {
    .name = "hierarchical (spans node processes)",
    .run = {
        [COLL_BARRIER] = hier_barrier,
        [COLL_BCAST] = hier_bcast,
        [COLL_GATHER] = hier_gather,
        [COLL_GATHERV] = hier_gather,
        [COLL_SCATTER] = hier_scatter,
        [COLL_SCATTERV] = hier_scatter,
        [COLL_ALLGATHER] = hier_allgather,
        [COLL_ALLGATHERV] = hier_allgather,
        [COLL_ALLTOALL] = hier_alltoall,
        [COLL_ALLTOALLV] = p2p_move,
        [COLL_ALLTOALLW] = p2p_move,
        [COLL_REDUCE] = hier_reduce,
        [COLL_ALLREDUCE] = hier_allreduce,
        [COLL_REDUCE_SCATTER] = hier_reduce_scatter,
        [COLL_REDUCE_SCATTER_BLOCK] = hier_reduce_scatter,
        [COLL_SCAN] = hier_prefix,
        [COLL_EXSCAN] = hier_prefix,
    },
};
