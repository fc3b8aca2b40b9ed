/* The PMIx backend (pmi.h): OpenPMIx, srun --mpi=pmix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmi.h"

#ifndef HAVE_PMIX

static bool absent(void) { return false; }
const struct pmi_backend pmix_backend = { .name = "PMIx", .srun_option = "--mpi=pmix", .present = absent };

#else

#include <pmix.h>

static pmix_proc_t self;
static int job_size;

static bool present(void)
{
    return getenv("PMIX_NAMESPACE") != NULL;
}

/* A job-level or per-process value, as an unsigned number (-1: none). */
static long get_number(pmix_rank_t rank, const char *key)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, self.nspace, rank);
    pmix_value_t *val = NULL;
    long n = -1;
    if (PMIx_Get(&proc, key, NULL, 0, &val) != PMIX_SUCCESS || val == NULL)
        return -1;
    if (val->type == PMIX_UINT32)
        n = val->data.uint32;
    else if (val->type == PMIX_UINT16)
        n = val->data.uint16;
    PMIX_VALUE_RELEASE(val);
    return n;
}

static int init(int *size, int *rank, char *job_id, size_t id_len, char *why, size_t why_len)
{
    pmix_status_t rc = PMIx_Init(&self, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        snprintf(why, why_len, "PMIx_Init: %s", PMIx_Error_string(rc));
        return -1;
    }
    job_size = (int)get_number(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    if (job_size < 1) {
        snprintf(why, why_len, "PMIx_Get(PMIX_JOB_SIZE)");
        return -1;
    }
    *size = job_size;
    *rank = (int)self.rank;
    snprintf(job_id, id_len, "%s", self.nspace);
    return 0;
}

static int universe_size(void)
{
    long n = get_number(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE);
    return n > 0 ? (int)n : 0;
}

static int put(const char *key, const char *value)
{
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    v.data.string = (char *)value;
    return PMIx_Put(PMIX_GLOBAL, key, &v) == PMIX_SUCCESS ? 0 : -1;
}

/* After the fence every put is here (the fence collected them): look
 * locally only, so that a key nobody put answers at once. */
static int get(int rank, const char *key, char *value, size_t len)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, self.nspace, (pmix_rank_t)rank);
    pmix_info_t info;
    bool optional = true;
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&proc, key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS || val == NULL)
        return 0;
    int found = val->type == PMIX_STRING && val->data.string != NULL;
    if (found)
        snprintf(value, len, "%s", val->data.string);
    PMIX_VALUE_RELEASE(val);
    return found;
}

/* The node of every rank, by PMIx's node list, whose order is Slurm's
 * node ids (PMIX_NODEID itself is only given for local processes). */
static int rank_nodes(int nnodes, int size, int *node_of)
{
    for (int r = 0; r < size; r++)
        node_of[r] = -1;
    char *names = NULL, *save = NULL;
    if (PMIx_Resolve_nodes(self.nspace, &names) != PMIX_SUCCESS || names == NULL)
        return -1;
    int j = 0, rc = 0;
    for (char *name = strtok_r(names, ",", &save); name != NULL && rc == 0;
         name = strtok_r(NULL, ",", &save), j++) {
        pmix_proc_t *procs = NULL;
        size_t n = 0;
        if (j >= nnodes || PMIx_Resolve_peers(name, self.nspace, &procs, &n) != PMIX_SUCCESS) {
            rc = -1;
            break;
        }
        for (size_t k = 0; k < n; k++)
            if ((int)procs[k].rank < size)
                node_of[procs[k].rank] = j;
        PMIX_PROC_FREE(procs, n);
    }
    free(names);
    return rc;
}

static int fence(void)
{
    if (PMIx_Commit() != PMIX_SUCCESS)
        return -1;
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc == PMIX_SUCCESS ? 0 : -1;
}

static void finalize(void)
{
    PMIx_Finalize(NULL, 0);
}

static void abort_job(int status, const char *message)
{
    PMIx_Abort(status, message, NULL, 0);
}

const struct pmi_backend pmix_backend = {
    .name = "PMIx", .srun_option = "--mpi=pmix", .abort_has_status = true, .present = present, .init = init,
    .universe_size = universe_size, .put = put, .get = get, .rank_nodes = rank_nodes,
    .fence = fence, .finalize = finalize, .abort = abort_job,
};

#endif
