/* Model of MPI_Win_lock / MPI_Win_unlock on one target: the fair
 * reader-writer ticket lock of src/rma/lock.c (lock_acquire, lock_turn,
 * lock_release, wake_ticket) with the waiter slots and the sleep/wake
 * handshake of src/core/wait.c.
 *
 * Each of 2-3 processes (ranks) takes the lock a few times, each time
 * shared or exclusive as the configuration says, and every combination of
 * lock types is explored. Checked: an exclusive holder is alone in its
 * critical section (no other exclusive holder, no shared holder); no
 * deadlock or lost wake-up; at the end no reader is counted and every
 * ticket was served. */
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
};

struct lock_proc {
    uint8_t pc, after;      /* after: where wake_ticket returns */
    uint8_t iter, exclusive, ticket, wake_ticket, wake_rank, wake_phase;
    struct wait_m wait;
};

struct lock_state {
    uint8_t next, serving, readers;
    uint8_t slot[MAXP];     /* waiters[]: rank + 1, 0 = NULL */
    struct waiter_m waiter[MAXP];
    struct lock_proc p[MAXP];
};

static struct {
    int nprocs;
    int iters[MAXP];        /* locks taken by each process */
    unsigned kinds;         /* bit p * LOCK_ITERS_MAX + i: process p's i-th lock is exclusive */
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
    me->after = me->wake_ticket = me->wake_rank = 0;
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
        me->pc = L_TURN_SERVING;
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
        call_wake_ticket(me, (uint8_t)(me->ticket + 1), L_RELEASE);
        return true;
    case L_RELEASE:
        if (me->exclusive) {
            s->serving++;
            call_wake_ticket(me, s->serving, L_END);
        } else {
            me->pc = s->readers-- == 1 ? L_LAST_READER : L_END;
        }
        return true;
    case L_LAST_READER:
        call_wake_ticket(me, s->serving, L_END);
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
    for (int p = 0; p < cfg.nprocs; p++)
        if (s->p[p].pc == L_RELEASE)
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
    return NULL;
}

static void lock_show(const void *sv, FILE *out)
{
    const struct lock_state *s = sv;
    fprintf(out, "next=%u serving=%u readers=%u |", s->next, s->serving, s->readers);
    for (int p = 0; p < cfg.nprocs; p++)
        fprintf(out, " p%d:%s pc=%u t=%u wpc=%u seq=%u sl=%u", p, s->p[p].exclusive ? "X" : "S", s->p[p].pc,
                s->p[p].ticket, s->p[p].wait.pc, s->waiter[p].seq, s->waiter[p].sleepers);
}

static const struct model lock_model = {
    "lock", sizeof(struct lock_state), 0, lock_init, lock_step, lock_finished, lock_violation, lock_final, lock_show,
};

bool check_lock(struct explore_stats *stats, FILE *out)
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
        for (unsigned kinds = 0; kinds < 1u << (cfg.nprocs * LOCK_ITERS_MAX); kinds++) {
            bool unused_bits = false;
            for (int p = 0; p < cfg.nprocs; p++)
                for (int i = cfg.iters[p]; i < LOCK_ITERS_MAX; i++)
                    unused_bits |= (kinds >> (p * LOCK_ITERS_MAX + i)) & 1;
            if (unused_bits)
                continue;
            cfg.kinds = kinds;
            if (!explore(&m, stats, out)) {
                fprintf(out, "configuration: %d ranks, locks %d/%d/%d, types 0x%x (bit 2p+i: exclusive)\n",
                        cfg.nprocs, cfg.iters[0], cfg.iters[1], cfg.iters[2], kinds);
                return false;
            }
        }
    }
    return true;
}
