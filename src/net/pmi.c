/* PMI-2 launch (pmi.h): one node process per Slurm node by default, every
 * task of a node joining it as rank threads; or one per task
 * (STRAND_PMI_LAYOUT=task). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net.h"
#include "pmi.h"

#ifdef HAVE_PMI2
#include <slurm/pmi2.h>
#endif

static bool active;

bool pmi_active(void) { return active; }

/* Under srun (a step of several tasks) but not under mpiexec. */
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

#ifndef HAVE_PMI2

void net_bootstrap(void)
{
    if (getenv("STRAND_NRANKS") != NULL)
        return;     /* mpiexec started us */
    if (getenv("PMI_FD") != NULL)
        say_once("Strand MPI: srun started this job with PMI-2 (PMI_FD is set), but this Strand was "
                 "built without PMI-2 (configure found no slurm/pmi2.h: Debian libpmi2-0-dev); "
                 "every task runs as a job of its own\n");
    else if (started_by_srun())
        say_once("Strand MPI: started by srun without a PMI (PMI_FD is not set; this Strand has no "
                 "PMI-2 support either): every task runs as a job of its own\n");
}

int pmi_put(const char *key, const char *value) { (void)key; (void)value; return -1; }
int pmi_get(const char *key, char *value, size_t len) { (void)key; (void)value; (void)len; return -1; }
void pmi_fence(void) {}
void pmi_finalize(void) {}
void pmi_abort(const char *message) { (void)message; }

#else

static _Noreturn void pmi_failed(const char *what, int rc)
{
    char line[256];
    snprintf(line, sizeof line, "Strand MPI: %s failed under srun --mpi=pmi2 (PMI-2 error %d)\n", what, rc);
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

/* The same 64-bit id in every task: a hash of PMI's job id. */
static void set_job_id(void)
{
    char id[256];
    int rc = PMI2_Job_GetId(id, sizeof id);
    if (rc != PMI2_SUCCESS)
        pmi_failed("PMI2_Job_GetId", rc);
    uint64_t h = 1469598103934665603ull;
    for (const char *p = id; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    char text[32];
    snprintf(text, sizeof text, "%llx", (unsigned long long)h);
    setenv("STRAND_JOB_ID", text, 1);
    /* Node j listens on base + j (the static rule): a base from the job
     * id, so that two jobs on one host rarely meet; a port found taken all
     * the same is replaced and published (net.c). */
    if (getenv("STRAND_NET_PORT") == NULL)
        set_number("STRAND_NET_PORT", 20000 + (long)(h % 30000));
}

static void set_universe_size(void)
{
    char value[64];
    int found = 0;
    if (getenv("STRAND_UNIVERSE_SIZE") == NULL &&
        PMI2_Info_GetJobAttr("universeSize", value, sizeof value, &found) == PMI2_SUCCESS && found &&
        atoi(value) > 0)
        setenv("STRAND_UNIVERSE_SIZE", value, 1);
}

void net_bootstrap(void)
{
    if (getenv("STRAND_NRANKS") != NULL)
        return;     /* mpiexec started us (even inside a Slurm allocation) */
    if (getenv("PMI_FD") == NULL) {
        /* PMI2_Init would "succeed" and every later call fail. */
        if (started_by_srun())
            say_once("Strand MPI: started by srun without a PMI (PMI_FD is not set): every task runs "
                     "as a job of its own; use srun --mpi=pmi2\n");
        return;
    }
    int spawned = 0, size = 0, rank = 0, appnum = 0;
    int rc = PMI2_Init(&spawned, &size, &rank, &appnum);
    if (rc != PMI2_SUCCESS)
        pmi_failed("PMI2_Init", rc);
    active = true;
    set_job_id();
    set_universe_size();
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
        PMI2_Finalize();
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
    return PMI2_KVS_Put(key, value) == PMI2_SUCCESS ? 0 : -1;
}

int pmi_get(const char *key, char *value, size_t len)
{
    char buf[PMI2_MAX_VALLEN];
    int got = 0;
    if (PMI2_KVS_Get(NULL, PMI2_ID_NULL, key, buf, sizeof buf, &got) != PMI2_SUCCESS || got <= 0)
        return 0;
    snprintf(value, len, "%s", buf);
    return 1;
}

void pmi_fence(void)
{
    int rc = PMI2_KVS_Fence();
    if (rc != PMI2_SUCCESS)
        pmi_failed("PMI2_KVS_Fence", rc);
}

void pmi_finalize(void)
{
    if (active)
        PMI2_Finalize();
    active = false;
}

void pmi_abort(const char *message)
{
    if (!active)
        return;
    /* One line, without the PMI wire format's separators (';' '='). */
    char text[256];
    snprintf(text, sizeof text, "%s", message != NULL ? message : "MPI job aborted");
    for (char *p = text; *p; p++)
        if (*p == ';' || *p == '=' || *p == '\n')
            *p = *p == '\n' && p[1] == '\0' ? '\0' : ',';
    /* PMI2_Abort sends the request, then calls exit(), which in a rank
     * thread is that rank's return (privatize/overrides.c), not the end of
     * the process: a child process (sharing PMI's connection) sends it.
     * The process manager then ends every task of the step. */
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        PMI2_Abort(1, text);
        _exit(1);
    }
    for (int i = 0; child > 0 && i < 200; i++) {
        if (waitpid(child, NULL, WNOHANG) == child)
            return;
        struct timespec ms10 = { 0, 10000000 };
        nanosleep(&ms10, NULL);
    }
    if (child > 0)
        kill(child, SIGKILL);
}

#endif
