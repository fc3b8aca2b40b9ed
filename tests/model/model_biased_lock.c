/* Model of the biased lock (src/util/biased_lock.h), the mailbox's lock:
 * the owner (the receiving rank's thread) and two other threads (senders
 * on the mailbox path, the network thread) each take the lock a few
 * times; the checker explores every interleaving and checks that never
 * two are inside at once, and that nobody waits forever.
 *
 * Memory: x86-TSO for the owner, whose fast path has no fence. Its stores
 * (owner_inside, and `biased` when it re-biases) go into its store
 * buffer; its own loads see the buffer first, everybody else sees memory.
 * The buffer drains one store at a time at any moment (process F), all at
 * once before a locked instruction of the owner (lite_lock, lite_unlock),
 * and all at once during another thread's membarrier() (the barrier it
 * runs on every CPU of the process). The other threads' stores are made
 * under the lite_lock or right before a system call (the clearing of
 * `biased` before membarrier), both of which order them: they are
 * visible at once. The lite_lock itself is one atomic step (a model of
 * its own is not needed: it is a test-and-set lock).
 *
 * The re-bias rule (`quiet_needed` owner entries with no other thread in
 * between) runs with a threshold of 1 here, so that the owner biases the
 * lock again as soon as it can and every order of bias, revocation and
 * re-bias is explored; the doubling of the threshold only spaces these
 * out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"

enum { P_OWNER, P_OTHER0, P_OTHER1, P_FLUSH, NPROC };
enum { OWNER_ROUNDS = 4, OTHER_ROUNDS = 2, BUFFER = 4 };
enum { NOBODY = 0 };

enum owner_pc {
    O_LOAD,         /* load biased: 1 -> O_FLAG, 0 -> O_SLOW */
    O_FLAG,         /* store owner_inside = 1 (buffered) */
    O_RECHECK,      /* load biased again: 1 -> inside (biased), 0 -> O_RETREAT */
    O_RETREAT,      /* store owner_inside = 0 (buffered) */
    O_SLOW,         /* lite_lock (drains the buffer); the quiet rule, maybe store biased = 1 */
    O_INSIDE,       /* the critical section */
    O_LEAVE,        /* biased: store owner_inside = 0; else lite_unlock (drains) */
    O_DONE,
};

enum other_pc {
    X_LOCK,         /* lite_lock; others++ */
    X_LOAD,         /* load biased: 0 -> inside */
    X_CLEAR,        /* store biased = 0 */
    X_BARRIER,      /* membarrier(): the owner's buffer drains */
    X_WAIT,         /* until owner_inside == 0 */
    X_INSIDE,
    X_LEAVE,        /* lite_unlock */
    X_DONE,
};

enum var { V_BIASED, V_OWNER_INSIDE };

struct store {
    uint8_t var, value;         /* var + 1; 0 = empty slot */
};

struct biased_state {
    uint8_t biased, owner_inside;           /* memory */
    struct store buffer[BUFFER];            /* the owner's store buffer, oldest first */
    uint8_t nbuffer;
    uint8_t holder;                         /* of the lite_lock: 1 + process, or NOBODY */
    uint8_t others, others_seen, quiet;     /* under the lite_lock */
    uint8_t inside;                         /* processes in the critical section */
    uint8_t pc[3], round[3], owner_biased;  /* owner_biased: how the owner entered */
};

enum mutant {
    CORRECT,
    NO_MEMBARRIER,      /* the revoking thread skips membarrier() */
    NO_RECHECK,         /* the owner enters on its first load of `biased` */
    NO_WAIT,            /* the revoking thread does not wait for owner_inside == 0 */
    BIAS_OUTSIDE,       /* the owner re-biases after lite_unlock, not under the lock */
    NO_RETREAT,         /* the owner, revoked between its loads, leaves owner_inside set */
};

static enum mutant mutant;
static uint8_t start_biased;

static void bl_init(void *sv)
{
    struct biased_state *s = sv;
    memset(s, 0, sizeof *s);
    s->biased = start_biased;
}

static void buffer_store(struct biased_state *s, enum var v, uint8_t value)
{
    s->buffer[s->nbuffer++] = (struct store){ (uint8_t)(v + 1), value };
}

static void memory_store(struct biased_state *s, enum var v, uint8_t value)
{
    if (v == V_BIASED)
        s->biased = value;
    else
        s->owner_inside = value;
}

static void buffer_flush_one(struct biased_state *s)
{
    memory_store(s, (enum var)(s->buffer[0].var - 1), s->buffer[0].value);
    memmove(&s->buffer[0], &s->buffer[1], (size_t)(s->nbuffer - 1) * sizeof s->buffer[0]);
    s->buffer[--s->nbuffer] = (struct store){ 0, 0 };
}

static void buffer_drain(struct biased_state *s)
{
    while (s->nbuffer > 0)
        buffer_flush_one(s);
}

/* The owner's load: its newest buffered store of `v`, else memory. */
static uint8_t owner_load(const struct biased_state *s, enum var v)
{
    for (int i = s->nbuffer - 1; i >= 0; i--)
        if (s->buffer[i].var == (uint8_t)(v + 1))
            return s->buffer[i].value;
    return v == V_BIASED ? s->biased : s->owner_inside;
}

static const char *pending;

static void enter(struct biased_state *s)
{
    if (++s->inside > 1)
        pending = "two threads inside the lock at once";
}

static bool owner_step(struct biased_state *s)
{
    /* Every step stores at most once: with the buffer full, the owner
     * stalls until process F drains an entry (as a CPU does). */
    if (s->nbuffer == BUFFER)
        return false;
    switch ((enum owner_pc)s->pc[P_OWNER]) {
    case O_LOAD:
        s->pc[P_OWNER] = owner_load(s, V_BIASED) ? O_FLAG : O_SLOW;
        return true;
    case O_FLAG:
        buffer_store(s, V_OWNER_INSIDE, 1);
        s->pc[P_OWNER] = mutant == NO_RECHECK ? O_INSIDE : O_RECHECK;
        s->owner_biased = 1;
        if (mutant == NO_RECHECK)
            enter(s);
        return true;
    case O_RECHECK:
        if (owner_load(s, V_BIASED)) {
            s->owner_biased = 1;
            enter(s);
            s->pc[P_OWNER] = O_INSIDE;
        } else {
            s->owner_biased = 0;
            s->pc[P_OWNER] = mutant == NO_RETREAT ? O_SLOW : O_RETREAT;
        }
        return true;
    case O_RETREAT:
        buffer_store(s, V_OWNER_INSIDE, 0);
        s->pc[P_OWNER] = O_SLOW;
        return true;
    case O_SLOW:
        if (s->holder != NOBODY)
            return false;
        buffer_drain(s);                    /* lite_lock's locked instruction */
        s->holder = 1 + P_OWNER;
        s->owner_biased = 0;
        if (s->others != s->others_seen) {
            s->others_seen = s->others;
            s->quiet = 0;
        } else if (mutant != BIAS_OUTSIDE) {
            buffer_store(s, V_BIASED, 1);   /* quiet_needed = 1 */
        }
        enter(s);
        s->pc[P_OWNER] = O_INSIDE;
        return true;
    case O_INSIDE:
        s->inside--;
        s->pc[P_OWNER] = O_LEAVE;
        return true;
    case O_LEAVE:
        if (s->owner_biased) {
            buffer_store(s, V_OWNER_INSIDE, 0);
        } else {
            buffer_drain(s);                /* lite_unlock's exchange */
            s->holder = NOBODY;
            if (mutant == BIAS_OUTSIDE && s->others == s->others_seen)
                buffer_store(s, V_BIASED, 1);
        }
        s->owner_biased = 0;
        s->pc[P_OWNER] = ++s->round[P_OWNER] == OWNER_ROUNDS ? O_DONE : O_LOAD;
        return true;
    case O_DONE:
        return false;
    }
    return false;
}

static bool other_step(struct biased_state *s, int p)
{
    switch ((enum other_pc)s->pc[p]) {
    case X_LOCK:
        if (s->holder != NOBODY)
            return false;
        s->holder = (uint8_t)(1 + p);
        s->others++;
        s->pc[p] = X_LOAD;
        return true;
    case X_LOAD:
        if (s->biased) {
            s->pc[p] = X_CLEAR;
        } else {
            enter(s);
            s->pc[p] = X_INSIDE;
        }
        return true;
    case X_CLEAR:
        s->biased = 0;
        s->pc[p] = mutant == NO_MEMBARRIER ? X_WAIT : X_BARRIER;
        return true;
    case X_BARRIER:
        buffer_drain(s);
        s->pc[p] = X_WAIT;
        return true;
    case X_WAIT:
        if (mutant != NO_WAIT && s->owner_inside)
            return false;                   /* spins: no new state until the owner's store lands */
        enter(s);
        s->pc[p] = X_INSIDE;
        return true;
    case X_INSIDE:
        s->inside--;
        s->pc[p] = X_LEAVE;
        return true;
    case X_LEAVE:
        s->holder = NOBODY;
        s->pc[p] = ++s->round[p] == OTHER_ROUNDS ? X_DONE : X_LOCK;
        return true;
    case X_DONE:
        return false;
    }
    return false;
}

static bool bl_step(void *sv, int p)
{
    struct biased_state *s = sv;
    if (p == P_FLUSH) {
        if (s->nbuffer == 0)
            return false;
        buffer_flush_one(s);
        return true;
    }
    return p == P_OWNER ? owner_step(s) : other_step(s, p);
}

static bool bl_finished(const void *sv, int p)
{
    const struct biased_state *s = sv;
    if (p == P_FLUSH)
        return true;
    return s->pc[p] == (p == P_OWNER ? O_DONE : X_DONE);
}

static const char *bl_violation(const void *sv)
{
    (void)sv;
    const char *v = pending;
    pending = NULL;
    return v;
}

static const char *bl_final(const void *sv)
{
    const struct biased_state *s = sv;
    if (s->holder != NOBODY || s->inside != 0)
        return "the lock is still held at the end";
    return NULL;
}

static void bl_show(const void *sv, FILE *out)
{
    const struct biased_state *s = sv;
    fprintf(out, "biased=%u owner_inside=%u buffered=%u holder=%u inside=%u | owner pc=%u round=%u | X0 pc=%u | X1 pc=%u",
            s->biased, s->owner_inside, s->nbuffer, s->holder, s->inside, s->pc[P_OWNER], s->round[P_OWNER],
            s->pc[P_OTHER0], s->pc[P_OTHER1]);
}

static const struct model biased_model = {
    "biased lock", sizeof(struct biased_state), NPROC, bl_init, bl_step, bl_finished, bl_violation, bl_final, bl_show,
};

/* Both starts: biased (the first other thread revokes) and not (the owner
 * biases the lock on its first entry). */
static bool explore_all(struct explore_stats *stats, FILE *out)
{
    for (start_biased = 0; start_biased < 2; start_biased++)
        if (!explore(&biased_model, stats, out))
            return false;
    return true;
}

bool check_biased_lock(struct explore_stats *stats, FILE *out)
{
    mutant = CORRECT;
    return explore_all(stats, out);
}

bool check_biased_lock_mutant(int m, struct explore_stats *stats, FILE *out)
{
    mutant = (enum mutant)m;
    bool caught = !explore_all(stats, out);
    mutant = CORRECT;
    pending = NULL;
    return caught;
}
