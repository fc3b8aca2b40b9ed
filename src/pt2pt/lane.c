/* Lanes (lane.h): a ring of cache-line slots per (sender, receiver) pair.
 *
 * A message at ring position p takes slots p .. p+k-1, k = slots_for(bytes):
 * the first slot starts with its header, the data follows contiguously
 * (a message never wraps: a SKIP header sends the consumer to the ring's
 * start). The header's `seq` is p + 1 once the message is published. The
 * producer also clears `seq` of the slot after the message before
 * publishing, so the slot where the consumer looks next holds 0 or the
 * next message, never stale data of an older message's tail. Positions
 * are 64-bit and never wrap. The producer needs the slots up to p+k
 * inclusive free: p + k < head + LANE_SLOTS, `head` being the consumer's
 * published position (read only when the cached bound is exceeded). */
#include <stdlib.h>
#include <string.h>

#include "../datatype/datatype.h"
#include "lane.h"

enum { LANE_SLOTS = 64, SLOT_BYTES = 64 };
enum { LANE_SKIP = UINT32_MAX };

struct lane_header {
    _Atomic uint64_t seq;            /* position + 1 once published */
    uint32_t context_id;
    int32_t source;
    int32_t tag;
    uint32_t bytes;                  /* LANE_SKIP: go on at the ring's start */
};

enum { HEADER_BYTES = sizeof(struct lane_header) };
_Static_assert(HEADER_BYTES == 24, "the header leaves 40 bytes of data in the first slot");
_Static_assert((HEADER_BYTES + LANE_MAX_BYTES + SLOT_BYTES - 1) / SLOT_BYTES + 1 <= LANE_SLOTS / 2,
               "a largest message and its successor slot fit twice in a ring");

union lane_slot {
    struct lane_header header;
    unsigned char raw[SLOT_BYTES];
};

struct lane {
    /* The producer's line (the sending rank's threads). */
    _Alignas(64) uint64_t tail;      /* position of the next message */
    uint64_t room_end;               /* head + LANE_SLOTS, as last read */
    struct lite_lock producer_lock;  /* MPI_THREAD_MULTIPLE senders */
    int sender_uid, receiver_uid;
    atomic_int refs;                 /* the sender's and the receiver's */
    struct lane *owned_next;         /* the sender's list (outgoing_lanes.owned) */
    /* The consumer's line: written under the receiver's mailbox lock. */
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) union lane_slot slots[LANE_SLOTS];
};

static inline union lane_slot *slot_at(struct lane *l, uint64_t pos)
{
    return &l->slots[pos % LANE_SLOTS];
}

static inline uint64_t slots_for(uint32_t bytes)
{
    return (HEADER_BYTES + (uint64_t)bytes + SLOT_BYTES - 1) / SLOT_BYTES;
}

/* ---- producer ---- */

static bool lane_put(struct lane *l, const struct message *m)
{
    uint64_t pos = l->tail;
    uint64_t k = slots_for((uint32_t)m->bytes);
    uint64_t start = pos % LANE_SLOTS + k > LANE_SLOTS ? pos + (LANE_SLOTS - pos % LANE_SLOTS) : pos;
    uint64_t end = start + k + 1;    /* + the successor slot, cleared below */
    if (end > l->room_end) {
        l->room_end = atomic_load_explicit(&l->head, memory_order_acquire) + LANE_SLOTS;
        if (end > l->room_end)
            return false;
    }
    union lane_slot *s = slot_at(l, start);
    s->header.context_id = m->context_id;
    s->header.source = m->source;
    s->header.tag = m->tag;
    s->header.bytes = (uint32_t)m->bytes;
    dt_pack(s->raw + HEADER_BYTES, m->buf, (size_t)m->count, m->type);
    atomic_store_explicit(&slot_at(l, start + k)->header.seq, 0, memory_order_relaxed);
    atomic_store_explicit(&s->header.seq, start + 1, memory_order_release);
    if (start != pos) {
        /* Published after the message it points to: the consumer reads
         * that one only after this. */
        union lane_slot *skip = slot_at(l, pos);
        skip->header.bytes = LANE_SKIP;
        atomic_store_explicit(&skip->header.seq, pos + 1, memory_order_release);
    }
    l->tail = start + k;
    return true;
}

static struct lane *lane_create(int sender_uid, int receiver_uid)
{
    struct lane *l = aligned_alloc(_Alignof(struct lane), sizeof *l);
    if (l == NULL)
        return NULL;
    memset(l, 0, sizeof *l);
    l->room_end = LANE_SLOTS;
    l->sender_uid = sender_uid;
    l->receiver_uid = receiver_uid;
    atomic_init(&l->refs, 2);
    return l;
}

/* The cache missed: look in the receiver's mailbox, or open a lane there.
 * NULL when its lanes are all taken by other senders (remembered). */
static struct lane *lane_open(struct rank *self, struct rank *dest, unsigned entry)
{
    struct outgoing_lanes *out = &self->pt2pt.lanes_out;
    struct mailbox *mb = &dest->pt2pt.mailbox;
    int me = rank_uid(self), them = rank_uid(dest);
    struct lane *l = NULL;
    bool created = false;
    lite_lock(&mb->lock);
    int n = atomic_load_explicit(&mb->nlanes, memory_order_relaxed);
    for (int i = 0; i < n && l == NULL; i++)
        if (mb->lanes[i]->sender_uid == me)
            l = mb->lanes[i];
    if (l == NULL && n < MAILBOX_LANES && (l = lane_create(me, them)) != NULL) {
        mb->lanes[n] = l;
        atomic_store_explicit(&mb->nlanes, n + 1, memory_order_release);
        created = true;
    }
    lite_unlock(&mb->lock);
    if (l == NULL) {
        atomic_store_explicit(&out->denied[entry], them + 1, memory_order_relaxed);
        return NULL;
    }
    if (created) {
        lite_lock(&out->lock);
        l->owned_next = out->owned;
        out->owned = l;
        lite_unlock(&out->lock);
    }
    atomic_store_explicit(&out->cache[entry], l, memory_order_release);
    return l;
}

bool lane_send(struct rank *self, struct rank *dest, const struct message *m)
{
    struct outgoing_lanes *out = &self->pt2pt.lanes_out;
    int them = rank_uid(dest);
    unsigned entry = (unsigned)them % OUTGOING_LANE_CACHE;
    struct lane *l = atomic_load_explicit(&out->cache[entry], memory_order_acquire);
    if (STRAND_UNLIKELY(l == NULL || l->receiver_uid != them)) {
        /* A receiver with all its lanes taken stays so: no lane ever. */
        if (atomic_load_explicit(&out->denied[entry], memory_order_relaxed) == them + 1)
            return false;
        l = lane_open(self, dest, entry);
        if (l == NULL)
            return false;
    }
    if (self->thread_level != MPI_THREAD_MULTIPLE)
        return lane_put(l, m);
    lite_lock(&l->producer_lock);
    bool sent = lane_put(l, m);
    lite_unlock(&l->producer_lock);
    return sent;
}

/* ---- consumer (under the receiver's mailbox lock) ---- */

static inline bool lane_ready(struct lane *l)
{
    uint64_t head = atomic_load_explicit(&l->head, memory_order_relaxed);
    return atomic_load_explicit(&slot_at(l, head)->header.seq, memory_order_relaxed) == head + 1;
}

bool lanes_pending(struct mailbox *mb)
{
    int n = atomic_load_explicit(&mb->nlanes, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (lane_ready(mb->lanes[i]))
            return true;
    return false;
}

static bool lane_drain(struct rank *dest, struct lane *l)
{
    uint64_t head = atomic_load_explicit(&l->head, memory_order_relaxed);
    uint64_t first = head;
    bool wake = false;
    for (;;) {
        union lane_slot *s = slot_at(l, head);
        if (atomic_load_explicit(&s->header.seq, memory_order_acquire) != head + 1)
            break;
        if (s->header.bytes == LANE_SKIP) {
            head += LANE_SLOTS - head % LANE_SLOTS;
            continue;
        }
        struct message m = {
            .context_id = s->header.context_id,
            .source = s->header.source,
            .tag = s->header.tag,
            .buf = s->raw + HEADER_BYTES,
            .count = (int)s->header.bytes,
            .type = MPI_BYTE,
            .bytes = s->header.bytes,
        };
        wake |= mailbox_match_eager(dest, &m);
        head += slots_for(s->header.bytes);
    }
    if (head != first)
        atomic_store_explicit(&l->head, head, memory_order_release);
    return wake;
}

bool lanes_drain(struct rank *dest)
{
    struct mailbox *mb = &dest->pt2pt.mailbox;
    int n = atomic_load_explicit(&mb->nlanes, memory_order_relaxed);
    bool wake = false;
    for (int i = 0; i < n; i++)
        wake |= lane_drain(dest, mb->lanes[i]);
    return wake;
}

/* ---- end of a rank ---- */

static void lane_unref(struct lane *l)
{
    if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) == 1)
        free(l);
}

void lanes_release(struct rank *r)
{
    struct mailbox *mb = &r->pt2pt.mailbox;
    int n = atomic_load_explicit(&mb->nlanes, memory_order_relaxed);
    atomic_store_explicit(&mb->nlanes, 0, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        lane_unref(mb->lanes[i]);
    struct outgoing_lanes *out = &r->pt2pt.lanes_out;
    for (struct lane *l = out->owned, *next; l != NULL; l = next) {
        next = l->owned_next;
        lane_unref(l);
    }
    out->owned = NULL;
    for (int i = 0; i < OUTGOING_LANE_CACHE; i++)
        atomic_store_explicit(&out->cache[i], NULL, memory_order_relaxed);
}
