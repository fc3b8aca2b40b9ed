/* Rooted data movement: bcast, gather, scatter and the v variants.
 *
 * Small blocks are staged (eager.c) so that nobody waits for a rank it
 * needs nothing from: the root of a bcast or scatter packs its data into
 * its own ring entry and returns, and members copy out of it; a gather
 * member packs its block into its own entry and returns, and the root
 * collects every deposit. Larger blocks go the direct way: the root
 * publishes its arguments with a pending count, each member copies its
 * block straight to or from the root's buffer and counts down, and the
 * root returns at zero.
 *
 * The path of a block depends only on sizes that root and member both
 * know from their own arguments (MPI requires matching type signatures):
 * a bcast or scatter stages all blocks or none, since the root stages them
 * together in one entry; a gather decides per member; a scatterv always
 * goes direct (a member does not know the others' blocks). */
#include <stdint.h>

#include "../datatype/datatype.h"
#include "coll_impl.h"

enum rooted_path { PATH_NONE, PATH_STAGED, PATH_DIRECT };

static bool is_gather(const struct coll_args *a)
{
    return a->kind == COLL_GATHER || a->kind == COLL_GATHERV;
}

static size_t block_bytes(const struct coll_side *s, int peer)
{
    char *buf;
    int count;
    MPI_Datatype type;
    if (!coll_side_block(s, peer, &buf, &count, &type))
        return 0;
    return (size_t)count * type->size;
}

/* `block`: bytes between root and one member; `blocks`: how many the root
 * would stage together in one entry (0: never staged). */
static enum rooted_path path_of(size_t block, size_t blocks)
{
    if (block == 0)
        return PATH_NONE;
    if (blocks == 0 || block > COLL_EAGER_BYTES / blocks)
        return PATH_DIRECT;
    return PATH_STAGED;
}

/* How many blocks the root stages together in one entry. */
static size_t staged_together(const struct coll_args *a, int members)
{
    switch (a->kind) {
    case COLL_SCATTER:
        return (size_t)members;
    case COLL_SCATTERV:
        return 0;
    default:
        return 1;
    }
}

/* The root's view of the block of member `peer`. */
static enum rooted_path root_path(const struct coll_ctx *ctx, const struct coll_args *a, int peer)
{
    size_t block = block_bytes(is_gather(a) ? &a->recv : &a->send, peer);
    return path_of(block, staged_together(a, ctx->peer_size));
}

/* A member's view of its own block; the root's peer group is its group. */
static enum rooted_path member_path(const struct coll_ctx *ctx, const struct coll_args *a)
{
    size_t block = block_bytes(is_gather(a) ? &a->send : &a->recv, 0);
    return path_of(block, staged_together(a, ctx->local_size));
}

static bool is_self(const struct coll_ctx *ctx, int peer)
{
    return !ctx->inter && peer == ctx->rank;
}

/* Bcast, scatter: the root packs every member's block into its entry
 * (scatter: block p at p x block bytes). */
static void stage_root_blocks(struct coll_ctx *ctx, const struct coll_args *args)
{
    size_t block = block_bytes(&args->send, 0);
    size_t total = block * staged_together(args, ctx->peer_size);
    char *data = coll_eager_claim(ctx, total);
    for (int p = 0; p < ctx->peer_size; p++) {
        char *buf;
        int count;
        MPI_Datatype type;
        if (is_self(ctx, p) || !coll_side_block(&args->send, p, &buf, &count, &type))
            continue;
        if (args->kind == COLL_BCAST) {
            dt_pack(data, buf, (size_t)count, type);
            break;
        }
        dt_pack(data + (size_t)p * block, buf, (size_t)count, type);
    }
    coll_eager_publish(ctx);
}

/* Gather(v): the root copies out every staged deposit. */
static void collect_deposits(struct coll_ctx *ctx, const struct coll_args *args)
{
    for (int p = 0; p < ctx->peer_size; p++) {
        if (is_self(ctx, p) || root_path(ctx, args, p) != PATH_STAGED)
            continue;
        char *buf;
        int count;
        MPI_Datatype type;
        coll_side_block(&args->recv, p, &buf, &count, &type);
        size_t bytes = (size_t)count * type->size;
        dt_unpack(buf, (size_t)count, type, coll_eager_open(ctx, ctx->peer_base + p, bytes), bytes);
    }
}

/* How many members take each path. Bcast, scatter and gather have one
 * block size for all, so the root does not walk the members (that walk
 * was a tenth of a 64-rank 8-byte bcast). */
static void count_paths(const struct coll_ctx *ctx, const struct coll_args *args, int *staged, int *direct)
{
    const struct coll_side *root_side = is_gather(args) ? &args->recv : &args->send;
    int members = ctx->peer_size - (ctx->inter ? 0 : 1);
    *staged = *direct = 0;
    if (root_side->layout != LAYOUT_V) {
        enum rooted_path path = members > 0 ? root_path(ctx, args, 0) : PATH_NONE;
        *staged = path == PATH_STAGED ? members : 0;
        *direct = path == PATH_DIRECT ? members : 0;
        return;
    }
    for (int p = 0; p < ctx->peer_size; p++) {
        if (is_self(ctx, p))
            continue;
        enum rooted_path path = root_path(ctx, args, p);
        *staged += path == PATH_STAGED;
        *direct += path == PATH_DIRECT;
    }
}

static int rooted_root(struct coll_ctx *ctx, struct coll_args *args)
{
    int staged, direct;
    count_paths(ctx, args, &staged, &direct);
    if (staged > 0 && !is_gather(args))
        stage_root_blocks(ctx, args);
    if (direct > 0) {
        ctx->me->args = args;
        atomic_store_explicit(&ctx->me->pending.value, (unsigned)direct, memory_order_relaxed);
        coll_flag_set(&ctx->me->arrive, ctx->epoch);
    }
    if (!ctx->inter && !args->skip_self)
        coll_pair_copy(args, ctx->rank, args, ctx->rank, 1);
    if (staged > 0 && is_gather(args))
        collect_deposits(ctx, args);
    if (direct > 0)
        coll_flag_wait_zero(&ctx->me->pending);
    return MPI_SUCCESS;
}

static void member_direct(struct coll_ctx *ctx, struct coll_args *args, int root_slot)
{
    struct coll_slot *root = &ctx->cc->slots[root_slot];
    coll_flag_wait_epoch(&root->arrive, ctx->epoch);
    const struct coll_args *rargs = root->args;
    /* One block per member, all written in this call. */
    size_t blocks = (size_t)ctx->local_size;
    coll_pair_copy(rargs, ctx->rank, args, args->root, blocks);
    coll_pair_copy(args, args->root, rargs, ctx->rank, blocks);
    coll_flag_count_down(&root->pending);
}

static int rooted_member(struct coll_ctx *ctx, struct coll_args *args)
{
    int root_slot = coll_root_slot(ctx, args->root);
    enum rooted_path path = member_path(ctx, args);
    if (path == PATH_NONE)
        return MPI_SUCCESS;
    if (path == PATH_DIRECT) {
        member_direct(ctx, args, root_slot);
        return MPI_SUCCESS;
    }
    char *buf;
    int count;
    MPI_Datatype type;
    if (is_gather(args)) {
        coll_side_block(&args->send, 0, &buf, &count, &type);
        size_t bytes = (size_t)count * type->size;
        dt_pack(coll_eager_claim(ctx, bytes), buf, (size_t)count, type);
        coll_eager_publish(ctx);
        return MPI_SUCCESS;
    }
    coll_side_block(&args->recv, 0, &buf, &count, &type);
    size_t block = (size_t)count * type->size;
    const char *in = coll_eager_open(ctx, root_slot, block * staged_together(args, ctx->local_size));
    if (args->kind == COLL_SCATTER)
        in += (size_t)ctx->rank * block;
    dt_unpack(buf, (size_t)count, type, in, block);
    return MPI_SUCCESS;
}

int coll_rooted_engine(struct coll_ctx *ctx, struct coll_args *args)
{
    switch (coll_role_of(ctx, args->root)) {
    case ROLE_ROOT:
        return rooted_root(ctx, args);
    case ROLE_MEMBER:
        return rooted_member(ctx, args);
    default:
        return MPI_SUCCESS;
    }
}
