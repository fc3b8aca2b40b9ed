/* The point-to-point collective engine (p2p.c), shared by the table for
 * intracommunicators spanning node processes and the one for
 * intercommunicators spanning them (p2p_inter.c). A `struct p2p` names
 * whom a rank talks to: the communicator's peers (the remote group of an
 * intercommunicator) or, through comm_local_view, its own group; every
 * message goes on the collective context with the struct's tag. All calls
 * block the calling rank until its part is done. */
#ifndef STRAND_COLL_P2P_H
#define STRAND_COLL_P2P_H

#include "coll_impl.h"

struct p2p {
    struct strand_comm *comm;       /* a member's handle, or a local view */
    uint32_t context;
    int rank, size;                 /* the caller's rank in its group; number of peers */
    int self;                       /* the caller among the peers, or -1 (intercommunicator) */
    int tag;                        /* COMM_TAG_COLL or COMM_TAG_COLL_LOCAL */
};

struct strand_request *p2p_requests_alloc(int n);
void p2p_wait_all(struct strand_request *reqs, int n);
void p2p_send_to(const struct p2p *p, struct strand_request *req, const void *buf, int count, MPI_Datatype type,
                 int dest);
void p2p_recv_from(const struct p2p *p, struct strand_request *req, void *buf, int count, MPI_Datatype type,
                   int source);
/* A barrier in two halves: every peer has reached fan_in at peer 0 once
 * its fan_in returns; fan_out releases them. */
void p2p_fan_in(const struct p2p *p);
int p2p_fan_out(const struct p2p *p);
/* Storage for `count` elements of `t` (pair types' padding included);
 * free *base. */
char *p2p_typed_alloc(MPI_Datatype t, size_t count, char **base);
/* Data movement collectives (blocks per peer pair), on ctx's peers. */
int p2p_move(struct coll_ctx *ctx, struct coll_args *args);
/* The entries of an algorithm table that p2p_move serves. */
#define P2P_MOVE_ENTRIES                                                                                           \
    [COLL_BCAST] = p2p_move, [COLL_GATHER] = p2p_move, [COLL_GATHERV] = p2p_move, [COLL_SCATTER] = p2p_move,       \
    [COLL_SCATTERV] = p2p_move, [COLL_ALLGATHER] = p2p_move, [COLL_ALLGATHERV] = p2p_move,                         \
    [COLL_ALLTOALL] = p2p_move, [COLL_ALLTOALLV] = p2p_move, [COLL_ALLTOALLW] = p2p_move
/* The same over `p` with the caller in `role`. */
int p2p_move_over(const struct p2p *p, enum coll_role role, struct coll_args *args);
/* Elements of the whole vector one member contributes to a reduction
 * over a group of `size`. */
size_t p2p_vector_count(const struct coll_args *args, int size);
/* `result` at `root` (count elements) = x0 op ... op x(n-1) over p's
 * peers' args->input, in rank order (p->self must be p->rank). */
int p2p_reduce_to(const struct p2p *p, const struct coll_args *args, size_t count, int root, char *result);
int p2p_bcast_from(const struct p2p *p, char *buf, size_t count, MPI_Datatype t, int root);
/* Reduce-scatter's last step: peer 0 holds the reduced vector `acc`, and
 * hands every peer its block (args->recvcounts, or args->count each). */
int p2p_scatter_blocks(const struct p2p *p, const struct coll_args *args, char *acc);

#endif
