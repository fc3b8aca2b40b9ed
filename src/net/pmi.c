/* Launch under PMI (pmi.h): one node process per Slurm node by default,
 * every task of a node joining it as rank threads; or one per task
 * (STRAND_PMI_LAYOUT=task). The PMI itself is a backend: pmi2.c, pmix.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net.h"
#include "pmi.h"

static const struct pmi_backend *const backends[] = {
#ifdef HAVE_PMIX
    &pmix_backend,
#endif
#ifdef HAVE_PMI2
    &pmi2_backend,
#endif
    NULL,
};

static const struct pmi_backend *backend;   /* the one in use, or NULL */
static bool node_is_rank;                   /* one node process per task */

bool pmi_active(void) { return backend != NULL; }

/* Under srun (a step of several tasks). */
static bool started_by_srun(void)
{
    const char *tasks = getenv("SLURM_STEP_NUM_TASKS");
    return getenv("SLURM_STEP_ID") != NULL && tasks != NULL && atoi(tasks) > 1;
}

static void say_once(const char *line)
{
    const char *procid = getenv("SLURM_PROCID");
    if (procid == NULL || strcmp(procid, "0") == 0)
        fputs(line, stderr);
}

/* No usable PMI: one line saying why, and every task runs alone. */
static void no_pmi(void)
{
    if (getenv("PMI_FD") != NULL && !pmi2_backend.present())
        say_once("Strand MPI: srun started this job with PMI-2 (PMI_FD is set), but this Strand was "
                 "built without PMI-2 (configure found no slurm/pmi2.h: Debian libpmi2-0-dev); "
                 "every task runs as a job of its own\n");
    else if (getenv("PMIX_NAMESPACE") != NULL && !pmix_backend.present())
        say_once("Strand MPI: srun started this job with PMIx (PMIX_NAMESPACE is set), but this Strand "
                 "was built without PMIx (configure found no pkg-config pmix: Debian libpmix-dev); "
                 "every task runs as a job of its own\n");
    else if (started_by_srun())
        say_once("Strand MPI: started by srun without a PMI (PMI_FD and PMIX_NAMESPACE are not set): "
                 "every task runs as a job of its own; use srun --mpi=pmi2 or --mpi=pmix\n");
}

static _Noreturn void pmi_failed(const char *what)
{
    char line[320];
    snprintf(line, sizeof line, "Strand MPI: %s failed under srun %s (%s)\n", what, backend->srun_option,
             backend->name);
    fputs(line, stderr);
    _exit(1);
}

static long env_long(const char *name, long fallback)
{
    const char *text = getenv(name);
    return text != NULL && *text != '\0' ? strtol(text, NULL, 10) : fallback;
}

static void set_number(const char *name, long value)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", value);
    setenv(name, text, 1);
}

/* SLURM_STEP_TASKS_PER_NODE ("3,2(x2),1") expanded to one count per node
 * ("3,2,2,1") in out[len]; false when it does not describe `nnodes`
 * nodes holding `ntasks` tasks. */
static bool tasks_per_node(int nnodes, int ntasks, char *out, size_t len)
{
    const char *spec = getenv("SLURM_STEP_TASKS_PER_NODE");
    if (spec == NULL)
        spec = getenv("SLURM_TASKS_PER_NODE");
    if (spec == NULL)
        return false;
    int nodes = 0, tasks = 0;
    size_t used = 0;
    out[0] = '\0';
    for (const char *p = spec; *p != '\0';) {
        char *end;
        long count = strtol(p, &end, 10), times = 1;
        if (end == p || count < 1)
            return false;
        if (strncmp(end, "(x", 2) == 0) {
            times = strtol(end + 2, &end, 10);
            if (*end++ != ')' || times < 1)
                return false;
        }
        for (long i = 0; i < times; i++) {
            int n = snprintf(out + used, len - used, "%s%ld", nodes > 0 ? "," : "", count);
            if (n < 0 || (size_t)n >= len - used)
                return false;
            used += (size_t)n;
            nodes++;
            tasks += (int)count;
        }
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return false;
    }
    return nodes == nnodes && tasks == ntasks;
}

/* The same 64-bit id in every task: a hash of PMI's job id. Node j
 * listens on base + j (the static rule): a base from the job id, so that
 * two jobs on one host rarely meet; a port found taken all the same is
 * replaced and published (net.c). */
static void set_job_id(const char *pmi_id)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = pmi_id; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    char text[32];
    snprintf(text, sizeof text, "%llx", (unsigned long long)h);
    setenv("STRAND_JOB_ID", text, 1);
    if (getenv("STRAND_NET_PORT") == NULL)
        set_number("STRAND_NET_PORT", 20000 + (long)(h % 30000));
}

void net_bootstrap(void)
{
    if (getenv("STRAND_NRANKS") != NULL)
        return;     /* mpiexec started us (even inside a Slurm allocation) */
    const struct pmi_backend *found = NULL;
    for (int i = 0; backends[i] != NULL && found == NULL; i++)
        if (backends[i]->present())
            found = backends[i];
    if (found == NULL) {
        no_pmi();
        return;
    }
    backend = found;
    int size = 0, rank = 0;
    char id[256], why[128];
    if (backend->init(&size, &rank, id, sizeof id, why, sizeof why) != 0)
        pmi_failed(why);
    set_job_id(id);
    int universe = backend->universe_size();
    if (universe > 0 && getenv("STRAND_UNIVERSE_SIZE") == NULL)
        set_number("STRAND_UNIVERSE_SIZE", universe);
    set_number("STRAND_NRANKS", size);
    /* Node process per Slurm node: grouped by Slurm's node id, never by
     * host name (emulated nodes share one). */
    const char *layout = getenv("STRAND_PMI_LAYOUT");
    long nnodes = env_long("SLURM_STEP_NUM_NODES", env_long("SLURM_NNODES", -1));
    long node = env_long("SLURM_NODEID", -1), local = env_long("SLURM_LOCALID", -1);
    char counts[4096];
    bool per_node = (layout == NULL || strcmp(layout, "task") != 0) && nnodes >= 1 && node >= 0 &&
                    local >= 0 && tasks_per_node((int)nnodes, size, counts, sizeof counts);
    if (!per_node) {
        node_is_rank = true;
        set_number("STRAND_NODES", size);
        set_number("STRAND_NODE_INDEX", rank);
        if (size == 1)
            pmi_fence();
        return;
    }
    if (local != 0) {
        /* Its ranks run as threads of the node's first task: this task
         * only takes part in the fence, then leaves. */
        pmi_fence();
        backend->finalize();
        _exit(0);
    }
    set_number("STRAND_NODES", nnodes);
    set_number("STRAND_NODE_INDEX", node);
    setenv("STRAND_NODE_RANKS", counts, 1);
    if (nnodes == 1)
        pmi_fence();    /* nothing to address; the other tasks wait in theirs */
}

int pmi_put(const char *key, const char *value)
{
    return backend->put(key, value);
}

int pmi_get(int node, const char *key, char *value, size_t len)
{
    int rank = node_is_rank ? node : backend->first_rank_of_node(node);
    return backend->get(rank, key, value, len);
}

void pmi_fence(void)
{
    if (backend->fence() != 0)
        pmi_failed("the fence");
}

void pmi_finalize(void)
{
    if (backend != NULL)
        backend->finalize();
    backend = NULL;
}

void pmi_abort(int status, const char *message)
{
    if (backend == NULL)
        return;
    /* One line, without PMI wire formats' separators (';' '='). */
    char text[256];
    snprintf(text, sizeof text, "%s", message != NULL ? message : "MPI job aborted");
    for (char *p = text; *p; p++)
        if (*p == ';' || *p == '=' || *p == '\n')
            *p = *p == '\n' && p[1] == '\0' ? '\0' : ',';
    backend->abort(status, text);
}
