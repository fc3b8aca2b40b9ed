/* Launch under a process manager's PMI-2 (Slurm: srun --mpi=pmi2), built
 * when configure finds Slurm's libpmi2 (HAVE_PMI2).
 *
 * net_bootstrap (net.h) turns what PMI and Slurm say into the launcher
 * environment that the rest of the runtime reads (STRAND_NRANKS,
 * STRAND_NODES, STRAND_NODE_INDEX, STRAND_NODE_RANKS, STRAND_NET_PORT,
 * STRAND_JOB_ID, STRAND_UNIVERSE_SIZE), so that a job under srun is the
 * same job as under mpiexec. The key-value store (kv.h) is then PMI's:
 * puts before the one fence of net_start, gets lazily afterwards.
 *
 * Threads: net_bootstrap on the main thread before anything else; the
 * rest is serialized by kv.c's callers (main thread, or the progress
 * thread under kv.c's lock). */
#ifndef STRAND_NET_PMI_H
#define STRAND_NET_PMI_H

#include <stdbool.h>
#include <stddef.h>

/* True once net_bootstrap initialized PMI for this process. */
bool pmi_active(void);
/* The job's PMI key-value space: 0 or -1. */
int pmi_put(const char *key, const char *value);
/* 1 found (value in value[len]), 0 not there, -1 on a PMI error. */
int pmi_get(const char *key, char *value, size_t len);
/* The one fence: every put of every task before it is visible after it. */
void pmi_fence(void);
/* At the end of the node process. */
void pmi_finalize(void);
/* The job aborts: ask the process manager to end every task. */
void pmi_abort(const char *message);

#endif
