/* Eager staging rings (coll_state.h): a writer copies its block into its
 * own entry for the current epoch and returns; readers copy out of it and
 * count down. A writer that finds the entry still unread (it is `depth`
 * collectives ahead of a reader) waits, so data is never overwritten. */
#include "coll_impl.h"

static unsigned entry_index(unsigned epoch)
{
    return epoch & (COLL_EAGER_DEPTH - 1);
}

static struct coll_eager_entry *entry_of(const struct coll_ctx *ctx, int slot)
{
    return &ctx->cc->slots[slot].eager[entry_index(ctx->epoch)];
}

char *coll_eager_data(const struct coll_ctx *ctx, int slot)
{
    size_t entry = (size_t)slot * COLL_EAGER_DEPTH + entry_index(ctx->epoch);
    return ctx->cc->eager_data + entry * COLL_EAGER_BYTES;
}

char *coll_eager_claim(struct coll_ctx *ctx)
{
    coll_flag_wait_zero(&entry_of(ctx, ctx->self)->pending);
    return coll_eager_data(ctx, ctx->self);
}

void coll_eager_publish(struct coll_ctx *ctx, int readers)
{
    struct coll_eager_entry *e = entry_of(ctx, ctx->self);
    /* Readers only look at `pending` after they saw `ready`, whose release
     * store orders this one (and the data) before it. */
    atomic_store_explicit(&e->pending.value, (unsigned)readers, memory_order_relaxed);
    coll_flag_set(&e->ready, ctx->epoch);
}

const char *coll_eager_open(struct coll_ctx *ctx, int slot)
{
    /* The writer cannot move the entry past this epoch before we release it. */
    coll_flag_wait_epoch(&entry_of(ctx, slot)->ready, ctx->epoch);
    return coll_eager_data(ctx, slot);
}

void coll_eager_release(struct coll_ctx *ctx, int slot)
{
    coll_flag_count_down(&entry_of(ctx, slot)->pending);
}
