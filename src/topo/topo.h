/* Process topologies (MPI-2.2 §7): Cartesian, graph and distributed graph.
 * A topology is immutable once built and hangs off a rank's communicator
 * handle (`strand_comm.topo`); MPI_Comm_dup shares it by reference. Cart
 * and graph topologies describe the whole communicator (every member holds
 * an equal copy); a distributed graph holds only the caller's neighbours. */
#ifndef STRAND_TOPO_H
#define STRAND_TOPO_H

#include <stdbool.h>
#include "mpi.h"

struct topo {
    int kind;                       /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    int refs;                       /* handles of one rank only: no atomics */
    /* MPI_CART */
    int ndims;
    int *dims;
    int *periods;
    /* MPI_GRAPH */
    int nnodes;
    int nedges;
    int *index;
    int *edges;
    /* MPI_DIST_GRAPH */
    int indegree, outdegree;
    bool weighted;
    int *sources, *sourceweights;
    int *destinations, *destweights;
    int storage[];                  /* every array above points in here */
};

/* A topology with room for `nints` ints of arrays. */
struct topo *topo_alloc(int kind, size_t nints);
void topo_retain(struct topo *t);
void topo_release(struct topo *t);

#endif
