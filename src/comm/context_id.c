/* Context ids without a lock: a free id is an index on a lock-free stack
 * whose head carries a tag (ABA-safe), fresh ids come from a counter. Ids
 * are recycled, so dup/free loops never run out of them and the number in
 * use stays at the peak number of live communicators. */
#include <stdlib.h>
#include <time.h>

#include "../util/lock.h"
#include "comm.h"

enum {
    LINK_CHUNK_BITS = 10,
    LINK_CHUNK = 1 << LINK_CHUNK_BITS,
    LINK_CHUNKS = 1 << 12,          /* up to 4 Mi communicators alive at once */
};

/* next_free[i]: the index below i on the free stack (index + 1; 0 = bottom). */
static _Atomic(atomic_uint *) link_chunks[LINK_CHUNKS];
static atomic_uint fresh_index;
/* Low 32 bits: top index + 1 (0 = empty); high 32 bits: a tag bumped on
 * every change, so a stale head can never be swapped in. */
static _Atomic uint64_t free_head;

static uint32_t id_of(uint32_t index) { return COMM_CONTEXT_FIRST_FREE + 2 * index; }
static uint32_t index_of(uint32_t id) { return (id - COMM_CONTEXT_FIRST_FREE) / 2; }

static atomic_uint *link_of(uint32_t index, bool create)
{
    _Atomic(atomic_uint *) *slot = &link_chunks[index >> LINK_CHUNK_BITS];
    atomic_uint *chunk = atomic_load_explicit(slot, memory_order_acquire);
    if (chunk == NULL && create) {
        atomic_uint *mine = calloc(LINK_CHUNK, sizeof *mine);
        if (mine == NULL)
            return NULL;
        if (atomic_compare_exchange_strong_explicit(slot, &chunk, mine, memory_order_acq_rel,
                                                    memory_order_acquire))
            chunk = mine;
        else
            free(mine);
    }
    return chunk == NULL ? NULL : &chunk[index & (LINK_CHUNK - 1)];
}

static uint64_t head_make(uint64_t old, uint32_t top_plus_one)
{
    return (((old >> 32) + 1) << 32) | top_plus_one;
}

uint32_t context_id_alloc(void)
{
    uint64_t head = atomic_load_explicit(&free_head, memory_order_acquire);
    while ((uint32_t)head != 0) {
        uint32_t index = (uint32_t)head - 1;
        uint32_t below = atomic_load_explicit(link_of(index, false), memory_order_relaxed);
        if (atomic_compare_exchange_weak_explicit(&free_head, &head, head_make(head, below),
                                                  memory_order_acquire, memory_order_acquire))
            return id_of(index);
    }
    uint32_t index = atomic_fetch_add_explicit(&fresh_index, 1, memory_order_relaxed);
    if (index >= (uint32_t)LINK_CHUNK * LINK_CHUNKS)
        return CONTEXT_ID_NONE;
    return id_of(index);
}

static atomic_uint global_next = CONTEXT_ID_GLOBAL_BASE;

uint32_t context_id_propose_global(void)
{
    return atomic_fetch_add_explicit(&global_next, 2, memory_order_relaxed);
}

uint32_t context_id_propose_global_again(void)
{
    /* Two constructions that failed on the same id, each winning in a
     * different node process, would otherwise propose in the same order
     * again (their members learn the verdict in the same order) and can
     * meet on the same maximum round after round. Skipping a number of
     * ids that differs between calls breaks that lock step; the clock is
     * random enough for it and costs no state. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint32_t skip = 2 * (uint32_t)((now.tv_nsec >> 4) % 64);
    return atomic_fetch_add_explicit(&global_next, 2 + skip, memory_order_relaxed) + skip;
}

void context_id_seen_global(uint32_t id)
{
    unsigned next = atomic_load_explicit(&global_next, memory_order_relaxed);
    while (next < id + 2 &&
           !atomic_compare_exchange_weak_explicit(&global_next, &next, id + 2, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

void context_id_free(uint32_t id)
{
    if (id < COMM_CONTEXT_FIRST_FREE || id == CONTEXT_ID_NONE || id >= CONTEXT_ID_GLOBAL_BASE)
        return;
    uint32_t index = index_of(id);
    atomic_uint *link = link_of(index, true);
    if (link == NULL)
        return;     /* out of memory: the id is simply not reused */
    uint64_t head = atomic_load_explicit(&free_head, memory_order_relaxed);
    do {
        atomic_store_explicit(link, (uint32_t)head, memory_order_relaxed);
    } while (!atomic_compare_exchange_weak_explicit(&free_head, &head, head_make(head, index + 1),
                                                    memory_order_release, memory_order_relaxed));
}

/* Global ids in use in this node process: claimed by a construction in
 * progress (`construction` set, `pending` claims not yet settled) or held
 * by the contexts built with them (`contexts`). A plain array under a
 * lock: it is touched once or twice per construction of a communicator
 * spanning node processes, each of which already costs network round
 * trips, and it holds one entry per such communicator alive here. */
struct global_claim {
    uint32_t id;
    struct context_claimant construction;   /* while pending > 0 */
    int pending;
    int contexts;
};
static struct lite_lock claims_lock = LITE_LOCK_INIT;
static struct global_claim *claims;
static size_t nclaims, claims_cap;

static struct global_claim *claim_find(uint32_t id)
{
    for (size_t i = 0; i < nclaims; i++)
        if (claims[i].id == id)
            return &claims[i];
    return NULL;
}

static struct global_claim *claim_add(uint32_t id)
{
    if (nclaims == claims_cap) {
        size_t cap = claims_cap == 0 ? 64 : 2 * claims_cap;
        struct global_claim *grown = realloc(claims, cap * sizeof *grown);
        if (grown == NULL)
            return NULL;
        claims = grown;
        claims_cap = cap;
    }
    claims[nclaims] = (struct global_claim){ .id = id };
    return &claims[nclaims++];
}

/* Drops the entry once nobody claims or holds it. */
static void claim_drop_if_unused(struct global_claim *c)
{
    if (c->pending == 0 && c->contexts == 0)
        *c = claims[--nclaims];
}

static bool same_claimant(const struct context_claimant *a, const struct context_claimant *b)
{
    return a->parent == b->parent && a->leader_gid == b->leader_gid && a->leader_nonce == b->leader_nonce;
}

bool context_id_claim_global(uint32_t id, const struct context_claimant *construction)
{
    lite_lock(&claims_lock);
    struct global_claim *c = claim_find(id);
    bool claimed = false;
    if (c == NULL)
        c = claim_add(id);
    else if (c->pending == 0 || !same_claimant(&c->construction, construction))
        c = NULL;                   /* in use, or another construction's */
    if (c != NULL) {
        c->construction = *construction;
        c->pending++;
        claimed = true;
    }
    lite_unlock(&claims_lock);
    return claimed;
}

void context_id_settle_global(uint32_t id, const struct context_claimant *construction, bool keep)
{
    lite_lock(&claims_lock);
    struct global_claim *c = claim_find(id);
    if (c != NULL && c->pending > 0 && same_claimant(&c->construction, construction) && --c->pending == 0) {
        /* Kept with no context yet: the context about to be built holds
         * it (context_id_hold_global). Ids are never recycled, so if that
         * build runs out of memory the entry only costs its bytes. */
        if (!keep)
            claim_drop_if_unused(c);
    }
    lite_unlock(&claims_lock);
}

void context_id_hold_global(uint32_t id)
{
    lite_lock(&claims_lock);
    struct global_claim *c = claim_find(id);
    if (c == NULL)
        c = claim_add(id);
    if (c != NULL)
        c->contexts++;
    lite_unlock(&claims_lock);
}

void context_id_release_global(uint32_t id)
{
    lite_lock(&claims_lock);
    struct global_claim *c = claim_find(id);
    if (c != NULL && c->contexts > 0) {
        c->contexts--;
        claim_drop_if_unused(c);
    }
    lite_unlock(&claims_lock);
}
