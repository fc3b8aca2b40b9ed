/* Collective state attached to every communicator core, and the entry
 * into a collective: which slot is the caller's, which epoch this is. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_impl.h"

static struct coll_core *state_create(int nslots)
{
    size_t bytes = sizeof(struct coll_core) + (size_t)nslots * sizeof(struct coll_slot);
    bytes = (bytes + 63) & ~(size_t)63;
    struct coll_core *cc = aligned_alloc(64, bytes);
    if (cc == NULL)
        return NULL;
    memset(cc, 0, bytes);
    cc->nslots = nslots;
    cc->eager_depth = nslots <= COLL_EAGER_SMALL_COMM ? COLL_EAGER_DEPTH_SMALL_COMM : COLL_EAGER_DEPTH;
    /* Every member in this node process: shared-address-space algorithms
     * (coll_comm_attach switches cores spanning node processes). */
    cc->algo = &coll_shm_algorithms;
    return cc;
}

int coll_comm_attach(struct comm_core *core)
{
    struct coll_core *cc = state_create(core->size);
    if (cc == NULL)
        return MPI_ERR_NO_MEM;
    /* The algorithm table follows locality, chosen once per core. */
    if (comm_members_span_nodes(core->members, core->size))
        cc->algo = &coll_p2p_algorithms;
    cc->nsides = 1;
    cc->side[0] = cc->side[1] = core;
    cc->size[0] = cc->size[1] = core->size;
    atomic_store(&cc->attached, 1);
    core->coll = cc;
    return MPI_SUCCESS;
}

int coll_intercomm_attach(struct comm_core *core0, int size0, struct comm_core *core1, int size1)
{
    struct coll_core *cc = state_create(size0 + size1);
    if (cc == NULL)
        return MPI_ERR_NO_MEM;
    /* Groups spanning node processes: messages between the groups. */
    if (comm_core_spans_nodes(core0))
        cc->algo = &coll_p2p_inter_algorithms;
    cc->nsides = 2;
    cc->side[0] = core0;
    cc->side[1] = core1;
    cc->base[1] = size0;
    cc->size[0] = size0;
    cc->size[1] = size1;
    atomic_store(&cc->attached, 2);
    core0->coll = cc;
    core1->coll = cc;
    return MPI_SUCCESS;
}

void coll_comm_detach(struct comm_core *core)
{
    struct coll_core *cc = core->coll;
    core->coll = NULL;
    if (cc != NULL && atomic_fetch_sub(&cc->attached, 1) == 1) {
        coll_eager_unmap(cc);
        free(cc);
    }
}

struct strand_comm *coll_ctx_open(struct coll_ctx *ctx, MPI_Comm comm)
{
    struct strand_comm *c = comm_lookup(comm);
    if (c == NULL || c->core->coll == NULL)
        return NULL;
    struct coll_core *cc = c->core->coll;
    int group = cc->nsides == 2 && c->core == cc->side[1] ? 1 : 0;
    int peer = cc->nsides == 2 ? 1 - group : group;
    ctx->comm = c;
    ctx->cc = cc;
    ctx->inter = cc->nsides == 2;
    ctx->rank = c->rank;
    ctx->local_base = cc->base[group];
    ctx->local_size = cc->size[group];
    ctx->peer_base = cc->base[peer];
    ctx->peer_size = cc->size[peer];
    ctx->self = ctx->local_base + ctx->rank;
    ctx->me = &cc->slots[ctx->self];
    ctx->epoch = 0;
    return c;
}

int coll_run(struct coll_ctx *ctx, struct coll_args *args)
{
    ctx->epoch = ++ctx->me->epoch;
    int rc = ctx->cc->algo->run[args->kind](ctx, args);
    /* Everything this member reads of the collective has been read. */
    coll_flag_set(&ctx->me->done, ctx->epoch);
    return rc;
}
