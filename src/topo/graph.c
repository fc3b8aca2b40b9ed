/* Graph topologies (MPI-2.2 §7.5.3, §7.5.5): every member knows the whole
 * graph. */
#include <string.h>

#include "topo_internal.h"

static int graph_check(int nnodes, const int *index, const int *edges, int size)
{
    if (nnodes < 0 || nnodes > size)
        return MPI_ERR_ARG;
    if (nnodes > 0 && index == NULL)
        return MPI_ERR_ARG;
    int prev = 0;
    for (int i = 0; i < nnodes; i++) {
        if (index[i] < prev)
            return MPI_ERR_ARG;
        prev = index[i];
    }
    if (prev > 0 && edges == NULL)
        return MPI_ERR_ARG;
    for (int e = 0; e < prev; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

static struct topo *graph_new(int nnodes, const int *index, const int *edges)
{
    int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    struct topo *t = topo_alloc(MPI_GRAPH, (size_t)nnodes + (size_t)nedges);
    if (t == NULL)
        return NULL;
    t->nnodes = nnodes;
    t->nedges = nedges;
    t->index = t->storage;
    t->edges = t->storage + nnodes;
    memcpy(t->index, index, (size_t)nnodes * sizeof *index);
    memcpy(t->edges, edges, (size_t)nedges * sizeof *edges);
    return t;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, int index[], int edges[], int reorder, MPI_Comm *comm_graph)
{
    const char *where = "MPI_Graph_create";
    int rc;
    struct strand_comm *c = topo_comm_checked(comm_old, where, 0, &rc);
    if (c == NULL)
        return rc;
    if (comm_graph == NULL)
        return error_report(comm_old, MPI_ERR_ARG, where, "comm_graph must not be NULL");
    *comm_graph = MPI_COMM_NULL;
    int error = c->core->is_inter ? MPI_ERR_COMM : graph_check(nnodes, index, edges, c->core->size);
    struct topo *t = error == MPI_SUCCESS ? graph_new(nnodes, index, edges) : NULL;
    int color = c->rank < nnodes ? 0 : MPI_UNDEFINED;
    return topo_comm_create(comm_old, where, c, color, c->rank, error, t, comm_graph);
}
STRAND_MPI_ALIAS(MPI_Graph_create);

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Graphdims_get", MPI_GRAPH, &rc);
    if (c == NULL)
        return rc;
    if (nnodes == NULL || nedges == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Graphdims_get", "nnodes and nedges must not be NULL");
    *nnodes = c->topo->nnodes;
    *nedges = c->topo->nedges;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Graphdims_get);

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Graph_get", MPI_GRAPH, &rc);
    if (c == NULL)
        return rc;
    const struct topo *t = c->topo;
    if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && index == NULL) || (maxedges > 0 && edges == NULL))
        return error_report(comm, MPI_ERR_ARG, "MPI_Graph_get", "invalid maxindex/maxedges or NULL arrays");
    memcpy(index, t->index, (size_t)(maxindex < t->nnodes ? maxindex : t->nnodes) * sizeof *index);
    memcpy(edges, t->edges, (size_t)(maxedges < t->nedges ? maxedges : t->nedges) * sizeof *edges);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Graph_get);

static struct strand_comm *graph_node_checked(MPI_Comm comm, const char *where, int rank, int *rc)
{
    struct strand_comm *c = topo_comm_checked(comm, where, MPI_GRAPH, rc);
    if (c != NULL && (rank < 0 || rank >= c->topo->nnodes)) {
        *rc = error_report(comm, MPI_ERR_RANK, where, "rank %d is not a node of the graph", rank);
        return NULL;
    }
    return c;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    int rc;
    struct strand_comm *c = graph_node_checked(comm, "MPI_Graph_neighbors_count", rank, &rc);
    if (c == NULL)
        return rc;
    if (nneighbors == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Graph_neighbors_count", "nneighbors must not be NULL");
    const int *index = c->topo->index;
    *nneighbors = index[rank] - (rank > 0 ? index[rank - 1] : 0);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Graph_neighbors_count);

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    int rc;
    struct strand_comm *c = graph_node_checked(comm, "MPI_Graph_neighbors", rank, &rc);
    if (c == NULL)
        return rc;
    const int *index = c->topo->index;
    int first = rank > 0 ? index[rank - 1] : 0, n = index[rank] - first;
    if (maxneighbors < 0 || (n > 0 && maxneighbors > 0 && neighbors == NULL))
        return error_report(comm, MPI_ERR_ARG, "MPI_Graph_neighbors", "invalid maxneighbors or NULL array");
    memcpy(neighbors, c->topo->edges + first, (size_t)(n < maxneighbors ? n : maxneighbors) * sizeof(int));
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Graph_neighbors);

int PMPI_Graph_map(MPI_Comm comm, int nnodes, int index[], int edges[], int *newrank)
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Graph_map", 0, &rc);
    if (c == NULL)
        return rc;
    if (newrank == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Graph_map", "newrank must not be NULL");
    rc = graph_check(nnodes, index, edges, c->core->local_size);
    if (rc != MPI_SUCCESS)
        return error_report(comm, rc, "MPI_Graph_map", "invalid graph for %d processes", c->core->local_size);
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Graph_map);
