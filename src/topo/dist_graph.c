/* Distributed graph topologies (MPI-2.2 §7.5.4): each member holds only its
 * own in- and out-neighbours. MPI_Dist_graph_create takes edges given by
 * any member: the builder of the new communicator sorts every member's
 * edges into per-rank adjacency in one pass over all of them. */
#include <stdlib.h>
#include <string.h>

#include "../pt2pt/pt2pt.h"
#include "topo_internal.h"

static struct topo *dist_graph_new(int indegree, int outdegree, bool weighted)
{
    struct topo *t = topo_alloc(MPI_DIST_GRAPH, 2 * ((size_t)indegree + (size_t)outdegree));
    if (t == NULL)
        return NULL;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->weighted = weighted;
    t->sources = t->storage;
    t->sourceweights = t->sources + indegree;
    t->destinations = t->sourceweights + indegree;
    t->destweights = t->destinations + outdegree;
    return t;
}

static bool ranks_valid(int n, const int *ranks, int size)
{
    for (int i = 0; i < n; i++)
        if (ranks[i] < 0 || ranks[i] >= size)
            return false;
    return true;
}

static void copy_or_one(int *dst, const int *src, int n, bool weighted)
{
    for (int i = 0; i < n; i++)
        dst[i] = weighted ? src[i] : 1;
}

static struct strand_comm *dist_parent_checked(MPI_Comm comm, const char *where, MPI_Comm *newcomm, int *rc)
{
    struct strand_comm *c = topo_comm_checked(comm, where, 0, rc);
    if (c == NULL)
        return NULL;
    if (newcomm == NULL) {
        *rc = error_report(comm, MPI_ERR_ARG, where, "the new communicator argument must not be NULL");
        return NULL;
    }
    *newcomm = MPI_COMM_NULL;
    return c;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, int sources[], int sourceweights[],
                                    int outdegree, int destinations[], int destweights[], MPI_Info info,
                                    int reorder, MPI_Comm *comm_dist_graph)
{
    const char *where = "MPI_Dist_graph_create_adjacent";
    int rc;
    struct strand_comm *c = dist_parent_checked(comm_old, where, comm_dist_graph, &rc);
    if (c == NULL)
        return rc;
    int size = c->core->size, error = MPI_SUCCESS;
    bool weighted = sourceweights != MPI_UNWEIGHTED;
    if (c->core->is_inter)
        error = MPI_ERR_COMM;
    else if (indegree < 0 || outdegree < 0)
        error = MPI_ERR_ARG;
    else if ((indegree > 0 && sources == NULL) || (outdegree > 0 && destinations == NULL) ||
             (weighted && ((indegree > 0 && sourceweights == NULL) || (outdegree > 0 && destweights == NULL))))
        error = MPI_ERR_ARG;
    else if (!ranks_valid(indegree, sources, size) || !ranks_valid(outdegree, destinations, size))
        error = MPI_ERR_RANK;
    struct topo *t = NULL;
    if (error == MPI_SUCCESS && (t = dist_graph_new(indegree, outdegree, weighted)) != NULL) {
        memcpy(t->sources, sources, (size_t)indegree * sizeof(int));
        copy_or_one(t->sourceweights, sourceweights, indegree, weighted);
        memcpy(t->destinations, destinations, (size_t)outdegree * sizeof(int));
        copy_or_one(t->destweights, destweights, outdegree, weighted);
    }
    return topo_comm_create(comm_old, where, c, 0, c->rank, error, t, comm_dist_graph);
}
STRAND_MPI_ALIAS(MPI_Dist_graph_create_adjacent);

/* One member's part of MPI_Dist_graph_create. */
struct dist_edges {
    int n;
    const int *sources, *degrees, *destinations, *weights;
    bool weighted;
};

/* Runs the statements after `w` for every edge (src -> dst, weight w) of `in`. */
#define FOR_EACH_EDGE(in, src, dst, w, ...)                                                                \
    for (int s_ = 0, k_ = 0; s_ < (in)->n; s_++)                                                           \
        for (int d_ = 0; d_ < (in)->degrees[s_]; d_++, k_++) {                                             \
            int src = (in)->sources[s_], dst = (in)->destinations[k_];                                     \
            int w = (in)->weighted ? (in)->weights[k_] : 1;                                                \
            __VA_ARGS__;                                                                                   \
        }

static int dist_graph_exchange(int n, void *const *inputs, void **outputs)
{
    int *in_count = calloc((size_t)n, sizeof *in_count);
    int *out_count = calloc((size_t)n, sizeof *out_count);
    int rc = in_count != NULL && out_count != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        FOR_EACH_EDGE((const struct dist_edges *)inputs[i], src, dst, w, {
            (void)w;
            out_count[src]++;
            in_count[dst]++;
        })
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++) {
        const struct dist_edges *own = inputs[r];
        outputs[r] = dist_graph_new(in_count[r], out_count[r], own->weighted);
        if (outputs[r] == NULL)
            rc = MPI_ERR_NO_MEM;
        in_count[r] = out_count[r] = 0;     /* now fill cursors */
    }
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        FOR_EACH_EDGE((const struct dist_edges *)inputs[i], src, dst, w, {
            struct topo *from = outputs[src], *to = outputs[dst];
            from->destinations[out_count[src]] = dst;
            from->destweights[out_count[src]++] = w;
            to->sources[in_count[dst]] = src;
            to->sourceweights[in_count[dst]++] = w;
        })
    if (rc != MPI_SUCCESS)
        for (int r = 0; r < n; r++)
            if (outputs[r] != NULL) {
                topo_release(outputs[r]);
                outputs[r] = NULL;
            }
    free(in_count);
    free(out_count);
    return rc;
}

static int dist_edges_check(const struct dist_edges *e, int size)
{
    if (e->n < 0 || (e->n > 0 && (e->sources == NULL || e->degrees == NULL)))
        return MPI_ERR_ARG;
    int total = 0;
    for (int s = 0; s < e->n; s++) {
        if (e->degrees[s] < 0)
            return MPI_ERR_ARG;
        total += e->degrees[s];
    }
    if (total > 0 && (e->destinations == NULL || (e->weighted && e->weights == NULL)))
        return MPI_ERR_ARG;
    if (!ranks_valid(e->n, e->sources, size) || !ranks_valid(total, e->destinations, size))
        return MPI_ERR_RANK;
    return MPI_SUCCESS;
}

/* --- across node processes: member 0 gathers every member's edges as
 * (source, destination, weight) columns, computes everyone's adjacency
 * with dist_graph_exchange (the same order as the local meeting), and
 * sends each member its own; the new communicator is a dup of the parent. */

enum { EDGES_ERROR, EDGES_COUNT, EDGES_WEIGHTED, EDGES_HEAD };
enum { ADJ_RC, ADJ_IN, ADJ_OUT, ADJ_WEIGHTED, ADJ_HEAD };

static int edge_total(const struct dist_edges *e)
{
    int total = 0;
    for (int s = 0; s < e->n; s++)
        total += e->degrees[s];
    return total;
}

/* One member's edges as three columns of `total` ints. */
static void edges_flatten(const struct dist_edges *e, int total, int *cols)
{
    int k = 0;
    FOR_EACH_EDGE(e, src, dst, w, {
        cols[k] = src;
        cols[total + k] = dst;
        cols[2 * total + k] = w;
        k++;
    })
}

static void message(struct strand_comm *c, bool sending, void *buf, int count, int peer)
{
    struct strand_request r;
    if (sending)
        pt2pt_isend_internal(&r, c, c->core->context_id + 1, buf, count, MPI_INT, peer, COMM_TAG_TOPO);
    else
        pt2pt_irecv_internal(&r, c, c->core->context_id + 1, buf, count, MPI_INT, peer, COMM_TAG_TOPO);
    pt2pt_wait_internal(&r);
}

/* Member 0: every member's adjacency (outputs[i]) from their edges. */
static int adjacency_compute(struct strand_comm *c, const int *head0, int *cols0, struct topo **outputs)
{
    int n = c->core->size, rc = MPI_SUCCESS;
    struct dist_edges *edges = calloc((size_t)n, sizeof *edges);
    int **cols = calloc((size_t)n, sizeof *cols), *ones = NULL, max_total = 0;
    if (edges == NULL || cols == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in MPI_Dist_graph_create\n");
    for (int i = 0; i < n; i++) {
        int head[EDGES_HEAD];
        if (i == 0)
            memcpy(head, head0, sizeof head);
        else
            message(c, false, head, EDGES_HEAD, i);
        cols[i] = i == 0 ? cols0 : malloc(3 * (size_t)head[EDGES_COUNT] * sizeof(int) + 1);
        if (cols[i] == NULL)
            strand_job_abort(1, "Strand MPI: out of memory in MPI_Dist_graph_create\n");
        if (i > 0 && head[EDGES_COUNT] > 0)
            message(c, false, cols[i], 3 * head[EDGES_COUNT], i);
        if (rc == MPI_SUCCESS)
            rc = head[EDGES_ERROR];
        int total = head[EDGES_COUNT];
        edges[i] = (struct dist_edges){ total, cols[i], NULL, cols[i] + total, cols[i] + 2 * total, true };
        if (total > max_total)
            max_total = total;
        /* Unweighted members' own adjacency is unweighted. */
        edges[i].weighted = head[EDGES_WEIGHTED];
    }
    ones = malloc(((size_t)max_total + 1) * sizeof *ones);
    if (ones == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in MPI_Dist_graph_create\n");
    for (int k = 0; k < max_total; k++)
        ones[k] = 1;
    void **inputs = malloc((size_t)n * sizeof *inputs);
    if (inputs == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in MPI_Dist_graph_create\n");
    for (int i = 0; i < n; i++) {
        edges[i].degrees = ones;
        inputs[i] = &edges[i];
    }
    if (rc == MPI_SUCCESS)
        rc = dist_graph_exchange(n, inputs, (void **)outputs);
    for (int i = 1; i < n; i++)
        free(cols[i]);
    free(inputs);
    free(ones);
    free(cols);
    free(edges);
    return rc;
}

static int dist_graph_spanning(struct strand_comm *c, const struct dist_edges *mine, int error, struct topo **out)
{
    int total = error == MPI_SUCCESS ? edge_total(mine) : 0;
    int head[EDGES_HEAD] = { error, total, mine->weighted }, adj[ADJ_HEAD];
    int *cols = malloc(3 * (size_t)total * sizeof *cols + 1);
    if (cols == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in MPI_Dist_graph_create\n");
    if (error == MPI_SUCCESS)       /* else the edges may be anything: none are sent */
        edges_flatten(mine, total, cols);
    /* The edges carry their weights; a member's adjacency is weighted as
     * that member's call is. */
    *out = NULL;
    if (c->rank != 0) {
        message(c, true, head, EDGES_HEAD, 0);
        if (total > 0)
            message(c, true, cols, 3 * total, 0);
        free(cols);
        message(c, false, adj, ADJ_HEAD, 0);
        if (adj[ADJ_RC] != MPI_SUCCESS)
            return adj[ADJ_RC];
        *out = dist_graph_new(adj[ADJ_IN], adj[ADJ_OUT], adj[ADJ_WEIGHTED]);
        if (*out == NULL)
            strand_job_abort(1, "Strand MPI: out of memory in MPI_Dist_graph_create\n");
        message(c, false, (*out)->storage, 2 * (adj[ADJ_IN] + adj[ADJ_OUT]), 0);
        return MPI_SUCCESS;
    }
    int n = c->core->size;
    struct topo **outputs = calloc((size_t)n, sizeof *outputs);
    if (outputs == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in MPI_Dist_graph_create\n");
    int rc = adjacency_compute(c, head, cols, outputs);
    free(cols);
    for (int i = 1; i < n; i++) {
        struct topo *t = outputs[i];
        adj[ADJ_RC] = rc;
        adj[ADJ_IN] = rc == MPI_SUCCESS ? t->indegree : 0;
        adj[ADJ_OUT] = rc == MPI_SUCCESS ? t->outdegree : 0;
        adj[ADJ_WEIGHTED] = rc == MPI_SUCCESS && t->weighted;
        message(c, true, adj, ADJ_HEAD, i);
        if (rc == MPI_SUCCESS) {
            message(c, true, t->storage, 2 * (t->indegree + t->outdegree), i);
            topo_release(t);
        }
    }
    *out = outputs[0];
    free(outputs);
    return rc;
}

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, int sources[], int degrees[], int destinations[],
                           int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    const char *where = "MPI_Dist_graph_create";
    int rc;
    struct strand_comm *c = dist_parent_checked(comm_old, where, comm_dist_graph, &rc);
    if (c == NULL)
        return rc;
    struct dist_edges edges = { n, sources, degrees, destinations, weights, weights != MPI_UNWEIGHTED };
    struct build_request req = { .expect_size = -1, .input = &edges };
    req.error = c->core->is_inter ? MPI_ERR_COMM : dist_edges_check(&edges, c->core->size);
    struct build_result res;
    if (!c->core->is_inter && comm_core_spans_nodes(c->core)) {
        struct topo *t;
        rc = dist_graph_spanning(c, &edges, req.error, &t);
        req.input = NULL;
        if (rc == MPI_SUCCESS && (rc = comm_build(c, BUILD_DUP, &req, NULL, &res)) != MPI_SUCCESS)
            topo_release(t);
        res.output = t;
    } else {
        rc = comm_build(c, BUILD_DUP, &req, dist_graph_exchange, &res);
    }
    if (rc != MPI_SUCCESS)
        return error_report(comm_old, rc, where, "%s",
                            rc == MPI_ERR_UNSUPPORTED_OPERATION ? COMM_SPANS_NODES_TEXT
                                                                : "invalid edges on this or another member, or out of memory");
    struct strand_comm *g = comm_handle_for(res.core, res.rank, c);
    if (g == NULL) {
        topo_release(res.output);
        return error_report(comm_old, MPI_ERR_NO_MEM, where, "out of memory");
    }
    g->topo = res.output;
    *comm_dist_graph = g;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Dist_graph_create);

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Dist_graph_neighbors_count", MPI_DIST_GRAPH, &rc);
    if (c == NULL)
        return rc;
    if (indegree == NULL || outdegree == NULL || weighted == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Dist_graph_neighbors_count", "arguments must not be NULL");
    *indegree = c->topo->indegree;
    *outdegree = c->topo->outdegree;
    *weighted = c->topo->weighted;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Dist_graph_neighbors_count);

static void copy_some(int *dst, const int *src, int max, int n)
{
    if (dst != NULL && dst != MPI_UNWEIGHTED)
        for (int i = 0; i < n && i < max; i++)
            dst[i] = src[i];
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Dist_graph_neighbors", MPI_DIST_GRAPH, &rc);
    if (c == NULL)
        return rc;
    const struct topo *t = c->topo;
    if (maxindegree < t->indegree || maxoutdegree < t->outdegree)
        return error_report(comm, MPI_ERR_ARG, "MPI_Dist_graph_neighbors",
                            "room for %d sources and %d destinations is needed", t->indegree, t->outdegree);
    copy_some(sources, t->sources, maxindegree, t->indegree);
    copy_some(destinations, t->destinations, maxoutdegree, t->outdegree);
    if (t->weighted) {
        copy_some(sourceweights, t->sourceweights, maxindegree, t->indegree);
        copy_some(destweights, t->destweights, maxoutdegree, t->outdegree);
    }
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Dist_graph_neighbors);
