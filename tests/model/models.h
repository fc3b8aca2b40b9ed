/* The models of Strand's synchronization protocols (src/rma, src/pt2pt),
 * each run over all its configurations. Each returns false after printing a counterexample. */
#ifndef STRAND_MODEL_MODELS_H
#define STRAND_MODEL_MODELS_H

#include "explore.h"

enum { MAXP = 3 };

/* --full: also the largest configurations (minutes rather than seconds). */
extern bool model_full;

bool check_lock(struct explore_stats *stats, FILE *out);
/* True when the checker finds the flaw planted in lock variant `mutant`
 * (1: frames held only while the request is pending, 2: operations never held,
 * 3: a grant that forgets the held frames, 4: a grant that claims a newer
 * request), over the configurations with remote origins. */
bool check_lock_mutant(int mutant, struct explore_stats *stats, FILE *out);
bool check_pscw(struct explore_stats *stats, FILE *out);
bool check_fence(struct explore_stats *stats, FILE *out);
/* The point-to-point mailbox (model_mailbox.c), in its own program. */
bool check_mailbox(struct explore_stats *stats, FILE *out);
/* True when the checker finds the flaw planted in mailbox variant `mutant`
 * (1: probers not woken, 2: wake before DONE, 3: post in a second
 * critical section); its counterexample goes to `out`. */
bool check_mailbox_mutant(int mutant, struct explore_stats *stats, FILE *out);
/* The mailbox's biased lock (model_biased_lock.c); mutants 1-5 are flaws
 * the checker must find. */
bool check_biased_lock(struct explore_stats *stats, FILE *out);
bool check_biased_lock_mutant(int mutant, struct explore_stats *stats, FILE *out);
/* A lane's ring (model_lane.c): producer, consumer, the producer's
 * mailbox path; mutants 1-5 are flaws the checker must find. */
bool check_lane(struct explore_stats *stats, FILE *out);
bool check_lane_mutant(int mutant, struct explore_stats *stats, FILE *out);
/* An offer of a mid-sized message (model_offer.c): its taking, withdrawal
 * and cancel; mutants 1-5 are flaws the checker must find. */
bool check_offer(struct explore_stats *stats, FILE *out);
bool check_offer_mutant(int mutant, struct explore_stats *stats, FILE *out);
/* A wait that names the completion it needs next (model_awaited.c);
 * mutants 1-3 are flaws the checker must find. */
bool check_awaited(struct explore_stats *stats, FILE *out);
bool check_awaited_mutant(int mutant, struct explore_stats *stats, FILE *out);

#endif
