/* Model of MPI_Win_lock / MPI_Win_unlock on one target: the fair
 * reader-writer ticket lock of src/rma/lock.c (lock_acquire, lock_turn,
 * lock_release, wake_ticket) with the waiter slots and the sleep/wake
 * handshake of src/core/wait.c.
 *
 * Each of 2-3 processes (ranks) takes the lock a few times, each time
 * shared or exclusive as the configuration says, and every combination of
 * lock types is explored. A process may also be a remote origin (every
 * choice of which ones is explored). Its epoch is three frames sent at
 * once (MPI_Win_lock does not wait for the grant): LOCK, one operation,
 * UNLOCK, which the target's progress thread serves in order (the
 * process's steps model that thread):
 *  - LOCK: lock_request_remote (ticket, `waiting`, slot, then its own look
 *    through remote_try_grant); whoever finds its proxy in a waiter slot
 *    (wake_ticket, or the grant loop of remote_try_grant after a shared
 *    grant) grants it instead of waking it;
 *  - the operation and the UNLOCK: held (frame_hold in remote.c) from the
 *    LOCK (`pending`) until the grant is done, or while frames of it are
 *    held or being served; otherwise applied / released
 *    (lock_release_core) at once;
 *  - a grant (rma_remote_lock_granted) schedules the held frames on the
 *    granting thread, which serves them in order once out of the lock code
 *    (rma_remote_serve_held: at the end of lock_request_remote,
 *    lock_acquire, lock_release_core), a held UNLOCK included, whose
 *    release may grant again (served by the same loop); the UNLOCK's ACK
 *    ends the origin's epoch.
 * Checked: an exclusive holder is alone in its critical section (no other
 * exclusive holder, no shared holder; a remote origin holds from its grant
 * to its release); a remote operation is applied only while its origin
 * holds the lock; no deadlock or lost wake-up; at the end no reader is
 * counted, every ticket was served and no frame is left held.
 *
 * Planted flaws (check_lock_mutant) show that the checker catches each
 * way this can go wrong. */
#include <string.h>

#include "models.h"
#include "waiting.h"

enum { LOCK_ITERS_MAX = 2 };

enum lock_pc {
    L_TICKET,       /* lock_acquire: ticket = fetch_add(next) */
    L_TURN_SERVING, /* lock_turn: load serving */
    L_TURN_READERS, /* lock_turn (exclusive): load readers */
    L_SLOT,         /* store self in waiters[ticket % size] */
    L_WAIT,         /* rank_wait_until(lock_turn) */
    L_READER_JOIN,  /* shared: fetch_add(readers) */
    L_READER_SERVE, /* shared: fetch_add(serving), then wake_ticket(ticket + 1) */
    L_RELEASE,      /* holds the lock (puts happen here); next: lock_release,
                       exclusive fetch_add(serving) / shared fetch_sub(readers) */
    L_LAST_READER,  /* the last reader: load serving, then wake_ticket */
    L_WT_NEXT,      /* wake_ticket: load next (was the ticket handed out?) */
    L_WT_SLOT,      /* wake_ticket: load the slot */
    L_WAKE,         /* rank_wake of the slot's rank */
    L_END,          /* one lock/unlock done (a local step, taken at once) */
    L_DONE,
    /* a remote origin's frames, as its target's progress thread serves them */
    R_PENDING,      /* lock_request_remote: the row's `pending` (its frames are held from now) */
    R_FLAG,         /* store the request word (ticket, kind, waiting) */
    R_SLOT,         /* store the proxy in waiters[ticket % size], then remote_try_grant */
    R_OP,           /* the operation frame: held, or applied (R_APPLY) */
    R_APPLY,        /* apply it (the origin must hold the lock) */
    R_UNLOCK,       /* the UNLOCK frame: held (then R_ACKWAIT), or lock_release_core at once */
    R_ACKWAIT,      /* wait for the UNLOCK's ACK, sent by whoever serves the held UNLOCK */
    /* rma_remote_serve_held: the rows this thread scheduled (`sched`), then `dcont` */
    D_LOOP,         /* next scheduled row, or done */
    D_TAKE,         /* under the row's lock: the next held frame (none, or waiting again: row done) */
    D_APPLY,        /* apply a held operation (its origin must hold the lock) */
    D_RELEASE,      /* a held UNLOCK: lock_release_core for its origin, then its ACK */
    D_LAST_READER,  /* that release was the last reader's: wake_ticket(serving) */
    D_ACKED,        /* the ACK goes out: the origin's epoch ends */
    /* remote_try_grant(q), run by whoever found q's proxy (or q's own LOCK) */
    G_WAITING,      /* load q's request word */
    G_SERVING,      /* lock_turn: load serving */
    G_READERS,      /* lock_turn (exclusive): load readers */
    G_XCHG,         /* compare-and-swap the word read: clear its waiting bit */
    G_JOIN,         /* shared: fetch_add(readers) */
    G_SERVE,        /* shared: fetch_add(serving) */
    G_GRANT,        /* send the grant; shared: go on with the next ticket's holder */
};

struct lock_proc {
    uint8_t pc, after;      /* after: where wake_ticket returns */
    uint8_t iter, exclusive, ticket, wake_ticket, wake_rank, wake_phase;
    uint8_t grant;          /* the remote process remote_try_grant works for */
    uint8_t gticket, gexcl; /* the request word it read */
    uint8_t sched;          /* rows (bit per origin) this thread is to serve */
    uint8_t drow, dcont;    /* the row being served; where the serving loop returns */
    struct wait_m wait;
};

enum { HELD_OP = 1, HELD_UNLOCK = 2 };

struct lock_state {
    uint8_t next, serving, readers;
    uint8_t slot[MAXP];     /* waiters[]: rank + 1, 0 = NULL */
    uint8_t waiting[MAXP], rticket[MAXP], rexcl[MAXP];  /* remote_locks[]: one word */
    uint8_t pending[MAXP];  /* remote_locks[]: granted is not done yet */
    uint8_t held[MAXP];     /* held frames (HELD_ bits; the op always before the UNLOCK) */
    uint8_t draining[MAXP];
    uint8_t holding[MAXP];  /* a remote origin: its request claimed by a grant, not yet released */
    uint8_t acked[MAXP];    /* its UNLOCK's ACK, not yet seen by it */
    uint8_t bad_op;         /* an operation was applied while its origin did not hold the lock */
    struct waiter_m waiter[MAXP];
    struct lock_proc p[MAXP];
};

/* Protocol variants with a known flaw, which the checker must catch. */
enum lock_mutant {
    LOCK_CORRECT,
    HOLD_ONLY_PENDING,  /* frame_hold looks at `pending` only, not at frames still held or served */
    NEVER_HOLD,         /* the operation is applied at once, granted or not */
    GRANT_FORGETS_HELD, /* a grant does not schedule the held frames */
    GRANT_ANY_WORD,     /* the grant's compare-and-swap does not compare the ticket it checked */
};

static struct {
    int nprocs;
    int iters[MAXP];        /* locks taken by each process */
    unsigned kinds;         /* bit p * LOCK_ITERS_MAX + i: process p's i-th lock is exclusive */
    unsigned remote;        /* bit p: process p is a remote origin */
    enum lock_mutant mutant;
} cfg;

static void lock_init(void *sv)
{
    struct lock_state *s = sv;
    memset(s, 0, sizeof *s);
    for (int p = 0; p < cfg.nprocs; p++)
        s->p[p].pc = L_TICKET;
}

static enum cond_result lock_turn(void *sv, int p, uint8_t *cursor)
{
    struct lock_state *s = sv;
    struct lock_proc *me = &s->p[p];
    if (*cursor == 0) {
        if (s->serving != me->ticket)
            return COND_FALSE;
        if (!me->exclusive)
            return COND_TRUE;
        *cursor = 1;
        return COND_MORE;
    }
    return s->readers == 0 ? COND_TRUE : COND_FALSE;
}

/* Back from wake_ticket; locals no longer needed are cleared, so that
 * states differing only in them are one state. */
static void wake_return(struct lock_proc *me)
{
    me->pc = me->after;
    me->after = me->wake_ticket = me->wake_rank = me->grant = me->gticket = me->gexcl = 0;
}

/* L_END touches only locals: taken together with the step before. */
static void lock_end(struct lock_proc *me, int p)
{
    me->ticket = me->exclusive = 0;
    me->iter++;
    me->pc = me->iter == cfg.iters[p] ? L_DONE : L_TICKET;
}

static void call_wake_ticket(struct lock_proc *me, uint8_t ticket, uint8_t after)
{
    me->wake_ticket = ticket;
    me->after = after;
    me->pc = L_WT_NEXT;
}

/* wake_ticket, then rma_remote_serve_held, then `dcont`. */
static void call_wake_then_serve(struct lock_proc *me, uint8_t ticket, uint8_t dcont)
{
    me->dcont = dcont;
    call_wake_ticket(me, ticket, D_LOOP);
}

/* frame_hold's test, under the row's lock. */
static bool frame_held(const struct lock_state *s, int p)
{
    if (cfg.mutant == HOLD_ONLY_PENDING)
        return s->pending[p];
    return s->pending[p] || s->held[p] || s->draining[p];
}

/* A remote operation is applied: its origin must hold the lock. */
static void apply_op(struct lock_state *s, int origin)
{
    if (!s->holding[origin])
        s->bad_op = 1;
}

/* The first step of lock_release_core for `exclusive`, for a process
 * that leaves its critical section; then wake_ticket returning to `after`
 * (or the last-reader step `last`), or straight to `after`. */
static void release_begin(struct lock_state *s, struct lock_proc *me, bool exclusive, uint8_t after,
                          uint8_t last, uint8_t dcont)
{
    if (exclusive) {
        s->serving++;
        me->dcont = dcont;
        call_wake_ticket(me, s->serving, after);
    } else {
        me->dcont = dcont;
        me->pc = s->readers-- == 1 ? last : after;
    }
}

static bool lock_step_raw(struct lock_state *s, int p);

static bool lock_step(void *sv, int p)
{
    struct lock_state *s = sv;
    if (!lock_step_raw(s, p))
        return false;
    if (s->p[p].pc == L_END)
        lock_end(&s->p[p], p);
    return true;
}

static bool lock_step_raw(struct lock_state *s, int p)
{
    struct lock_proc *me = &s->p[p];
    int n = cfg.nprocs;
    switch ((enum lock_pc)me->pc) {
    case L_TICKET:
        me->exclusive = (cfg.kinds >> (p * LOCK_ITERS_MAX + me->iter)) & 1;
        me->ticket = s->next++;
        if ((cfg.remote >> p) & 1) {
            me->pc = R_PENDING;
        } else {
            me->pc = L_TURN_SERVING;
        }
        return true;
    case R_PENDING:
        s->pending[p] = 1;
        me->pc = R_FLAG;
        return true;
    case R_FLAG:
        s->rticket[p] = me->ticket;
        s->rexcl[p] = me->exclusive;
        s->waiting[p] = 1;
        me->pc = R_SLOT;
        return true;
    case R_SLOT:
        s->slot[me->ticket % n] = (uint8_t)(p + 1);
        me->grant = (uint8_t)p;
        me->after = D_LOOP;
        me->dcont = R_OP;
        me->pc = G_WAITING;
        return true;
    case R_OP:
        if (cfg.mutant != NEVER_HOLD && frame_held(s, p)) {
            s->held[p] |= HELD_OP;
            me->pc = R_UNLOCK;
        } else {
            me->pc = R_APPLY;
        }
        return true;
    case R_APPLY:
        apply_op(s, p);
        me->pc = R_UNLOCK;
        return true;
    case R_UNLOCK:
        if (frame_held(s, p)) {
            s->held[p] |= HELD_UNLOCK;
            me->pc = R_ACKWAIT;
        } else {
            s->holding[p] = 0;
            release_begin(s, me, me->exclusive, D_LOOP, L_LAST_READER, L_END);
        }
        return true;
    case R_ACKWAIT:
        if (!s->acked[p])
            return false;
        s->acked[p] = 0;
        me->pc = L_END;
        return true;
    case D_LOOP:
        if (me->sched == 0) {
            me->pc = me->dcont;
            me->dcont = 0;
        } else {
            me->drow = (uint8_t)__builtin_ctz(me->sched);
            me->pc = D_TAKE;
        }
        return true;
    case D_TAKE: {
        int r = me->drow;
        if (s->pending[r] || s->held[r] == 0) {
            s->draining[r] = 0;
            me->sched &= (uint8_t)~(1u << r);
            me->drow = 0;
            me->pc = D_LOOP;
        } else if (s->held[r] & HELD_OP) {
            s->held[r] &= (uint8_t)~HELD_OP;
            me->pc = D_APPLY;
        } else {
            s->held[r] &= (uint8_t)~HELD_UNLOCK;
            me->pc = D_RELEASE;
        }
        return true;
    }
    case D_APPLY:
        apply_op(s, me->drow);
        me->pc = D_TAKE;
        return true;
    case D_RELEASE:
        s->holding[me->drow] = 0;
        release_begin(s, me, s->p[me->drow].exclusive, D_ACKED, D_LAST_READER, me->dcont);
        return true;
    case D_LAST_READER:
        call_wake_ticket(me, s->serving, D_ACKED);
        return true;
    case D_ACKED:
        s->acked[me->drow] = 1;
        me->pc = D_TAKE;
        return true;
    case G_WAITING:
        if (!s->waiting[me->grant]) {
            wake_return(me);
        } else {
            me->gticket = s->rticket[me->grant];
            me->gexcl = s->rexcl[me->grant];
            me->pc = G_SERVING;
        }
        return true;
    case G_SERVING:
        if (s->serving != me->gticket)
            wake_return(me);
        else
            me->pc = me->gexcl ? G_READERS : G_XCHG;
        return true;
    case G_READERS:
        if (s->readers != 0)
            wake_return(me);
        else
            me->pc = G_XCHG;
        return true;
    case G_XCHG:
        if (!s->waiting[me->grant] ||
            (cfg.mutant != GRANT_ANY_WORD &&
             (s->rticket[me->grant] != me->gticket || s->rexcl[me->grant] != me->gexcl))) {
            wake_return(me);
        } else {
            s->waiting[me->grant] = 0;
            s->holding[me->grant] = 1;
            me->pc = me->gexcl ? G_GRANT : G_JOIN;
        }
        return true;
    case G_JOIN:
        s->readers++;
        me->pc = G_SERVE;
        return true;
    case G_SERVE:
        s->serving++;
        me->pc = G_GRANT;
        return true;
    case G_GRANT:
        /* rma_remote_lock_granted: not pending any more; the held frames are scheduled here. */
        s->pending[me->grant] = 0;
        if (s->held[me->grant] && !s->draining[me->grant] && cfg.mutant != GRANT_FORGETS_HELD) {
            s->draining[me->grant] = 1;
            me->sched |= (uint8_t)(1u << me->grant);
        }
        if (me->gexcl) {
            wake_return(me);
        } else {
            me->wake_ticket = (uint8_t)(me->gticket + 1);
            me->gticket = me->gexcl = 0;
            me->pc = L_WT_NEXT;
        }
        return true;
    case L_TURN_SERVING:
        if (s->serving != me->ticket)
            me->pc = L_SLOT;
        else
            me->pc = me->exclusive ? L_TURN_READERS : L_READER_JOIN;
        return true;
    case L_TURN_READERS:
        me->pc = s->readers == 0 ? L_RELEASE : L_SLOT;
        return true;
    case L_SLOT:
        s->slot[me->ticket % n] = (uint8_t)(p + 1);
        wait_begin(&me->wait);
        me->pc = L_WAIT;
        return true;
    case L_WAIT:
        switch (wait_step(&s->waiter[p], &me->wait, lock_turn, s, p)) {
        case WAIT_BLOCKED: return false;
        case WAIT_MOVED: return true;
        case WAIT_DONE:
            me->wait = (struct wait_m){ 0, 0, 0 };
            me->pc = me->exclusive ? L_RELEASE : L_READER_JOIN;
            return true;
        }
        return false;
    case L_READER_JOIN:
        s->readers++;
        me->pc = L_READER_SERVE;
        return true;
    case L_READER_SERVE:
        s->serving++;
        call_wake_then_serve(me, (uint8_t)(me->ticket + 1), L_RELEASE);
        return true;
    case L_RELEASE:
        release_begin(s, me, me->exclusive, D_LOOP, L_LAST_READER, L_END);
        return true;
    case L_LAST_READER:
        call_wake_ticket(me, s->serving, D_LOOP);
        return true;
    case L_WT_NEXT:
        if (s->next == me->wake_ticket)
            wake_return(me);
        else
            me->pc = L_WT_SLOT;
        return true;
    case L_WT_SLOT: {
        uint8_t r = s->slot[me->wake_ticket % n];
        if (r == 0) {
            wake_return(me);
        } else if ((cfg.remote >> (r - 1)) & 1) {
            me->grant = (uint8_t)(r - 1);
            me->wake_ticket = 0;
            me->pc = G_WAITING;
        } else {
            me->wake_rank = (uint8_t)(r - 1);
            me->pc = L_WAKE;
        }
        return true;
    }
    case L_WAKE:
        if (wake_step(&s->waiter[me->wake_rank], &me->wake_phase))
            wake_return(me);
        return true;
    case L_END:
    case L_DONE:
        return false;
    }
    return false;
}

static bool lock_finished(const void *sv, int p)
{
    return ((const struct lock_state *)sv)->p[p].pc == L_DONE;
}

static const char *lock_violation(const void *sv)
{
    const struct lock_state *s = sv;
    int exclusive = 0, shared = 0;
    if (s->bad_op)
        return "a remote operation applied while its origin did not hold the lock";
    for (int p = 0; p < cfg.nprocs; p++)
        if ((cfg.remote >> p) & 1 ? s->holding[p] : s->p[p].pc == L_RELEASE)
            *(s->p[p].exclusive ? &exclusive : &shared) += 1;
    if (exclusive > 1)
        return "two exclusive holders";
    if (exclusive == 1 && shared > 0)
        return "a shared holder overlaps an exclusive holder";
    return NULL;
}

static const char *lock_final(const void *sv)
{
    const struct lock_state *s = sv;
    if (s->readers != 0)
        return "readers left counted at the end";
    if (s->serving != s->next)
        return "a ticket was never served";
    for (int p = 0; p < cfg.nprocs; p++) {
        if (s->waiting[p] || s->pending[p] || s->holding[p] || s->acked[p])
            return "a remote request left waiting, holding, or an ACK unconsumed";
        if (s->held[p] || s->draining[p] || s->p[p].sched)
            return "frames left held or a row left scheduled";
    }
    return NULL;
}

static void lock_show(const void *sv, FILE *out)
{
    const struct lock_state *s = sv;
    fprintf(out, "next=%u serving=%u readers=%u |", s->next, s->serving, s->readers);
    for (int p = 0; p < cfg.nprocs; p++)
        fprintf(out, " p%d:%s%s pc=%u t=%u wpc=%u seq=%u sl=%u w=%u h=%u held=%u dr=%u sched=%x", p,
                (cfg.remote >> p) & 1 ? "R" : "", s->p[p].exclusive ? "X" : "S", s->p[p].pc, s->p[p].ticket,
                s->p[p].wait.pc, s->waiter[p].seq, s->waiter[p].sleepers, s->waiting[p], s->holding[p], s->held[p],
                s->draining[p], s->p[p].sched);
}

static const struct model lock_model = {
    "lock", sizeof(struct lock_state), 0, lock_init, lock_step, lock_finished, lock_violation, lock_final, lock_show,
};

static bool check_lock_configs(struct explore_stats *stats, FILE *out, bool remote_only)
{
    /* 2 ranks locking twice; 3 ranks once; 3 ranks with one locking twice
     * (4 tickets: the waiter slots wrap around). Every mix of types. */
    static const struct {
        int nprocs, iters[MAXP];
    } shapes[] = { { 2, { 2, 2, 0 } }, { 3, { 1, 1, 1 } }, { 3, { 2, 1, 1 } } };
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        cfg.nprocs = shapes[k].nprocs;
        memcpy(cfg.iters, shapes[k].iters, sizeof cfg.iters);
        struct model m = lock_model;
        m.nprocs = cfg.nprocs;
        for (cfg.remote = remote_only ? 1 : 0; cfg.remote < 1u << cfg.nprocs; cfg.remote++)
        for (unsigned kinds = 0; kinds < 1u << (cfg.nprocs * LOCK_ITERS_MAX); kinds++) {
            bool unused_bits = false;
            for (int p = 0; p < cfg.nprocs; p++)
                for (int i = cfg.iters[p]; i < LOCK_ITERS_MAX; i++)
                    unused_bits |= (kinds >> (p * LOCK_ITERS_MAX + i)) & 1;
            if (unused_bits)
                continue;
            cfg.kinds = kinds;
            if (!explore(&m, stats, out)) {
                fprintf(out, "configuration: %d ranks, locks %d/%d/%d, types 0x%x (bit 2p+i: exclusive), "
                        "remote 0x%x\n", cfg.nprocs, cfg.iters[0], cfg.iters[1], cfg.iters[2], kinds, cfg.remote);
                return false;
            }
        }
    }
    return true;
}

bool check_lock(struct explore_stats *stats, FILE *out)
{
    cfg.mutant = LOCK_CORRECT;
    return check_lock_configs(stats, out, false);
}

bool check_lock_mutant(int mutant, struct explore_stats *stats, FILE *out)
{
    cfg.mutant = (enum lock_mutant)mutant;
    bool caught = !check_lock_configs(stats, out, true);
    cfg.mutant = LOCK_CORRECT;
    return caught;
}
