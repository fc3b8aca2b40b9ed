/* Lanes: small messages between two local ranks without the receiver's lock.
 *
 * A lane is a ring of 32-byte slots from one sending rank to one receiving
 * rank. The sender (the producer; the threads of an MPI_THREAD_MULTIPLE
 * sender take the lane's producer lock) writes a message's envelope and
 * data into consecutive slots and publishes it with one release store of
 * the first slot's sequence word. The consumer is whoever holds the
 * receiver's mailbox (mailbox.c): the receiving rank when it posts a
 * receive, waits, tests or probes (pt2pt_progress), or a sender about to
 * use the mailbox path. It takes the lane's messages in order and matches
 * each into the mailbox as a sender would (posted receive, else unexpected
 * queue). So the messages of one sender reach the matching state in send
 * order, and any message a sender delivers through the mailbox path comes
 * after everything it put in a lane before (that path drains the lanes
 * first).
 *
 * Ring format: a message at position p takes slots p .. p+k-1,
 * k = lane_slots_for(bytes): the first slot starts with its header, the
 * data follows contiguously (a message never wraps: a SKIP header sends
 * the consumer to the ring's start). The header's `seq` is p + 1 once the
 * message is published. The producer also clears `seq` of the slot after
 * the message before publishing, so the slot where the consumer looks next
 * holds 0 or the next message, never stale data of an older message's
 * tail. Positions are 64-bit and never wrap. The producer needs the slots
 * up to p+k inclusive free: p + k < head + LANE_SLOTS, `head` being the
 * consumer's published position (read only when the cached bound is
 * exceeded).
 *
 * Ownership: a lane is created by its first sender under the receiver's
 * mailbox lock, listed in the receiver's mailbox and in the sender's
 * outgoing lanes, and freed when both ranks have ended. */
#ifndef STRAND_PT2PT_LANE_H
#define STRAND_PT2PT_LANE_H

#include <string.h>

#include "../datatype/datatype.h"
#include "../util/cache.h"
#include "pt2pt.h"

/* Largest message that travels in a lane (bytes). */
enum { LANE_MAX_BYTES = 1024 };

/* Slots of half a cache line: a message of up to 8 bytes takes one, so two
 * of them share a line (the receiver of a stream pulls one line per two
 * messages), and a message of 64 bytes takes three (1.5 lines, not 2).
 * 32 KiB: 1023 messages of up to 8 bytes, 341 of 64, 31 of 1024. */
enum { LANE_SLOTS = 1024, LANE_SLOT_BYTES = 32 };
enum { LANE_SKIP = UINT32_MAX };

struct lane_header {
    _Atomic uint64_t seq;            /* position + 1 once published */
    uint32_t context_id;
    int32_t source;
    int32_t tag;
    uint32_t bytes;                  /* LANE_SKIP: go on at the ring's start */
};

enum { LANE_HEADER_BYTES = sizeof(struct lane_header) };
_Static_assert(LANE_HEADER_BYTES == 24, "the header leaves 8 bytes of data in the first slot");
_Static_assert((LANE_HEADER_BYTES + LANE_MAX_BYTES + LANE_SLOT_BYTES - 1) / LANE_SLOT_BYTES + 1 <= LANE_SLOTS / 2,
               "a largest message and its successor slot fit twice in a ring");

union lane_slot {
    struct lane_header header;
    unsigned char raw[LANE_SLOT_BYTES];
};

struct lane {
    /* The producer's line (the sending rank's threads). */
    _Alignas(64) uint64_t tail;      /* position of the next message */
    uint64_t room_end;               /* head + LANE_SLOTS, as last read */
    uint64_t stalled_head;           /* head when a wait for room last gave up (+ 1; 0: none) */
    struct lite_lock producer_lock;  /* MPI_THREAD_MULTIPLE senders */
    int sender_uid, receiver_uid;
    atomic_int refs;                 /* the sender's and the receiver's */
    struct lane *owned_next;         /* the sender's list (outgoing_lanes.owned) */
    /* The consumer's line: written by whoever holds the receiver's mailbox. */
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) union lane_slot slots[LANE_SLOTS];
};

static inline union lane_slot *lane_slot_at(struct lane *l, uint64_t pos)
{
    return &l->slots[pos % LANE_SLOTS];
}

static inline uint64_t lane_slots_for(uint32_t bytes)
{
    return (LANE_HEADER_BYTES + (uint64_t)bytes + LANE_SLOT_BYTES - 1) / LANE_SLOT_BYTES;
}

/* memcpy, with up to 64 bytes moved inline (util/cache.h): a small
 * message's copy is then a few instructions, not a call. */
static inline void copy_bytes(void *dst, const void *src, size_t n)
{
    if (n > 64)
        memcpy(dst, src, n);
    else
        copy_small(dst, src, n);
}

/* dt_copy with the common case inline: contiguous on both sides (a small
 * message's copy is then copy_bytes, not a call through the layout engine). */
static inline size_t message_copy(void *dst, size_t dcount, MPI_Datatype dtype, const void *src, size_t scount,
                                  MPI_Datatype stype)
{
    if (!dtype->contiguous || !stype->contiguous)
        return dt_copy(dst, dcount, dtype, src, scount, stype);
    size_t want = scount * stype->size, room = dcount * dtype->size;
    size_t bytes = want < room ? want : room;
    copy_bytes((char *)dst + dtype->true_lb, (const char *)src + stype->true_lb, bytes);
    return bytes;
}

/* ---- the receiver's mailbox lock (util/biased_lock.h) ---- */

/* Takes `r`'s mailbox lock; returns what mailbox_unlock needs. The rank's
 * own thread may take it biased (no atomic instruction) when it is the
 * rank's only MPI thread and sleepers pay membarrier (light wakes, which
 * registers the process for it); everybody else revokes the bias. */
static inline bool mailbox_lock(struct rank *r)
{
    struct biased_lock *l = &r->pt2pt.mailbox.lock;
    if (r != strand_self) {
        biased_lock_other(l);
        return false;
    }
    return biased_lock_owner(l, strand_node.light_wakes && r->thread_level != MPI_THREAD_MULTIPLE);
}

static inline void mailbox_unlock(struct rank *r, bool biased)
{
    biased_unlock_owner(&r->pt2pt.mailbox.lock, biased);
}

/* ---- producer ---- */

/* Puts `m` into the sender's lane to `dest` and wakes `dest` if it sleeps
 * (rank_wake_light). False when the message may not take a lane (too
 * large, ranks outnumber cores, a remote `dest`), there is no lane (the
 * receiver has MAILBOX_LANES already) or no room: the caller then takes
 * the mailbox path, which drains the lanes first. Any thread of a rank,
 * with `self` its rank. */
bool lane_send(struct rank *self, struct rank *dest, const struct message *m);

/* ---- consumer (whoever holds the receiver's mailbox) ---- */

/* The published message at the lane's position `*head`, or NULL; steps
 * `*head` over a SKIP to the ring's start. The slot stays the consumer's
 * to read until lane_consumed() passes it. */
static inline union lane_slot *lane_message_at(struct lane *l, uint64_t *head)
{
    for (;;) {
        union lane_slot *s = lane_slot_at(l, *head);
        if (atomic_load_explicit(&s->header.seq, memory_order_acquire) != *head + 1)
            return NULL;
        if (STRAND_LIKELY(s->header.bytes != LANE_SKIP))
            return s;
        *head += LANE_SLOTS - *head % LANE_SLOTS;
    }
}

/* Whether the message at the lane's head is published (a hint). */
static inline bool lane_ready(struct lane *l)
{
    uint64_t head = atomic_load_explicit(&l->head, memory_order_relaxed);
    return atomic_load_explicit(&lane_slot_at(l, head)->header.seq, memory_order_relaxed) == head + 1;
}

/* Gives the slots before `head` back to the producer. */
static inline void lane_consumed(struct lane *l, uint64_t head)
{
    atomic_store_explicit(&l->head, head, memory_order_release);
}

/* When a rank ends: its share of the lanes into and out of it. */
void lanes_release(struct rank *r);

#endif
