/* Model of a lane (src/pt2pt/lane.h, lane.c, and the drain in mailbox.c):
 * the ring of slots and the answer slot from one sending rank to one
 * receiving rank.
 *
 * Processes: the producer P (the sending rank; the threads of an
 * MPI_THREAD_MULTIPLE sender take the lane's producer lock, so they act
 * as one producer), the consumer C (whoever holds the receiver's mailbox
 * lock and drains: model_mailbox.c shows that these are serialized and
 * that what they drain is matched in order), T, which ends the
 * producer's wait for room at any moment (the wait is 2000 polls long: a
 * timing the model does not know), and M, which stops a drain after any
 * message it copied (a receive being posted drains only up to the message
 * that completes it, mailbox_post_receive: which message that is depends
 * on tags the model does not know).
 *
 * The producer sends MSGS messages, each of 1..KMAX slots (the patterns
 * are explored one by one: every sequence of sizes, and for the messages
 * of one slot, whether they try the answer slot: lane_put_answer, when an
 * answer is due). Lane messages are numbered in send order (a message
 * that takes the mailbox path gets no number), and a published message's
 * `seq` is its number + 1, in the ring and in the answer slot alike. An
 * answer checks that the slot is free (`seq` 0), writes it and publishes
 * it; if the slot is taken, the message goes to the ring. In the ring the
 * producer mirrors lane_put_ring: the room check against the cached bound, a fresh load of
 * `head`, the wait for room (lane_wait_room, with its `stalled_head` rule),
 * the header, the data, the clearing of the successor slot's `seq`, the
 * publishing store, and the SKIP slot when the message goes to the ring's
 * start. When the lane has no room it takes the mailbox path, as
 * mailbox_deliver does: under the mailbox lock it drains the lane, then
 * delivers the message itself. The consumer mirrors lane_drain: for the
 * number it takes next, look in the answer slot, then at its local ring
 * head (poll the slot's `seq`, follow a SKIP), read the header, copy the
 * data; give an answer slot back at once (`seq` 0), and publish the ring's
 * `head` and the number once at the end (lane_consumed).
 *
 * A slot is its `seq` word, the message whose bytes it holds, and its
 * header's `bytes`. The protocol does not depend on a slot's size (32
 * bytes in lane.h, so two slots share a cache line): only the sizes in
 * slots matter, and the patterns below cover 1..KMAX of them. A slot that holds a message's later data (not its
 * header) has a `seq` word made of data bytes: any value (WILD), which
 * a consumer polling it could take for a published message.
 *
 * Checked in every state: the slot the consumer polls never holds data
 * bytes in its `seq` word; the slots of a message keep its bytes from the
 * consumer's poll to the end of its copy (the producer never writes slots
 * the consumer has not given back, nor an answer slot it has not freed);
 * messages reach the mailbox in send order, each once. At the end: all of
 * them did. A state where nobody can move before that is a lost message.
 *
 * Memory: the interleavings are sequentially consistent. The producer's
 * stores become visible in program order (x86-TSO; in C11, the header,
 * data and successor clear come before the publishing release store, and
 * the consumer reads them only after its acquire load of `seq`); the
 * consumer's loads of a message follow its acquire. The only other
 * shared words are `head` and `next` (the consumer's stores, the
 * producer's loads): a producer seeing them late sees older values, which
 * is a load at an earlier step, and only finds less room; and the answer
 * slot's `seq` (the consumer's release store of 0 after its copy, the
 * producer's acquire load before it writes). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"

enum { P_PRODUCER, P_CONSUMER, P_TIMER, P_MATCHED, NPROC };
enum { RING_MAX = 8, MSGS_MAX = 8, WILD = 0xff, SKIP = 0xff };

enum producer_pc {
    PR_START,       /* lane_put: an answer tries the answer slot; else the ring's position and room check */
    PR_ANSWER,      /* lane_put_answer: the slot is free (seq 0)?  else into the ring */
    PR_ANSWER_FILL, /* the slot's header and data */
    PR_ANSWER_PUBLISH, /* seq = number + 1 (release) */
    PR_RING,        /* lane_put_ring: position, room check (cached, then a fresh load of head) */
    PR_WAIT,        /* lane_wait_room: poll head until there is room (T may end it) */
    PR_HEADER,      /* the header fields and the first slot's data */
    PR_DATA,        /* the later slots' data (their seq words become data bytes) */
    PR_CLEAR,       /* seq of the successor slot = 0 */
    PR_PUBLISH,     /* seq of the first slot = number + 1 (release) */
    PR_SKIP_BYTES,  /* the SKIP slot: bytes = LANE_SKIP */
    PR_SKIP_PUBLISH,/* the SKIP slot: seq = number + 1 */
    PR_MAILBOX,     /* mailbox_deliver: lock; drain the lane; deliver; unlock */
    PR_DONE,
};

enum consumer_pc {
    CO_IDLE,        /* lanes_pending, then the mailbox lock */
    CO_POLL,        /* lane_message_at: answer slot's seq == next + 1?  else the ring's (SKIP: to its start) */
    CO_COPY,        /* match_eager's copy begins */
    CO_COPY_END,    /* ... and ends; next + 1; the ring's head += slots */
    CO_FREE,        /* lane_cursor_step: an answer slot's seq = 0 (release) */
    CO_END,         /* lane_consumed (if next moved); unlock */
};

struct slot_m {
    uint8_t seq;            /* position + 1, 0, or WILD */
    uint8_t msg;            /* 1 + the message whose bytes it holds; 0: none */
    uint8_t bytes;          /* the header's size in slots, or SKIP */
};

struct lane_state {
    struct slot_m slot[RING_MAX];
    struct slot_m answer;               /* the answer slot (one slot's message) */
    uint8_t head;                       /* the consumer's published position */
    uint8_t next;                       /* the consumer's published number */
    uint8_t locked;                     /* the mailbox lock: 1 + holder */
    uint8_t delivered;                  /* messages in the mailbox, in order */
    /* producer (positions are small: they never wrap in the model either) */
    uint8_t ppc, msg, number, tail, room_end, stalled_next, start, k, end;
    /* consumer */
    uint8_t cpc, chead, cnext, cfirst, cmsg, ck, canswer;
};

/* Protocol variants with a known flaw, which the checker must catch. */
enum mutant {
    CORRECT,
    NO_SUCCESSOR_CLEAR,     /* the producer does not clear the successor's seq */
    NO_SUCCESSOR_ROOM,      /* the room check forgets the successor slot */
    WRAP_ROOM_FROM_TAIL,    /* the room check counts from the tail, not from the ring's start */
    PUBLISH_BEFORE_DATA,    /* the publishing store comes before the data */
    CONSUMED_AT_HEADER,     /* the consumer gives a message's slots back before it copies them */
    ANSWER_FREED_AT_POLL,   /* the consumer frees the answer slot before it copies it */
    ANSWER_UNCHECKED,       /* the producer writes the answer slot without checking it is free */
};

static struct {
    enum mutant mutant;
    int ring;               /* slots (LANE_SLOTS) */
    int msgs;
    uint8_t k[MSGS_MAX];    /* each message's slots (lane_slots_for) */
    bool answer[MSGS_MAX];  /* a message of one slot tries the answer slot */
} cfg;

static const char *pending;

static void flag(const char *what)
{
    if (pending == NULL)
        pending = what;
}

static struct slot_m *slot_at(struct lane_state *s, int pos)
{
    return &s->slot[pos % cfg.ring];
}

static void lane_init(void *sv)
{
    struct lane_state *s = sv;
    memset(s, 0, sizeof *s);
    s->room_end = (uint8_t)cfg.ring;    /* lane_create */
}

static void deliver(struct lane_state *s, int msg)
{
    if (msg != s->delivered)
        flag("a message reaches the mailbox out of send order, or twice");
    s->delivered++;
}

/* The slots of message `msg` at `pos` still hold its bytes. */
static bool message_intact(struct lane_state *s, int pos, int k, int msg)
{
    for (int i = 0; i < k; i++)
        if (slot_at(s, pos + i)->msg != msg + 1)
            return false;
    return true;
}

/* Whether the message the consumer took (answer slot or ring) still holds
 * message `msg`'s bytes. */
static bool taken_intact(struct lane_state *s, bool answer, int pos, int k, int msg)
{
    return answer ? s->answer.msg == msg + 1 : message_intact(s, pos, k, msg);
}

/* lane_message_at for number `number`, the ring's head at `*head`: the
 * ring's first slot of the message (stepping over a SKIP), else the answer
 * slot if it holds it, else NULL. */
static struct slot_m *message_at(struct lane_state *s, uint8_t *head, int number)
{
    for (;;) {
        struct slot_m *sl = slot_at(s, *head);
        if (sl->seq == WILD)
            flag("the consumer polls a slot whose seq word holds data bytes");
        if (sl->seq != number + 1)
            break;
        if (sl->bytes != SKIP)
            return sl;
        *head = (uint8_t)(*head + cfg.ring - *head % cfg.ring);
    }
    return s->answer.seq == number + 1 ? &s->answer : NULL;
}

/* lane_drain in one step (the producer's mailbox path: it holds the lock,
 * and it is the only writer of the lane, so nobody moves meanwhile). */
static void drain_at_once(struct lane_state *s)
{
    uint8_t head = s->head;
    int number = s->next;
    struct slot_m *sl;
    while ((sl = message_at(s, &head, number)) != NULL) {
        bool answer = sl == &s->answer;
        int k = sl->bytes, msg = sl->msg - 1;
        if (msg < 0 || !taken_intact(s, answer, head, k, msg))
            flag("a message's slots do not hold its bytes when it is copied");
        deliver(s, msg);
        if (answer)
            s->answer.seq = 0;
        else
            head = (uint8_t)(head + k);
        number++;
    }
    s->head = head;
    s->next = (uint8_t)number;
}

/* lane_put_ring's start, end and room check; the next pc. */
static enum producer_pc producer_ring(struct lane_state *s)
{
    int pos = s->tail, k = cfg.k[s->msg];
    int start = pos % cfg.ring + k > cfg.ring ? pos + (cfg.ring - pos % cfg.ring) : pos;
    int end = start + k + 1;
    if (cfg.mutant == NO_SUCCESSOR_ROOM)
        end = start + k;
    else if (cfg.mutant == WRAP_ROOM_FROM_TAIL)
        end = pos + k + 1;
    s->start = (uint8_t)start;
    s->k = (uint8_t)k;
    s->end = (uint8_t)end;
    if (end <= s->room_end)
        return PR_HEADER;
    s->room_end = (uint8_t)(s->head + cfg.ring);
    if (end <= s->room_end)
        return PR_HEADER;
    /* lane_wait_room: at once back to the mailbox path if the last wait
     * gave up and the consumer took nothing since */
    return s->next + 1 == s->stalled_next ? PR_MAILBOX : PR_WAIT;
}

/* The message is sent: in the lane (`numbered`) or by the mailbox path. */
static void producer_next(struct lane_state *s, bool numbered)
{
    if (numbered)
        s->number++;
    s->ppc = ++s->msg == cfg.msgs ? PR_DONE : PR_START;
}

/* After the publishing store: the SKIP slot if the message went to the
 * ring's start, else the next message. */
static void producer_published(struct lane_state *s)
{
    if (s->start != s->tail) {
        s->ppc = PR_SKIP_BYTES;
        return;
    }
    s->tail = (uint8_t)(s->start + s->k);
    producer_next(s, true);
}

static bool producer_step(struct lane_state *s)
{
    struct slot_m *first = slot_at(s, s->start);
    switch ((enum producer_pc)s->ppc) {
    case PR_START:
        s->ppc = cfg.answer[s->msg] ? PR_ANSWER : PR_RING;
        return true;
    case PR_ANSWER:
        s->ppc = s->answer.seq == 0 || cfg.mutant == ANSWER_UNCHECKED ? PR_ANSWER_FILL : PR_RING;
        return true;
    case PR_ANSWER_FILL:
        s->answer.msg = (uint8_t)(s->msg + 1);
        s->answer.bytes = 1;
        s->ppc = PR_ANSWER_PUBLISH;
        return true;
    case PR_ANSWER_PUBLISH:
        s->answer.seq = (uint8_t)(s->number + 1);
        producer_next(s, true);
        return true;
    case PR_RING:
        s->ppc = producer_ring(s);
        return true;
    case PR_WAIT:
        if (s->end > s->head + cfg.ring)
            return false;           /* polls: nothing changes until the consumer moves (or T) */
        s->room_end = (uint8_t)(s->head + cfg.ring);
        s->ppc = PR_HEADER;
        return true;
    case PR_HEADER:
        first->msg = (uint8_t)(s->msg + 1);
        first->bytes = s->k;
        s->ppc = cfg.mutant == PUBLISH_BEFORE_DATA ? PR_PUBLISH : PR_DATA;
        return true;
    case PR_DATA:
        for (int i = 1; i < s->k; i++)
            *slot_at(s, s->start + i) = (struct slot_m){ WILD, (uint8_t)(s->msg + 1), WILD };
        s->ppc = cfg.mutant == NO_SUCCESSOR_CLEAR ? PR_PUBLISH : PR_CLEAR;
        return true;
    case PR_CLEAR:
        slot_at(s, s->start + s->k)->seq = 0;
        if (cfg.mutant == PUBLISH_BEFORE_DATA)
            producer_published(s);
        else
            s->ppc = PR_PUBLISH;
        return true;
    case PR_PUBLISH:
        first->seq = (uint8_t)(s->number + 1);
        if (cfg.mutant == PUBLISH_BEFORE_DATA)
            s->ppc = PR_DATA;
        else
            producer_published(s);
        return true;
    case PR_SKIP_BYTES:
        slot_at(s, s->tail)->bytes = SKIP;
        s->ppc = PR_SKIP_PUBLISH;
        return true;
    case PR_SKIP_PUBLISH:
        slot_at(s, s->tail)->seq = (uint8_t)(s->number + 1);
        s->tail = (uint8_t)(s->start + s->k);
        producer_next(s, true);
        return true;
    case PR_MAILBOX:
        if (s->locked)
            return false;
        drain_at_once(s);
        deliver(s, s->msg);
        producer_next(s, false);
        return true;
    case PR_DONE:
        return false;
    }
    return false;
}

static bool consumer_step(struct lane_state *s)
{
    switch ((enum consumer_pc)s->cpc) {
    case CO_IDLE: {
        /* lanes_pending: no message, no lock (no step) */
        uint8_t head = s->head;
        if (s->locked || message_at(s, &head, s->next) == NULL)
            return false;
        s->locked = 1 + P_CONSUMER;
        s->chead = s->head;
        s->cnext = s->cfirst = s->next;
        s->cpc = CO_POLL;
        return true;
    }
    case CO_POLL: {
        struct slot_m *sl = message_at(s, &s->chead, s->cnext);
        if (sl == NULL) {
            s->cpc = CO_END;
            return true;
        }
        s->canswer = sl == &s->answer;
        s->cmsg = (uint8_t)(sl->msg - 1);
        s->ck = sl->bytes;
        if (sl->msg == 0 || sl->bytes == WILD || !taken_intact(s, s->canswer, s->chead, s->ck, s->cmsg))
            flag("the consumer reads a published message whose slots do not hold it");
        if (cfg.mutant == CONSUMED_AT_HEADER && !s->canswer)
            s->head = (uint8_t)(s->chead + s->ck);
        if (cfg.mutant == ANSWER_FREED_AT_POLL && s->canswer)
            s->answer.seq = 0;
        s->cpc = CO_COPY;
        return true;
    }
    case CO_COPY:
        if (!taken_intact(s, s->canswer, s->chead, s->ck, s->cmsg))
            flag("the producer overwrites a message the consumer is copying");
        s->cpc = CO_COPY_END;
        return true;
    case CO_COPY_END:
        if (!taken_intact(s, s->canswer, s->chead, s->ck, s->cmsg))
            flag("the producer overwrites a message the consumer is copying");
        deliver(s, s->cmsg);
        s->cnext++;
        if (s->canswer) {
            s->cpc = CO_FREE;
            return true;
        }
        s->chead = (uint8_t)(s->chead + s->ck);
        s->cpc = CO_POLL;
        return true;
    case CO_FREE:
        if (cfg.mutant != ANSWER_FREED_AT_POLL)
            s->answer.seq = 0;
        s->cpc = CO_POLL;
        return true;
    case CO_END:
        if (s->cnext != s->cfirst) {
            s->next = s->cnext;
            s->head = s->chead;
        }
        s->locked = 0;
        s->cpc = CO_IDLE;
        return true;
    }
    return false;
}

static bool lane_step(void *sv, int p)
{
    struct lane_state *s = sv;
    if (p == P_TIMER) {
        /* lane_wait_room gives up: remembers the number it waited on */
        if (s->ppc != PR_WAIT)
            return false;
        s->stalled_next = (uint8_t)(s->next + 1);
        s->ppc = PR_MAILBOX;
        return true;
    }
    if (p == P_MATCHED) {
        /* lanes_drain_until: the receive being posted got its message */
        if (s->cpc != CO_POLL || s->cnext == s->cfirst)
            return false;
        s->cpc = CO_END;
        return true;
    }
    return p == P_PRODUCER ? producer_step(s) : consumer_step(s);
}

static bool lane_finished(const void *sv, int p)
{
    const struct lane_state *s = sv;
    if (p == P_PRODUCER)
        return s->ppc == PR_DONE;
    if (p == P_CONSUMER)
        return s->cpc == CO_IDLE;
    return true;
}

static const char *lane_violation(const void *sv)
{
    (void)sv;
    const char *v = pending;
    pending = NULL;
    return v;
}

static const char *lane_final(const void *sv)
{
    const struct lane_state *s = sv;
    if (s->delivered != cfg.msgs)
        return "a message never reaches the mailbox";
    return NULL;
}

static void lane_show(const void *sv, FILE *out)
{
    const struct lane_state *s = sv;
    fprintf(out, "slots");
    for (int i = 0; i < cfg.ring; i++)
        fprintf(out, " [seq=%u msg=%u k=%u]", s->slot[i].seq, s->slot[i].msg, s->slot[i].bytes);
    fprintf(out, " answer [seq=%u msg=%u] head=%u next=%u delivered=%u | P pc=%u msg=%u number=%u tail=%u room_end=%u "
                 "start=%u k=%u | C pc=%u head=%u next=%u",
            s->answer.seq, s->answer.msg, s->head, s->next, s->delivered, s->ppc, s->msg, s->number, s->tail,
            s->room_end, s->start, s->k, s->cpc, s->chead, s->cnext);
}

static const struct model lane_model = {
    "lane", sizeof(struct lane_state), NPROC, lane_init, lane_step, lane_finished, lane_violation, lane_final,
    lane_show,
};

/* Every sequence of `msgs` messages in a ring of `ring` (the largest
 * message and its successor fit twice, as lane.h asserts): each of
 * 1..kmax slots, or (with `answers`) an answer of one slot. */
static bool explore_sizes(int ring, int kmax, int msgs, bool answers, struct explore_stats *stats, FILE *out)
{
    cfg.ring = ring;
    cfg.msgs = msgs;
    int kinds = kmax + (answers ? 1 : 0), patterns = 1;
    for (int i = 0; i < msgs; i++)
        patterns *= kinds;
    for (int pattern = 0; pattern < patterns; pattern++) {
        for (int i = 0, rest = pattern; i < msgs; i++, rest /= kinds) {
            int kind = rest % kinds;        /* kmax: an answer */
            cfg.answer[i] = kind == kmax;
            cfg.k[i] = (uint8_t)(cfg.answer[i] ? 1 : 1 + kind);
        }
        if (!explore(&lane_model, stats, out)) {
            fprintf(out, "messages (slots, a: answer):");
            for (int i = 0; i < msgs; i++)
                fprintf(out, cfg.answer[i] ? " a" : " %u", cfg.k[i]);
            fprintf(out, " (ring of %d)\n", ring);
            return false;
        }
    }
    return true;
}

static bool explore_all(struct explore_stats *stats, FILE *out)
{
    /* 6 slots, messages of 1-2: two laps and every wrap; answers among
     * them; --full: 8 slots, messages of 1-3 and answers */
    if (!explore_sizes(6, 2, 7, false, stats, out) || !explore_sizes(6, 2, 6, true, stats, out))
        return false;
    return !model_full || explore_sizes(8, 3, 7, true, stats, out);
}

bool check_lane(struct explore_stats *stats, FILE *out)
{
    cfg.mutant = CORRECT;
    return explore_all(stats, out);
}

bool check_lane_mutant(int m, struct explore_stats *stats, FILE *out)
{
    cfg.mutant = (enum mutant)m;
    bool caught = !explore_all(stats, out);
    cfg.mutant = CORRECT;
    pending = NULL;
    return caught;
}
