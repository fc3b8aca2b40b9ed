/* Model of general active target synchronization, src/rma/pscw.c:
 * MPI_Win_post (posted[t][o]++ for each origin, then wake_ranks),
 * MPI_Win_start (no wait), pscw_await_post before an origin's first
 * operation on a target (epoch = completed + 1, wait for posted >= epoch
 * through win_wait_counter), MPI_Win_complete (completed[t][o]++ for each
 * target, then wake_ranks) and MPI_Win_wait (exposure_done: for each
 * origin, load posted then completed), with the sleep/wake handshake.
 *
 * Each process runs a few rounds; in each it may expose its window to a
 * group and access a group. A target clears its word of each origin
 * before posting (its own store before post); an origin that touches a
 * target in a round puts the round number there (it may also leave a
 * target of its group untouched: then it never waits for its post). After
 * MPI_Win_wait the target checks every word: the round number from an
 * origin that put, 0 from one that did not. A wrong value means a put
 * landed before the post (lost by the clear) or was not visible after
 * wait; a deadlock means a lost wake-up or a miscounted epoch. */
#include <stdlib.h>
#include <string.h>

#include "models.h"
#include "waiting.h"

enum { PSCW_ROUNDS_MAX = 2 };

enum pscw_pc {
    P_CLEAR,        /* target: clear its words of the exposure group */
    P_POST,         /* posted[self][o]++, one origin per step */
    P_POST_WAKE,    /* wake_ranks(exposure group) */
    P_OP,           /* origin: next target touched this round */
    P_OP_WAIT,      /* pscw_await_post: win_wait_counter(posted, epoch) */
    P_PUT,          /* data[t][self] = round */
    P_COMPLETE,     /* completed[t][self]++, one target per step */
    P_COMPLETE_WAKE,/* wake_ranks(access group) */
    P_WAIT,         /* MPI_Win_wait: rank_wait_until(exposure_done) */
    P_CHECK,        /* target: every origin's word */
    P_DONE,
};

struct pscw_proc {
    uint8_t pc, round, i, epoch, posted_seen, wake_phase;
    struct wait_m wait;
};

struct pscw_state {
    uint8_t posted[MAXP][MAXP];     /* [target][origin], written by the target */
    uint8_t completed[MAXP][MAXP];  /* [target][origin], written by the origin */
    uint8_t data[MAXP][MAXP];       /* target's window word of each origin */
    uint8_t bad;
    struct waiter_m waiter[MAXP];
    struct pscw_proc p[MAXP];
};

static struct {
    const char *name;
    int nprocs, rounds;
    uint8_t expose[MAXP];                   /* origins of each target (bit mask) */
    uint8_t touch[MAXP][PSCW_ROUNDS_MAX];   /* targets an origin puts to, by round */
} cfg;

static uint8_t access_group(int o)
{
    uint8_t mask = 0;
    for (int t = 0; t < cfg.nprocs; t++)
        if (cfg.expose[t] >> o & 1)
            mask |= (uint8_t)(1u << t);
    return mask;
}

/* The first member of `mask` at or after i (nprocs if none). */
static int next_in(uint8_t mask, int i)
{
    while (i < cfg.nprocs && !(mask >> i & 1))
        i++;
    return i;
}

static void pscw_init(void *sv)
{
    struct pscw_state *s = sv;
    memset(s, 0, sizeof *s);
}

static enum cond_result posted_reached(void *sv, int p, uint8_t *cursor)
{
    (void)cursor;
    struct pscw_state *s = sv;
    struct pscw_proc *me = &s->p[p];
    return s->posted[me->i][p] >= me->epoch ? COND_TRUE : COND_FALSE;
}

/* exposure_done: for each origin, posted (relaxed) then completed. */
static enum cond_result exposure_done(void *sv, int p, uint8_t *cursor)
{
    struct pscw_state *s = sv;
    struct pscw_proc *me = &s->p[p];
    int o = next_in(cfg.expose[p], *cursor / 2);
    if (o == cfg.nprocs)
        return COND_TRUE;
    if (*cursor % 2 == 0) {
        me->posted_seen = s->posted[p][o];
        *cursor = (uint8_t)(2 * o + 1);
        return COND_MORE;
    }
    if ((int8_t)(s->completed[p][o] - me->posted_seen) < 0) {
        me->posted_seen = 0;
        return COND_FALSE;
    }
    me->posted_seen = 0;
    *cursor = (uint8_t)(2 * o + 2);
    return COND_MORE;
}

/* The step after a process's exposure part (post) of a round. */
static uint8_t after_post(int p)
{
    (void)p;
    return P_OP;
}

static uint8_t after_access(int p)
{
    return cfg.expose[p] ? P_WAIT : P_CHECK;
}

/* One wake of wake_ranks(mask) per call; true when the list is done. */
static bool wake_list_step(struct pscw_state *s, struct pscw_proc *me, uint8_t mask)
{
    int r = next_in(mask, me->i);
    if (r == cfg.nprocs)
        return true;
    if (wake_step(&s->waiter[r], &me->wake_phase))
        me->i = (uint8_t)(r + 1);
    return false;
}

static void round_end(struct pscw_proc *me)
{
    me->i = 0;
    me->round++;
    me->pc = me->round == cfg.rounds ? P_DONE : P_CLEAR;
}

static bool pscw_step_raw(struct pscw_state *s, int p);

/* Takes the steps that touch only the process's own locals (the end of a
 * list, the end of a round) at once: they commute with every other step,
 * so folding them into the step before loses no interleaving. */
static void settle(struct pscw_state *s, int p)
{
    struct pscw_proc *me = &s->p[p];
    for (;;) {
        uint8_t expose = cfg.expose[p], access = access_group(p);
        uint8_t touch = me->pc == P_DONE ? 0 : cfg.touch[p][me->round];
        uint8_t list;
        switch (me->pc) {
        case P_POST: case P_POST_WAKE: list = expose; break;
        case P_OP: list = touch; break;
        case P_COMPLETE: case P_COMPLETE_WAKE: list = access; break;
        default: return;
        }
        if (next_in(list, me->i) != cfg.nprocs || me->wake_phase != 0)
            return;
        pscw_step_raw(s, p);
    }
}

static bool pscw_step(void *sv, int p)
{
    struct pscw_state *s = sv;
    if (!pscw_step_raw(s, p))
        return false;
    settle(s, p);
    return true;
}

static bool pscw_step_raw(struct pscw_state *s, int p)
{
    struct pscw_proc *me = &s->p[p];
    uint8_t expose = cfg.expose[p], access = access_group(p);
    uint8_t touch = cfg.touch[p][me->round < cfg.rounds ? me->round : 0];
    int x;
    switch ((enum pscw_pc)me->pc) {
    case P_CLEAR:
        for (int o = 0; o < cfg.nprocs; o++)
            if (expose >> o & 1)
                s->data[p][o] = 0;
        me->i = 0;
        me->pc = expose ? P_POST : after_post(p);
        return true;
    case P_POST:
        x = next_in(expose, me->i);
        if (x == cfg.nprocs) {
            me->i = 0;
            me->pc = P_POST_WAKE;
            return true;
        }
        s->posted[p][x]++;
        me->i = (uint8_t)(x + 1);
        return true;
    case P_POST_WAKE:
        if (wake_list_step(s, me, expose)) {
            me->i = 0;
            me->pc = after_post(p);
        }
        return true;
    case P_OP:
        x = next_in(touch, me->i);
        if (x == cfg.nprocs) {
            me->i = 0;
            me->pc = access ? P_COMPLETE : after_access(p);
            return true;
        }
        /* Win_start did not wait; the first operation on x does. The
         * origin's own counter, then the wait on the target's. */
        me->i = (uint8_t)x;
        me->epoch = (uint8_t)(s->completed[x][p] + 1);
        wait_begin(&me->wait);
        me->pc = P_OP_WAIT;
        return true;
    case P_OP_WAIT:
        switch (wait_step(&s->waiter[p], &me->wait, posted_reached, s, p)) {
        case WAIT_BLOCKED: return false;
        case WAIT_MOVED: return true;
        case WAIT_DONE:
            me->wait = (struct wait_m){ 0, 0, 0 };
            me->epoch = 0;
            me->pc = P_PUT;
            return true;
        }
        return false;
    case P_PUT:
        s->data[me->i][p] = (uint8_t)(me->round + 1);
        me->i++;
        me->pc = P_OP;
        return true;
    case P_COMPLETE:
        x = next_in(access, me->i);
        if (x == cfg.nprocs) {
            me->i = 0;
            me->pc = P_COMPLETE_WAKE;
            return true;
        }
        s->completed[x][p]++;
        me->i = (uint8_t)(x + 1);
        return true;
    case P_COMPLETE_WAKE:
        if (wake_list_step(s, me, access)) {
            me->i = 0;
            me->pc = after_access(p);
            if (me->pc == P_WAIT)
                wait_begin(&me->wait);
        }
        return true;
    case P_WAIT:
        switch (wait_step(&s->waiter[p], &me->wait, exposure_done, s, p)) {
        case WAIT_BLOCKED: return false;
        case WAIT_MOVED: return true;
        case WAIT_DONE:
            me->wait = (struct wait_m){ 0, 0, 0 };
            me->pc = P_CHECK;
            return true;
        }
        return false;
    case P_CHECK:
        for (int o = 0; o < cfg.nprocs; o++) {
            if (!(expose >> o & 1))
                continue;
            uint8_t want = cfg.touch[o][me->round] >> p & 1 ? (uint8_t)(me->round + 1) : 0;
            if (s->data[p][o] != want)
                s->bad = 1;
        }
        round_end(me);
        return true;
    case P_DONE:
        return false;
    }
    return false;
}

static bool pscw_finished(const void *sv, int p)
{
    return ((const struct pscw_state *)sv)->p[p].pc == P_DONE;
}

static const char *pscw_violation(const void *sv)
{
    return ((const struct pscw_state *)sv)->bad
               ? "after MPI_Win_wait the target's word is not what the origin put in this round"
               : NULL;
}

static const char *pscw_final(const void *sv)
{
    const struct pscw_state *s = sv;
    for (int t = 0; t < cfg.nprocs; t++)
        for (int o = 0; o < cfg.nprocs; o++)
            if (s->posted[t][o] != s->completed[t][o])
                return "posted and completed counts differ at the end";
    return NULL;
}

static void pscw_show(const void *sv, FILE *out)
{
    const struct pscw_state *s = sv;
    for (int p = 0; p < cfg.nprocs; p++) {
        fprintf(out, " p%d: pc=%u r=%u i=%u wpc=%u seq=%u sl=%u post=", p, s->p[p].pc, s->p[p].round, s->p[p].i,
                s->p[p].wait.pc, s->waiter[p].seq, s->waiter[p].sleepers);
        for (int o = 0; o < cfg.nprocs; o++)
            fprintf(out, "%u/%u/%u%s", s->posted[p][o], s->completed[p][o], s->data[p][o],
                    o + 1 < cfg.nprocs ? "," : "");
    }
}

static const struct model pscw_model = {
    "pscw", sizeof(struct pscw_state), 0, pscw_init, pscw_step, pscw_finished, pscw_violation, pscw_final, pscw_show,
};

struct pscw_config {
    const char *name;
    int nprocs;
    uint8_t expose[MAXP];
    bool uniform;       /* in a round, every origin touches all its targets or none */
    unsigned quick;     /* uniform: the one combination run without --full */
};

/* The touch sets of combination c; false if c is not one of the shape's. */
static bool touch_sets(const struct pscw_config *shape, unsigned c)
{
    for (int o = 0; o < cfg.nprocs; o++)
        for (int r = 0; r < cfg.rounds; r++) {
            uint8_t t;
            if (shape->uniform)
                t = c >> r & 1 ? access_group(o) : 0;
            else
                t = (uint8_t)(c >> ((o * cfg.rounds + r) * cfg.nprocs) & ((1u << cfg.nprocs) - 1));
            if (t & ~access_group(o))
                return false;
            cfg.touch[o][r] = t;
        }
    return true;
}

bool check_pscw(struct explore_stats *stats, FILE *out)
{
    /* Who exposes to whom; two rounds each, with every choice of which
     * targets each origin touches in each round (the ring, the largest,
     * only with all or none touched per round, and without --full only
     * with all touched in both rounds). */
    static const struct pscw_config shapes[] = {
        { "one target, one origin", 2, { 0x2, 0x0, 0x0 }, false, 0 },
        { "each exposes to the other", 2, { 0x2, 0x1, 0x0 }, false, 0 },
        { "one target, two origins", 3, { 0x6, 0x0, 0x0 }, false, 0 },
        { "one origin, two targets", 3, { 0x0, 0x1, 0x1 }, false, 0 },
        { "ring: each exposes to the next", 3, { 0x2, 0x4, 0x1 }, true, 0x3 },
    };
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        cfg.name = shapes[k].name;
        cfg.nprocs = shapes[k].nprocs;
        cfg.rounds = PSCW_ROUNDS_MAX;
        memcpy(cfg.expose, shapes[k].expose, sizeof cfg.expose);
        unsigned combos = shapes[k].uniform ? 1u << cfg.rounds : 1u << (cfg.nprocs * cfg.rounds * cfg.nprocs);
        struct model m = pscw_model;
        m.nprocs = cfg.nprocs;
        for (unsigned c = 0; c < combos; c++) {
            if (shapes[k].uniform && !model_full && c != shapes[k].quick)
                continue;
            if (!touch_sets(&shapes[k], c))
                continue;
            unsigned long before = stats->states;
            bool ok = explore(&m, stats, out);
            if (getenv("MODEL_VERBOSE"))
                fprintf(out, "  %s, touch combination 0x%x: %lu states\n", cfg.name, c, stats->states - before);
            if (!ok) {
                fprintf(out, "configuration: %s, touch sets (origin: round 0, round 1):", cfg.name);
                for (int o = 0; o < cfg.nprocs; o++)
                    fprintf(out, " %d: 0x%x 0x%x", o, cfg.touch[o][0], cfg.touch[o][1]);
                fputc('\n', out);
                return false;
            }
        }
    }
    return true;
}
