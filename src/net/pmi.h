/* Launch under a process manager's PMI (Slurm: srun --mpi=pmi2 through
 * Slurm's libpmi2, built with HAVE_PMI2; srun --mpi=pmix through OpenPMIx,
 * built with HAVE_PMIX).
 *
 * net_bootstrap (net.h) turns what PMI and Slurm say into the launcher
 * environment that the rest of the runtime reads (STRAND_NRANKS,
 * STRAND_NODES, STRAND_NODE_INDEX, STRAND_RANK_NODES, STRAND_NET_PORT,
 * STRAND_JOB_ID, STRAND_UNIVERSE_SIZE), so that a job under srun is the
 * same job as under mpiexec. The key-value store is then PMI's: node j's
 * first task puts its keys before the one fence of net_start, peers get
 * them lazily afterwards.
 *
 * Threads: net_bootstrap on the main thread before anything else; puts and
 * the fence on the main thread in net_start; gets on the progress thread
 * (one at a time). */
#ifndef STRAND_NET_PMI_H
#define STRAND_NET_PMI_H

#include <stdbool.h>
#include <stddef.h>

/* True once net_bootstrap initialized a PMI for this process. */
bool pmi_active(void);
/* The job's key-value space: 0 or -1. */
int pmi_put(const char *key, const char *value);
/* `key` as put by node `node`'s node process: 1 found (value in
 * value[len]), 0 not there, -1 on a PMI error. */
int pmi_get(int node, const char *key, char *value, size_t len);
/* The one fence: every put of every task before it is visible after it. */
void pmi_fence(void);
/* At the end of the node process. */
void pmi_finalize(void);
/* The job aborts with `status`: ask the process manager to end every task
 * (PMIx passes the status on, so srun exits with it; PMI-2 has no field
 * for it: net_job_aborting asks the other node processes to exit with it
 * first). */
void pmi_abort(int status, const char *message);
/* The PMI in use passes an abort's status on to srun (PMIx). */
bool pmi_abort_has_status(void);

/* --- a PMI implementation (pmi2.c, pmix.c), used by pmi.c --- */
struct pmi_backend {
    const char *name;               /* "PMI-2", "PMIx" */
    const char *srun_option;        /* how srun selects it */
    bool abort_has_status;          /* abort passes its status on to srun */
    /* Its environment is there (PMI_FD, PMIX_NAMESPACE): init can work. */
    bool (*present)(void);
    /* Returns 0, or -1 with the failed call in why[why_len]. */
    int (*init)(int *size, int *rank, char *job_id, size_t id_len, char *why, size_t why_len);
    int (*universe_size)(void);     /* 0: not known */
    int (*put)(const char *key, const char *value);
    /* `rank`: the PMI rank that put the key. */
    int (*get)(int rank, const char *key, char *value, size_t len);
    /* The node of each PMI rank, node_of[size]: nodes numbered as Slurm's
     * node ids. 0, or -1 when PMI does not say. */
    int (*rank_nodes)(int nnodes, int size, int *node_of);
    int (*fence)(void);
    void (*finalize)(void);
    void (*abort)(int status, const char *message);
};
extern const struct pmi_backend pmi2_backend, pmix_backend;

#endif
