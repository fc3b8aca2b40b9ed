/* The models of Strand's RMA synchronization (src/rma), each run over all
 * its configurations. Each returns false after printing a counterexample. */
#ifndef STRAND_MODEL_MODELS_H
#define STRAND_MODEL_MODELS_H

#include "explore.h"

enum { MAXP = 3 };

/* --full: also the largest configurations (minutes rather than seconds). */
extern bool model_full;

bool check_lock(struct explore_stats *stats, FILE *out);
bool check_pscw(struct explore_stats *stats, FILE *out);
bool check_fence(struct explore_stats *stats, FILE *out);

#endif
