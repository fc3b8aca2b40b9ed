/* The PMI-2 backend (pmi.h): Slurm's libpmi2, srun --mpi=pmi2. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmi.h"

#ifndef HAVE_PMI2

static bool absent(void) { return false; }
const struct pmi_backend pmi2_backend = { .name = "PMI-2", .srun_option = "--mpi=pmi2", .present = absent };

#else

#include <slurm/pmi2.h>

/* PMI_FD is what srun --mpi=pmi2 sets: without it PMI2_Init "succeeds"
 * and every later call fails. */
static bool present(void)
{
    return getenv("PMI_FD") != NULL;
}

static int init(int *size, int *rank, char *job_id, size_t id_len, char *why, size_t why_len)
{
    int spawned = 0, appnum = 0;
    int rc = PMI2_Init(&spawned, size, rank, &appnum);
    if (rc == PMI2_SUCCESS)
        rc = PMI2_Job_GetId(job_id, (int)id_len);
    if (rc != PMI2_SUCCESS)
        snprintf(why, why_len, "PMI2_Init/PMI2_Job_GetId: error %d", rc);
    return rc == PMI2_SUCCESS ? 0 : -1;
}

static int universe_size(void)
{
    char value[64];
    int found = 0;
    if (PMI2_Info_GetJobAttr("universeSize", value, sizeof value, &found) == PMI2_SUCCESS && found)
        return atoi(value);
    return 0;
}

static int put(const char *key, const char *value)
{
    return PMI2_KVS_Put(key, value) == PMI2_SUCCESS ? 0 : -1;
}

static int get(int rank, const char *key, char *value, size_t len)
{
    char buf[PMI2_MAX_VALLEN];
    int got = 0;
    if (PMI2_KVS_Get(NULL, rank, key, buf, sizeof buf, &got) != PMI2_SUCCESS || got <= 0)
        return 0;
    snprintf(value, len, "%s", buf);
    return 1;
}

/* One "(start,count,tasks)" of PMI_process_mapping: nodes start to
 * start + count - 1 take `tasks` consecutive ranks each, in turn. Returns
 * the text after it, or NULL when malformed. */
static const char *mapping_block(const char *p, long block[3])
{
    for (int i = 0; i < 3; i++) {
        char *end;
        if (*p++ != (i == 0 ? '(' : ','))
            return NULL;
        block[i] = strtol(p, &end, 10);
        if (end == p || block[i] < 0)
            return NULL;
        p = end;
    }
    return *p == ')' ? p + 1 : NULL;
}

/* PMI_process_mapping, "(vector,(0,3,1),(0,1,4))" (MPICH's format; Slurm
 * gives it for every distribution): the blocks in order, repeated from
 * the first until every rank has its node. */
static int rank_nodes(int nnodes, int size, int *node_of)
{
    char map[PMI2_MAX_VALLEN];
    int found = 0;
    if (PMI2_Info_GetJobAttr("PMI_process_mapping", map, sizeof map, &found) != PMI2_SUCCESS || !found ||
        strncmp(map, "(vector", 7) != 0)
        return -1;
    int r = 0;
    while (r < size) {
        int before = r;
        const char *p = map + 7;
        long block[3];
        while (*p == ',' && (p = mapping_block(p + 1, block)) != NULL)
            for (long node = block[0]; node < block[0] + block[1]; node++)
                for (long t = 0; t < block[2] && r < size; t++)
                    node_of[r++] = node < nnodes ? (int)node : -1;
        if (p == NULL || *p != ')' || r == before)
            return -1;
    }
    return 0;
}

static int fence(void)
{
    return PMI2_KVS_Fence() == PMI2_SUCCESS ? 0 : -1;
}

static void finalize(void)
{
    PMI2_Finalize();
}

/* PMI2_Abort sends the request, then calls exit(), which in a rank thread
 * is that rank's return (privatize/overrides.c), not the end of the
 * process: a child process (sharing PMI's connection) sends it. The
 * process manager then ends every task of the step. PMI-2's abort carries
 * no status: Slurm kills the other tasks and srun exits with 137, as it
 * does for MPICH's MPI_Abort under --mpi=pmi2; net_job_aborting therefore
 * comes here only when the node processes could not end themselves with
 * the status (net.c, JOB_ABORT). */
static void abort_job(int status, const char *message)
{
    (void)status;
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        PMI2_Abort(1, message);
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

const struct pmi_backend pmi2_backend = {
    .name = "PMI-2", .srun_option = "--mpi=pmi2", .present = present, .init = init,
    .universe_size = universe_size, .put = put, .get = get, .rank_nodes = rank_nodes,
    .fence = fence, .finalize = finalize, .abort = abort_job,
};

#endif
