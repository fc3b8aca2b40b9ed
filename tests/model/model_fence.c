/* Model of MPI_Win_fence, src/rma/fence.c, both variants: small windows
 * (fence_flags: every member publishes its arrival word and wakes the
 * others, waiters poll all words: all_arrived) and large ones (an arrival
 * counter per ring entry; the last arriver resets it, publishes
 * fence_done and wakes everyone). Mirrored: fence_arrive (wait_all for
 * k - FENCE_RING, fence_publish, then the variant's arrival),
 * PMPI_Win_fence (no wait with MPI_MODE_NOPRECEDE), fence_await_target
 * and fence_target_assert before an operation, with the sleep/wake
 * handshake of src/core/wait.c. The ring has 2 entries here (4 in the
 * library) so that running ahead with NOPRECEDE reaches its bound. The
 * flags variant's look at the others before waking (arrive_flags) is one
 * poll: more polls repeat loads the wait makes anyway.
 *
 * Each process calls G fences; a configuration says which are
 * NOPRECEDE (all members give the same asserts, as MPI requires). In an
 * epoch that has operations (the next fence is not NOPRECEDE) process p
 * puts the epoch number into a window word of p + 1 (word k % 2 in
 * epoch k, so that the target's check of epoch k - 1's word after fence
 * k does not conflict with epoch k's puts), after reading that member's
 * assert for the epoch; a member clears the word before the fence that
 * opens such an epoch (its own store, which the epoch's puts must not
 * overtake, NOPRECEDE or not). Checked: after the closing fence every word holds what its origin
 * put (a put that raced the clear, or was not visible, shows); the assert
 * read is the target's for this epoch (the ring was not overrun); no
 * deadlock or lost wake-up; the arrival counters are back to 0. */
#include <stdlib.h>
#include <string.h>

#include "models.h"
#include "waiting.h"

enum { RING = 2, FENCES_MAX = 3 };

enum fence_pc {
    F_STORE,        /* the member's own store to its word before the fence */
    F_BOUND_WAIT,   /* wait_all(k - RING) */
    F_PUB_ASSERT,   /* fence_publish: assert[k % RING] = k */
    F_PUB_ARRIVED,  /* fence_publish: arrived = k */
    F_LOOK,         /* flags variant, waiting: arrive_flags' look at the others (one poll) */
    F_COUNT,        /* counter variant: fetch_add(arrivals[k % RING]) */
    F_RESET,        /* last arriver: arrivals[k % RING] = 0 */
    F_DONE_STORE,   /* last arriver: fence_done = k */
    F_WAKE,         /* win_wake_members, one member per step */
    F_WAIT,         /* wait_all(k) unless NOPRECEDE */
    F_AFTER,        /* check the word the last epoch put here */
    F_ADMIT,        /* NOPRECEDE: fence_await_target, load arrived[t] */
    F_ADMIT_WAIT,   /* ... and wait */
    F_ASSERT,       /* fence_target_assert */
    F_PUT,          /* data[t] = k */
    F_DONE,
};

enum { WAIT_ALL, WAIT_TARGET };

struct fence_proc {
    uint8_t pc, gen, synced, i, wake_phase, wait_kind, wait_want;
    uint8_t look, all_seen;     /* arrive_flags: cursor of the look, and whether all had arrived */
    struct wait_m wait;
};

struct fence_state {
    uint8_t arrived[MAXP];
    uint8_t assert_ring[MAXP][RING];
    uint8_t arrivals[RING], done;
    uint8_t data[MAXP][2];          /* window words; epoch k puts into [k % 2] */
    uint8_t bad;
    struct waiter_m waiter[MAXP];
    struct fence_proc p[MAXP];
};

static struct {
    int nprocs, fences;
    bool flags;                     /* the small-window variant */
    bool noprecede[FENCES_MAX + 2]; /* by generation, 1-based */
} cfg;

static bool newer(uint8_t a, uint8_t b) /* a >= b on wrapping counters */
{
    return (int8_t)(a - b) >= 0;
}

/* Epoch k (after fence k) has operations: a fence closes it without NOPRECEDE. */
static bool epoch_ops(int k)
{
    return k >= 1 && k < cfg.fences && !cfg.noprecede[k + 1];
}

static void fence_init(void *sv)
{
    struct fence_state *s = sv;
    memset(s, 0, sizeof *s);
}

static enum cond_result fence_cond(void *sv, int p, uint8_t *cursor)
{
    struct fence_state *s = sv;
    struct fence_proc *me = &s->p[p];
    if (me->wait_kind == WAIT_TARGET)
        return newer(s->arrived[(p + 1) % cfg.nprocs], me->wait_want) ? COND_TRUE : COND_FALSE;
    if (!cfg.flags)
        return newer(s->done, me->wait_want) ? COND_TRUE : COND_FALSE;
    /* all_arrived: one member per load, progress kept in the cursor. */
    if (!newer(s->arrived[*cursor], me->wait_want))
        return COND_FALSE;
    if (++*cursor == cfg.nprocs)
        return COND_TRUE;
    return COND_MORE;
}

static void begin_wait(struct fence_proc *me, int kind, uint8_t want, uint8_t pc)
{
    me->wait_kind = (uint8_t)kind;
    me->wait_want = want;
    wait_begin(&me->wait);
    me->pc = pc;
}

/* The next fence: what precedes the shared steps of fence_arrive. */
static void fence_begin(struct fence_proc *me)
{
    me->gen++;
    me->pc = me->gen > cfg.fences ? F_DONE : F_STORE;
}

/* wait_all(want): nothing to do if already synced. */
static void wait_all_or(struct fence_proc *me, uint8_t want, uint8_t wait_pc, uint8_t next_pc)
{
    if (newer(me->synced, want))
        me->pc = next_pc;
    else
        begin_wait(me, WAIT_ALL, want, wait_pc);
}

static void after_arrival(struct fence_proc *me)
{
    if (cfg.noprecede[me->gen]) {
        me->pc = F_AFTER;
    } else if (cfg.flags) {
        /* fence_arrive: wait unless the look saw everyone (no synced shortcut). */
        if (me->all_seen)
            me->synced = me->gen;
        if (me->all_seen)
            me->pc = F_AFTER;
        else
            begin_wait(me, WAIT_ALL, me->gen, F_WAIT);
        me->all_seen = 0;
    } else {
        wait_all_or(me, me->gen, F_WAIT, F_AFTER);
    }
}

static bool fence_step(void *sv, int p)
{
    struct fence_state *s = sv;
    struct fence_proc *me = &s->p[p];
    int n = cfg.nprocs, t = (p + 1) % n, k = me->gen;
    switch ((enum fence_pc)me->pc) {
    case F_STORE:
        if (epoch_ops(k))
            s->data[p][k % 2] = 0;
        wait_all_or(me, (uint8_t)(k - RING), F_BOUND_WAIT, F_PUB_ASSERT);
        return true;
    case F_BOUND_WAIT:
    case F_WAIT:
    case F_ADMIT_WAIT:
        switch (wait_step(&s->waiter[p], &me->wait, fence_cond, s, p)) {
        case WAIT_BLOCKED: return false;
        case WAIT_MOVED: return true;
        case WAIT_DONE: break;
        }
        me->wait = (struct wait_m){ 0, 0, 0 };
        if (me->wait_kind == WAIT_ALL)
            me->synced = me->wait_want;
        me->wait_kind = me->wait_want = 0;
        me->pc = me->pc == F_BOUND_WAIT ? F_PUB_ASSERT : me->pc == F_WAIT ? F_AFTER : F_ASSERT;
        return true;
    case F_PUB_ASSERT:
        s->assert_ring[p][k % RING] = (uint8_t)k;
        me->pc = F_PUB_ARRIVED;
        return true;
    case F_PUB_ARRIVED:
        s->arrived[p] = (uint8_t)k;
        me->i = 0;
        me->pc = !cfg.flags ? F_COUNT : cfg.noprecede[k] ? F_WAKE : F_LOOK;
        return true;
    case F_LOOK:
        /* all_arrived, one member per step; then win_wake_members. */
        if (!newer(s->arrived[me->look], (uint8_t)k)) {
            me->look = 0;
            me->pc = F_WAKE;
        } else if (++me->look == n) {
            me->look = 0;
            me->all_seen = 1;
            me->pc = F_WAKE;
        }
        return true;
    case F_COUNT:
        if (++s->arrivals[k % RING] == n)
            me->pc = F_RESET;
        else
            after_arrival(me);
        return true;
    case F_RESET:
        s->arrivals[k % RING] = 0;
        me->pc = F_DONE_STORE;
        return true;
    case F_DONE_STORE:
        s->done = (uint8_t)k;
        me->i = 0;
        me->pc = F_WAKE;
        return true;
    case F_WAKE:
        if (me->i == p)
            me->i++;
        if (me->i < n && wake_step(&s->waiter[me->i], &me->wake_phase))
            me->i++;
        if (me->i == p)
            me->i++;
        if (me->i >= n) {
            me->i = 0;
            after_arrival(me);
        }
        return true;
    case F_AFTER:
        if (epoch_ops(k - 1) && s->data[p][(k - 1) % 2] != k - 1)
            s->bad = 1;
        if (!epoch_ops(k))
            fence_begin(me);
        else if (!cfg.noprecede[k])
            me->pc = F_ASSERT;
        else
            me->pc = F_ADMIT;
        return true;
    case F_ADMIT:
        if (newer(s->arrived[t], (uint8_t)k))
            me->pc = F_ASSERT;
        else if (cfg.flags)
            begin_wait(me, WAIT_TARGET, (uint8_t)k, F_ADMIT_WAIT);
        else
            wait_all_or(me, (uint8_t)k, F_ADMIT_WAIT, F_ASSERT);
        return true;
    case F_ASSERT:
        if (s->assert_ring[t][k % RING] != k)
            s->bad = 2;
        me->pc = F_PUT;
        return true;
    case F_PUT:
        s->data[t][k % 2] = (uint8_t)k;
        fence_begin(me);
        return true;
    case F_DONE:
        return false;
    }
    return false;
}

static bool fence_finished(const void *sv, int p)
{
    return ((const struct fence_state *)sv)->p[p].pc == F_DONE;
}

static const char *fence_violation(const void *sv)
{
    switch (((const struct fence_state *)sv)->bad) {
    case 1: return "after the closing fence a window word is not what its origin put in the epoch";
    case 2: return "an origin read the target's assert of another generation (ring overrun)";
    default: return NULL;
    }
}

static const char *fence_final(const void *sv)
{
    const struct fence_state *s = sv;
    for (int i = 0; i < RING; i++)
        if (s->arrivals[i] != 0)
            return "an arrival counter was not reset";
    return NULL;
}

static void fence_show(const void *sv, FILE *out)
{
    const struct fence_state *s = sv;
    fprintf(out, "done=%u arrivals=%u,%u |", s->done, s->arrivals[0], s->arrivals[1]);
    for (int p = 0; p < cfg.nprocs; p++)
        fprintf(out, " p%d: gen=%u pc=%u wpc=%u arrived=%u data=%u,%u seq=%u sl=%u", p, s->p[p].gen, s->p[p].pc,
                s->p[p].wait.pc, s->arrived[p], s->data[p][0], s->data[p][1], s->waiter[p].seq, s->waiter[p].sleepers);
}

static const struct model fence_model = {
    "fence", sizeof(struct fence_state), 0, fence_init, fence_step, fence_finished, fence_violation, fence_final,
    fence_show,
};

static void fence_init_procs(struct fence_state *s)
{
    for (int p = 0; p < cfg.nprocs; p++)
        fence_begin(&s->p[p]);
}

static void fence_init_all(void *sv)
{
    fence_init(sv);
    fence_init_procs(sv);
}

bool check_fence(struct explore_stats *stats, FILE *out)
{
    struct model m = fence_model;
    m.init = fence_init_all;
    for (int variant = 0; variant < 2; variant++)
        for (int n = 2; n <= MAXP; n++) {
            cfg.flags = variant == 0;
            cfg.nprocs = n;
            /* 3 members with 3 fences is millions of states per mask: --full. */
            cfg.fences = n == 2 || model_full ? FENCES_MAX : 2;
            m.nprocs = n;
            for (unsigned mask = 0; mask < 1u << cfg.fences; mask++) {
                for (int k = 1; k <= cfg.fences; k++)
                    cfg.noprecede[k] = mask >> (k - 1) & 1;
                unsigned long before = stats->states;
                bool ok = explore(&m, stats, out);
                if (getenv("MODEL_VERBOSE"))
                    fprintf(out, "  %s, %d members, NOPRECEDE mask 0x%x: %lu states\n",
                            cfg.flags ? "flags" : "counter", n, mask, stats->states - before);
                if (!ok) {
                    fprintf(out, "configuration: %s variant, %d members, %d fences, NOPRECEDE at 0x%x (bit k-1)\n",
                            cfg.flags ? "flags" : "counter", n, cfg.fences, mask);
                    return false;
                }
            }
        }
    return true;
}
