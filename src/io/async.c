/* Nonblocking independent I/O in the background (MPI_File_iread,
 * iwrite, their _at and _shared forms).
 *
 * The call checks, computes the position (moving the individual or shared
 * pointer past the whole access, as MPI-2.2 §13.4 says), packs or converts
 * written data into the data stream, and queues a job; it returns an
 * incomplete generalized request of the ordinary request engine. One I/O
 * thread per node process (a runtime thread: strand_self NULL, it never
 * makes an MPI call and never adopts a rank), started at the first job,
 * runs the jobs in order: it moves the data (access_independent), unpacks
 * or converts what was read (access_finish) into the request's result, and
 * completes the request as MPI_Grequest_complete does. So MPI_Wait/Test and
 * their array forms complete it among message requests, MPI_Request_free
 * may drop it early, and its error is its status's MPI_ERROR (the query
 * function's return). A user conversion function of a registered
 * representation runs on the I/O thread for these reads.
 *
 * MPI_File_close first waits until the handle has no job left (`pending`,
 * decremented by the I/O thread, which then wakes the handle's rank). */
#include <stdlib.h>

#include "../../privatize/privatize.h"
#include "../pt2pt/pt2pt.h"
#include "io.h"

struct io_result {
    MPI_Status status;
    int error;
};

struct io_job {
    struct strand_file *f;
    struct rank *owner;             /* the handle's rank, woken when its jobs are done */
    struct io_access a;
    struct strand_request *req;
    struct io_result *result;
    struct io_job *next;
};

static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t jobs_ready = PTHREAD_COND_INITIALIZER;
static struct io_job *jobs_head, **jobs_tail = &jobs_head;
static bool thread_running;

static int result_query(void *extra_state, MPI_Status *status)
{
    const struct io_result *r = extra_state;
    *status = r->status;
    return r->error;
}

static int result_free(void *extra_state)
{
    free(extra_state);
    return MPI_SUCCESS;
}

static void job_run(struct io_job *job)
{
    size_t moved = 0;
    int rc = access_independent(job->f, &job->a, &moved);
    struct io_result *r = job->result;
    r->status.MPI_SOURCE = MPI_ANY_SOURCE;
    r->error = access_finish(job->f, &job->a, moved, rc, &r->status);
    r->status.MPI_ERROR = r->error;
    /* As MPI_Grequest_complete: the engine frees the request once the
     * program completed (or freed) it too. */
    struct strand_request *req = job->req;
    struct rank *pool = req->done.owner;
    completion_signal(&req->done);
    greq_release(pool, req);
    /* The handle may be closed as soon as this is seen: nothing of it is
     * touched afterwards. */
    atomic_fetch_sub_explicit(&job->f->pending, 1, memory_order_release);
    rank_wake(job->owner);
    free(job);
}

static void *io_thread_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&jobs_lock);
        while (jobs_head == NULL)
            pthread_cond_wait(&jobs_ready, &jobs_lock);
        struct io_job *job = jobs_head;
        jobs_head = job->next;
        if (jobs_head == NULL)
            jobs_tail = &jobs_head;
        pthread_mutex_unlock(&jobs_lock);
        job_run(job);
    }
    return NULL;
}

/* Under jobs_lock. The real pthread_create: the privatizer's would hand
 * the calling rank to the new thread. */
static int thread_start(void)
{
    if (thread_running)
        return MPI_SUCCESS;
    pthread_attr_t attr;
    pthread_t thread;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = strand_real_pthread_create(&thread, &attr, io_thread_main, NULL);
    pthread_attr_destroy(&attr);
    thread_running = rc == 0;
    return rc == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
}

int io_async_start(struct strand_file *f, struct io_access *a, MPI_Request *request)
{
    struct io_job *job = malloc(sizeof *job);
    struct io_result *result = calloc(1, sizeof *result);
    struct strand_request *req = job != NULL && result != NULL ? request_alloc(strand_self, REQUEST_GENERALIZED)
                                                               : NULL;
    if (req == NULL) {
        free(job);
        free(result);
        return MPI_ERR_NO_MEM;
    }
    req->query_fn = result_query;
    req->free_fn = result_free;
    req->extra_state = result;
    req->type = MPI_DATATYPE_NULL;
    *job = (struct io_job){ f, strand_self, *a, req, result, NULL };
    pthread_mutex_lock(&jobs_lock);
    int rc = thread_start();
    if (rc == MPI_SUCCESS) {
        atomic_fetch_add_explicit(&f->pending, 1, memory_order_relaxed);
        *jobs_tail = job;
        jobs_tail = &job->next;
        pthread_cond_signal(&jobs_ready);
    }
    pthread_mutex_unlock(&jobs_lock);
    if (rc != MPI_SUCCESS) {
        request_free(strand_self, req);
        free(job);
        free(result);
        return rc;
    }
    *request = req;
    return MPI_SUCCESS;
}

static bool no_job_pending(void *arg)
{
    struct strand_file *f = arg;
    return atomic_load_explicit(&f->pending, memory_order_acquire) == 0;
}

void io_async_drain(struct strand_file *f)
{
    if (!no_job_pending(f))
        rank_wait_until(strand_self, no_job_pending, f);
}
