/* Eager staging rings (coll_state.h): a writer copies its block into its
 * own entry for the current epoch and returns; readers copy out of it. A
 * writer reuses an entry only once every member completed the collective
 * `depth` epochs back, the last one that could have used it. */
#include <sys/mman.h>

#include "../util/cache.h"
#include "coll_impl.h"

static size_t entries_bytes(const struct coll_core *cc)
{
    return (size_t)cc->nslots * cc->eager_depth * sizeof(struct coll_eager_entry);
}

static size_t staging_bytes(const struct coll_core *cc)
{
    return entries_bytes(cc) + (size_t)cc->nslots * COLL_EAGER_BLOCKS * COLL_EAGER_BYTES;
}

/* Maps the staging memory on first use (fresh zero pages, touched only
 * where used); whoever loses the race unmaps its own. */
static struct coll_eager_entry *staging(const struct coll_ctx *ctx)
{
    struct coll_core *cc = ctx->cc;
    struct coll_eager_entry *e = atomic_load_explicit(&cc->eager, memory_order_acquire);
    if (STRAND_LIKELY(e != NULL))
        return e;
    void *mem = mmap(NULL, staging_bytes(cc), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        error_fatal("collective", MPI_ERR_NO_MEM, "cannot map the staging memory of a communicator");
    if (atomic_compare_exchange_strong_explicit(&cc->eager, &e, mem, memory_order_acq_rel, memory_order_acquire))
        return mem;
    munmap(mem, staging_bytes(cc));
    return e;
}

void coll_eager_unmap(struct coll_core *cc)
{
    struct coll_eager_entry *e = atomic_load_explicit(&cc->eager, memory_order_acquire);
    if (e != NULL)
        munmap(e, staging_bytes(cc));
}

static struct coll_eager_entry *entry_of(const struct coll_ctx *ctx, int slot)
{
    unsigned depth = ctx->cc->eager_depth;
    return &staging(ctx)[(size_t)slot * depth + (ctx->epoch & (depth - 1))];
}

static char *data_of(const struct coll_ctx *ctx, int slot, size_t bytes)
{
    if (bytes <= COLL_EAGER_INLINE)
        return entry_of(ctx, slot)->data;
    size_t area = (size_t)slot * COLL_EAGER_BLOCKS + (ctx->epoch & (COLL_EAGER_BLOCKS - 1));
    return (char *)staging(ctx) + entries_bytes(ctx->cc) + area * COLL_EAGER_BYTES;
}

enum { PREFETCH_AHEAD = 2 };

static bool serial_ge(unsigned a, unsigned b)
{
    return (int)(a - b) >= 0;
}

/* Until every member completed epoch `need`; the answer is cached. When
 * it has to wait, it waits for half a ring more, so that a writer that
 * runs ahead pays one wait per half ring, not one per collective. That is
 * safe: this writer completed every collective before this one, so every
 * member can complete them too without it. */
static void wait_all_done(struct coll_ctx *ctx, unsigned need, unsigned depth)
{
    struct coll_slot *me = ctx->me;
    if (serial_ge(me->eager_clear, need))
        return;
    need += depth / 2;
    unsigned least = ctx->epoch - 1;
    for (int m = 0; m < ctx->cc->nslots; m++) {
        struct coll_flag *done = &ctx->cc->slots[m].done;
        unsigned d = atomic_load_explicit(&done->value, memory_order_acquire);
        if (!serial_ge(d, need)) {
            coll_staged_wait_epoch(&done->value, &done->sleepers, need);
            d = need;
        }
        if (!serial_ge(d, least))
            least = d;
    }
    me->eager_clear = least;
}

char *coll_eager_claim(struct coll_ctx *ctx, size_t bytes)
{
    unsigned entries = ctx->cc->eager_depth;
    unsigned depth = bytes <= COLL_EAGER_INLINE ? entries : COLL_EAGER_BLOCKS;
    wait_all_done(ctx, ctx->epoch - depth, depth);
    /* Readers hold the entries we write next (they read them a ring ago);
     * taking one back while this call runs, not when the next call
     * stores into it, made a 2-rank 8-byte bcast 3x faster. Further
     * ahead is slower: the readers' own prefetching of the lines they
     * read next shares them again. */
    size_t ahead = (ctx->epoch + PREFETCH_AHEAD) & (entries - 1);
    prefetch_for_write(&staging(ctx)[(size_t)ctx->self * entries + ahead]);
    return data_of(ctx, ctx->self, bytes);
}

void coll_eager_publish(struct coll_ctx *ctx)
{
    coll_word_set(&entry_of(ctx, ctx->self)->ready, &ctx->me->eager_sleepers, ctx->epoch);
}

const char *coll_eager_open(struct coll_ctx *ctx, int slot, size_t bytes)
{
    /* The writer cannot reuse the entry before we complete this epoch. */
    coll_staged_wait_epoch(&entry_of(ctx, slot)->ready, &ctx->cc->slots[slot].eager_sleepers, ctx->epoch);
    return data_of(ctx, slot, bytes);
}

const char *coll_eager_peek(const struct coll_ctx *ctx, int slot, size_t bytes)
{
    return data_of(ctx, slot, bytes);
}

bool coll_meet_fits(const struct coll_ctx *ctx)
{
    return !ctx->inter && ctx->local_size <= COLL_MEET_MAX;
}

void coll_meet_published(struct coll_ctx *ctx)
{
    coll_eager_claim(ctx, 0);
    coll_eager_publish(ctx);
    for (int j = 0; j < ctx->local_size; j++)
        if (j != ctx->rank)
            coll_eager_open(ctx, ctx->local_base + j, 0);
}

void coll_meet_done(struct coll_ctx *ctx)
{
    /* True already: this member has read all it reads of this epoch. */
    coll_flag_set(&ctx->me->done, ctx->epoch);
    for (int j = 0; j < ctx->local_size; j++) {
        struct coll_flag *done = &ctx->cc->slots[ctx->local_base + j].done;
        if (j != ctx->rank)
            coll_staged_wait_epoch(&done->value, &done->sleepers, ctx->epoch);
    }
}
