/* A node without threads for unit tests: ranks exist, and a test switches
 * `strand_self` to act as one rank or another. */
#ifndef STRAND_UNIT_SUPPORT_H
#define STRAND_UNIT_SUPPORT_H

#include <CUnit/Basic.h>
#include "core/core.h"

void unit_node_create(int nranks, size_t eager_limit);
void unit_node_destroy(void);
void unit_act_as(int world_rank);
/* Runs the registry; returns the process exit status. */
int unit_run_registry(void);

#endif
