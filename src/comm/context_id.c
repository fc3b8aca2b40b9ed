/* Context ids without a lock: a free id is an index on a lock-free stack
 * whose head carries a tag (ABA-safe), fresh ids come from a counter. Ids
 * are recycled, so dup/free loops never run out of them and the number in
 * use stays at the peak number of live communicators. */
#include <stdlib.h>

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
