/* Lanes: small messages between two local ranks without the receiver's lock.
 *
 * A lane carries messages from one sending rank to one receiving rank: a
 * ring of 32-byte slots (a message's envelope and data in consecutive
 * slots), and for a short message that answers (below) a single slot in a
 * cache line the two directions between the two ranks share. The sender
 * (the producer; the threads of an MPI_THREAD_MULTIPLE sender take the
 * lane's producer lock) numbers its messages on the lane and publishes
 * each with one release store of its first slot's `seq`: its number + 1.
 * The consumer is whoever holds the receiver's mailbox (mailbox.c): the
 * receiving rank when it posts a receive, waits, tests or probes
 * (pt2pt_progress), or a sender about to use the mailbox path. It takes
 * the lane's messages in number order, each from where it is
 * (lane_message_at), and matches each into the mailbox as a sender would
 * (posted receive, else unexpected queue). So the messages of one sender
 * reach the matching state in send order, and any message a sender
 * delivers through the mailbox path comes after everything it put in a
 * lane before (that path drains the lanes first).
 *
 * The ring: a message at position p takes slots p .. p+k-1,
 * k = lane_slots_for(bytes), and never wraps (a SKIP header sends the
 * consumer to the ring's start; it carries the number of the message it
 * points to, and is published after it). The producer also clears `seq` of
 * the slot after the message before publishing, so the slot where the
 * consumer looks next holds 0, a SKIP or a later message, never stale data
 * of an older message's tail. Positions and numbers are 64-bit and never
 * wrap. The producer needs the slots up to p+k inclusive free:
 * p + k < head + LANE_SLOTS, `head` being the consumer's published
 * position (read only when the cached bound is exceeded).
 *
 * The answer slot: the two lanes between two ranks live in one block
 * (struct lane_pair) whose first line holds one slot per direction. A
 * message of up to LANE_ANSWER_BYTES goes there when the slot is free
 * (`seq` 0: the consumer frees it once it copied the message) and the
 * sender last took exactly one message from the receiver (`answer_due`,
 * set by the drain of the opposite lane): a request-answer exchange. The
 * answer then goes into the line its request came in, which the answering
 * rank has just read, and the next request into the line its answer came
 * in: one line crosses between the cores per message instead of two
 * (bench/lanefloor pairline, doc/performance.md §26). Streams and bursts
 * stay in the ring, where the two directions share no line.
 * The consumer looks for message n in the answer slot and at the ring's
 * head, and takes the one whose `seq` is n + 1: numbers are unique, a
 * free answer slot holds 0, and the ring's head slot holds nothing else.
 * The lanes of a pair are made when first used, in either order; a block
 * whose first lane was made while the other rank opened its own lane
 * without seeing it stays half used (correct, only without the shared
 * line).
 *
 * Messages above LANE_MAX_BYTES travel as offers: see struct lane_offer.
 *
 * Ownership: a lane is created by its first sender under the receiver's
 * mailbox lock, listed in the receiver's mailbox and in the sender's
 * outgoing lanes; its block is freed when the sender and the receiver of
 * every lane in it have ended. */
#ifndef STRAND_PT2PT_LANE_H
#define STRAND_PT2PT_LANE_H

#include <string.h>

#include "../datatype/datatype.h"
#include "../util/cache.h"
#include "../util/copy.h"
#include "pt2pt.h"

/* Largest message that travels in a lane (bytes). */
enum { LANE_MAX_BYTES = 1024 };

/* Slots of half a cache line: a message of up to 8 bytes takes one, so two
 * of them share a line (the receiver of a stream pulls one line per two
 * messages), and a message of 64 bytes takes three (1.5 lines, not 2).
 * 32 KiB: 1023 messages of up to 8 bytes, 341 of 64, 31 of 1024. */
enum { LANE_SLOTS = 1024, LANE_SLOT_BYTES = 32 };
enum { LANE_SKIP = UINT32_MAX };
/* The largest message that takes an answer slot (it fills the slot). */
enum { LANE_ANSWER_BYTES = 8 };

struct lane_header {
    _Atomic uint64_t seq;            /* the message's number + 1 once published */
    uint32_t context_id;
    int32_t source;
    int32_t tag;
    uint32_t bytes;                  /* LANE_SKIP: go on at the ring's start */
};

enum { LANE_HEADER_BYTES = sizeof(struct lane_header) };
_Static_assert(LANE_HEADER_BYTES + LANE_ANSWER_BYTES == LANE_SLOT_BYTES, "an answer fills one slot");
_Static_assert((LANE_HEADER_BYTES + LANE_MAX_BYTES + LANE_SLOT_BYTES - 1) / LANE_SLOT_BYTES + 1 <= LANE_SLOTS / 2,
               "a largest message and its successor slot fit twice in a ring");

union lane_slot {
    struct lane_header header;
    unsigned char raw[LANE_SLOT_BYTES];
};

/* An offer: a message of more than LANE_MAX_BYTES, up to both
 * LANE_OFFER_MAX_BYTES and the eager limit, from a rank that is not
 * MPI_THREAD_MULTIPLE, goes into the ring as a description of the
 * sender's buffer (after the header, where a short message's data would
 * be). The receiver copies straight from that buffer
 * into the posted receive (or, unmatched, into an eager envelope) and
 * signals the send's completion: one copy, and none of the mailbox path's
 * lines (the receiver's lock, the posted request) cross between the cores.
 * `state` decides who has the data, by one compare-and-swap from OPEN:
 *  - TAKEN: the receiver (consumer) copies from `buf`, then signals `done`;
 *  - EAGER: the sender withdrew the offer, its copy in `eager` (stored
 *    before the swap; the consumer copies from it and frees it), and its
 *    send is complete. A sender withdraws an offer when the receiver took
 *    nothing from the lane for LANE_OFFER_WAIT_NS (a receiver that drains
 *    a stream slower than the sender sends is still taking), and all of
 *    them before its thread sleeps or finalizes: so a standard send of
 *    that size never waits long for a receiver that is busy elsewhere, as
 *    with an eager protocol (lane_offers_progress);
 *  - CANCELLED: MPI_Cancel of the send; the consumer skips the message.
 * The slots stay where they are whatever the state, so the offer keeps its
 * place in the sender's order. Only the sending rank's thread writes the
 * ring, so the slot of an offer cannot be reused before the consumer's
 * published `head` has passed it: the sender looks at `state` only while
 * `head` has not. */
enum { LANE_OFFER_OPEN = 0, LANE_OFFER_TAKEN = 1, LANE_OFFER_EAGER = 2, LANE_OFFER_CANCELLED = 3 };
struct lane_offer {
    _Atomic uint32_t state;
    int count;
    const void *buf;
    MPI_Datatype type;
    struct completion *done;         /* the send's (a request's, or a blocking send's own) */
    void *eager;                     /* EAGER: the sender's copy, packed */
};

static inline struct lane_offer *lane_offer_of(union lane_slot *s)
{
    return (struct lane_offer *)(s->raw + LANE_HEADER_BYTES);
}

/* An offer's header carries its size with this bit set (a SKIP has it
 * too, but lane_message_at never returns a SKIP). */
#define LANE_OFFER_FLAG UINT32_C(0x80000000)

static inline bool lane_is_offer(const union lane_slot *s)
{
    return (s->header.bytes & LANE_OFFER_FLAG) != 0;
}

/* The size of the message in `s` (an offer's without its flag). */
static inline uint32_t lane_message_bytes(const union lane_slot *s)
{
    return s->header.bytes & ~LANE_OFFER_FLAG;
}

/* Messages of more than this and up to LANE_MAX_BYTES travel as offers
 * in a one-way stream: when the sender took nothing from the receiver
 * since its last LANE_QUIET_SENDS messages on the lane (nonblocking
 * standard sends only). There an offer halves the copies' line transfers
 * (the receiver copies from the sender's buffer, not the sender into
 * the ring and the receiver out of it); where the two ranks exchange
 * (a halo, a ping-pong) the ring's copy is faster, since each side then
 * touches lines the other just wrote either way (doc/performance.md §31). */
enum { LANE_STREAM_OFFER_MIN_BYTES = 512, LANE_QUIET_SENDS = 8 };

/* The largest message that travels as an offer (and at most the eager
 * limit). Above it the sender's copy into a posted receive is faster in a
 * stream whose data nobody touches: there the receiver's buffers stay in
 * the sender's cache, while an offer makes the receiver read the sender's
 * buffers from the other core (doc/performance.md §28). */
enum { LANE_OFFER_MAX_BYTES = 4096 };

/* How long an offer waits while its receiver takes nothing from the lane,
 * before its sender withdraws it. */
enum { LANE_OFFER_WAIT_NS = 5000 };

/* Offers a rank has made and not yet seen taken: its thread's alone (a
 * ring holds at most 511 offers; a sender streaming into 16 lanes rarely
 * has more than a few hundred open). */
enum { LANE_OFFERS_MAX = 256 };
/* pt2pt_progress reads the clock for the offers' deadlines once per this
 * many calls (a clock read costs about as much as a poll). */
enum { LANE_OFFER_POLLS = 32 };
struct lane_offer_record {
    struct lane *lane;
    uint64_t position;               /* of its first slot in the ring */
    struct completion *done;
    uint64_t deadline_ns;            /* CLOCK_MONOTONIC; 0: the next clock read sets it */
    uint64_t head_seen;              /* the consumer's head at the last look */
};

struct lane_pair;

struct lane {
    /* The producer's line (the sending rank's threads). */
    _Alignas(64) uint64_t number;    /* of the next message */
    uint64_t tail;                   /* ring position of the next message */
    uint64_t room_end;               /* head + LANE_SLOTS, as last read */
    uint64_t stalled_next;           /* `next` when a wait for room last gave up (+ 1; 0: none) */
    union lane_slot *answer_out;     /* the answer slot (set when the lane is made; a copy of
                                      * answer_slot, so that each side reads only its own line) */
    struct lane_pair *pair;          /* its block (set when the lane is made) */
    uint64_t run;                    /* messages since answer_due was last seen (an answer needs 1) */
    const _Atomic uint64_t *opposite_next; /* the opposite lane's `next` (set when the lane is made; NULL
                                      * to itself): a copy of `opposite` on this line, as answer_out */
    uint64_t opposite_next_seen;     /* its value at the last look (lane_stream_quiet) */
    uint64_t number_at_reply;        /* `number` when that last changed */
    atomic_bool answer_due;          /* the opposite lane's last drain took one message */
    int sender_uid, receiver_uid;
    struct lite_lock producer_lock;  /* MPI_THREAD_MULTIPLE senders */
    struct lane *owned_next;         /* the sender's list (outgoing_lanes.owned) */
    /* The consumer's line: written by whoever holds the receiver's mailbox. */
    _Alignas(64) _Atomic uint64_t head;
    _Atomic uint64_t next;           /* the number of the next message to take */
    union lane_slot *answer_slot;    /* the answer slot (set when the lane is made) */
    struct lane *opposite;           /* the block's other lane (set when made; NULL to itself) */
    _Alignas(64) union lane_slot slots[LANE_SLOTS];
};

/* Both directions between two ranks (side 0: from the lower uid). */
struct lane_pair {
    union lane_slot answer_slots[2];     /* first: the block is aligned to a line */
    atomic_int refs;                     /* the sender's and the receiver's of each lane made */
    struct lane side[2];
};

static inline union lane_slot *lane_slot_at(struct lane *l, uint64_t pos)
{
    return &l->slots[pos % LANE_SLOTS];
}

/* The slots a message takes whose header says `bytes` (an offer's has
 * LANE_OFFER_FLAG). */
static inline uint64_t lane_slots_for(uint32_t bytes)
{
    if (bytes & LANE_OFFER_FLAG)
        bytes = sizeof(struct lane_offer);
    return (LANE_HEADER_BYTES + (uint64_t)bytes + LANE_SLOT_BYTES - 1) / LANE_SLOT_BYTES;
}

/* copy_bulk (util/copy.h), with up to 64 bytes moved inline
 * (util/cache.h): a small message's copy is then a few instructions, not
 * a call. */
static inline void copy_bytes(void *dst, const void *src, size_t n)
{
    if (n > 64)
        copy_bulk(dst, src, n);
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
 * receiver has MAILBOX_LANES already) or no room, and, with `may_offer`
 * (the caller will try lane_offer next), when it is to be offered in a
 * one-way stream (LANE_STREAM_OFFER_MIN_BYTES): the caller then takes
 * the mailbox path, which drains the lanes first. Any thread of a rank,
 * with `self` its rank. */
bool lane_send(struct rank *self, struct rank *dest, const struct message *m, bool may_offer);

/* Offers `m` (above LANE_STREAM_OFFER_MIN_BYTES, up to
 * LANE_OFFER_MAX_BYTES and the eager limit, not synchronous; up to
 * LANE_MAX_BYTES only after lane_send declined it) to `dest` through the
 * sender's lane; `done` is signalled
 * when the receiver has copied it or the sender withdrew it, and must stay
 * valid until then. False when it may not (MPI_THREAD_MULTIPLE, no lane,
 * no room, LANE_OFFERS_MAX offers outstanding): the caller takes the
 * mailbox path. The rank's thread, `self` its rank. */
bool lane_offer(struct rank *self, struct rank *dest, const struct message *m, struct completion *done);

/* The sender's side of its offers: gives those made since the last call
 * their deadline; once the earliest deadline passed (until then it reads
 * only the clock, no line the receiver writes), forgets those taken,
 * withdraws those whose receiver took nothing from
 * the lane for LANE_OFFER_WAIT_NS (all of them with `all`: before the
 * rank's thread sleeps or finalizes). The rank's thread, from
 * pt2pt_progress. */
void lane_offers_progress(struct rank *self, bool all);

/* MPI_Cancel of a send whose offer nobody took yet: true when cancelled. */
bool lane_offer_cancel(struct rank *self, struct completion *done);

/* ---- consumer (whoever holds the receiver's mailbox) ---- */

/* The consumer's place in a lane: the number of the message it takes
 * next, and where the ring's next message is. */
struct lane_cursor {
    uint64_t next, head;
};

static inline struct lane_cursor lane_cursor_load(struct lane *l)
{
    return (struct lane_cursor){
        .next = atomic_load_explicit(&l->next, memory_order_relaxed),
        .head = atomic_load_explicit(&l->head, memory_order_relaxed),
    };
}

/* Message `c->next` if it is published (in the answer slot or the ring),
 * else NULL; steps `c->head` over a SKIP to the ring's start. The slots
 * stay the consumer's to read until lane_cursor_step() passes them. */
static inline union lane_slot *lane_message_at(struct lane *l, struct lane_cursor *c)
{
    uint64_t want = c->next + 1;
    for (;;) {
        union lane_slot *s = lane_slot_at(l, c->head);
        if (atomic_load_explicit(&s->header.seq, memory_order_acquire) != want)
            break;
        if (STRAND_LIKELY(s->header.bytes != LANE_SKIP))
            return s;
        c->head += LANE_SLOTS - c->head % LANE_SLOTS;
    }
    union lane_slot *s = l->answer_slot;
    return atomic_load_explicit(&s->header.seq, memory_order_acquire) == want ? s : NULL;
}

/* Moves the cursor past message `s` (just returned by lane_message_at and
 * copied): an answer slot is given back at once, ring slots by
 * lane_consumed. */
static inline void lane_cursor_step(struct lane *l, struct lane_cursor *c, union lane_slot *s)
{
    if (s == l->answer_slot)
        atomic_store_explicit(&s->header.seq, 0, memory_order_release);
    else
        c->head += lane_slots_for(s->header.bytes);
    c->next++;
}

/* Whether the next message is published (a hint). */
static inline bool lane_ready(struct lane *l)
{
    struct lane_cursor c = lane_cursor_load(l);
    uint64_t want = c.next + 1;
    return atomic_load_explicit(&lane_slot_at(l, c.head)->header.seq, memory_order_relaxed) == want ||
           atomic_load_explicit(&l->answer_slot->header.seq, memory_order_relaxed) == want;
}

/* Gives the ring's slots before the cursor back to the producer; `taken`
 * messages were taken since the cursor was loaded. Taking exactly one
 * makes the receiver's next short message to the sender an answer. */
static inline void lane_consumed(struct lane *l, const struct lane_cursor *c, uint64_t taken)
{
    atomic_store_explicit(&l->next, c->next, memory_order_relaxed);
    atomic_store_explicit(&l->head, c->head, memory_order_release);
    if (taken == 1 && l->opposite != NULL)
        atomic_store_explicit(&l->opposite->answer_due, true, memory_order_relaxed);
}

/* When a rank ends: its share of the lanes into and out of it. */
void lanes_release(struct rank *r);

#endif
