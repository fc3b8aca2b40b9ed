/* Completing requests: the Wait/Test families, cancel, free, status. */
#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "../net/net.h"
#include "pt2pt.h"
#include "request.h"

/* A null handle or an inactive persistent request completes at once with
 * an empty status. */
static inline bool request_is_inert(MPI_Request req)
{
    return req == MPI_REQUEST_NULL || (req->persistent && !req->active);
}

static int generalized_query(struct strand_request *req)
{
    int error = req->query_fn(req->extra_state, &req->status);
    if (error != MPI_SUCCESS)
        req->status.MPI_ERROR = error;
    return error;
}

static int generalized_free(struct strand_request *req)
{
    req->greq_freed = true;
    return req->free_fn != NULL ? req->free_fn(req->extra_state) : MPI_SUCCESS;
}

static void status_copy_out(MPI_Status *out, const MPI_Status *in)
{
    if (out == MPI_STATUS_IGNORE)
        return;
    /* MPI_ERROR is only written by calls that complete several requests. */
    int kept = out->MPI_ERROR;
    *out = *in;
    out->MPI_ERROR = kept;
}

/* request_finish for generalized and persistent requests. */
static int request_finish_special(MPI_Request *handle, MPI_Status *status)
{
    struct strand_request *req = *handle;
    int error = req->status.MPI_ERROR;
    if (req->kind == REQUEST_GENERALIZED) {
        error = generalized_query(req);
        int free_error = generalized_free(req);
        if (error == MPI_SUCCESS)
            error = free_error;
    }
    status_copy_out(status, &req->status);
    if (req->persistent) {
        req->active = false;
        return error;
    }
    *handle = MPI_REQUEST_NULL;
    greq_release(strand_self, req);
    return error;
}

/* Hands a completed request's status to the user and retires it: a
 * persistent request becomes inactive, any other is freed. Returns the
 * request's error code. Inline: Waitall runs it for every message. */
static inline int request_finish(MPI_Request *handle, MPI_Status *status)
{
    struct strand_request *req = *handle;
    if (STRAND_UNLIKELY(req->kind == REQUEST_GENERALIZED || req->persistent))
        return request_finish_special(handle, status);
    int error = req->status.MPI_ERROR;
    status_copy_out(status, &req->status);
    *handle = MPI_REQUEST_NULL;
    if (!request_is_shared(req))
        request_release(strand_self, req);
    return error;
}

static MPI_Comm request_error_comm(const struct strand_request *req)
{
    return req->comm != NULL ? req->comm : MPI_COMM_WORLD;
}

/* Finishes one request and reports its error, if any, through its comm. */
static int finish_reporting(MPI_Request *handle, MPI_Status *status, const char *where)
{
    MPI_Comm comm = request_error_comm(*handle);
    int error = request_finish(handle, status);
    if (error == MPI_SUCCESS)
        return MPI_SUCCESS;
    return error_report(comm, error, where, "%s",
                        error == MPI_ERR_TRUNCATE ? "message longer than the receive buffer"
                                                  : "the completed request reports an error");
}

static int check_request_array(const char *where, int count, MPI_Request *requests)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_COUNT, where, "negative count %d", count);
    if (count > 0 && requests == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_REQUEST, where, "array of requests is NULL");
    return MPI_SUCCESS;
}

/* ---- waiting conditions ---- */

struct request_set {
    int count;
    MPI_Request *requests;
    int settled;                     /* all_done: requests before this one are done or inert */
};

/* Each first moves lane messages into the mailbox (pt2pt_progress). */
static bool one_done(void *arg)
{
    pt2pt_progress(strand_self);
    return request_is_done(arg);
}

static bool all_done(void *arg)
{
    struct request_set *set = arg;
    pt2pt_progress(strand_self);
    /* A request once done stays done: each poll resumes where the last stopped. */
    for (; set->settled < set->count; set->settled++)
        if (!request_is_inert(set->requests[set->settled]) && !request_is_done(set->requests[set->settled]))
            return false;
    return true;
}

/* For rank_wait_until_picked: the last request of the set not yet done
 * (requests tend to complete in the order they were posted). */
static const void *last_pending(void *arg)
{
    struct request_set *set = arg;
    for (int i = set->count; i-- > set->settled;) {
        struct strand_request *req = set->requests[i];
        if (!request_is_inert(req) && !request_is_done(req))
            return &req->done;
    }
    return NULL;
}

static bool any_done(void *arg)
{
    struct request_set *set = arg;
    bool any_active = false;
    pt2pt_progress(strand_self);
    for (int i = 0; i < set->count; i++) {
        if (request_is_inert(set->requests[i]))
            continue;
        if (request_is_done(set->requests[i]))
            return true;
        any_active = true;
    }
    return !any_active;
}

/* ---- single request ---- */

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    int rc = check_request_array("MPI_Wait", 1, request);
    if (rc != MPI_SUCCESS)
        return rc;
    if (request_is_inert(*request)) {
        request_set_empty_status(status);
        return MPI_SUCCESS;
    }
    struct strand_request *req = *request;
    if (!request_is_done(req))
        rank_wait_until(strand_self, one_done, req);
    return finish_reporting(request, status, "MPI_Wait");
}
STRAND_MPI_ALIAS(MPI_Wait);

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    int rc = check_request_array("MPI_Test", 1, request);
    if (rc != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test", "flag must not be NULL");
    if (request_is_inert(*request)) {
        *flag = 1;
        request_set_empty_status(status);
        return MPI_SUCCESS;
    }
    pt2pt_progress(strand_self);
    *flag = request_is_done(*request);
    if (!*flag) {
        rank_poll_missed(strand_self);
        return MPI_SUCCESS;
    }
    return finish_reporting(request, status, "MPI_Test");
}
STRAND_MPI_ALIAS(MPI_Test);

/* ---- arrays ---- */

/* Finishes every done request of the set; with `statuses` per request. */
static int finish_all(int count, MPI_Request *requests, MPI_Status *statuses, const char *where)
{
    bool any_error = false;
    MPI_Comm error_comm = MPI_COMM_WORLD;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        if (request_is_inert(requests[i])) {
            request_set_empty_status(st);
            continue;
        }
        MPI_Comm comm = request_error_comm(requests[i]);
        int error = request_finish(&requests[i], st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = error;
        if (STRAND_UNLIKELY(error != MPI_SUCCESS)) {
            any_error = true;
            error_comm = comm;
        }
    }
    if (!any_error)
        return MPI_SUCCESS;
    return error_report(error_comm, MPI_ERR_IN_STATUS, where, "a completed request reports an error");
}

int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    int rc = check_request_array("MPI_Waitall", count, requests);
    if (rc != MPI_SUCCESS)
        return rc;
    struct request_set set = { count, requests, 0 };
    if (!all_done(&set))
        rank_wait_until_picked(strand_self, all_done, last_pending, &set);
    return finish_all(count, requests, statuses, "MPI_Waitall");
}
STRAND_MPI_ALIAS(MPI_Waitall);

int PMPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    int rc = check_request_array("MPI_Testall", count, requests);
    if (rc != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testall", "flag must not be NULL");
    struct request_set set = { count, requests, 0 };
    *flag = all_done(&set);
    if (!*flag) {
        rank_poll_missed(strand_self);
        return MPI_SUCCESS;
    }
    return finish_all(count, requests, statuses, "MPI_Testall");
}
STRAND_MPI_ALIAS(MPI_Testall);

/* Index of the first done request, MPI_UNDEFINED if all are inert, -1 if none done yet. */
static int first_done(int count, MPI_Request *requests)
{
    bool any_active = false;
    for (int i = 0; i < count; i++) {
        if (request_is_inert(requests[i]))
            continue;
        if (request_is_done(requests[i]))
            return i;
        any_active = true;
    }
    return any_active ? -1 : MPI_UNDEFINED;
}

int PMPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    int rc = check_request_array("MPI_Waitany", count, requests);
    if (rc != MPI_SUCCESS)
        return rc;
    if (index == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Waitany", "index must not be NULL");
    struct request_set set = { count, requests, 0 };
    int i = first_done(count, requests);
    if (i == -1) {
        rank_wait_until(strand_self, any_done, &set);
        i = first_done(count, requests);
    }
    *index = i;
    if (i == MPI_UNDEFINED) {
        request_set_empty_status(status);
        return MPI_SUCCESS;
    }
    return finish_reporting(&requests[i], status, "MPI_Waitany");
}
STRAND_MPI_ALIAS(MPI_Waitany);

int PMPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    int rc = check_request_array("MPI_Testany", count, requests);
    if (rc != MPI_SUCCESS)
        return rc;
    if (index == NULL || flag == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testany", "index and flag must not be NULL");
    pt2pt_progress(strand_self);
    int i = first_done(count, requests);
    *flag = i != -1;
    *index = i == -1 ? MPI_UNDEFINED : i;
    if (i == -1) {
        rank_poll_missed(strand_self);
        return MPI_SUCCESS;
    }
    if (i == MPI_UNDEFINED) {
        request_set_empty_status(status);
        return MPI_SUCCESS;
    }
    return finish_reporting(&requests[i], status, "MPI_Testany");
}
STRAND_MPI_ALIAS(MPI_Testany);

/* Finishes all done requests; returns how many, or MPI_UNDEFINED if all inert. */
static int finish_some(int count, MPI_Request *requests, int *indices, MPI_Status *statuses,
                       const char *where, int *rc)
{
    int done = 0;
    bool any_active = false, any_error = false;
    MPI_Comm error_comm = MPI_COMM_WORLD;
    for (int i = 0; i < count; i++) {
        if (request_is_inert(requests[i]))
            continue;
        any_active = true;
        if (!request_is_done(requests[i]))
            continue;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[done];
        error_comm = request_error_comm(requests[i]);
        int error = request_finish(&requests[i], st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = error;
        any_error |= error != MPI_SUCCESS;
        indices[done++] = i;
    }
    *rc = any_error ? error_report(error_comm, MPI_ERR_IN_STATUS, where, "a completed request reports an error")
                    : MPI_SUCCESS;
    return any_active ? done : MPI_UNDEFINED;
}

static int some_common(const char *where, bool wait, int incount, MPI_Request *requests, int *outcount,
                       int *indices, MPI_Status *statuses)
{
    int rc = check_request_array(where, incount, requests);
    if (rc != MPI_SUCCESS)
        return rc;
    if (outcount == NULL || (incount > 0 && indices == NULL))
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "outcount and indices must not be NULL");
    struct request_set set = { incount, requests, 0 };
    pt2pt_progress(strand_self);
    if (wait && !any_done(&set))
        rank_wait_until(strand_self, any_done, &set);
    *outcount = finish_some(incount, requests, indices, statuses, where, &rc);
    if (!wait && *outcount == 0)
        rank_poll_missed(strand_self);
    return rc;
}

int PMPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    return some_common("MPI_Waitsome", true, incount, requests, outcount, indices, statuses);
}
STRAND_MPI_ALIAS(MPI_Waitsome);

int PMPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    return some_common("MPI_Testsome", false, incount, requests, outcount, indices, statuses);
}
STRAND_MPI_ALIAS(MPI_Testsome);

/* ---- persistent start ---- */

static int start_one(MPI_Request req, const char *where)
{
    if (req == MPI_REQUEST_NULL || !req->persistent)
        return error_report(MPI_COMM_WORLD, MPI_ERR_REQUEST, where, "not a persistent request");
    if (req->active)
        return error_report(req->comm, MPI_ERR_REQUEST, where, "the request is already active");
    req->active = true;
    return req->kind == REQUEST_SEND ? send_start(req, where) : recv_start(req);
}

int PMPI_Start(MPI_Request *request)
{
    int rc = check_request_array("MPI_Start", 1, request);
    if (rc != MPI_SUCCESS)
        return rc;
    return start_one(*request, "MPI_Start");
}
STRAND_MPI_ALIAS(MPI_Start);

int PMPI_Startall(int count, MPI_Request requests[])
{
    int rc = check_request_array("MPI_Startall", count, requests);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < count; i++) {
        rc = start_one(requests[i], "MPI_Startall");
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Startall);

/* ---- free, cancel, status ---- */

int PMPI_Request_free(MPI_Request *request)
{
    int rc = check_request_array("MPI_Request_free", 1, request);
    if (rc != MPI_SUCCESS)
        return rc;
    struct strand_request *req = *request;
    if (req == MPI_REQUEST_NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free", "MPI_REQUEST_NULL");
    struct rank *self = strand_self;
    *request = MPI_REQUEST_NULL;
    if (req->kind == REQUEST_GENERALIZED) {
        /* free_fn runs only after MPI_Grequest_complete (MPI-2.2 §12.2). */
        if (request_is_done(req))
            generalized_free(req);
        greq_release(self, req);
        return MPI_SUCCESS;
    }
    if (request_is_shared(req))
        return MPI_SUCCESS;
    if (request_is_inert(req) || request_is_done(req))
        request_release(self, req);
    else
        request_detach(self, req);
    request_reap_detached(self);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Request_free);

static void mark_cancelled(struct strand_request *req)
{
    req->status.strand_cancelled = 1;
    req->status.strand_count = 0;
    req->status.MPI_ERROR = MPI_SUCCESS;
    completion_signal(&req->done);
}

void pt2pt_send_cancelled(struct completion *done)
{
    /* Only requests' completions are lent to remote rendezvous sends that
     * can be cancelled, and a request begins with its completion. */
    mark_cancelled((struct strand_request *)done);
}

int PMPI_Cancel(MPI_Request *request)
{
    int rc = check_request_array("MPI_Cancel", 1, request);
    if (rc != MPI_SUCCESS)
        return rc;
    struct strand_request *req = *request;
    if (req == MPI_REQUEST_NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel", "MPI_REQUEST_NULL");
    if (req->persistent && !req->active)
        return error_report(req->comm, MPI_ERR_REQUEST, "MPI_Cancel", "the persistent request is not active");
    if (request_is_shared(req))
        return MPI_SUCCESS;     /* the send is complete: nothing to cancel */
    switch (req->kind) {
    case REQUEST_GENERALIZED:
        return req->cancel_fn != NULL ? req->cancel_fn(req->extra_state, request_is_done(req)) : MPI_SUCCESS;
    case REQUEST_RECV:
        if (mailbox_cancel_receive(strand_self, req))
            mark_cancelled(req);
        return MPI_SUCCESS;
    default: {
        struct rank *dest = req->peer == MPI_PROC_NULL ? NULL : req->comm->core->members[req->peer];
        if (dest != NULL && dest->remote != NULL && !request_is_done(req)) {
            net_cancel_send(dest, &req->done);
            return MPI_SUCCESS;
        }
        if (mailbox_cancel_send(dest, &req->done))
            mark_cancelled(req);
        return MPI_SUCCESS;
    }
    }
}
STRAND_MPI_ALIAS(MPI_Cancel);

int PMPI_Test_cancelled(MPI_Status *status, int *flag)
{
    if (status == NULL || status == MPI_STATUS_IGNORE || flag == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test_cancelled", "status and flag must be real");
    *flag = status->strand_cancelled;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Test_cancelled);

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    int rc = error_check_initialized("MPI_Request_get_status");
    if (rc != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Request_get_status", "flag must not be NULL");
    if (request_is_inert(request)) {
        *flag = 1;
        request_set_empty_status(status);
        return MPI_SUCCESS;
    }
    pt2pt_progress(strand_self);
    *flag = request_is_done(request);
    if (!*flag) {
        rank_poll_missed(strand_self);
        return MPI_SUCCESS;
    }
    if (request->kind == REQUEST_GENERALIZED)
        generalized_query(request);
    status_copy_out(status, &request->status);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Request_get_status);
