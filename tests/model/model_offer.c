/* Model of an offer (src/pt2pt/lane.h, struct lane_offer; lane.c:
 * lane_offer, lane_offers_progress, offer_withdraw, lane_offer_cancel;
 * mailbox.c: match_offer): who copies a mid-sized message, and when the
 * sender may reuse its buffer and the offer's slots.
 *
 * Processes: the sending rank's thread S publishes the offer and waits for
 * its send to complete; meanwhile, once the deadline has passed, it
 * withdraws the offer (offer_open: the consumer's head, then the state;
 * its copy; the copy's address into the slot; the swap), and when the
 * user asks, it cancels it (offer_open, the swap). Once the send is
 * complete it overwrites its buffer, reuses the offer's slots for a later
 * message if the consumer's head has passed them (the worst later data:
 * bytes that read as OPEN where the state was), and looks at its record of
 * the offer once more, as lane_offers_progress does until it drops it.
 * The consumer C (the receiver's drain) waits for the offer, swaps the
 * state to TAKEN and copies from the sender's buffer (two steps: a copy is
 * not atomic), then signals the send's completion; or copies from the
 * sender's copy and frees it; or skips a cancelled offer; then gives the
 * slots back (head). The deadline D passes at any moment
 * (LANE_OFFER_WAIT_NS, or the sender about to sleep or finalize); the user
 * U asks for MPI_Cancel at any moment (configurations with cancel). The
 * consumer is present or not (a receiver that never drains its lanes: the
 * sender's send must complete anyway).
 *
 * Checked in every state: the consumer never reads the sender's buffer
 * after the sender reused it, nor a copy whose address is not published;
 * the sender never copies a reused buffer nor withdraws through a reused
 * slot; the message is delivered at most once, and never when the cancel
 * succeeded. At the end: the send is complete; a present consumer
 * delivered the message unless it was cancelled; every copy was freed
 * (by the consumer, by the sender whose swap failed), except one still
 * in an offer nobody received, which the lane's teardown frees.
 *
 * Memory: sequentially consistent interleavings. The code's release
 * store of the copy's address before the swap (release) and the
 * consumer's acquire swap give the same order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"

enum { P_SENDER, P_CONSUMER, P_DEADLINE, P_USER, NPROC };
enum { OPEN, TAKEN, EAGER, CANCELLED };

enum sender_pc {
    S_PUBLISH,      /* the slots, state OPEN, then seq (lane_put_ring); the record */
    S_WAIT,         /* done -> S_REUSE_BUF; cancel asked -> S_CANCEL_HEAD; deadline -> S_W_HEAD */
    S_W_HEAD,       /* offer_open: the consumer's head passed the offer -> drop the record */
    S_W_STATE,      /* offer_open: state != OPEN -> drop the record */
    S_W_COPY,       /* offer_withdraw: malloc + dt_pack of the buffer */
    S_W_EAGER,      /* o->eager = copy */
    S_W_SWAP,       /* CAS OPEN -> EAGER: the send is complete; else free the copy */
    S_CANCEL_HEAD,  /* lane_offer_cancel: offer_open (head) */
    S_CANCEL_STATE, /* offer_open (state) */
    S_CANCEL_SWAP,  /* CAS OPEN -> CANCELLED: cancelled and complete */
    S_REUSE_BUF,    /* the user overwrites the buffer */
    S_REUSE_SLOT,   /* a later message into the slots, if head passed them */
    S_DONE,
};

enum consumer_pc {
    C_POLL,         /* lane_message_at: seq of the offer */
    C_SWAP,         /* CAS OPEN -> TAKEN; else EAGER -> C_EAGER, CANCELLED -> C_RELEASE */
    C_COPY1,        /* the copy from the sender's buffer, its first half */
    C_COPY2,        /* ... and its second */
    C_SIGNAL,       /* completion_signal(done) */
    C_EAGER,        /* the copy from o->eager; free */
    C_RELEASE,      /* lane_consumed: head passes the offer */
    C_DONE,
};

struct offer_state {
    uint8_t seq;            /* 1: the offer published; 2: a later message in its slots */
    uint8_t state;          /* the offer's state word (after reuse: data that reads OPEN) */
    uint8_t eager;          /* the copy's address is in the slot */
    uint8_t copy_good;      /* the copy holds the message */
    uint8_t copies;         /* copies allocated and not freed */
    uint8_t head;           /* the consumer's published head passed the offer */
    uint8_t buf;            /* 1: the sender's buffer holds the message; 2: reused */
    uint8_t done;           /* the send's completion */
    uint8_t cancelled;      /* the cancel succeeded */
    uint8_t delivered;
    uint8_t deadline, want_cancel;
    uint8_t record;         /* the sender still has the offer in its records */
    uint8_t tried_cancel, final_look;
    uint8_t pc[NPROC];
};

enum mutant {
    CORRECT,
    SIGNAL_BEFORE_COPY,     /* 1: the consumer signals the send before it copies */
    WITHDRAW_BY_STORE,      /* 2: the sender stores EAGER instead of swapping */
    EAGER_AFTER_SWAP,       /* 3: the copy's address stored after the swap */
    NO_HEAD_CHECK,          /* 4: offer_open does not look at head */
    CANCEL_BY_STORE,        /* 5: the cancel stores CANCELLED instead of swapping */
};
static enum mutant mutant;
static bool consumer_present, cancel_config;
static const char *pending;

static void flag(const char *what)
{
    if (pending == NULL)
        pending = what;
}

static void of_init(void *sv)
{
    struct offer_state *s = sv;
    memset(s, 0, sizeof *s);
    s->buf = 1;
    s->pc[P_CONSUMER] = consumer_present ? C_POLL : C_DONE;
}

/* Withdrawn, cancelled or looked at once more: back to waiting, or, for
 * the last look after the send completed, done. */
static uint8_t sender_resume(const struct offer_state *s)
{
    return s->final_look ? S_DONE : S_WAIT;
}

static bool sender_wait(struct offer_state *s)
{
    if (s->done) {
        s->pc[P_SENDER] = S_REUSE_BUF;
        return true;
    }
    if (s->record && s->want_cancel && !s->tried_cancel) {
        s->tried_cancel = 1;
        s->pc[P_SENDER] = S_CANCEL_HEAD;
        return true;
    }
    if (s->record && s->deadline) {
        s->pc[P_SENDER] = S_W_HEAD;
        return true;
    }
    return false;           /* waits for the consumer, the deadline or the user */
}

static bool sender_step(struct offer_state *s)
{
    switch (s->pc[P_SENDER]) {
    case S_PUBLISH:
        s->state = OPEN;
        s->seq = 1;
        s->record = 1;
        s->pc[P_SENDER] = S_WAIT;
        return true;
    case S_WAIT:
        return sender_wait(s);
    case S_W_HEAD:
        if (s->head && mutant != NO_HEAD_CHECK) {
            s->record = 0;
            s->pc[P_SENDER] = sender_resume(s);
        } else {
            s->pc[P_SENDER] = S_W_STATE;
        }
        return true;
    case S_W_STATE:
        if (s->state != OPEN) {
            s->record = 0;
            s->pc[P_SENDER] = sender_resume(s);
        } else {
            s->pc[P_SENDER] = S_W_COPY;
        }
        return true;
    case S_W_COPY:
        if (s->buf != 1)
            flag("the sender copies a buffer the user has reused");
        if (s->seq == 2)
            flag("the sender withdraws through slots it reused");
        s->copies++;
        s->copy_good = s->buf == 1;
        s->pc[P_SENDER] = mutant == EAGER_AFTER_SWAP ? S_W_SWAP : S_W_EAGER;
        return true;
    case S_W_EAGER:
        s->eager = 1;
        s->pc[P_SENDER] = mutant == EAGER_AFTER_SWAP ? sender_resume(s) : S_W_SWAP;
        return true;
    case S_W_SWAP:
        if (s->seq == 2)
            flag("the sender swaps the state of slots it reused");
        s->record = 0;
        if (s->state == OPEN || mutant == WITHDRAW_BY_STORE) {
            s->state = EAGER;
            s->done = 1;
        } else {
            s->copies--;
        }
        s->pc[P_SENDER] = mutant == EAGER_AFTER_SWAP ? S_W_EAGER : sender_resume(s);
        return true;
    case S_CANCEL_HEAD:
        s->pc[P_SENDER] = s->head && mutant != NO_HEAD_CHECK ? S_WAIT : S_CANCEL_STATE;
        return true;
    case S_CANCEL_STATE:
        s->pc[P_SENDER] = s->state == OPEN ? S_CANCEL_SWAP : S_WAIT;
        return true;
    case S_CANCEL_SWAP:
        if (s->state == OPEN || mutant == CANCEL_BY_STORE) {
            s->state = CANCELLED;
            s->cancelled = 1;
            s->done = 1;
            s->record = 0;
        }
        s->pc[P_SENDER] = S_WAIT;
        return true;
    case S_REUSE_BUF:
        s->buf = 2;
        s->pc[P_SENDER] = S_REUSE_SLOT;
        return true;
    case S_REUSE_SLOT:
        if (s->head) {
            s->seq = 2;
            s->state = OPEN;    /* a later message's bytes */
        }
        s->final_look = 1;
        s->pc[P_SENDER] = s->record ? S_W_HEAD : S_DONE;
        return true;
    default:
        return false;
    }
}

static bool consumer_step(struct offer_state *s)
{
    switch (s->pc[P_CONSUMER]) {
    case C_POLL:
        if (s->seq != 1)
            return false;
        s->pc[P_CONSUMER] = C_SWAP;
        return true;
    case C_SWAP:
        if (s->state == OPEN) {
            s->state = TAKEN;
            s->pc[P_CONSUMER] = mutant == SIGNAL_BEFORE_COPY ? C_SIGNAL : C_COPY1;
        } else {
            s->pc[P_CONSUMER] = s->state == EAGER ? C_EAGER : C_RELEASE;
        }
        return true;
    case C_COPY1:
    case C_COPY2:
        if (s->buf != 1)
            flag("the receiver copies from a buffer the user has reused");
        if (s->pc[P_CONSUMER] == C_COPY1) {
            s->pc[P_CONSUMER] = C_COPY2;
            return true;
        }
        s->delivered++;
        s->pc[P_CONSUMER] = mutant == SIGNAL_BEFORE_COPY ? C_RELEASE : C_SIGNAL;
        return true;
    case C_SIGNAL:
        s->done = 1;
        s->pc[P_CONSUMER] = mutant == SIGNAL_BEFORE_COPY ? C_COPY1 : C_RELEASE;
        return true;
    case C_EAGER:
        if (!s->eager || !s->copy_good)
            flag("the receiver reads a copy that is not there");
        s->delivered++;
        s->copies--;
        s->pc[P_CONSUMER] = C_RELEASE;
        return true;
    case C_RELEASE:
        s->head = 1;
        s->pc[P_CONSUMER] = C_DONE;
        return true;
    default:
        return false;
    }
}

static bool of_step(void *sv, int p)
{
    struct offer_state *s = sv;
    switch (p) {
    case P_SENDER:
        return sender_step(s);
    case P_CONSUMER:
        return consumer_step(s);
    case P_DEADLINE:
        if (s->deadline)
            return false;
        s->deadline = 1;
        return true;
    default:
        if (!cancel_config || s->want_cancel)
            return false;
        s->want_cancel = 1;
        return true;
    }
}

static bool of_finished(const void *sv, int p)
{
    const struct offer_state *s = sv;
    switch (p) {
    case P_SENDER:
        return s->pc[P_SENDER] == S_DONE;
    case P_CONSUMER:
        return s->pc[P_CONSUMER] == C_DONE;
    default:
        return true;        /* the deadline and the user need not act */
    }
}

static const char *of_violation(const void *sv)
{
    const struct offer_state *s = sv;
    const char *v = pending;
    pending = NULL;
    if (v != NULL)
        return v;
    if (s->delivered > 1)
        return "the message is delivered twice";
    if (s->delivered && s->cancelled)
        return "a cancelled message is delivered";
    return NULL;
}

static const char *of_final(const void *sv)
{
    const struct offer_state *s = sv;
    if (!s->done)
        return "the send never completes";
    if (consumer_present && s->delivered + s->cancelled != 1)
        return "the receiver neither received the message nor was it cancelled";
    bool unreceived_copy = s->state == EAGER && !s->head;
    if (s->copies != (unreceived_copy ? 1 : 0))
        return "a copy of the message is lost";
    return NULL;
}

static void of_show(const void *sv, FILE *out)
{
    const struct offer_state *s = sv;
    fprintf(out, "seq=%u state=%u eager=%u copies=%u head=%u buf=%u done=%u cancelled=%u delivered=%u "
            "deadline=%u want_cancel=%u record=%u | S pc=%u | C pc=%u",
            s->seq, s->state, s->eager, s->copies, s->head, s->buf, s->done, s->cancelled, s->delivered,
            s->deadline, s->want_cancel, s->record, s->pc[P_SENDER], s->pc[P_CONSUMER]);
}

static const struct model offer_model = {
    "offer", sizeof(struct offer_state), NPROC, of_init, of_step, of_finished, of_violation, of_final, of_show,
};

/* With and without a consumer, with and without a cancel. */
static bool explore_all(struct explore_stats *stats, FILE *out)
{
    for (int config = 0; config < 4; config++) {
        consumer_present = config & 1;
        cancel_config = config & 2;
        if (!explore(&offer_model, stats, out))
            return false;
    }
    return true;
}

bool check_offer(struct explore_stats *stats, FILE *out)
{
    mutant = CORRECT;
    return explore_all(stats, out);
}

bool check_offer_mutant(int m, struct explore_stats *stats, FILE *out)
{
    mutant = (enum mutant)m;
    bool caught = !explore_all(stats, out);
    mutant = CORRECT;
    pending = NULL;
    return caught;
}
