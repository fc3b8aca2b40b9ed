/* A tiny explicit-state model checker: every interleaving of the atomic
 * steps of a few processes, breadth first, with a visited set.
 *
 * A model's state is a fixed-size, zero-padded byte string (shared words
 * plus each process's program counter and locals). `step` takes one atomic
 * step of one process, or says that it cannot move (finished, or asleep on
 * a futex nobody has changed). A state where no process can move and some
 * has not finished is a deadlock (a lost wake-up shows as one). After
 * every step the model's safety property is checked. Interleavings are
 * sequentially consistent: the real code's atomics are seq_cst where the
 * protocols need a total order (the sleep/wake handshake) and
 * release/acquire elsewhere; the model checks the protocols' logic. */
#ifndef STRAND_MODEL_EXPLORE_H
#define STRAND_MODEL_EXPLORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct model {
    const char *name;
    size_t state_size;
    int nprocs;
    void (*init)(void *state);
    /* One atomic step of process p; false if p cannot move. */
    bool (*step)(void *state, int p);
    bool (*finished)(const void *state, int p);
    /* NULL, or what is wrong with this state. */
    const char *(*violation)(const void *state);
    /* NULL, or what is wrong with this state where every process finished. */
    const char *(*final_violation)(const void *state);
    void (*show)(const void *state, FILE *out);
};

struct explore_stats {
    unsigned long states;
    unsigned long transitions;
    unsigned long finals;
};

/* Explores every reachable state; on a violation prints the trace to
 * `out` and returns false. */
bool explore(const struct model *m, struct explore_stats *stats, FILE *out);

#endif
