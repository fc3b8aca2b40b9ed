/* The all-to-all data movement engine (allgather, alltoall): publish,
 * gate, each rank pulls its blocks straight from every peer's buffer into
 * its own, gate. Also the block helpers the rooted engine shares. */
#include <stdlib.h>

#include "../datatype/datatype.h"
#include "coll_impl.h"

bool coll_side_block(const struct coll_side *s, int peer, char **buf, int *count, MPI_Datatype *type)
{
    switch (s->layout) {
    case LAYOUT_NONE:
        return false;
    case LAYOUT_SAME:
        *buf = s->buf;
        *count = s->count;
        *type = s->type;
        break;
    case LAYOUT_INDEXED:
        *buf = s->buf + (MPI_Aint)peer * s->count * dt_extent(s->type);
        *count = s->count;
        *type = s->type;
        break;
    case LAYOUT_V:
        *buf = s->buf + (MPI_Aint)s->displs[peer] * dt_extent(s->type);
        *count = s->counts[peer];
        *type = s->type;
        break;
    case LAYOUT_W:
        *buf = s->buf + s->displs[peer];
        *count = s->counts[peer];
        *type = s->types[peer];
        break;
    }
    return *count > 0;
}

void coll_pair_copy(const struct coll_args *from, int to_rank, const struct coll_args *to, int from_rank)
{
    char *src, *dst;
    int scount, dcount;
    MPI_Datatype stype, dtype;
    if (!coll_side_block(&from->send, to_rank, &src, &scount, &stype))
        return;
    if (!coll_side_block(&to->recv, from_rank, &dst, &dcount, &dtype))
        return;
    dt_copy(dst, (size_t)dcount, dtype, src, (size_t)scount, stype);
}

/* Before: every member's arguments are published. After: nobody reads
 * another's buffers any more. */
static void meet_published(struct coll_ctx *ctx)
{
    if (coll_meet_fits(ctx))
        coll_meet_published(ctx);
    else
        coll_gate_pass(ctx);
}

static void meet_done(struct coll_ctx *ctx)
{
    if (coll_meet_fits(ctx))
        coll_meet_done(ctx);
    else
        coll_gate_pass(ctx);
}

int coll_exchange_all(struct coll_ctx *ctx, struct coll_args *args)
{
    ctx->me->args = args;
    meet_published(ctx);
    /* Start after our own rank so that peers do not all read rank 0 first. */
    for (int i = 0; i < ctx->peer_size; i++) {
        int peer = (ctx->rank + i) % ctx->peer_size;
        bool is_self = !ctx->inter && peer == ctx->rank;
        if (is_self && args->skip_self)
            continue;
        coll_pair_copy(coll_peer_args(ctx, ctx->peer_base + peer), ctx->rank, args, peer);
    }
    meet_done(ctx);
    return MPI_SUCCESS;
}

/* In-place alltoall (intracommunicators): block j of rank i's buffer goes
 * to rank j's block i and vice versa, so the lower rank of each pair swaps
 * the two blocks through a temporary. */
static int swap_blocks(const struct coll_args *a, int a_rank, const struct coll_args *b, int b_rank,
                       char **tmp, size_t *tmp_bytes)
{
    char *pa, *pb;
    int ca, cb;
    MPI_Datatype ta, tb;
    bool has_a = coll_side_block(&a->recv, b_rank, &pa, &ca, &ta);
    bool has_b = coll_side_block(&b->recv, a_rank, &pb, &cb, &tb);
    if (!has_a || !has_b)
        return MPI_SUCCESS;
    size_t bytes = (size_t)ca * ta->size;
    if (bytes > *tmp_bytes) {
        char *grown = realloc(*tmp, bytes);
        if (grown == NULL)
            return MPI_ERR_NO_MEM;
        *tmp = grown;
        *tmp_bytes = bytes;
    }
    dt_pack(*tmp, pa, (size_t)ca, ta);
    dt_copy(pa, (size_t)ca, ta, pb, (size_t)cb, tb);
    dt_unpack(pb, (size_t)cb, tb, *tmp, bytes);
    return MPI_SUCCESS;
}

int coll_alltoall_in_place(struct coll_ctx *ctx, struct coll_args *args)
{
    ctx->me->args = args;
    meet_published(ctx);
    char *tmp = NULL;
    size_t tmp_bytes = 0;
    int rc = MPI_SUCCESS;
    for (int peer = ctx->rank + 1; peer < ctx->local_size && rc == MPI_SUCCESS; peer++)
        rc = swap_blocks(args, ctx->rank, coll_peer_args(ctx, ctx->local_base + peer), peer, &tmp,
                         &tmp_bytes);
    free(tmp);
    meet_done(ctx);
    return rc;
}
