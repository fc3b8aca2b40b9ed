/* The request pool's fast paths, inline for the point-to-point calls that
 * take and return a request per message (MPI_Irecv, MPI_Wait...); other
 * subsystems use request_alloc / request_free (pt2pt.h), which are these.
 *
 * The pool's `free` list belongs to the rank's MPI-calling thread, so
 * without MPI_THREAD_MULTIPLE a take or a put is a few plain loads and
 * stores (struct request_pool); the slow paths lock, refill, or collect
 * what other threads gave back. */
#ifndef STRAND_PT2PT_REQUEST_H
#define STRAND_PT2PT_REQUEST_H

#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "pt2pt.h"

/* request.c: the pool's slow paths (a request with no fields set, or NULL). */
struct strand_request *request_take_slow(struct rank *self);
void request_put_shared(struct rank *self, struct strand_request *req);

/* Field by field rather than a memset of all of it: this runs for every
 * nonblocking receive. The caller fills in what it describes. */
static inline void request_init(struct strand_request *req, struct rank *self, enum request_kind kind)
{
    atomic_store_explicit(&req->done.state, COMPLETION_PENDING, memory_order_relaxed);
    req->done.payload_inline = false;
    req->done.waited_at_once = false;
    req->done.owner = self;
    req->done.queued = NULL;
    request_set_empty_status(&req->status);
    req->type = MPI_DATATYPE_NULL;
    req->accepts_payload = false;
    req->kind = (uint8_t)kind;
    req->mode = SEND_STANDARD;
    req->persistent = req->active = req->user_freed = false;
    req->comm = NULL;
    req->detached_next = NULL;
    if (kind == REQUEST_GENERALIZED) {
        req->query_fn = NULL;
        req->free_fn = NULL;
        req->cancel_fn = NULL;
        req->extra_state = NULL;
        req->greq_freed = false;
        atomic_store_explicit(&req->greq_releases, 0, memory_order_relaxed);
    }
}

static inline struct strand_request *request_take(struct rank *self, enum request_kind kind)
{
    struct request_pool *pool = &self->pt2pt.requests;
    struct strand_request *req;
    /* The level first: at MPI_THREAD_MULTIPLE `free` is read under the
     * pool's lock only (ThreadSanitizer saw the unlocked read race with
     * another thread's take, though its value went unused). */
    if (STRAND_LIKELY(self->thread_level != MPI_THREAD_MULTIPLE && (req = pool->free) != NULL))
        pool->free = req->next;
    else if ((req = request_take_slow(self)) == NULL)
        return NULL;
    request_init(req, self, kind);
    return req;
}

/* Drops the request's references (datatype, communicator) and returns it
 * to the pool; by one of the rank's threads. */
static inline void request_release(struct rank *self, struct strand_request *req)
{
    if (req->kind != REQUEST_GENERALIZED)
        dt_release(req->type);
    if (req->comm != NULL)
        comm_release_by_owner(req->comm, self);
    if (STRAND_UNLIKELY(self->thread_level == MPI_THREAD_MULTIPLE)) {
        request_put_shared(self, req);
        return;
    }
    req->next = self->pt2pt.requests.free;
    self->pt2pt.requests.free = req;
}

#endif
