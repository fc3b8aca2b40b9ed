/* Lanes (lane.h): the producer's side, and a lane's life. The consumer's
 * side is the drain in mailbox.c. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/cache.h"
#include "lane.h"

/* ---- producer ---- */

enum { LANE_ROOM_POLLS = 2000 };

/* The ring is full up to `end`: waits a little for the receiver to drain
 * it, which it does while it posts receives or waits (a sender streaming
 * into a receiver that keeps up then stays in the lane, instead of taking
 * the receiver's lock). Gives up at once when the last wait gave up and
 * the receiver has taken nothing since (it is busy elsewhere): then the
 * message takes the mailbox path, so a send never waits for a receiver. */
static bool lane_wait_room(struct lane *l, uint64_t end)
{
    if (atomic_load_explicit(&l->next, memory_order_relaxed) + 1 == l->stalled_next)
        return false;
    for (int i = 0; i < LANE_ROOM_POLLS; i++) {
        cpu_relax();
        uint64_t head = atomic_load_explicit(&l->head, memory_order_acquire);
        if (end <= head + LANE_SLOTS) {
            l->room_end = head + LANE_SLOTS;
            return true;
        }
    }
    l->stalled_next = atomic_load_explicit(&l->next, memory_order_relaxed) + 1;
    return false;
}

/* Asks for the lines of the `n` slots from position `first` (which do not
 * wrap past the ring's end: those are skipped), one prefetch per line. */
static inline void prefetch_slots_for_write(struct lane *l, uint64_t first, uint64_t n)
{
    uint64_t at = first % LANE_SLOTS, end = at + n < LANE_SLOTS ? at + n : LANE_SLOTS;
    const char *p = (const char *)&l->slots[at], *stop = (const char *)&l->slots[end];
    for (p = (const char *)((uintptr_t)p & ~(uintptr_t)63); p < stop; p += 64)
        prefetch_for_write(p);
}

/* The header's `bytes` of `m`: an offer (with `done`) carries the flag. */
static inline uint32_t header_bytes_of(const struct message *m, const struct completion *done)
{
    return (uint32_t)m->bytes | (done != NULL ? LANE_OFFER_FLAG : 0);
}

static inline void header_fill(union lane_slot *s, const struct message *m, struct completion *done)
{
    s->header.context_id = m->context_id;
    s->header.source = m->source;
    s->header.tag = m->tag;
    s->header.bytes = header_bytes_of(m, done);
    if (done == NULL) {
        message_copy(s->raw + LANE_HEADER_BYTES, m->bytes, MPI_BYTE, m->buf, (size_t)m->count, m->type);
        return;
    }
    struct lane_offer *o = lane_offer_of(s);
    atomic_store_explicit(&o->state, LANE_OFFER_OPEN, memory_order_relaxed);
    o->count = m->count;
    o->buf = m->buf;
    o->type = m->type;
    o->done = done;
    o->eager = NULL;
}

/* An answer (lane.h) into the answer slot, as number `number`; false
 * when it is not one or the slot is not free. */
static inline bool lane_put_answer(struct lane *l, const struct message *m, uint64_t number)
{
    uint64_t run = l->run;
    l->run = run + 1;
    if (m->bytes > LANE_ANSWER_BYTES || !atomic_load_explicit(&l->answer_due, memory_order_relaxed))
        return false;
    atomic_store_explicit(&l->answer_due, false, memory_order_relaxed);
    l->run = 1;
    if (run != 1)
        return false;           /* a burst came before: a stream, whose ring is cheaper */
    union lane_slot *s = l->answer_out;
    if (atomic_load_explicit(&s->header.seq, memory_order_acquire) != 0)
        return false;
    header_fill(s, m, NULL);
    atomic_store_explicit(&s->header.seq, number + 1, memory_order_release);
    return true;
}

/* Into the ring, as number `number`. */
static inline bool lane_put_ring(struct lane *l, const struct message *m, uint64_t number, bool may_wait,
                                 struct completion *done, uint64_t *at)
{
    uint64_t pos = l->tail;
    uint64_t k = lane_slots_for(header_bytes_of(m, done));
    uint64_t start = pos % LANE_SLOTS + k > LANE_SLOTS ? pos + (LANE_SLOTS - pos % LANE_SLOTS) : pos;
    uint64_t end = start + k + 1;    /* + the successor slot, cleared below */
    if (end > l->room_end) {
        l->room_end = atomic_load_explicit(&l->head, memory_order_acquire) + LANE_SLOTS;
        if (end > l->room_end && !(may_wait && lane_wait_room(l, end)))
            return false;
    }
    union lane_slot *s = lane_slot_at(l, start);
    header_fill(s, m, done);
    atomic_store_explicit(&lane_slot_at(l, start + k)->header.seq, 0, memory_order_relaxed);
    atomic_store_explicit(&s->header.seq, number + 1, memory_order_release);
    if (start != pos) {
        /* Published after the message it points to: the consumer reads
         * that one only after this. */
        union lane_slot *skip = lane_slot_at(l, pos);
        skip->header.bytes = LANE_SKIP;
        atomic_store_explicit(&skip->header.seq, number + 1, memory_order_release);
    }
    l->tail = start + k;
    *at = start;
    /* The next message, if it is as long as this one, writes the slots
     * after this one and clears the slot after it before it publishes;
     * stores become visible in order, so taking those lines back from the
     * receiver (it read them a ring ago) would delay the next publish.
     * Ask for them now; not for the next message's first slot (the
     * receiver polls that one), nor for slots the receiver may still be
     * reading (past room_end). */
    if (start + 2 * k < l->room_end)
        prefetch_slots_for_write(l, start + k + 1, k);
    return true;
}

/* `may_wait`: the receiver is another rank (not the caller itself). */
static inline bool lane_put(struct lane *l, const struct message *m, bool may_wait)
{
    uint64_t number = l->number, at;
    if (!lane_put_answer(l, m, number) && !lane_put_ring(l, m, number, may_wait, NULL, &at))
        return false;
    l->number = number + 1;
    return true;
}

static int lane_side(int sender_uid, int receiver_uid)
{
    return sender_uid > receiver_uid;
}

/* The block for the lane from `self` to uid `them` (its `side`): the one
 * of the opposite lane if `them` made it already (found in `self`'s own
 * mailbox, whose lane list only grows while `self` runs) and that side of
 * it is free, else a new one. (A side is taken only here, by `self`, under
 * the receiver's mailbox lock; it can be taken already when `self` opens a
 * lane again to a receiver that ended and dropped its lanes.) */
static struct lane_pair *lane_pair_for(struct rank *self, int them, int side)
{
    struct mailbox *own = &self->pt2pt.mailbox;
    int n = atomic_load_explicit(&own->nlanes, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        struct lane_pair *pair = own->lanes[i]->pair;
        if (own->lanes[i]->sender_uid == them && them != rank_uid(self) && pair->side[side].pair == NULL)
            return pair;
    }
    struct lane_pair *pair = aligned_alloc(_Alignof(struct lane_pair), sizeof *pair);
    if (pair != NULL)
        memset(pair, 0, sizeof *pair);
    return pair;
}

/* A new lane from `self` to uid `them`; NULL when out of memory. An
 * existing block stays alive meanwhile: its opposite lane is in `self`'s
 * mailbox, whose reference `self` drops only when it ends. */
static struct lane *lane_create(struct rank *self, int them)
{
    int me = rank_uid(self), side = lane_side(me, them);
    struct lane_pair *pair = lane_pair_for(self, them, side);
    if (pair == NULL)
        return NULL;
    struct lane *l = &pair->side[side];
    l->answer_slot = l->answer_out = &pair->answer_slots[side];
    l->opposite = me != them ? &pair->side[1 - side] : NULL;
    l->opposite_next = l->opposite != NULL ? &l->opposite->next : NULL;
    l->pair = pair;
    l->sender_uid = me;
    l->receiver_uid = them;
    l->room_end = LANE_SLOTS;
    atomic_fetch_add_explicit(&pair->refs, 2, memory_order_relaxed);
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
    bool biased = mailbox_lock(dest);
    int n = atomic_load_explicit(&mb->nlanes, memory_order_relaxed);
    for (int i = 0; i < n && l == NULL; i++)
        if (mb->lanes[i]->sender_uid == me)
            l = mb->lanes[i];
    if (l == NULL && n < MAILBOX_LANES && (l = lane_create(self, them)) != NULL) {
        mb->lanes[n] = l;
        atomic_store_explicit(&mb->nlanes, n + 1, memory_order_release);
        created = true;
    }
    mailbox_unlock(dest, biased);
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

/* The sender's lane to `dest`, opened on first use; NULL if it has none. */
static inline struct lane *outgoing_lane(struct rank *self, struct rank *dest)
{
    struct outgoing_lanes *out = &self->pt2pt.lanes_out;
    int them = rank_uid(dest);
    unsigned entry = (unsigned)them % OUTGOING_LANE_CACHE;
    struct lane *l = atomic_load_explicit(&out->cache[entry], memory_order_acquire);
    if (STRAND_LIKELY(l != NULL && l->receiver_uid == them))
        return l;
    /* A receiver with all its lanes taken stays so: no lane ever. */
    if (atomic_load_explicit(&out->denied[entry], memory_order_relaxed) == them + 1)
        return NULL;
    return lane_open(self, dest, entry);
}

/* Whether `self` may offer to `dest` (lane.h, struct lane_offer). */
static inline bool lane_offers_allowed(const struct rank *self, const struct rank *dest)
{
    return strand_node.light_wakes && self != NULL && dest != self && dest->remote == NULL &&
           self->thread_level != MPI_THREAD_MULTIPLE;
}

/* Whether the sender took nothing from the receiver during its last
 * LANE_QUIET_SENDS messages on `l`: it reads the opposite lane's `next`,
 * which its own mailbox's holder writes (no line of the receiver's). */
static inline bool lane_stream_quiet(struct lane *l)
{
    uint64_t taken = l->opposite_next != NULL ? atomic_load_explicit(l->opposite_next, memory_order_relaxed) : 0;
    if (taken != l->opposite_next_seen) {
        l->opposite_next_seen = taken;
        l->number_at_reply = l->number;
    }
    return l->number - l->number_at_reply >= LANE_QUIET_SENDS;
}

bool lane_send(struct rank *self, struct rank *dest, const struct message *m, bool may_offer)
{
    if (m->bytes > LANE_MAX_BYTES || !strand_node.light_wakes || self == NULL || dest->remote != NULL)
        return false;
    struct lane *l = outgoing_lane(self, dest);
    if (l == NULL)
        return false;
    if (m->bytes > LANE_STREAM_OFFER_MIN_BYTES && may_offer && lane_offers_allowed(self, dest) &&
        lane_stream_quiet(l))
        return false;
    bool shared = self->thread_level == MPI_THREAD_MULTIPLE;
    if (STRAND_UNLIKELY(shared))
        lite_lock(&l->producer_lock);
    bool sent = lane_put(l, m, dest != self);
    if (STRAND_UNLIKELY(shared))
        lite_unlock(&l->producer_lock);
    if (sent)
        rank_wake_light(dest);
    return sent;
}

/* ---- offers (lane.h, struct lane_offer) ---- */

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Looks at every record: forgets the offers taken (or withdrawn or
 * cancelled); with `now`, withdraws those past their deadline whose
 * receiver took nothing from the lane since the last look, and gives the
 * others a new deadline; with `now` UINT64_MAX, withdraws all. */
static void offers_sweep(struct outgoing_lanes *out, uint64_t now);

bool lane_offer(struct rank *self, struct rank *dest, const struct message *m, struct completion *done)
{
    if (!lane_offers_allowed(self, dest))
        return false;
    struct outgoing_lanes *out = &self->pt2pt.lanes_out;
    if (out->noffers == LANE_OFFERS_MAX)
        offers_sweep(out, 0);
    if (out->noffers == LANE_OFFERS_MAX)
        return false;
    if (out->offers == NULL && (out->offers = malloc(LANE_OFFERS_MAX * sizeof *out->offers)) == NULL)
        return false;
    struct lane *l = outgoing_lane(self, dest);
    uint64_t number, at;
    if (l == NULL || !lane_put_ring(l, m, number = l->number, true, done, &at))
        return false;
    l->number = number + 1;
    l->run++;                   /* not a short answer: the next one is not either */
    /* Its deadline is set at pt2pt_progress's next clock read
     * (offers_stamp): a clock read here would cost as much as a whole
     * message of a stream between near cores. */
    out->offers_due_ns = 0;
    out->offers[out->noffers++] = (struct lane_offer_record){
        .lane = l, .position = at, .done = done, .deadline_ns = 0,
        .head_seen = l->room_end - LANE_SLOTS,      /* the head as last read: no load of its line */
    };
    rank_wake_light(dest);
    return true;
}

/* The offer of `r` while it may still be taken, else NULL (taken,
 * withdrawn or cancelled: the record can go); `*head` is the consumer's
 * head. Its slot is not reused before that head passed it (lane.h). */
static struct lane_offer *offer_open(const struct lane_offer_record *r, uint64_t *head)
{
    *head = atomic_load_explicit(&r->lane->head, memory_order_acquire);
    if (*head > r->position)
        return NULL;
    struct lane_offer *o = lane_offer_of(lane_slot_at(r->lane, r->position));
    return atomic_load_explicit(&o->state, memory_order_acquire) == LANE_OFFER_OPEN ? o : NULL;
}

/* Sends the sender's own copy instead: the send is complete, unless the
 * receiver took the offer meanwhile (it then signals the completion). */
static void offer_withdraw(const struct lane_offer_record *r, struct lane_offer *o)
{
    size_t bytes = lane_message_bytes(lane_slot_at(r->lane, r->position));
    void *copy = malloc(bytes);
    if (copy == NULL)
        strand_job_abort(1, "Strand MPI: out of memory for an eager message\n");
    dt_pack(copy, o->buf, (size_t)o->count, o->type);
    o->eager = copy;
    uint32_t open = LANE_OFFER_OPEN;
    if (atomic_compare_exchange_strong_explicit(&o->state, &open, LANE_OFFER_EAGER, memory_order_release,
                                                memory_order_relaxed))
        completion_signal(r->done);
    else
        free(copy);
}

static void offers_sweep(struct outgoing_lanes *out, uint64_t now)
{
    int kept = 0;
    uint64_t due = UINT64_MAX;
    for (int i = 0; i < out->noffers; i++) {
        struct lane_offer_record *r = &out->offers[i];
        uint64_t head;
        struct lane_offer *o = offer_open(r, &head);
        if (o == NULL)
            continue;
        if (now != 0 && now >= r->deadline_ns) {
            if (now == UINT64_MAX || head == r->head_seen) {
                offer_withdraw(r, o);
                continue;
            }
            r->head_seen = head;        /* the receiver is taking: wait on */
            r->deadline_ns = now + LANE_OFFER_WAIT_NS;
        }
        if (r->deadline_ns < due)
            due = r->deadline_ns;
        out->offers[kept++] = *r;
    }
    out->noffers = kept;
    out->offers_due_ns = due;
}

/* Gives the offers made since the last clock read their deadline
 * (lane_offer leaves it 0), reading none of the lines the receiver
 * writes. */
static void offers_stamp(struct outgoing_lanes *out, uint64_t now)
{
    uint64_t due = UINT64_MAX;
    for (int i = 0; i < out->noffers; i++) {
        struct lane_offer_record *r = &out->offers[i];
        if (r->deadline_ns == 0)
            r->deadline_ns = now + LANE_OFFER_WAIT_NS;
        if (r->deadline_ns < due)
            due = r->deadline_ns;
    }
    out->offers_due_ns = due;
}

void lane_offers_progress(struct rank *self, bool all)
{
    struct outgoing_lanes *out = &self->pt2pt.lanes_out;
    uint64_t now = all ? UINT64_MAX : monotonic_ns();
    if (out->offers_due_ns == 0 && !all)
        offers_stamp(out, now);
    if (now >= out->offers_due_ns)
        offers_sweep(out, now);
}

bool lane_offer_cancel(struct rank *self, struct completion *done)
{
    struct outgoing_lanes *out = &self->pt2pt.lanes_out;
    for (int i = 0; i < out->noffers; i++) {
        struct lane_offer_record *r = &out->offers[i];
        struct lane_offer *o;
        uint64_t head;
        if (r->done != done || (o = offer_open(r, &head)) == NULL)
            continue;
        uint32_t open = LANE_OFFER_OPEN;
        if (!atomic_compare_exchange_strong_explicit(&o->state, &open, LANE_OFFER_CANCELLED,
                                                     memory_order_relaxed, memory_order_relaxed))
            return false;       /* taken: the receive completes the send */
        out->offers[i] = out->offers[--out->noffers];
        return true;
    }
    return false;
}

/* ---- end of a rank ---- */

/* The copies of withdrawn offers nobody received (the program ended
 * without receiving them). */
static void lane_free_unreceived(struct lane *l)
{
    struct lane_cursor c = lane_cursor_load(l);
    union lane_slot *s;
    while ((s = lane_message_at(l, &c)) != NULL) {
        if (lane_is_offer(s) && atomic_load_explicit(&lane_offer_of(s)->state, memory_order_acquire) ==
                                    LANE_OFFER_EAGER)
            free(lane_offer_of(s)->eager);
        lane_cursor_step(l, &c, s);
    }
}

static void lane_unref(struct lane *l)
{
    struct lane_pair *pair = l->pair;
    if (atomic_fetch_sub_explicit(&pair->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int side = 0; side < 2; side++)
        if (pair->side[side].pair != NULL)
            lane_free_unreceived(&pair->side[side]);
    free(pair);
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
    free(out->offers);
    out->offers = NULL;
    out->noffers = 0;
    for (int i = 0; i < OUTGOING_LANE_CACHE; i++)
        atomic_store_explicit(&out->cache[i], NULL, memory_order_relaxed);
}
