/* Models of src/core/wait.c: rank_wait_until (spin, then sleep on the
 * rank's futex word) and rank_wake, one shared access per step. */
#ifndef STRAND_MODEL_WAITING_H
#define STRAND_MODEL_WAITING_H

#include <stdbool.h>
#include <stdint.h>

/* struct rank_waiter */
struct waiter_m {
    uint8_t seq;
    uint8_t sleepers;
};

/* One load of a wait condition; `cursor` is the condition's own progress
 * (which word to load next), kept across steps. */
enum cond_result { COND_MORE, COND_FALSE, COND_TRUE };
typedef enum cond_result (*cond_m)(void *state, int p, uint8_t *cursor);

enum wait_pc { W_SPIN, W_SEQ, W_SLEEPERS, W_CHECK, W_UNSLEEP_RETURN, W_FUTEX, W_UNSLEEP, W_RECHECK, W_BARRIER };

/* A model whose wakers may load `sleepers` before their own earlier store
 * is visible (rank_wake_light) sets this: the sleeper's membarrier() after
 * its increment, which makes every such store visible (NULL: none). */
static void (*wait_sleeper_barrier)(void *state);

struct wait_m {
    uint8_t pc, saved, cursor;
};

enum wait_result { WAIT_BLOCKED, WAIT_MOVED, WAIT_DONE };

/* One step of rank_wait_until(self, cond). The spin phase is one poll:
 * more polls only repeat loads the sleep path makes anyway. futex_wait
 * returns once `seq` differs from the value read (rank_wake_slow changes
 * it before waking), and blocks otherwise. */
static inline enum wait_result wait_step(struct waiter_m *self, struct wait_m *w, cond_m cond, void *state, int p)
{
    enum cond_result r;
    switch ((enum wait_pc)w->pc) {
    case W_SPIN:
        r = cond(state, p, &w->cursor);
        if (r == COND_MORE)
            return WAIT_MOVED;
        w->cursor = 0;
        if (r == COND_TRUE)
            return WAIT_DONE;
        w->pc = W_SEQ;
        return WAIT_MOVED;
    case W_SEQ:
        w->saved = self->seq;
        w->pc = W_SLEEPERS;
        return WAIT_MOVED;
    case W_SLEEPERS:
        self->sleepers++;
        w->pc = wait_sleeper_barrier != NULL ? W_BARRIER : W_CHECK;
        return WAIT_MOVED;
    case W_BARRIER:
        wait_sleeper_barrier(state);
        w->pc = W_CHECK;
        return WAIT_MOVED;
    case W_CHECK:
        r = cond(state, p, &w->cursor);
        if (r == COND_MORE)
            return WAIT_MOVED;
        w->cursor = 0;
        w->pc = r == COND_TRUE ? W_UNSLEEP_RETURN : W_FUTEX;
        return WAIT_MOVED;
    case W_UNSLEEP_RETURN:
        self->sleepers--;
        return WAIT_DONE;
    case W_FUTEX:
        if (self->seq == w->saved)
            return WAIT_BLOCKED;
        w->pc = W_UNSLEEP;
        return WAIT_MOVED;
    case W_UNSLEEP:
        self->sleepers--;
        w->pc = W_RECHECK;
        return WAIT_MOVED;
    case W_RECHECK:
        r = cond(state, p, &w->cursor);
        if (r == COND_MORE)
            return WAIT_MOVED;
        w->cursor = 0;
        if (r == COND_TRUE)
            return WAIT_DONE;
        w->pc = W_SEQ;
        return WAIT_MOVED;
    }
    return WAIT_BLOCKED;
}

static inline void wait_begin(struct wait_m *w)
{
    *w = (struct wait_m){ W_SPIN, 0, 0 };
}

/* rank_wake(r): after the seq_cst fence, load r's sleepers; if any,
 * rank_wake_slow: bump seq (and futex_wake_all). `*phase` 0 = load,
 * 1 = bump; true when the wake is over. */
static inline bool wake_step(struct waiter_m *r, uint8_t *phase)
{
    if (*phase == 0) {
        if (r->sleepers == 0)
            return true;
        *phase = 1;
        return false;
    }
    r->seq++;
    *phase = 0;
    return true;
}

#endif
