/* MPI_Init / MPI_Finalize and the environment queries of MPI-2.2 chapter 8. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../comm/comm.h"
#include "../pt2pt/pt2pt.h"
#include "core.h"

static int init_rank(const char *where, int required, int *provided)
{
    if (strand_self == NULL) {
        int rc = node_start_singleton();
        if (rc != MPI_SUCCESS)
            error_fatal(where, rc,
                        strand_node.forked_by_rank != -2 ? node_no_rank_reason()
                                                         : "cannot start a singleton MPI job");
    }
    struct rank *r = strand_self;
    if (r->mpi_state != RANK_MPI_NOT_STARTED)
        error_fatal(where, MPI_ERR_OTHER, r->mpi_state == RANK_MPI_INITIALIZED
                                              ? "MPI is already initialized"
                                              : "MPI cannot be initialized again after MPI_Finalize");
    if (required < MPI_THREAD_SINGLE)
        required = MPI_THREAD_SINGLE;
    if (required > MPI_THREAD_MULTIPLE)
        required = MPI_THREAD_MULTIPLE;
    __atomic_store_n(&r->thread_level, required, __ATOMIC_RELAXED);    /* (wakers read it: wait.c) */
    r->init_thread = pthread_self();
    r->mpi_state = RANK_MPI_INITIALIZED;
    if (provided != NULL)
        *provided = required;
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    return init_rank("MPI_Init", MPI_THREAD_SINGLE, NULL);
}
STRAND_MPI_ALIAS(MPI_Init);

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (provided == NULL)
        error_fatal("MPI_Init_thread", MPI_ERR_ARG, "provided must not be NULL");
    return init_rank("MPI_Init_thread", required, provided);
}
STRAND_MPI_ALIAS(MPI_Init_thread);

int PMPI_Finalize(void)
{
    int rc = error_check_initialized("MPI_Finalize");
    if (rc != MPI_SUCCESS)
        return rc;
    struct rank *r = strand_self;
    /* Attributes of MPI_COMM_SELF are deleted first, while MPI still works
     * (MPI-2.2 §8.7.1); a failing delete callback is reported. */
    rc = comm_finalize_rank(r);
    if (rc != MPI_SUCCESS)
        rc = error_report(MPI_COMM_WORLD, rc, "MPI_Finalize", "an attribute delete callback failed");
    /* Buffered sends still read the attached buffer, which lives in the
     * program's memory; they must be delivered before the rank ends. */
    pt2pt_finalize_rank(r);
    r->mpi_state = RANK_MPI_FINALIZED;
    return rc;
}
STRAND_MPI_ALIAS(MPI_Finalize);

int PMPI_Initialized(int *flag)
{
    if (flag == NULL)
        return MPI_ERR_ARG;
    *flag = strand_self != NULL && strand_self->mpi_state != RANK_MPI_NOT_STARTED;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Initialized);

int PMPI_Finalized(int *flag)
{
    if (flag == NULL)
        return MPI_ERR_ARG;
    *flag = strand_self != NULL && strand_self->mpi_state == RANK_MPI_FINALIZED;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Finalized);

int PMPI_Query_thread(int *provided)
{
    int rc = error_check_initialized("MPI_Query_thread");
    if (rc != MPI_SUCCESS)
        return rc;
    if (provided == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Query_thread", "provided must not be NULL");
    *provided = strand_self->thread_level;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Query_thread);

int PMPI_Is_thread_main(int *flag)
{
    int rc = error_check_initialized("MPI_Is_thread_main");
    if (rc != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Is_thread_main", "flag must not be NULL");
    *flag = pthread_equal(strand_self->init_thread, pthread_self());
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Is_thread_main);

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    char line[256];
    int rank = strand_self != NULL ? strand_self->world_rank : 0;
    snprintf(line, sizeof line, "Strand MPI: MPI_Abort called by rank %d with error code %d\n",
             rank, errorcode);
    /* An exit status is 8 bits; keep a non-zero code non-zero. */
    int status = errorcode & 0xff;
    if (status == 0 && errorcode != 0)
        status = 1;
    strand_job_abort(status, line);
}
STRAND_MPI_ALIAS(MPI_Abort);

int PMPI_Get_version(int *version, int *subversion)
{
    if (version == NULL || subversion == NULL)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Get_version);

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    int rc = error_check_initialized("MPI_Get_processor_name");
    if (rc != MPI_SUCCESS)
        return rc;
    if (name == NULL || resultlen == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_processor_name",
                            "name and resultlen must not be NULL");
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Get_processor_name);

double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - strand_node.wtime_base;
}
STRAND_MPI_ALIAS(MPI_Wtime);

double PMPI_Wtick(void)
{
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    return (double)res.tv_sec + 1e-9 * (double)res.tv_nsec;
}
STRAND_MPI_ALIAS(MPI_Wtick);

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    int rc = error_check_initialized("MPI_Alloc_mem");
    if (rc != MPI_SUCCESS)
        return rc;
    if (size < 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_SIZE, "MPI_Alloc_mem", "negative size %ld", (long)size);
    if (baseptr == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Alloc_mem", "baseptr must not be NULL");
    /* Cache-line aligned so windows and buffers do not share lines.  From
     * libc's allocator: libmpi brings no allocator of its own into the
     * process, whose malloc or operator new could bind a program's calls. */
    void *p = NULL;
    if (posix_memalign(&p, 64, size > 0 ? (size_t)size : 1) != 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "cannot allocate %ld bytes", (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Alloc_mem);

int PMPI_Free_mem(void *base)
{
    int rc = error_check_initialized("MPI_Free_mem");
    if (rc != MPI_SUCCESS)
        return rc;
    if (base != NULL)
        free(base);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Free_mem);

int PMPI_Pcontrol(const int level, ...)
{
    /* Profiling control: Strand has no built-in profiler to steer. */
    (void)level;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Pcontrol);
