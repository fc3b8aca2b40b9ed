/* Sends in all four modes, blocking, nonblocking and persistent: one engine
 * with the mode as a parameter. */
#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "lane.h"
#include "check.h"
#include "pt2pt.h"
#include "request.h"

static struct message message_of(const struct strand_comm *c, const void *buf, int count,
                                 MPI_Datatype type, int tag)
{
    return (struct message){
        .context_id = c->core->context_id,
        .source = c->rank,
        .tag = tag,
        .buf = buf,
        .count = count,
        .type = type,
        .bytes = (size_t)count * type->size,
    };
}

static bool completion_done_cond(void *arg)
{
    pt2pt_progress(strand_self);
    return completion_is_done(arg);
}

int send_start(struct strand_request *req, const char *where)
{
    struct rank *self = strand_self;
    atomic_store_explicit(&req->done.state, COMPLETION_PENDING, memory_order_relaxed);
    req->done.queued = NULL;
    request_set_empty_status(&req->status);
    if (req->peer == MPI_PROC_NULL) {
        completion_signal(&req->done);
        return MPI_SUCCESS;
    }
    struct message m = message_of(req->comm, req->buf, req->count, req->type, req->tag);
    struct rank *dest = req->comm->core->members[req->peer];
    if (req->mode == SEND_BUFFERED) {
        int rc = bsend_start(self, &m, dest, where, req->comm);
        completion_signal(&req->done);
        return rc;
    }
    enum delivery d = pt2pt_deliver(dest, &m, req->mode == SEND_SYNCHRONOUS, &req->done);
    /* Done at once: no thread can be waiting on a request not yet returned
     * (or, persistent, being started), so no wake. */
    if (d != QUEUED_RENDEZVOUS)
        atomic_store_explicit(&req->done.state, COMPLETION_DONE, memory_order_release);
    return MPI_SUCCESS;
}

int send_blocking(const char *where, enum send_mode mode, const void *buf, int count,
                         MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    struct strand_comm *c;
    int rc = check_send_args(where, comm, &c, buf, count, type, dest, tag);
    if (rc != MPI_SUCCESS || dest == MPI_PROC_NULL)
        return rc;
    struct rank *self = strand_self;
    struct message m = message_of(c, buf, count, type, tag);
    struct rank *target = c->core->members[dest];
    if (mode == SEND_BUFFERED)
        return bsend_start(self, &m, target, where, c);
    struct completion done = { .owner = self, .waited_at_once = true };
    if (pt2pt_deliver(target, &m, mode == SEND_SYNCHRONOUS, &done) == QUEUED_RENDEZVOUS)
        rank_wait_until(self, completion_done_cond, &done);
    return MPI_SUCCESS;
}

/* A nonblocking send that needs no request of its own: to MPI_PROC_NULL,
 * or a small message that went into a lane (request_send_complete). */
static inline bool send_completes_at_once(const struct strand_comm *c, const void *buf, int count,
                                          MPI_Datatype type, int dest, int tag)
{
    if (dest == MPI_PROC_NULL)
        return true;
    struct message m = message_of(c, buf, count, type, tag);
    return lane_send(strand_self, c->core->members[dest], &m, true);
}

/* Fills a send request for checked arguments; the caller starts it
 * (nonblocking) or not (persistent). */
static int send_request_make(const char *where, enum send_mode mode, const void *buf, int count,
                             MPI_Datatype type, int dest, int tag, struct strand_comm *c, MPI_Request *request,
                             bool persistent)
{
    struct strand_request *req = request_take(strand_self, REQUEST_SEND);
    if (req == NULL)
        return error_report(c, MPI_ERR_NO_MEM, where, "cannot allocate a request");
    req->mode = (uint8_t)mode;
    req->persistent = persistent;
    req->comm = c;
    comm_retain_by_owner(c, strand_self); /* the request may outlive MPI_Comm_free */
    req->buf = (void *)buf;
    req->count = count;
    req->type = type;
    req->peer = dest;
    req->tag = tag;
    dt_retain(type);
    *request = req;
    if (persistent) {
        atomic_store(&req->done.state, COMPLETION_DONE);
        return MPI_SUCCESS;
    }
    req->active = true;
    return send_start(req, where);
}

static int send_request_create(const char *where, enum send_mode mode, const void *buf, int count,
                               MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                               MPI_Request *request, bool persistent)
{
    struct strand_comm *c;
    int rc = check_send_args(where, comm, &c, buf, count, type, dest, tag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (request == NULL)
        return error_report(comm, MPI_ERR_ARG, where, "request must not be NULL");
    return send_request_make(where, mode, buf, count, type, dest, tag, c, request, persistent);
}

/* MPI_Isend and MPI_Irsend: a message that leaves at once needs no request. */
static inline int send_immediate(const char *where, enum send_mode mode, const void *buf, int count,
                                 MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    struct strand_comm *c;
    int rc = check_send_args(where, comm, &c, buf, count, type, dest, tag);
    if (STRAND_UNLIKELY(rc != MPI_SUCCESS))
        return rc;
    if (STRAND_UNLIKELY(request == NULL))
        return error_report(comm, MPI_ERR_ARG, where, "request must not be NULL");
    if (send_completes_at_once(c, buf, count, type, dest, tag)) {
        *request = &request_send_complete;
        return MPI_SUCCESS;
    }
    return send_request_make(where, mode, buf, count, type, dest, tag, c, request, false);
}

int PMPI_Isend(void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_immediate("MPI_Isend", SEND_STANDARD, buf, count, type, dest, tag, comm, request);
}
STRAND_MPI_ALIAS(MPI_Isend);

int PMPI_Irsend(void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_immediate("MPI_Irsend", SEND_READY, buf, count, type, dest, tag, comm, request);
}
STRAND_MPI_ALIAS(MPI_Irsend);

#define BLOCKING_SEND(fn, mode)                                                              \
    int P##fn(void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)    \
    {                                                                                         \
        return send_blocking(#fn, mode, buf, count, type, dest, tag, comm);                  \
    }                                                                                         \
    STRAND_MPI_ALIAS(fn);

#define REQUEST_SEND_CALL(fn, mode, persistent)                                                   \
    int P##fn(void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,        \
              MPI_Request *request)                                                               \
    {                                                                                             \
        return send_request_create(#fn, mode, buf, count, type, dest, tag, comm, request,       \
                                   persistent);                                                  \
    }                                                                                             \
    STRAND_MPI_ALIAS(fn);

BLOCKING_SEND(MPI_Send, SEND_STANDARD)
BLOCKING_SEND(MPI_Bsend, SEND_BUFFERED)
BLOCKING_SEND(MPI_Ssend, SEND_SYNCHRONOUS)
BLOCKING_SEND(MPI_Rsend, SEND_READY)
REQUEST_SEND_CALL(MPI_Ibsend, SEND_BUFFERED, false)
REQUEST_SEND_CALL(MPI_Issend, SEND_SYNCHRONOUS, false)
REQUEST_SEND_CALL(MPI_Send_init, SEND_STANDARD, true)
REQUEST_SEND_CALL(MPI_Bsend_init, SEND_BUFFERED, true)
REQUEST_SEND_CALL(MPI_Ssend_init, SEND_SYNCHRONOUS, true)
REQUEST_SEND_CALL(MPI_Rsend_init, SEND_READY, true)
