/* Launch under PMI (pmi.h): one node process per Slurm node by default,
 * every task of a node joining it as rank threads; or one per task
 * (STRAND_PMI_LAYOUT=task). The PMI itself is a backend: pmi2.c, pmix.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>

#include "../core/apps.h"
#include "layout.h"
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

/* The node's first task, in the node-per-Slurm-node layout: it runs the
 * ranks of all the node's tasks, world rank = PMI rank. */
static struct {
    bool leader;
    int ntasks;
    int *pmi_ranks;                         /* by local id: SLURM_GTIDS, ascending */
} node_tasks;

/* Node-per-Slurm-node layout: the job's size and the Slurm node of each
 * PMI rank (what PMI says: any distribution, -m cyclic included). */
static int job_size, *rank_node;

bool pmi_active(void) { return backend != NULL; }
bool pmi_abort_has_status(void) { return backend != NULL && backend->abort_has_status; }

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

/* STRAND_RANK_NODES for net.c: the node of each rank, Slurm's repeats
 * for runs ("0(x16),1(x16)" for blocks, "0,1,2,0,1,2,0" for -m cyclic). */
static void set_rank_nodes(const int *node_of, int size)
{
    size_t len = (size_t)size * 24 + 1, used = 0;
    char *text = malloc(len);
    if (text == NULL)
        pmi_failed("memory for the layout");
    text[0] = '\0';
    for (int r = 0, run; r < size; r += run) {
        for (run = 1; r + run < size && node_of[r + run] == node_of[r]; run++)
            ;
        used += (size_t)(run > 1 ? snprintf(text + used, len - used, "%s%d(x%d)", r > 0 ? "," : "", node_of[r], run)
                                 : snprintf(text + used, len - used, "%s%d", r > 0 ? "," : "", node_of[r]));
    }
    setenv("STRAND_RANK_NODES", text, 1);
    free(text);
}

/* PMI's node of every rank (rank_node[size]), checked against what Slurm
 * says of the whole step, the same in every task (so that all choose the
 * same layout): `nnodes` nodes holding SLURM_STEP_TASKS_PER_NODE tasks.
 * False when PMI does not say, or says otherwise (Slurm 22.05's PMI-2
 * under -m arbitrary). */
static bool rank_nodes_read(int nnodes, int size)
{
    const char *spec = getenv("SLURM_STEP_TASKS_PER_NODE");
    if (spec == NULL)
        spec = getenv("SLURM_TASKS_PER_NODE");
    rank_node = malloc((size_t)size * sizeof *rank_node);
    int *counts = malloc((size_t)nnodes * sizeof *counts);
    bool ok = spec != NULL && rank_node != NULL && counts != NULL &&
              net_layout_list(spec, counts, nnodes, 1, size) == nnodes &&
              backend->rank_nodes(nnodes, size, rank_node) == 0;
    for (int r = 0; ok && r < size; r++)
        ok = rank_node[r] >= 0 && rank_node[r] < nnodes && counts[rank_node[r]]-- > 0;
    for (int j = 0; ok && j < nnodes; j++)
        ok = counts[j] == 0;
    free(counts);
    return ok;
}

/* This task's node in that map: its tasks (SLURM_GTIDS, ascending, the
 * task of local id `local` being PMI rank `rank`) are the ranks PMI puts
 * on node `node`. */
static bool node_tasks_agree(int size, int node, int local, int rank)
{
    const char *gtids = getenv("SLURM_GTIDS");
    node_tasks.pmi_ranks = malloc((size_t)size * sizeof *node_tasks.pmi_ranks);
    if (gtids == NULL || node_tasks.pmi_ranks == NULL)
        return false;
    node_tasks.ntasks = net_layout_list(gtids, node_tasks.pmi_ranks, size, 0, size - 1);
    int on_node = 0;
    for (int r = 0; r < size; r++)
        on_node += rank_node[r] == node;
    bool ok = node_tasks.ntasks == on_node && local < node_tasks.ntasks && node_tasks.pmi_ranks[local] == rank;
    for (int i = 0; ok && i < node_tasks.ntasks; i++)
        ok = rank_node[node_tasks.pmi_ranks[i]] == node && (i == 0 || node_tasks.pmi_ranks[i] > node_tasks.pmi_ranks[i - 1]);
    return ok;
}

/* The PMI rank of node `node`'s first task: the lowest on the node (Slurm
 * numbers a node's tasks in rank order), the one that puts its keys. */
static int first_rank_of_node(int node)
{
    for (int r = 0; rank_node != NULL && r < job_size; r++)
        if (rank_node[r] == node)
            return r;
    return -1;
}

/* The same 64-bit id in every task: a hash of PMI's job id. Node j
 * listens on base + j (the static rule): a base from the job id, so that
 * two jobs on one host rarely meet; a port found taken all the same is
 * replaced and published (net.c). */
static uint64_t fnv1a(const char *text)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = text; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h;
}

static void set_job_id(const char *pmi_id)
{
    uint64_t h = fnv1a(pmi_id);
    char text[32];
    snprintf(text, sizeof text, "%llx", (unsigned long long)h);
    setenv("STRAND_JOB_ID", text, 1);
    if (getenv("STRAND_NET_PORT") == NULL)
        set_number("STRAND_NET_PORT", 20000 + (long)(h % 30000));
}

/* ---- srun --multi-prog: a node's tasks may run different programs ---- */

/* Each task that joins its node's first task puts its command line,
 * `cmd.<pmi rank>` = "HASH WORDS": WORDS the program file and the argv in
 * apps.h's encoding, HASH (FNV-1a of WORDS) alone when WORDS do not fit in
 * PMI-2's values. After the fence the first task compares them with its
 * own and, when some differ, describes the apps of its ranks (STRAND_APPS,
 * read by src/core/apps.c); MPI_APPNUM is 0, as Slurm's PMI says for every
 * task of a step. */
enum {
    COMMAND_VALUE_MAX = 1000,       /* PMI-2 values are at most 1024 bytes */
    COMMAND_VALUE_BUFFER = 1024,
};

/* This process's program file and argv, encoded, in out[len]; "" when
 * /proc does not tell. */
static void own_command(char *out, size_t len)
{
    char file[PATH_MAX], args[65536];
    size_t used = 0;
    out[0] = '\0';
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f != NULL ? fread(args, 1, sizeof args - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    if (realpath("/proc/self/exe", file) == NULL || n == 0 || apps_encode(file, out, len, &used) != 0)
        return;
    for (size_t at = 0; at < n; at += strlen(args + at) + 1) {
        args[n] = '\0';
        if (used + 1 >= len || (out[used++] = ' ', apps_encode(args + at, out, len, &used) != 0)) {
            out[0] = '\0';
            return;
        }
    }
}

static void put_own_command(int pmi_rank)
{
    char words[65536], value[COMMAND_VALUE_MAX + 32], key[32];
    own_command(words, sizeof words);
    int n = snprintf(value, sizeof value, "%016llx %s", (unsigned long long)fnv1a(words), words);
    if (n < 0 || n > COMMAND_VALUE_MAX)
        value[16] = '\0';
    snprintf(key, sizeof key, "cmd.%d", pmi_rank);
    if (pmi_put(key, value) != 0)
        pmi_failed("PMI's put of the command line");
}

static _Noreturn void commands_unusable(int pmi_rank, const char *why)
{
    char line[320];
    snprintf(line, sizeof line, "Strand MPI: task %d runs another program than its node's first task, and %s; "
             "run one node process per task with STRAND_PMI_LAYOUT=task\n", pmi_rank, why);
    fputs(line, stderr);
    _exit(1);
}

/* After the fence, on the node's first task: the runs of its tasks whose
 * program differs from its own become apps (its own ranks need none); a
 * run is of consecutive world ranks (under -m cyclic, often one rank). */
static void describe_local_apps(void)
{
    char own[65536], own_hash[17];
    own_command(own, sizeof own);
    snprintf(own_hash, sizeof own_hash, "%016llx", (unsigned long long)fnv1a(own));
    char (*values)[COMMAND_VALUE_BUFFER] = calloc((size_t)node_tasks.ntasks, sizeof *values);
    if (values == NULL)
        pmi_failed("memory for the tasks' command lines");
    memcpy(values[0], own_hash, sizeof own_hash);
    for (int i = 1; i < node_tasks.ntasks; i++) {
        char key[32];
        snprintf(key, sizeof key, "cmd.%d", node_tasks.pmi_ranks[i]);
        if (backend->get(node_tasks.pmi_ranks[i], key, values[i], sizeof values[i]) != 1)
            commands_unusable(node_tasks.pmi_ranks[i], "its command line is not in PMI's key-value space");
    }
    int napps = 0;
    for (int i = 1, j; i < node_tasks.ntasks; i = j) {
        for (j = i + 1; j < node_tasks.ntasks && strncmp(values[j], values[i], 16) == 0 &&
                        node_tasks.pmi_ranks[j] == node_tasks.pmi_ranks[j - 1] + 1;
             j++)
            ;
        if (strncmp(values[i], own_hash, 16) == 0)
            continue;
        if (values[i][16] != ' ')
            commands_unusable(node_tasks.pmi_ranks[i], "its command line is too long to pass through PMI");
        char name[32], value[2 * COMMAND_VALUE_BUFFER];
        snprintf(name, sizeof name, "STRAND_APP_%d", napps++);
        snprintf(value, sizeof value, "%d %d 0 %s", node_tasks.pmi_ranks[i], j - i, values[i] + 17);
        setenv(name, value, 1);
    }
    if (napps > 0)
        set_number("STRAND_APPS", napps);
    free(values);
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
     * host name (emulated nodes share one); world rank = PMI rank, so a
     * node process runs whatever set of ranks Slurm put on its node. */
    const char *layout = getenv("STRAND_PMI_LAYOUT");
    long nnodes = env_long("SLURM_STEP_NUM_NODES", env_long("SLURM_NNODES", -1));
    long node = env_long("SLURM_NODEID", -1), local = env_long("SLURM_LOCALID", -1);
    job_size = size;
    bool want_per_node = (layout == NULL || strcmp(layout, "task") != 0) && nnodes >= 1 && node >= 0 &&
                         node < nnodes && local >= 0;
    bool per_node = want_per_node && rank_nodes_read((int)nnodes, size);
    if (want_per_node && !per_node)
        say_once("Strand MPI: PMI's node of each rank is missing or disagrees with SLURM_STEP_TASKS_PER_NODE: "
                 "one node process per task\n");
    if (per_node && !node_tasks_agree(size, (int)node, (int)local, rank))
        pmi_failed("checking PMI's node of each rank against SLURM_GTIDS");
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
         * says what it would run, takes part in the fence, then leaves. */
        put_own_command(rank);
        pmi_fence();
        backend->finalize();
        _exit(0);
    }
    node_tasks.leader = true;
    set_number("STRAND_NODES", nnodes);
    set_number("STRAND_NODE_INDEX", node);
    set_rank_nodes(rank_node, size);
    if (nnodes == 1)
        pmi_fence();    /* nothing to address; the other tasks wait in theirs */
}

int pmi_put(const char *key, const char *value)
{
    return backend->put(key, value);
}

int pmi_get(int node, const char *key, char *value, size_t len)
{
    int rank = node_is_rank ? node : first_rank_of_node(node);
    return backend->get(rank, key, value, len);
}

void pmi_fence(void)
{
    if (backend->fence() != 0)
        pmi_failed("the fence");
    if (node_tasks.leader && node_tasks.ntasks > 1)
        describe_local_apps();
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
