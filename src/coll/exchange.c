/* The all-to-all data movement engine (allgather, alltoall): publish,
 * meet, each rank pulls its blocks straight from every peer's buffer into
 * its own, meet. When everything a rank sends fits one staging area, it
 * is staged instead: each rank packs its outgoing blocks into its own
 * entry and copies its incoming blocks out of its peers' entries, with
 * no meeting at all (the second meet, which waits for the slowest
 * reader, is what a small exchange pays most for). Also the block
 * helpers the rooted engine shares. */
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

void coll_pair_copy(const struct coll_args *from, int to_rank, const struct coll_args *to, int from_rank,
                    size_t blocks)
{
    char *src, *dst;
    int scount, dcount;
    MPI_Datatype stype, dtype;
    if (!coll_side_block(&from->send, to_rank, &src, &scount, &stype))
        return;
    if (!coll_side_block(&to->recv, from_rank, &dst, &dcount, &dtype))
        return;
    size_t block = (size_t)scount * stype->size;
    if (block >= COLL_STREAM_MIN_BLOCK && block * blocks > COLL_STREAM_MIN_TOTAL)
        dt_copy_streaming(dst, (size_t)dcount, dtype, src, (size_t)scount, stype);
    else
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

/* Bytes a rank stages in one call, or 0 for the direct path. Every member
 * computes the same answer from its own arguments: allgather and alltoall
 * blocks have the same size for every pair (matching type signatures);
 * the v and w variants, whose receivers cannot know the senders' totals,
 * go direct, and so do intercommunicators. */
static size_t staged_total(const struct coll_ctx *ctx, const struct coll_args *a, size_t *block)
{
    if (ctx->inter || (a->kind != COLL_ALLGATHER && a->kind != COLL_ALLTOALL))
        return 0;
    *block = (size_t)a->send.count * a->send.type->size;
    size_t blocks = a->kind == COLL_ALLGATHER ? 1 : (size_t)ctx->local_size - 1;
    if (*block == 0 || ctx->local_size == 1 || *block > COLL_EAGER_BYTES / blocks)
        return 0;
    return *block * blocks;
}

/* Where the block for `to` sits in the entry of `from` (alltoall: every
 * peer but the owner, in rank order). */
static size_t staged_offset(const struct coll_args *a, int from, int to, size_t block)
{
    if (a->kind == COLL_ALLGATHER)
        return 0;
    return (size_t)(to < from ? to : to - 1) * block;
}

static void exchange_staged(struct coll_ctx *ctx, struct coll_args *args, size_t block, size_t total)
{
    char *out = coll_eager_claim(ctx, total);
    for (int peer = 0; peer < ctx->local_size; peer++) {
        char *buf;
        int count;
        MPI_Datatype type;
        if (peer == ctx->rank || !coll_side_block(&args->send, peer, &buf, &count, &type))
            continue;
        dt_pack(out + staged_offset(args, ctx->rank, peer, block), buf, (size_t)count, type);
        if (args->kind == COLL_ALLGATHER)
            break;
    }
    coll_eager_publish(ctx);
    if (!args->skip_self)
        coll_pair_copy(args, ctx->rank, args, ctx->rank, 1);
    for (int i = 1; i < ctx->local_size; i++) {
        int peer = (ctx->rank + i) % ctx->local_size;
        char *buf;
        int count;
        MPI_Datatype type;
        coll_side_block(&args->recv, peer, &buf, &count, &type);
        const char *in = coll_eager_open(ctx, ctx->local_base + peer, total);
        dt_unpack(buf, (size_t)count, type, in + staged_offset(args, peer, ctx->rank, block), block);
    }
}

int coll_exchange_all(struct coll_ctx *ctx, struct coll_args *args)
{
    size_t block, total = staged_total(ctx, args, &block);
    if (total > 0) {
        exchange_staged(ctx, args, block, total);
        return MPI_SUCCESS;
    }
    ctx->me->args = args;
    meet_published(ctx);
    /* Every member writes a block from every peer. */
    size_t blocks = (size_t)ctx->local_size * (size_t)ctx->peer_size;
    /* Start after our own rank so that peers do not all read rank 0 first. */
    for (int i = 0; i < ctx->peer_size; i++) {
        int peer = (ctx->rank + i) % ctx->peer_size;
        bool is_self = !ctx->inter && peer == ctx->rank;
        if (is_self && args->skip_self)
            continue;
        coll_pair_copy(coll_peer_args(ctx, ctx->peer_base + peer), ctx->rank, args, peer, blocks);
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
