/* The matching engine: a rank's mailbox holds its posted receives and the
 * messages that arrived before a matching receive (unexpected). Senders
 * match into it under its lock; all data copies happen outside the lock
 * except the eager copy of a small unexpected message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "../net/net.h"
#include "lane.h"
#include "pt2pt.h"

enum { ENVELOPE_INLINE_BYTES = 256 };

/* What an unexpected message holds: its data (eager), a pointer to the
 * local sender's buffer (rendezvous), or a remote sender's envelope whose
 * data the network module pulls when a receive matches it. */
enum envelope_kind { ENVELOPE_EAGER, ENVELOPE_RENDEZVOUS, ENVELOPE_REMOTE };

struct envelope {
    struct atomic_stack_node link;   /* first: given back through an atomic stack */
    struct envelope *next;
    uint32_t context_id;
    int source;
    int tag;
    size_t bytes;
    uint8_t kind;                    /* enum envelope_kind */
    struct net_pull *pull;           /* remote: the module's handle of the message */
    char *data;                      /* eager payload: inline_data or a kept heap buffer */
    size_t capacity;
    const void *send_buf;            /* rendezvous: the sender's data */
    int send_count;
    MPI_Datatype send_type;
    struct completion *done;
    char inline_data[ENVELOPE_INLINE_BYTES];
};

static inline bool matches(uint32_t want_context, int want_source, int want_tag,
                           uint32_t context, int source, int tag)
{
    return want_context == context && (want_source == MPI_ANY_SOURCE || want_source == source) &&
           (want_tag == MPI_ANY_TAG || want_tag == tag);
}

/* ---- envelope pool (under the mailbox lock) ---- */

static struct envelope *envelope_get(struct mailbox *mb)
{
    if (mb->free_envelopes == NULL)
        mb->free_envelopes = (struct envelope *)atomic_stack_take_all(&mb->returned_envelopes);
    struct envelope *env = mb->free_envelopes;
    if (env != NULL) {
        mb->free_envelopes = (struct envelope *)env->link.next;
        return env;
    }
    env = malloc(sizeof *env);
    if (env == NULL)
        strand_job_abort(1, "Strand MPI: out of memory for an unexpected message\n");
    env->data = env->inline_data;
    env->capacity = ENVELOPE_INLINE_BYTES;
    return env;
}

static void envelope_give_back(struct mailbox *mb, struct envelope *env)
{
    atomic_stack_push(&mb->returned_envelopes, &env->link);
}

static void envelope_reserve(struct envelope *env, size_t bytes)
{
    if (bytes <= env->capacity)
        return;
    char *grown = env->data == env->inline_data ? malloc(bytes) : realloc(env->data, bytes);
    if (grown == NULL)
        strand_job_abort(1, "Strand MPI: out of memory for an eager message\n");
    env->data = grown;
    env->capacity = bytes;
}

static void envelope_destroy_list(struct envelope *env)
{
    while (env != NULL) {
        struct envelope *next = (struct envelope *)env->link.next;
        if (env->data != env->inline_data)
            free(env->data);
        free(env);
        env = next;
    }
}

/* ---- queues (under the mailbox lock) ---- */

static struct strand_request *posted_take_match(struct mailbox *mb, const struct message *m)
{
    struct strand_request *prev = NULL;
    for (struct strand_request *req = mb->posted_head; req != NULL; prev = req, req = req->next) {
        if (!matches(req->context_id, req->peer, req->tag, m->context_id, m->source, m->tag))
            continue;
        if (prev == NULL)
            mb->posted_head = req->next;
        else
            prev->next = req->next;
        if (mb->posted_tail == req)
            mb->posted_tail = prev;
        return req;
    }
    return NULL;
}

static void posted_append(struct mailbox *mb, struct strand_request *req)
{
    req->next = NULL;
    if (mb->posted_tail == NULL)
        mb->posted_head = req;
    else
        mb->posted_tail->next = req;
    mb->posted_tail = req;
}

static void unexpected_append(struct mailbox *mb, struct envelope *env)
{
    env->next = NULL;
    if (mb->unexpected_tail == NULL)
        mb->unexpected_head = env;
    else
        mb->unexpected_tail->next = env;
    mb->unexpected_tail = env;
}

static void unexpected_unlink(struct mailbox *mb, struct envelope *prev, struct envelope *env)
{
    if (prev == NULL)
        mb->unexpected_head = env->next;
    else
        prev->next = env->next;
    if (mb->unexpected_tail == env)
        mb->unexpected_tail = prev;
}

static struct envelope *unexpected_find(struct mailbox *mb, uint32_t context, int source, int tag,
                                        struct envelope **prev_out)
{
    struct envelope *prev = NULL;
    for (struct envelope *env = mb->unexpected_head; env != NULL; prev = env, env = env->next) {
        if (matches(context, source, tag, env->context_id, env->source, env->tag)) {
            *prev_out = prev;
            return env;
        }
    }
    return NULL;
}

/* ---- completing a receive ---- */

static void receive_status(struct strand_request *req, int source, int tag, size_t sent, size_t copied)
{
    req->status.MPI_SOURCE = source;
    req->status.MPI_TAG = tag;
    req->status.MPI_ERROR = sent > copied ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    req->status.strand_cancelled = 0;
    req->status.strand_count = (long long)copied;
}

/* One copy into the receive buffer; a tiny message for a blocking MPI_Recv
 * goes into the request's first line instead, next to the completion word
 * the receiver polls, and the receiver copies it out (see pt2pt.h). When
 * the receiving rank itself delivers (draining its lanes) it copies
 * straight into the buffer, and wakes nobody unless other threads of it
 * may be waiting. */
static void deliver_to_posted(struct strand_request *req, const struct message *m)
{
    /* Read before writing the line it shares with the status: a load from
     * a line whose ownership is in flight would stall for the transfer. */
    struct rank *owner = req->done.owner;
    bool by_owner = owner == strand_self;
    size_t copied;
    if (!by_owner && req->accepts_payload && m->bytes <= REQUEST_PAYLOAD_BYTES &&
        m->bytes <= (size_t)req->count * req->type->size) {
        copied = dt_pack(req->payload, m->buf, (size_t)m->count, m->type);
        req->done.payload_inline = true;
    } else {
        copied = message_copy(req->buf, (size_t)req->count, req->type, m->buf, (size_t)m->count, m->type);
    }
    receive_status(req, m->source, m->tag, m->bytes, copied);
    if (by_owner && owner->thread_level != MPI_THREAD_MULTIPLE)
        atomic_store_explicit(&req->done.state, COMPLETION_DONE, memory_order_release);
    else
        completion_signal_owner(&req->done, owner);
}

/* A small message into the unexpected queue, its data copied in. */
static void unexpected_append_eager(struct mailbox *mb, const struct message *m)
{
    struct envelope *env = envelope_get(mb);
    env->context_id = m->context_id;
    env->source = m->source;
    env->tag = m->tag;
    env->bytes = m->bytes;
    envelope_reserve(env, m->bytes);
    dt_pack(env->data, m->buf, (size_t)m->count, m->type);
    env->kind = ENVELOPE_EAGER;
    env->done = NULL;
    unexpected_append(mb, env);
}

/* ---- lanes (lane.h): the consumer's side, under the mailbox lock ---- */

/* One message from a lane, matched into the posted queue or queued
 * unexpected (eager). Returns the receive it completed, or NULL; sets
 * `*wake` when a blocked prober must be woken. */
static struct strand_request *match_eager(struct mailbox *mb, const struct message *m, bool *wake)
{
    struct strand_request *req = posted_take_match(mb, m);
    if (req != NULL) {
        deliver_to_posted(req, m);
        return req;
    }
    unexpected_append_eager(mb, m);
    *wake |= mb->probers > 0;
    return NULL;
}

/* An offer (lane.h, struct lane_offer): taken, the data is copied from
 * the sender's buffer and the send completes; withdrawn, it comes from the
 * sender's copy; cancelled, it is skipped. */
static struct strand_request *match_offer(struct mailbox *mb, union lane_slot *s, bool *wake)
{
    struct lane_offer *o = lane_offer_of(s);
    struct message m = {
        .context_id = s->header.context_id,
        .source = s->header.source,
        .tag = s->header.tag,
        .bytes = lane_message_bytes(s),
    };
    uint32_t state = LANE_OFFER_OPEN;
    if (atomic_compare_exchange_strong_explicit(&o->state, &state, LANE_OFFER_TAKEN, memory_order_acquire,
                                                memory_order_acquire)) {
        m.buf = o->buf;
        m.count = o->count;
        m.type = o->type;
        struct completion *done = o->done;
        struct strand_request *req = match_eager(mb, &m, wake);
        completion_signal(done);
        return req;
    }
    if (state == LANE_OFFER_CANCELLED)
        return NULL;
    m.buf = o->eager;
    m.count = (int)m.bytes;
    m.type = MPI_BYTE;
    struct strand_request *req = match_eager(mb, &m, wake);
    free(o->eager);
    return req;
}

/* Takes the lane's messages in order; stops after the one that completes
 * `until` (if not NULL), and then returns true. */
static bool lane_drain(struct mailbox *mb, struct lane *l, const struct strand_request *until, bool *wake)
{
    struct lane_cursor c = lane_cursor_load(l);
    uint64_t first = c.next;
    bool reached = false;
    union lane_slot *s;
    while (!reached && (s = lane_message_at(l, &c)) != NULL) {
        if (STRAND_UNLIKELY(lane_is_offer(s))) {
            struct strand_request *completed = match_offer(mb, s, wake);
            reached = until != NULL && completed == until;
            lane_cursor_step(l, &c, s);
            continue;
        }
        struct message m = {
            .context_id = s->header.context_id,
            .source = s->header.source,
            .tag = s->header.tag,
            .buf = s->raw + LANE_HEADER_BYTES,
            .count = (int)s->header.bytes,
            .type = MPI_BYTE,
            .bytes = s->header.bytes,
        };
        struct strand_request *completed = match_eager(mb, &m, wake);
        reached = until != NULL && completed == until;
        lane_cursor_step(l, &c, s);
    }
    if (c.next != first)
        lane_consumed(l, &c, c.next - first);
    return reached;
}

/* Whether a lane into `mb` has a message waiting (a hint, lock-free). */
static bool lanes_pending(struct mailbox *mb)
{
    int n = atomic_load_explicit(&mb->nlanes, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (lane_ready(mb->lanes[i]))
            return true;
    return false;
}

/* Matches waiting lane messages into the mailbox: all of them, or (with
 * `until`) up to the one that completes that receive, leaving the rest in
 * their lanes. True when a blocked prober must be woken. */
static bool lanes_drain_until(struct mailbox *mb, const struct strand_request *until)
{
    int n = atomic_load_explicit(&mb->nlanes, memory_order_relaxed);
    bool wake = false;
    for (int i = 0; i < n; i++)
        if (lane_drain(mb, mb->lanes[i], until, &wake))
            break;
    return wake;
}

static bool lanes_drain(struct mailbox *mb)
{
    return lanes_drain_until(mb, NULL);
}

void pt2pt_progress(struct rank *self)
{
    struct mailbox *mb = &self->pt2pt.mailbox;
    struct outgoing_lanes *out = &self->pt2pt.lanes_out;
    if (STRAND_UNLIKELY(out->noffers > 0) && ++out->offer_polls % LANE_OFFER_POLLS == 0)
        lane_offers_progress(self, false);
    if (!lanes_pending(mb))
        return;
    bool biased = mailbox_lock(self);
    bool wake = lanes_drain(mb);
    mailbox_unlock(self, biased);
    if (wake)
        rank_wake(self);
}

void pt2pt_before_sleep(struct rank *self)
{
    if (self == strand_self && self->pt2pt.lanes_out.noffers > 0)
        lane_offers_progress(self, true);
}

/* A small message goes into the sender's lane to `dest` when it has one
 * with room (lane.h) and ranks do not outnumber cores (light wakes: with
 * more ranks than cores the lanes made a 64-rank halo exchange slower,
 * doc/performance.md §12); the rest take the mailbox path: under the
 * lock, the lanes are drained first (so nothing overtakes what a sender
 * put in its lane), then the posted queue is matched. */
enum delivery mailbox_deliver(struct rank *dest, const struct message *m, bool sync,
                              struct completion *done)
{
    /* A send waited for at once would wait for its offer to be taken: in
     * a stream the ring's copy lets it go on at once. */
    bool may_offer = !sync && !done->waited_at_once;
    if (!sync && lane_send(strand_self, dest, m, may_offer))
        return QUEUED_EAGER;
    /* An eager-sized message for a lane, or one lane_send declined in a
     * stream: an offer (lane.h). */
    if (!sync && m->bytes > (may_offer ? LANE_STREAM_OFFER_MIN_BYTES : LANE_MAX_BYTES) &&
        m->bytes <= LANE_OFFER_MAX_BYTES && m->bytes <= strand_node.config.eager_limit &&
        lane_offer(strand_self, dest, m, done))
        return QUEUED_RENDEZVOUS;
    struct mailbox *mb = &dest->pt2pt.mailbox;
    bool biased = mailbox_lock(dest);
    bool wake_probers = lanes_drain(mb);
    struct strand_request *req = posted_take_match(mb, m);
    if (req != NULL) {
        mailbox_unlock(dest, biased);
        if (wake_probers)
            rank_wake(dest);
        deliver_to_posted(req, m);
        return DELIVERED;
    }
    if (!sync && m->bytes <= strand_node.config.eager_limit) {
        unexpected_append_eager(mb, m);
        bool wake = mb->probers > 0;
        mailbox_unlock(dest, biased);
        if (wake)
            rank_wake(dest);
        return QUEUED_EAGER;
    }
    struct envelope *env = envelope_get(mb);
    env->context_id = m->context_id;
    env->source = m->source;
    env->tag = m->tag;
    env->bytes = m->bytes;
    env->kind = ENVELOPE_RENDEZVOUS;
    env->send_buf = m->buf;
    env->send_count = m->count;
    env->send_type = m->type;
    env->done = done;
    done->queued = env;
    unexpected_append(mb, env);
    bool wake = mb->probers > 0;
    mailbox_unlock(dest, biased);
    if (wake)
        rank_wake(dest);
    return QUEUED_RENDEZVOUS;
}

/* Returns false when the receive completes later: a remote message is
 * being pulled, and the module completes `req` (mailbox_receive_complete). */
static bool consume_envelope(struct mailbox *mb, struct strand_request *req, struct envelope *env)
{
    size_t copied;
    switch (env->kind) {
    case ENVELOPE_RENDEZVOUS:
        copied = dt_copy(req->buf, (size_t)req->count, req->type, env->send_buf,
                         (size_t)env->send_count, env->send_type);
        completion_signal(env->done);
        break;
    case ENVELOPE_REMOTE:
        net_pull(env->pull, req);
        envelope_give_back(mb, env);
        return false;
    default:
        copied = dt_unpack(req->buf, (size_t)req->count, req->type, env->data, env->bytes);
        break;
    }
    receive_status(req, env->source, env->tag, env->bytes, copied);
    envelope_give_back(mb, env);
    return true;
}

bool mailbox_post_receive(struct rank *self, struct strand_request *req)
{
    struct mailbox *mb = &self->pt2pt.mailbox;
    struct envelope *prev;
    bool biased = mailbox_lock(self);
    struct envelope *env = unexpected_find(mb, req->context_id, req->peer, req->tag, &prev);
    if (env == NULL) {
        /* Posted first, then the lanes drained: what waits in them arrived
         * after every unexpected message, and matches the posted receives
         * in post order as it would have at the next wait. Draining up to
         * this receive's message keeps the lanes flowing while a receiver
         * posts many receives, and leaves the messages behind it in their
         * lanes for the receives that follow: each is then copied once,
         * straight into its receive, not into an unexpected envelope first. */
        posted_append(mb, req);
        bool wake = lanes_pending(mb) && lanes_drain_until(mb, req);
        mailbox_unlock(self, biased);
        if (wake)
            rank_wake(self);
        return request_is_done(req);
    }
    unexpected_unlink(mb, prev, env);
    if (env->kind == ENVELOPE_RENDEZVOUS)
        env->done->queued = NULL;
    mailbox_unlock(self, biased);
    if (!consume_envelope(mb, req, env))
        return false;
    completion_signal(&req->done);
    return true;
}

/* ---- remote senders (called by the network progress thread) ---- */

struct strand_request *mailbox_deliver_remote(struct rank *dest, const struct message *m,
                                              struct net_pull *pull)
{
    struct mailbox *mb = &dest->pt2pt.mailbox;
    bool biased = mailbox_lock(dest);
    struct strand_request *req = posted_take_match(mb, m);
    if (req != NULL) {
        mailbox_unlock(dest, biased);
        if (pull != NULL)
            return req;     /* the caller pulls the data into it */
        deliver_to_posted(req, m);
        return NULL;
    }
    struct envelope *env = envelope_get(mb);
    env->context_id = m->context_id;
    env->source = m->source;
    env->tag = m->tag;
    env->bytes = m->bytes;
    env->done = NULL;
    if (pull != NULL) {
        env->kind = ENVELOPE_REMOTE;
        env->pull = pull;
    } else {
        /* The module's buffer is reused after we return: always a copy.
         * An empty message may come without a buffer (UCX gives a
         * zero-length frame's data as NULL), and memcpy's source must not
         * be NULL even for no bytes. */
        envelope_reserve(env, m->bytes);
        if (m->bytes > 0)
            copy_bulk(env->data, m->buf, m->bytes);
        env->kind = ENVELOPE_EAGER;
    }
    unexpected_append(mb, env);
    bool wake = mb->probers > 0;
    mailbox_unlock(dest, biased);
    if (wake)
        rank_wake(dest);
    return NULL;
}

struct net_pull *mailbox_withdraw_remote(struct rank *dest, bool (*is_it)(const struct net_pull *, const void *),
                                         const void *arg)
{
    struct mailbox *mb = &dest->pt2pt.mailbox;
    struct net_pull *found = NULL;
    bool biased = mailbox_lock(dest);
    struct envelope *prev = NULL, *env;
    for (env = mb->unexpected_head; env != NULL; prev = env, env = env->next) {
        if (env->kind == ENVELOPE_REMOTE && is_it(env->pull, arg)) {
            unexpected_unlink(mb, prev, env);
            found = env->pull;
            break;
        }
    }
    mailbox_unlock(dest, biased);
    if (found != NULL)
        envelope_give_back(mb, env);
    return found;
}

void mailbox_receive_complete(struct strand_request *req, int source, int tag, size_t sent, size_t copied)
{
    receive_status(req, source, tag, sent, copied);
    completion_signal(&req->done);
}

bool mailbox_probe(struct rank *self, uint32_t context_id, int source, int tag, MPI_Status *status,
                   int probers_change)
{
    struct mailbox *mb = &self->pt2pt.mailbox;
    struct envelope *prev;
    bool biased = mailbox_lock(self);
    mb->probers += probers_change;
    bool wake = lanes_drain(mb);
    struct envelope *env = unexpected_find(mb, context_id, source, tag, &prev);
    if (env != NULL && status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = env->source;
        status->MPI_TAG = env->tag;
        status->strand_count = (long long)env->bytes;
        status->strand_cancelled = 0;
    }
    mailbox_unlock(self, biased);
    if (wake)
        rank_wake(self);
    return env != NULL;
}

bool mailbox_cancel_receive(struct rank *self, struct strand_request *req)
{
    struct mailbox *mb = &self->pt2pt.mailbox;
    bool found = false;
    bool biased = mailbox_lock(self);
    struct strand_request *prev = NULL;
    for (struct strand_request *r = mb->posted_head; r != NULL; prev = r, r = r->next) {
        if (r != req)
            continue;
        if (prev == NULL)
            mb->posted_head = r->next;
        else
            prev->next = r->next;
        if (mb->posted_tail == r)
            mb->posted_tail = prev;
        found = true;
        break;
    }
    mailbox_unlock(self, biased);
    return found;
}

bool mailbox_cancel_send(struct rank *dest, struct completion *done)
{
    if (dest == NULL)
        return false;
    if (strand_self->pt2pt.lanes_out.noffers > 0 && lane_offer_cancel(strand_self, done))
        return true;
    struct mailbox *mb = &dest->pt2pt.mailbox;
    bool found = false;
    bool biased = mailbox_lock(dest);
    struct envelope *env = done->queued;
    if (env != NULL) {
        struct envelope *prev = NULL;
        for (struct envelope *e = mb->unexpected_head; e != NULL; prev = e, e = e->next) {
            if (e == env) {
                unexpected_unlink(mb, prev, env);
                found = true;
                break;
            }
        }
        done->queued = NULL;
    }
    mailbox_unlock(dest, biased);
    if (found)
        envelope_give_back(mb, env);
    return found;
}

void mailbox_destroy(struct mailbox *mb)
{
    envelope_destroy_list(mb->free_envelopes);
    envelope_destroy_list((struct envelope *)atomic_stack_take_all(&mb->returned_envelopes));
    /* Messages nobody received: the program ended without receiving them. */
    for (struct envelope *env = mb->unexpected_head; env != NULL;) {
        struct envelope *next = env->next;
        if (env->data != env->inline_data)
            free(env->data);
        free(env);
        env = next;
    }
    mb->free_envelopes = NULL;
    mb->unexpected_head = mb->unexpected_tail = NULL;
}
