/* Model of the point-to-point matching engine (src/pt2pt/mailbox.c,
 * recv.c, completion.c) with the sleep/wake handshake of src/core/wait.c,
 * for a receiving rank with TWO threads and two sending ranks.
 *
 * Processes: senders S0, S1 (ranks 1 and 2) and the receiving rank's
 * threads R0, R1 (rank 0: they share its mailbox and its waiter, as the
 * threads of one rank do under MPI_THREAD_MULTIPLE).
 *
 * Each critical section under the mailbox lock is one atomic step: every
 * access to the queues and to `probers` happens under the lock, so no
 * other process can observe a section half done (the lock is
 * src/util/biased_lock.h, whose mutual exclusion model_biased_lock.c
 * checks on its own, store buffer included). Everything after an unlock
 * is modelled step by step: the copy into a posted receive, the store of
 * DONE, rank_wake's load of `sleepers` and its bump of `seq`, and the
 * waiter's spin / seq / sleepers / check / futex steps (waiting.h).
 *
 * A sender Isends its messages in order, then waits for its rendezvous
 * messages to be taken (Waitall). An eager message goes into the sender's
 * lane (src/pt2pt/lane.c): its publishing store, then rank_wake_light's
 * load of `sleepers`, with no fence between, so the load may be served
 * while the store still sits in the sender's store buffer (x86-TSO): the
 * store becomes visible at the sender's next step (S_FLUSH; later would
 * only multiply states: the sender's next locked instruction or publish
 * orders it anyway), or earlier when a sleeper's membarrier() (a step of
 * waiting.h) flushes every buffer. A rendezvous message takes the mailbox
 * path (mailbox_deliver): lock (which flushes the sender's own buffer),
 * drain every lane into the mailbox, match the first posted receive, else
 * queue a rendezvous envelope and wake a prober. Whoever drains (a sender
 * on that path, or a receiving thread in its wait condition or probe via
 * pt2pt_progress / mailbox_probe) matches each lane message, oldest first,
 * against the posted receives (copy and DONE under the lock) or queues it
 * unexpected, and then wakes the receiving rank.
 * A receiving thread runs a list of operations on its own tag:
 *   RECV_ANY    MPI_Recv(MPI_ANY_SOURCE): post or take an unexpected
 *               message; a rendezvous one signals and wakes its sender;
 *   RECV_FROM0  MPI_Recv from S0 only;
 *   PROBE_RECV  MPI_Probe(ANY_SOURCE) (registers as a prober, polls under
 *               the lock while waiting), then MPI_Recv from the probed source;
 *   CANCEL_RECV MPI_Irecv(ANY_SOURCE), MPI_Cancel; if the cancel found the
 *               request still posted it completes cancelled and a blocking
 *               MPI_Recv follows, else the wait returns the matched message.
 * Checked in every state: a receive gets a message of its tag (and of its
 * source, if specific), no message is taken twice, messages of one sender
 * on one tag are received in send order (MPI's non-overtaking rule). At
 * the end: every message received exactly once, queues empty, no sender
 * left waiting. A state where nobody can move before that is a deadlock
 * (a lost message or wake-up). */
#include <stdlib.h>
#include <string.h>

#include "models.h"
#include "waiting.h"

enum { SENDERS = 2, RECEIVERS = 2, SENDS = 2, OPS = 2, MSGS = SENDERS * SENDS, QMAX = 4 };
enum { P_S0, P_S1, P_R0, P_R1, NPROC };
enum { RANK_RECEIVER = 0 };                  /* waiter index: rank 0, then the senders' ranks */
enum { ANY = 0xff };

enum op { RECV_ANY, RECV_FROM0, PROBE_RECV, CANCEL_RECV };
enum { NOPS = CANCEL_RECV + 1 };

enum send_pc {
    S_DELIVER,      /* eager: lane; rendezvous: lock; drain lanes; match posted, else queue; unlock */
    S_LANE_WAKE,    /* rank_wake_light(receiving rank) after a lane publish */
    S_FLUSH,        /* the publish leaves the store buffer (if still there) */
    S_DRAIN_WAKE,   /* rank_wake(receiving rank) for what the drain delivered */
    S_COPY,         /* deliver_to_posted: data and status into the request */
    S_SIGNAL,       /* completion_signal_owner: store DONE */
    S_WAKE,         /* rank_wake(receiving rank) */
    S_NEXT,         /* next message, or wait for rendezvous completions */
    S_WAIT,         /* Waitall: rank_wait_until(all rendezvous taken) */
    S_DONE,
};

enum recv_pc {
    R_START,        /* begin the next operation */
    R_POST,         /* mailbox_post_receive: lock; take unexpected, or post and drain
                       the lanes; unlock */
    R_POST_WAKE,    /* rank_wake(own rank) for what the post's drain delivered */
    R_POST_LATE,    /* POST_UNLOCKED mutant only: the post, in a second section */
    R_TAKE_COPY,    /* consume_envelope: copy (rendezvous: signal sender) */
    R_TAKE_WAKE,    /* rank_wake(sender) after a rendezvous copy */
    R_SELF_DONE,    /* completion_signal(&req->done): store DONE */
    R_SELF_WAKE,    /* rank_wake(own rank) */
    R_WAIT,         /* rank_wait_until(request done) */
    R_PROBE,        /* mailbox_probe(+1): lock; probers++; drain lanes; unlock */
    R_PROBE_WAKE,   /* rank_wake(own rank) for what the drain delivered */
    R_PROBE_FIND,   /* the probe's find (same section in the code, see below) */
    R_PROBE_WAIT,   /* rank_wait_until(probe finds) */
    R_PROBE_END,    /* mailbox_probe(-1) */
    R_CANCEL,       /* mailbox_cancel_receive: lock; unlink if posted; unlock */
    R_FINISH,       /* the receive completed: check it */
    R_DONE,
};

struct envelope_m {
    uint8_t msg;                /* 1 + message index; 0 = empty */
};

struct send_m {
    uint8_t pc, next, target_req, wake_phase, after_drain_wake;
    struct wait_m wait;
};

struct recv_m {
    uint8_t pc, op, next_op, want_src, took, wake_phase, cancel_then_recv, probe_woke, post_woke;
    uint8_t last_from[SENDERS]; /* 1 + send index of the last message received from each sender */
    struct wait_m wait;
};

struct mailbox_state {
    uint8_t lane[SENDERS][SENDS];    /* visible lane messages (1 + index), oldest first */
    uint8_t nlane[SENDERS];
    uint8_t buffered[SENDERS][SENDS]; /* lane publishes still in the sender's store buffer */
    uint8_t nbuffered[SENDERS];
    uint8_t posted[QMAX];       /* receive requests in post order: 1 + receiver thread */
    uint8_t nposted;
    struct envelope_m unexpected[QMAX];
    uint8_t nunexpected;
    uint8_t probers;
    /* Each receiving thread has one request at a time. */
    uint8_t req_src[RECEIVERS], req_done[RECEIVERS], req_msg[RECEIVERS], req_cancelled[RECEIVERS];
    uint8_t sent_taken[MSGS];   /* rendezvous: the receiver copied it (the sender's completion) */
    uint8_t received[MSGS];     /* times each message was received */
    struct waiter_m waiter[1 + SENDERS];
    struct send_m s[SENDERS];
    struct recv_m r[RECEIVERS];
};

/* Protocol variants with a known flaw, which the checker must catch (so
 * the model is shown to be able to fail): */
enum mutant {
    CORRECT,
    PROBER_NOT_WOKEN,   /* a sender queues without waking blocked probers */
    WAKE_BEFORE_DONE,   /* a sender wakes the receiver, then stores DONE */
    POST_UNLOCKED,      /* a receiver searches the unexpected queue and posts
                           in two critical sections (a message slips between) */
    NO_SLEEPER_BARRIER, /* the sleeper skips membarrier(): a lane publish
                           still buffered is missed by both sides */
    NO_DRAIN_FIRST,     /* the mailbox path matches without draining the
                           lanes: a rendezvous overtakes the sender's eager */
    DRAIN_BEFORE_POST,  /* a post that found nothing unexpected drains the
                           lanes before it appends the receive: a lane
                           message for it is left unexpected */
};

static struct {
    enum mutant mutant;
    uint8_t tag[MSGS];          /* receiver thread the message's tag belongs to */
    uint8_t rendezvous[MSGS];
    uint8_t ops[RECEIVERS][OPS];
    uint8_t nops[RECEIVERS];
} cfg;

static int msg_index(int sender, int k) { return sender * SENDS + k; }
static int msg_sender(int msg) { return msg / SENDS; }

static bool matches(uint8_t want_src, int msg, int thread)
{
    return cfg.tag[msg] == thread && (want_src == ANY || want_src == msg_sender(msg));
}

static void mb_init(void *sv)
{
    struct mailbox_state *s = sv;
    memset(s, 0, sizeof *s);
}

/* ---- senders ---- */

/* Takes the first posted receive matching msg; its thread, or -1. */
static int posted_take(struct mailbox_state *s, int msg)
{
    for (int i = 0; i < s->nposted; i++) {
        int thread = s->posted[i] - 1;
        if (!matches(s->req_src[thread], msg, thread))
            continue;
        memmove(&s->posted[i], &s->posted[i + 1], (size_t)(s->nposted - i - 1));
        s->posted[--s->nposted] = 0;
        return thread;
    }
    return -1;
}

/* lanes_drain under the mailbox lock: every visible lane message, oldest
 * first per lane, into a posted receive (copy, DONE) or the unexpected
 * queue. True when the receiving rank must be woken (rank_wake after
 * deliver_to_posted, or a blocked prober). */
static bool drain(struct mailbox_state *s)
{
    bool wake = false;
    for (int l = 0; l < SENDERS; l++) {
        for (int i = 0; i < s->nlane[l]; i++) {
            int msg = s->lane[l][i] - 1;
            int thread = posted_take(s, msg);
            if (thread >= 0) {
                s->req_msg[thread] = (uint8_t)(msg + 1);
                s->req_done[thread] = 1;
                wake = true;
            } else {
                s->unexpected[s->nunexpected++].msg = (uint8_t)(msg + 1);
                wake |= s->probers > 0;
            }
            s->lane[l][i] = 0;
        }
        s->nlane[l] = 0;
    }
    return wake;
}

/* The store buffer of sender b: its oldest lane publish becomes visible
 * (S_FLUSH, a lock, or a sleeper's membarrier). */
static bool buffer_step(struct mailbox_state *s, int b)
{
    if (s->nbuffered[b] == 0)
        return false;
    s->lane[b][s->nlane[b]++] = s->buffered[b][0];
    memmove(&s->buffered[b][0], &s->buffered[b][1], (size_t)(SENDS - 1));
    s->buffered[b][--s->nbuffered[b]] = 0;
    return true;
}

static void flush_all(void *sv)
{
    struct mailbox_state *s = sv;
    if (cfg.mutant == NO_SLEEPER_BARRIER)
        return;
    for (int b = 0; b < SENDERS; b++)
        while (buffer_step(s, b))
            ;
}

/* mailbox_deliver. Eager: the lane publish (into the store buffer).
 * Rendezvous, under the lock (its locked instruction first empties the
 * sender's store buffer): drain the lanes, then the first matching posted
 * receive, else an envelope at the tail of the unexpected queue. */
static void deliver(struct mailbox_state *s, struct send_m *me, int p, int msg)
{
    if (!cfg.rendezvous[msg]) {
        s->buffered[p][s->nbuffered[p]++] = (uint8_t)(msg + 1);
        me->pc = S_LANE_WAKE;
        return;
    }
    while (buffer_step(s, p))
        ;
    bool drain_woke = cfg.mutant == NO_DRAIN_FIRST ? false : drain(s);
    int thread = posted_take(s, msg);
    if (thread >= 0) {
        me->target_req = (uint8_t)(thread + 1);
        me->pc = S_COPY;
    } else {
        s->unexpected[s->nunexpected++].msg = (uint8_t)(msg + 1);
        me->pc = s->probers > 0 && cfg.mutant != PROBER_NOT_WOKEN ? S_WAKE : S_NEXT;
    }
    if (drain_woke) {
        me->after_drain_wake = me->pc;
        me->pc = S_DRAIN_WAKE;
    }
}

static enum cond_result all_taken(void *sv, int p, uint8_t *cursor)
{
    (void)cursor;
    struct mailbox_state *s = sv;
    for (int k = 0; k < SENDS; k++) {
        int msg = msg_index(p, k);
        if (cfg.rendezvous[msg] && !s->sent_taken[msg])
            return COND_FALSE;
    }
    return COND_TRUE;
}

static bool send_step(struct mailbox_state *s, int p)
{
    struct send_m *me = &s->s[p];
    int msg = msg_index(p, me->next);
    switch ((enum send_pc)me->pc) {
    case S_DELIVER:
        deliver(s, me, p, msg);
        return true;
    case S_LANE_WAKE:
        if (wake_step(&s->waiter[RANK_RECEIVER], &me->wake_phase))
            me->pc = S_FLUSH;
        return true;
    case S_FLUSH:
        while (buffer_step(s, p))
            ;
        me->pc = S_NEXT;
        return true;
    case S_DRAIN_WAKE:
        if (wake_step(&s->waiter[RANK_RECEIVER], &me->wake_phase))
            me->pc = me->after_drain_wake;
        return true;
    case S_COPY: {
        int thread = me->target_req - 1;
        s->req_msg[thread] = (uint8_t)(msg + 1);
        me->pc = cfg.mutant == WAKE_BEFORE_DONE ? S_WAKE : S_SIGNAL;
        return true;
    }
    case S_SIGNAL:
        s->req_done[me->target_req - 1] = 1;
        /* Delivered straight into a posted receive: the send is complete. */
        if (cfg.rendezvous[msg])
            s->sent_taken[msg] = 1;
        me->target_req = 0;
        me->pc = cfg.mutant == WAKE_BEFORE_DONE ? S_NEXT : S_WAKE;
        return true;
    case S_WAKE:
        if (wake_step(&s->waiter[RANK_RECEIVER], &me->wake_phase))
            me->pc = cfg.mutant == WAKE_BEFORE_DONE && me->target_req != 0 ? S_SIGNAL : S_NEXT;
        return true;
    case S_NEXT:
        if (++me->next < SENDS) {
            me->pc = S_DELIVER;
        } else {
            me->next = 0;
            wait_begin(&me->wait);
            me->pc = S_WAIT;
        }
        return true;
    case S_WAIT:
        switch (wait_step(&s->waiter[1 + p], &me->wait, all_taken, s, p)) {
        case WAIT_BLOCKED: return false;
        case WAIT_MOVED: return true;
        case WAIT_DONE:
            me->wait = (struct wait_m){ 0, 0, 0 };
            me->pc = S_DONE;
            return true;
        }
        return false;
    case S_DONE:
        return false;
    }
    return false;
}

/* ---- receiving threads ---- */

static int unexpected_find(const struct mailbox_state *s, uint8_t want_src, int thread)
{
    for (int i = 0; i < s->nunexpected; i++)
        if (matches(want_src, s->unexpected[i].msg - 1, thread))
            return i;
    return -1;
}

static int unexpected_take(struct mailbox_state *s, int i)
{
    int msg = s->unexpected[i].msg - 1;
    memmove(&s->unexpected[i], &s->unexpected[i + 1], (size_t)(s->nunexpected - i - 1) * sizeof s->unexpected[0]);
    s->unexpected[--s->nunexpected].msg = 0;
    return msg;
}

/* pt2pt_progress as the first step of a wait condition: the drain under
 * the lock and the rank_wake after it in one step (the wake's own steps
 * are modelled where a sender wakes; here they would only multiply the
 * states of every poll). */
static bool progress_step(struct mailbox_state *s, uint8_t *cursor)
{
    /* lanes_pending: nothing visible, no lock and no step */
    if (*cursor != 0 || s->nlane[0] + s->nlane[1] == 0)
        return false;
    if (drain(s) && s->waiter[RANK_RECEIVER].sleepers != 0)
        s->waiter[RANK_RECEIVER].seq++;
    *cursor = 1;
    return true;
}

static enum cond_result request_done(void *sv, int p, uint8_t *cursor)
{
    struct mailbox_state *s = sv;
    if (progress_step(s, cursor))
        return COND_MORE;
    return s->req_done[p - P_R0] ? COND_TRUE : COND_FALSE;
}

/* The probe's wait condition is mailbox_probe itself: lock, drain, find,
 * unlock (modelled as the drain with its wake, then the find). */
static enum cond_result probe_finds(void *sv, int p, uint8_t *cursor)
{
    struct mailbox_state *s = sv;
    if (progress_step(s, cursor))
        return COND_MORE;
    return unexpected_find(s, ANY, p - P_R0) >= 0 ? COND_TRUE : COND_FALSE;
}

static void recv_begin(struct mailbox_state *s, struct recv_m *me, int thread, uint8_t want_src)
{
    me->want_src = want_src;
    s->req_src[thread] = want_src;
    s->req_done[thread] = s->req_msg[thread] = s->req_cancelled[thread] = 0;
    me->pc = R_POST;
}

static void recv_post(struct mailbox_state *s, struct recv_m *me, int thread)
{
    int i = unexpected_find(s, me->want_src, thread);
    if (i < 0 && cfg.mutant == POST_UNLOCKED && me->pc == R_POST) {
        me->pc = R_POST_LATE;
        return;
    }
    if (i < 0) {
        /* Posted, then the lanes drained: their messages arrived after
         * every unexpected one and match the posted receives in order. */
        if (cfg.mutant == DRAIN_BEFORE_POST) {
            me->post_woke = drain(s);
            s->posted[s->nposted++] = (uint8_t)(thread + 1);
        } else {
            s->posted[s->nposted++] = (uint8_t)(thread + 1);
            me->post_woke = drain(s);
        }
        me->pc = R_POST_WAKE;
        return;
    }
    me->took = (uint8_t)(unexpected_take(s, i) + 1);
    me->pc = R_TAKE_COPY;
}

static void recv_start_op(struct mailbox_state *s, struct recv_m *me, int thread)
{
    switch ((enum op)me->op) {
    case RECV_ANY: recv_begin(s, me, thread, ANY); break;
    case RECV_FROM0: recv_begin(s, me, thread, 0); break;
    case PROBE_RECV: me->pc = R_PROBE; break;
    case CANCEL_RECV: recv_begin(s, me, thread, ANY); break;
    }
}

static const char *check_received(struct mailbox_state *s, struct recv_m *me, int thread, int msg)
{
    if (cfg.tag[msg] != thread)
        return "a receive got a message of another tag";
    if (me->want_src != ANY && me->want_src != msg_sender(msg))
        return "a receive got a message from another source";
    int sender = msg_sender(msg), k = msg % SENDS;
    if (me->last_from[sender] > k)
        return "messages of one sender and tag received out of order";
    me->last_from[sender] = (uint8_t)(k + 1);
    s->received[msg]++;
    return NULL;
}

static const char *pending_violation;

static void recv_finish(struct mailbox_state *s, struct recv_m *me, int thread)
{
    if (s->req_cancelled[thread]) {
        /* Cancelled while still posted: the message is received next. */
        me->cancel_then_recv = 1;
        recv_begin(s, me, thread, ANY);
        return;
    }
    const char *bad = check_received(s, me, thread, s->req_msg[thread] - 1);
    if (bad != NULL)
        pending_violation = bad;
    s->req_done[thread] = s->req_msg[thread] = 0;
    s->req_src[thread] = 0;
    me->want_src = me->took = me->cancel_then_recv = 0;
    me->op = 0;
    me->pc = R_START;
}

static bool recv_step(struct mailbox_state *s, int p)
{
    int thread = p - P_R0;
    struct recv_m *me = &s->r[thread];
    switch ((enum recv_pc)me->pc) {
    case R_START:
        if (me->next_op == cfg.nops[thread]) {
            me->pc = R_DONE;
            return true;
        }
        me->op = cfg.ops[thread][me->next_op++];
        recv_start_op(s, me, thread);
        return true;
    case R_POST:
        recv_post(s, me, thread);
        return true;
    case R_POST_WAKE:
        if (me->post_woke && !wake_step(&s->waiter[RANK_RECEIVER], &me->wake_phase))
            return true;
        me->post_woke = 0;
        if (me->op == CANCEL_RECV && !me->cancel_then_recv) {
            me->pc = R_CANCEL;
        } else {
            wait_begin(&me->wait);
            me->pc = R_WAIT;
        }
        return true;
    case R_POST_LATE:
        s->posted[s->nposted++] = (uint8_t)(thread + 1);
        wait_begin(&me->wait);
        me->pc = me->op == CANCEL_RECV && !me->cancel_then_recv ? R_CANCEL : R_WAIT;
        return true;
    case R_TAKE_COPY: {
        int msg = me->took - 1;
        s->req_msg[thread] = me->took;
        if (cfg.rendezvous[msg]) {
            s->sent_taken[msg] = 1;     /* completion_signal(env->done) */
            me->pc = R_TAKE_WAKE;
        } else {
            me->pc = R_SELF_DONE;
        }
        return true;
    }
    case R_TAKE_WAKE:
        if (wake_step(&s->waiter[1 + msg_sender(me->took - 1)], &me->wake_phase))
            me->pc = R_SELF_DONE;
        return true;
    case R_SELF_DONE:
        s->req_done[thread] = 1;
        me->pc = R_SELF_WAKE;
        return true;
    case R_SELF_WAKE:
        if (wake_step(&s->waiter[RANK_RECEIVER], &me->wake_phase))
            me->pc = R_FINISH;
        return true;
    case R_WAIT:
        switch (wait_step(&s->waiter[RANK_RECEIVER], &me->wait, request_done, s, p)) {
        case WAIT_BLOCKED: return false;
        case WAIT_MOVED: return true;
        case WAIT_DONE:
            me->wait = (struct wait_m){ 0, 0, 0 };
            me->pc = R_FINISH;
            return true;
        }
        return false;
    case R_PROBE:
        s->probers++;
        me->probe_woke = drain(s);
        me->pc = R_PROBE_WAKE;
        return true;
    case R_PROBE_WAKE:
        if (!me->probe_woke || wake_step(&s->waiter[RANK_RECEIVER], &me->wake_phase)) {
            me->probe_woke = 0;
            me->pc = R_PROBE_FIND;
        }
        return true;
    case R_PROBE_FIND:
        if (unexpected_find(s, ANY, thread) >= 0) {
            me->pc = R_PROBE_END;
        } else {
            wait_begin(&me->wait);
            me->pc = R_PROBE_WAIT;
        }
        return true;
    case R_PROBE_WAIT:
        switch (wait_step(&s->waiter[RANK_RECEIVER], &me->wait, probe_finds, s, p)) {
        case WAIT_BLOCKED: return false;
        case WAIT_MOVED: return true;
        case WAIT_DONE:
            me->wait = (struct wait_m){ 0, 0, 0 };
            me->pc = R_PROBE_END;
            return true;
        }
        return false;
    case R_PROBE_END: {
        /* The probed message's source (the first match still queued: only
         * this thread takes messages of its tag). */
        s->probers--;
        int i = unexpected_find(s, ANY, thread);
        if (i < 0) {
            pending_violation = "a probed message vanished before its receive";
            return true;
        }
        recv_begin(s, me, thread, (uint8_t)msg_sender(s->unexpected[i].msg - 1));
        return true;
    }
    case R_CANCEL: {
        bool found = false;
        for (int i = 0; i < s->nposted; i++)
            if (s->posted[i] == thread + 1) {
                memmove(&s->posted[i], &s->posted[i + 1], (size_t)(s->nposted - i - 1));
                s->posted[--s->nposted] = 0;
                found = true;
                break;
            }
        if (found) {
            s->req_cancelled[thread] = 1;
            s->req_done[thread] = 1;
            me->pc = R_FINISH;
        } else {
            wait_begin(&me->wait);
            me->pc = R_WAIT;
        }
        return true;
    }
    case R_FINISH:
        recv_finish(s, me, thread);
        return true;
    case R_DONE:
        return false;
    }
    return false;
}

static bool mb_step(void *sv, int p)
{
    struct mailbox_state *s = sv;
    return p < P_R0 ? send_step(s, p) : recv_step(s, p);
}

static bool mb_finished(const void *sv, int p)
{
    const struct mailbox_state *s = sv;
    return p < P_R0 ? s->s[p].pc == S_DONE : s->r[p - P_R0].pc == R_DONE;
}

static const char *mb_violation(const void *sv)
{
    (void)sv;
    const char *v = pending_violation;
    pending_violation = NULL;
    if (v != NULL)
        return v;
    const struct mailbox_state *s = sv;
    for (int m = 0; m < MSGS; m++)
        if (s->received[m] > 1)
            return "a message was received twice";
    return NULL;
}

static const char *mb_final(const void *sv)
{
    const struct mailbox_state *s = sv;
    for (int m = 0; m < MSGS; m++)
        if (s->received[m] != 1)
            return "a message was not received exactly once";
    if (s->nposted != 0 || s->nunexpected != 0 || s->probers != 0 || s->nlane[0] != 0 || s->nlane[1] != 0)
        return "the mailbox or a lane is not empty at the end";
    return NULL;
}

static void mb_show(const void *sv, FILE *out)
{
    const struct mailbox_state *s = sv;
    fprintf(out, "posted=%u unexpected=%u probers=%u lanes=%u,%u buffered=%u,%u |", s->nposted, s->nunexpected,
            s->probers, s->nlane[0], s->nlane[1], s->nbuffered[0], s->nbuffered[1]);
    for (int i = 0; i < SENDERS; i++)
        fprintf(out, " S%d:pc=%u next=%u wpc=%u seq=%u sl=%u", i, s->s[i].pc, s->s[i].next, s->s[i].wait.pc,
                s->waiter[1 + i].seq, s->waiter[1 + i].sleepers);
    for (int i = 0; i < RECEIVERS; i++)
        fprintf(out, " R%d:pc=%u op=%u done=%u msg=%u wpc=%u", i, s->r[i].pc, s->r[i].op, s->req_done[i],
                s->req_msg[i], s->r[i].wait.pc);
    fprintf(out, " rank0 seq=%u sl=%u", s->waiter[0].seq, s->waiter[0].sleepers);
}

static const struct model mailbox_model = {
    "mailbox", sizeof(struct mailbox_state), NPROC, mb_init, mb_step, mb_finished, mb_violation, mb_final, mb_show,
};

/* A thread's operations must form a correct program: a receive from S0
 * must find a message from S0 whatever the wildcard receives before it
 * took, so it comes before every wildcard one unless all the thread's
 * messages are from S0. */
static bool ops_correct(int thread)
{
    int from0 = 0, total = 0;
    for (int m = 0; m < MSGS; m++)
        if (cfg.tag[m] == thread) {
            total++;
            from0 += msg_sender(m) == 0;
        }
    int want0 = 0;
    bool wildcard_seen = false;
    for (int k = 0; k < cfg.nops[thread]; k++) {
        if (cfg.ops[thread][k] != RECV_FROM0) {
            wildcard_seen = true;
            continue;
        }
        want0++;
        if (wildcard_seen && from0 != total)
            return false;
    }
    return want0 <= from0;
}

static void set_config(unsigned tags, unsigned rdv, const uint8_t ops[RECEIVERS][OPS])
{
    for (int m = 0; m < MSGS; m++) {
        cfg.tag[m] = (uint8_t)((tags >> m) & 1);
        cfg.rendezvous[m] = (uint8_t)((rdv >> m) & 1);
    }
    for (int t = 0; t < RECEIVERS; t++) {
        cfg.nops[t] = OPS;
        memcpy(cfg.ops[t], ops[t], OPS);
    }
}

/* Explores one configuration; false (trace printed) on a flaw. */
static bool explore_config(unsigned tags, unsigned rdv, struct explore_stats *stats, FILE *out)
{
    unsigned long before = stats->states;
    bool ok = explore(&mailbox_model, stats, out);
    if (getenv("MODEL_VERBOSE") != NULL || !ok)
        fprintf(out, "configuration: tags 0x%x (bit m: message m is for thread 1; messages 0,1 from S0, 2,3 "
                     "from S1), rendezvous 0x%x, ops R0 %u,%u R1 %u,%u (0 recv any, 1 recv from S0, "
                     "2 probe+recv, 3 irecv+cancel): %lu states\n",
                tags, rdv, cfg.ops[0][0], cfg.ops[0][1], cfg.ops[1][0], cfg.ops[1][1], stats->states - before);
    return ok;
}

/* The default configurations (make check, ~1 minute): S0 sends an eager
 * message (lane) then a rendezvous one (mailbox path, which must drain the
 * lane first) to one thread, S1 a rendezvous then an eager one (its last
 * wake is the lane's) to the other, under wildcard receives; and
 * messages all rendezvous (no lanes) under probing and cancelling
 * receives. With lanes, probes and cancels multiply the states (~8 M for
 * the first configuration, 32 M for one eager message under probes), so
 * those run with --full, which runs every assignment, every
 * eager/rendezvous pattern and every pair of operations per thread. */
static const uint8_t default_ops[][RECEIVERS][OPS] = {
    { { RECV_ANY, RECV_ANY }, { RECV_ANY, RECV_ANY } },
    { { PROBE_RECV, PROBE_RECV }, { RECV_ANY, PROBE_RECV } },
    { { CANCEL_RECV, CANCEL_RECV }, { RECV_ANY, CANCEL_RECV } },
    { { RECV_FROM0, PROBE_RECV }, { CANCEL_RECV, RECV_ANY } },
};
static const struct {
    unsigned tags, rendezvous, ops;
} default_configs[] = {
    { 0x3, 0x6, 0 }, { 0x3, 0xf, 1 }, { 0x5, 0xf, 2 },
};

/* Runs `visit` on every configuration (all of them with --full); stops at
 * the first for which it returns false. */
static bool for_each_config(bool (*visit)(unsigned tags, unsigned rdv, void *arg), void *arg)
{
    if (!model_full) {
        for (size_t k = 0; k < sizeof default_configs / sizeof *default_configs; k++) {
            unsigned tags = default_configs[k].tags, rdv = default_configs[k].rendezvous;
            set_config(tags, rdv, default_ops[default_configs[k].ops]);
            if (ops_correct(0) && ops_correct(1) && !visit(tags, rdv, arg))
                return false;
        }
        return true;
    }
    for (unsigned tags = 0; tags < 1u << MSGS; tags++) {
        if (__builtin_popcount(tags) != 2)
            continue;
        for (unsigned rdv = 0; rdv < 1u << MSGS; rdv++)
            for (unsigned combo = 0; combo < NOPS * NOPS * NOPS * NOPS; combo++) {
                uint8_t ops[RECEIVERS][OPS];
                unsigned o = combo;
                for (int t = 0; t < RECEIVERS; t++)
                    for (int k = 0; k < OPS; k++, o /= NOPS)
                        ops[t][k] = (uint8_t)(o % NOPS);
                set_config(tags, rdv, ops);
                if (ops_correct(0) && ops_correct(1) && !visit(tags, rdv, arg))
                    return false;
            }
    }
    return true;
}

struct visit_args {
    struct explore_stats *stats;
    FILE *out;
};

static bool visit_explore(unsigned tags, unsigned rdv, void *arg)
{
    struct visit_args *a = arg;
    return explore_config(tags, rdv, a->stats, a->out);
}

bool check_mailbox(struct explore_stats *stats, FILE *out)
{
    wait_sleeper_barrier = flush_all;
    cfg.mutant = CORRECT;
    struct visit_args a = { stats, out };
    return for_each_config(visit_explore, &a);
}

bool check_mailbox_mutant(int mutant, struct explore_stats *stats, FILE *out)
{
    wait_sleeper_barrier = flush_all;
    cfg.mutant = (enum mutant)mutant;
    struct visit_args a = { stats, out };
    bool caught = !for_each_config(visit_explore, &a);
    cfg.mutant = CORRECT;
    pending_violation = NULL;
    return caught;
}
