/* A node without threads for unit tests: ranks exist, and a test switches
 * `strand_self` to act as one rank or another. */
#ifndef STRAND_UNIT_SUPPORT_H
#define STRAND_UNIT_SUPPORT_H

#include <CUnit/Basic.h>
#include "core/core.h"

void unit_node_create(int nranks, size_t eager_limit);
void unit_node_destroy(void);
void unit_act_as(int world_rank);
/* Stress tests with real threads: a failed check is printed (with the
 * rank the thread acts as) and counted in unit_stress_failures, which the
 * test resets and asserts on; iteration counts scale with
 * STRAND_STRESS_SCALE=N. */
extern atomic_int unit_stress_failures;
#define UNIT_EXPECT(cond)                                                                             \
    do {                                                                                              \
        if (!(cond)) {                                                                                \
            fprintf(stderr, "rank %d: %s:%d: %s\n", strand_self != NULL ? strand_self->world_rank : -1, \
                    __FILE__, __LINE__, #cond);                                                       \
            atomic_fetch_add(&unit_stress_failures, 1);                                               \
        }                                                                                             \
    } while (0)
int unit_stress_scaled(int iterations);

/* Runs the registry; returns the process exit status. */
int unit_run_registry(void);

#endif
