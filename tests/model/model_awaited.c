/* Model of a wait that names the completion it needs next
 * (src/core/wait.c: rank_wait_until_picked, sleep_until; src/core/core.h:
 * rank_wake_for; src/pt2pt/pt2pt.h: completion_signal_owner;
 * src/pt2pt/completion.c: last_pending).
 *
 * One waiting thread runs three waits in a row over six requests:
 *   E0  MPI_Waitall of requests 0, 1, 2 (picked: `awaited` = the last one
 *       not done);
 *   E1  a plain wait for request 3 (`awaited` = none);
 *   E2  MPI_Waitall of requests 4 and 5 (picked).
 * Three completers complete them in their own orders: C0 requests 0, 3, 4;
 * C1 requests 1 and 5; C2 request 2.  A completion is four steps: store
 * DONE; load `sleepers` (after rank_wake_for's fence: one step, as the
 * model is sequentially consistent); load `awaited`; if the rank sleeps
 * and awaits none or this one, bump `seq` (rank_wake_slow; the futex wake
 * is implicit, a sleeper blocks only while `seq` is unchanged).
 *
 * The waiter's steps for one wait: load `seq`; pick (one load per request
 * scanned, last first); store `awaited`; increment `sleepers`; check the
 * condition (one load per request); pick again, and if that gives another
 * completion than `awaited`, leave and start over; futex_wait; decrement
 * `sleepers`; check again, and start over if not done.  The spin phase and
 * the check before sleeping are one more check, which only adds states.
 *
 * Checked: every wait ends (a state where the waiter sleeps and nobody can
 * move is a lost wake-up), and no wait ends before its requests are done.
 * Interleavings are sequentially consistent (explore.h): that the
 * completer's load of `awaited` follows its load of `sleepers`, and the
 * waiter's store of `awaited` precedes its increment, is the real code's
 * memory ordering (acquire load, seq_cst increment), not checked here. */
#include <stdint.h>
#include <string.h>

#include "models.h"

enum { REQUESTS = 6, WAITS = 3, COMPLETERS = 3, MAX_OWN = 3, NONE = 0xff };
enum { P_WAITER, P_C0, P_C1, P_C2, NPROC };

struct wait_spec {
    uint8_t first, count; /* requests first .. first + count - 1 */
    bool picked;
};

static const struct wait_spec waits[WAITS] = { { 0, 3, true }, { 3, 1, false }, { 4, 2, true } };
static const uint8_t completes[COMPLETERS][MAX_OWN] = { { 0, 3, 4 }, { 1, 5, NONE }, { 2, NONE, NONE } };

enum waiter_pc { W_SEQ, W_PICK, W_AWAITED, W_SLEEPERS, W_CHECK, W_REPICK, W_FUTEX, W_UNSLEEP, W_RECHECK, W_END };
enum completer_pc { C_DONE, C_SLEEPERS, C_AWAITED, C_WAKE };

enum mutant {
    CORRECT,
    NO_REPICK,        /* 1: sleeps without asking pick again after the increment */
    STALE_AWAITED,    /* 2: a plain wait leaves `awaited` as the last wait set it */
    NAMED_ONLY,       /* 3: a completer wakes only for the completion named */
};
static enum mutant mutant;

struct awaited_state {
    /* shared */
    uint8_t done[REQUESTS];
    uint8_t seq, sleepers, awaited;
    /* waiter */
    uint8_t wait, wpc, saved, cursor, picked, scan_result;
    /* completers */
    uint8_t next[COMPLETERS], cpc[COMPLETERS], seen_sleepers[COMPLETERS], seen_awaited[COMPLETERS];
};

static const char *pending;

static void aw_init(void *sv)
{
    struct awaited_state *s = sv;
    memset(s, 0, sizeof *s);
    s->awaited = NONE;
    s->picked = NONE;
    s->scan_result = NONE;
}

/* One load of a pick: scans the wait's requests from the last; sets
 * scan_result to the first found not done (NONE if all are) once done.
 * Returns true when the scan is over. */
static bool pick_step(struct awaited_state *s)
{
    const struct wait_spec *w = &waits[s->wait];
    uint8_t r = (uint8_t)(w->first + w->count - 1 - s->cursor);
    if (!s->done[r]) {
        s->scan_result = r;
        s->cursor = 0;
        return true;
    }
    if (++s->cursor == w->count) {
        s->scan_result = NONE;
        s->cursor = 0;
        return true;
    }
    return false;
}

/* One load of the wait's condition (all its requests done), first to
 * last; returns 0 while scanning, 1 when all are done, 2 when one is not. */
static int check_step(struct awaited_state *s)
{
    const struct wait_spec *w = &waits[s->wait];
    if (!s->done[w->first + s->cursor]) {
        s->cursor = 0;
        return 2;
    }
    if (++s->cursor == w->count) {
        s->cursor = 0;
        return 1;
    }
    return 0;
}

static void wait_ends(struct awaited_state *s)
{
    const struct wait_spec *w = &waits[s->wait];
    for (int i = 0; i < w->count; i++)
        if (!s->done[w->first + i])
            pending = "a wait ended before all its requests were done";
    s->wait++;
    s->wpc = s->wait == WAITS ? W_END : W_SEQ;
}

static void store_awaited(struct awaited_state *s)
{
    s->awaited = s->picked;
}

static bool waiter_step(struct awaited_state *s)
{
    int r;
    switch ((enum waiter_pc)s->wpc) {
    case W_SEQ:
        s->saved = s->seq;
        s->picked = NONE;
        s->wpc = waits[s->wait].picked ? W_PICK : W_AWAITED;
        return true;
    case W_PICK:
        if (pick_step(s)) {
            s->picked = s->scan_result;
            s->wpc = W_AWAITED;
        }
        return true;
    case W_AWAITED:
        if (waits[s->wait].picked || mutant != STALE_AWAITED)
            store_awaited(s);
        s->wpc = W_SLEEPERS;
        return true;
    case W_SLEEPERS:
        s->sleepers++;
        s->wpc = W_CHECK;
        return true;
    case W_CHECK:
        r = check_step(s);
        if (r == 1) {
            s->sleepers--;
            wait_ends(s);
        } else if (r == 2) {
            s->wpc = s->picked != NONE && mutant != NO_REPICK ? W_REPICK : W_FUTEX;
        }
        return true;
    case W_REPICK:
        if (pick_step(s)) {
            if (s->scan_result != s->picked) {
                s->sleepers--;
                s->wpc = W_SEQ;
            } else {
                s->wpc = W_FUTEX;
            }
        }
        return true;
    case W_FUTEX:
        if (s->seq == s->saved)
            return false;
        s->wpc = W_UNSLEEP;
        return true;
    case W_UNSLEEP:
        s->sleepers--;
        s->wpc = W_RECHECK;
        return true;
    case W_RECHECK:
        r = check_step(s);
        if (r == 1)
            wait_ends(s);
        else if (r == 2)
            s->wpc = W_SEQ;
        return true;
    case W_END:
        return false;
    }
    return false;
}

static bool completer_step(struct awaited_state *s, int c)
{
    if (s->next[c] == MAX_OWN || completes[c][s->next[c]] == NONE)
        return false;
    uint8_t req = completes[c][s->next[c]];
    switch ((enum completer_pc)s->cpc[c]) {
    case C_DONE:
        if (s->done[req])
            pending = "a request completed twice";
        s->done[req] = 1;
        s->cpc[c] = C_SLEEPERS;
        return true;
    case C_SLEEPERS:
        s->seen_sleepers[c] = s->sleepers;
        s->cpc[c] = C_AWAITED;
        return true;
    case C_AWAITED:
        s->seen_awaited[c] = s->awaited;
        s->cpc[c] = C_WAKE;
        return true;
    case C_WAKE:
        if (s->seen_sleepers[c] != 0 &&
            ((s->seen_awaited[c] == NONE && mutant != NAMED_ONLY) || s->seen_awaited[c] == req))
            s->seq++;
        s->cpc[c] = C_DONE;
        s->seen_sleepers[c] = 0;
        s->seen_awaited[c] = 0;
        s->next[c]++;
        return true;
    }
    return false;
}

static bool aw_step(void *sv, int p)
{
    struct awaited_state *s = sv;
    return p == P_WAITER ? waiter_step(s) : completer_step(s, p - P_C0);
}

static bool aw_finished(const void *sv, int p)
{
    const struct awaited_state *s = sv;
    if (p == P_WAITER)
        return s->wpc == W_END;
    int c = p - P_C0;
    return s->next[c] == MAX_OWN || completes[c][s->next[c]] == NONE;
}

static const char *aw_violation(const void *sv)
{
    (void)sv;
    const char *v = pending;
    pending = NULL;
    return v;
}

static const char *aw_final(const void *sv)
{
    const struct awaited_state *s = sv;
    return s->wait == WAITS ? NULL : "a wait never ended";
}

static void aw_show(const void *sv, FILE *out)
{
    const struct awaited_state *s = sv;
    fprintf(out, "done=");
    for (int i = 0; i < REQUESTS; i++)
        fprintf(out, "%u", s->done[i]);
    fprintf(out, " seq=%u sleepers=%u awaited=%d | W wait=%u pc=%u saved=%u picked=%d |", s->seq, s->sleepers,
            s->awaited == NONE ? -1 : s->awaited, s->wait, s->wpc, s->saved, s->picked == NONE ? -1 : s->picked);
    for (int c = 0; c < COMPLETERS; c++)
        fprintf(out, " C%d next=%u pc=%u", c, s->next[c], s->cpc[c]);
}

static const struct model awaited_model = {
    "awaited", sizeof(struct awaited_state), NPROC, aw_init, aw_step, aw_finished, aw_violation, aw_final, aw_show,
};

bool check_awaited(struct explore_stats *stats, FILE *out)
{
    mutant = CORRECT;
    return explore(&awaited_model, stats, out);
}

bool check_awaited_mutant(int m, struct explore_stats *stats, FILE *out)
{
    mutant = (enum mutant)m;
    bool caught = !explore(&awaited_model, stats, out);
    mutant = CORRECT;
    pending = NULL;
    return caught;
}
