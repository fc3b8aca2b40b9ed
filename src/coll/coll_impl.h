/* Internals of src/coll: how a collective call is described, the
 * algorithm table each communicator core selects, and the engines.
 *
 * Every collective is reduced to one `struct coll_args` per rank, published
 * to its peers through its slot. Data movement collectives describe, for
 * each peer, the block a rank sends to it and the block it receives from it
 * (`struct coll_side`); the exchange engine copies sender block -> receiver
 * block directly between user buffers. Reductions describe input and output
 * buffers and an op plan; the reduction engine splits the result among
 * ranks, each combining its part from all inputs in place. */
#ifndef STRAND_COLL_IMPL_H
#define STRAND_COLL_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "../comm/comm.h"
#include "../op/op.h"
#include "coll_state.h"

enum coll_kind {
    COLL_BARRIER, COLL_BCAST, COLL_GATHER, COLL_GATHERV, COLL_SCATTER, COLL_SCATTERV,
    COLL_ALLGATHER, COLL_ALLGATHERV, COLL_ALLTOALL, COLL_ALLTOALLV, COLL_ALLTOALLW,
    COLL_REDUCE, COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_REDUCE_SCATTER_BLOCK,
    COLL_SCAN, COLL_EXSCAN, COLL_KINDS
};

/* How a rank's buffer is divided among its peers (peer = rank in the
 * peer group: the communicator for an intracommunicator, the remote group
 * for an intercommunicator). */
enum coll_layout {
    LAYOUT_NONE,        /* nothing for any peer */
    LAYOUT_SAME,        /* buf, count, type for every peer */
    LAYOUT_INDEXED,     /* peer p: buf + p * count * extent */
    LAYOUT_V,           /* peer p: buf + displs[p] * extent, counts[p] */
    LAYOUT_W,           /* peer p: buf + displs[p] bytes, counts[p], types[p] */
};

struct coll_side {
    enum coll_layout layout;
    char *buf;
    int count;
    MPI_Datatype type;
    const int *counts, *displs;
    const MPI_Datatype *types;
};

struct coll_args {
    enum coll_kind kind;
    int root;                       /* as the caller gave it */
    /* data movement */
    struct coll_side send, recv;
    bool skip_self;                 /* in place: a rank's own block is already there */
    /* reductions */
    const char *input;              /* sendbuf, or recvbuf when in place */
    char *output;
    size_t count;                   /* elements of the whole vector */
    const int *recvcounts;          /* reduce_scatter: block sizes */
    bool in_place;
    struct op_plan plan;
};

/* Starts the description of a call: what any engine may read whatever
 * the kind (both sides empty, no reduction operands); the entry point then
 * fills what its kind needs. A side's other fields are meaningful only
 * for its layout and `plan` only for reductions, so they are left alone:
 * gcc clears a struct of this size with `rep stos`, which was three
 * quarters of an oversubscribed bcast member's time in MPI_Bcast. */
static inline void coll_args_init(struct coll_args *a, enum coll_kind kind, int root)
{
    a->kind = kind;
    a->root = root;
    a->send.layout = LAYOUT_NONE;
    a->recv.layout = LAYOUT_NONE;
    a->skip_self = false;
    a->input = NULL;
    a->output = NULL;
    a->count = 0;
    a->recvcounts = NULL;
    a->in_place = false;
}

/* The calling rank's view of a collective on one communicator. */
struct coll_ctx {
    struct strand_comm *comm;
    struct coll_core *cc;
    struct coll_slot *me;
    bool inter;
    int rank;                       /* in my group */
    int self;                       /* my slot */
    int local_base, local_size;     /* my group's slots */
    int peer_base, peer_size;       /* the peer group's slots (= local for intracomms) */
    unsigned epoch;
};

typedef int (*coll_algorithm)(struct coll_ctx *ctx, struct coll_args *args);

/* One table per kind of communicator core (all members local today; a
 * hierarchical table for cores spanning node processes can be added). */
struct coll_algorithms {
    const char *name;
    coll_algorithm run[COLL_KINDS];
};

extern const struct coll_algorithms coll_shm_algorithms;
/* For cores with members in other node processes (p2p.c). */
extern const struct coll_algorithms coll_p2p_algorithms;
/* For intercommunicators with members in other node processes (p2p_inter.c). */
extern const struct coll_algorithms coll_p2p_inter_algorithms;

/* Looks up the handle and fills ctx (no synchronisation); NULL if invalid. */
struct strand_comm *coll_ctx_open(struct coll_ctx *ctx, MPI_Comm comm);
/* Starts the collective: takes an epoch and runs the core's algorithm. */
int coll_run(struct coll_ctx *ctx, struct coll_args *args);

/* Waiting (sync.c). */
/* Until an epoch flag reaches `epoch` (or went past it). */
void coll_flag_wait_epoch(struct coll_flag *f, unsigned epoch);
/* Until a pending count is zero. */
void coll_flag_wait_zero(struct coll_flag *f);
void coll_flag_set(struct coll_flag *f, unsigned value);
/* The same for a word whose sleepers are counted elsewhere (in a line the
 * setter keeps in its cache; a wake may then reach sleepers of other
 * words, which recheck). When ranks outnumber cores, every wait yields
 * the core a few times before it sleeps. */
void coll_staged_wait_epoch(atomic_uint *value, atomic_uint *sleepers, unsigned epoch);
void coll_word_set(atomic_uint *value, atomic_uint *sleepers, unsigned v);
/* Decrements a pending count; wakes its waiter when it reaches zero. */
void coll_flag_count_down(struct coll_flag *f);
/* All members of the core meet here. */
void coll_gate_pass(struct coll_ctx *ctx);
/* The same in steps, for work done by the last arriver while the others
 * wait: enter counts this member in and returns true for the last one,
 * which must then open the gate; every other member waits for it. */
bool coll_gate_enter(struct coll_ctx *ctx);
void coll_gate_open(struct coll_ctx *ctx);
void coll_gate_wait(struct coll_ctx *ctx);

static inline const struct coll_args *coll_peer_args(const struct coll_ctx *ctx, int slot)
{
    return ctx->cc->slots[slot].args;
}

/* Eager staging (eager.c): the ring entries of the current epoch. A
 * writer claims its own entry for a block of `bytes` (waiting until no
 * member can still read the entry's previous use), fills it and publishes
 * it; a reader opens the writer's entry (waiting until it is published)
 * and copies out before its collective completes. `bytes` <= COLL_EAGER_BYTES. */
char *coll_eager_claim(struct coll_ctx *ctx, size_t bytes);
void coll_eager_publish(struct coll_ctx *ctx);
const char *coll_eager_open(struct coll_ctx *ctx, int slot, size_t bytes);
/* Releases the staging memory with the core's state. */
void coll_eager_unmap(struct coll_core *cc);
/* The data of `slot`'s entry of this epoch, already opened. */
const char *coll_eager_peek(const struct coll_ctx *ctx, int slot, size_t bytes);

/* Small intracommunicators meet without the gate: every member publishes
 * a word and reads every other member's (n^2 reads, no counter line that
 * all fight over, no second hop through a last arriver). Above these
 * sizes the quadratic reads cost more than the gate's sleeps (measured on
 * 2 cores: barrier 62 vs 74 us at 16 ranks, 376 vs 304 at 64; allreduce
 * 8 B with a core per rank 0.14 vs 0.61 us at 2 ranks). */
enum { COLL_ALLREDUCE_READ_ALL_MAX = 64, COLL_MEET_MAX = 32 };
/* Whether this core's members meet that way. */
bool coll_meet_fits(const struct coll_ctx *ctx);
/* Everyone has published what it published before (its ring entry of the epoch). */
void coll_meet_published(struct coll_ctx *ctx);
/* Everyone has finished reading what it reads in this epoch (its done epoch). */
void coll_meet_done(struct coll_ctx *ctx);

/* Blocks of a side (exchange.c). */
/* The block `s` holds for peer `peer`; false when empty. */
bool coll_side_block(const struct coll_side *s, int peer, char **buf, int *count, MPI_Datatype *type);
/* Copies the block `from` sends to the receiver (its rank `to_rank` in the
 * sender's peer group) into the receiver's block for the sender. `blocks`:
 * how many such blocks the whole collective writes. When they add up to
 * more than a last-level cache slice holds, the destinations are evicted
 * before anyone reads them, and large blocks are stored past the cache
 * (half the memory traffic: no read of the old line). Measured on 2 cores,
 * bcast of 1 MiB: 64 ranks 1470 -> 1160 us, while at 16 ranks (16 MiB in
 * all) streaming was 15 % slower. The size of the slice is a constant: in
 * VMs the cache sizes hwloc reports are the whole socket's. */
enum { COLL_STREAM_MIN_BLOCK = 256 << 10, COLL_STREAM_MIN_TOTAL = 32 << 20 };
void coll_pair_copy(const struct coll_args *from, int to_rank, const struct coll_args *to, int from_rank,
                    size_t blocks);

/* Engines (rooted.c, exchange.c, reduce.c). */
int coll_rooted_engine(struct coll_ctx *ctx, struct coll_args *args);
int coll_exchange_all(struct coll_ctx *ctx, struct coll_args *args);
int coll_alltoall_in_place(struct coll_ctx *ctx, struct coll_args *args);
int coll_reduce_engine(struct coll_ctx *ctx, struct coll_args *args);
int coll_prefix_engine(struct coll_ctx *ctx, struct coll_args *args);

/* Root roles for rooted collectives. */
enum coll_role { ROLE_ROOT, ROLE_MEMBER, ROLE_IDLE };
static inline enum coll_role coll_role_of(const struct coll_ctx *ctx, int root)
{
    if (ctx->inter)
        return root == MPI_ROOT ? ROLE_ROOT : root == MPI_PROC_NULL ? ROLE_IDLE : ROLE_MEMBER;
    return root == ctx->rank ? ROLE_ROOT : ROLE_MEMBER;
}
/* The root's slot, for a member. */
static inline int coll_root_slot(const struct coll_ctx *ctx, int root)
{
    return ctx->peer_base + root;
}

#endif
