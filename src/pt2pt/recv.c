/* Receives, probes, and the combined send-receive calls. */
#include <stdlib.h>

#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "check.h"
#include "pt2pt.h"
#include "request.h"

static void proc_null_status(MPI_Status *status)
{
    status->MPI_SOURCE = MPI_PROC_NULL;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    status->strand_cancelled = 0;
    status->strand_count = 0;
}

int recv_start(struct strand_request *req)
{
    atomic_store_explicit(&req->done.state, COMPLETION_PENDING, memory_order_relaxed);
    if (req->peer == MPI_PROC_NULL) {
        proc_null_status(&req->status);
        completion_signal(&req->done);
        return MPI_SUCCESS;
    }
    req->context_id = req->comm->core->context_id;
    mailbox_post_receive(strand_self, req);
    return MPI_SUCCESS;
}

static bool request_done_cond(void *arg)
{
    pt2pt_progress(strand_self);
    return request_is_done(arg);
}

static void status_copy_out(MPI_Status *out, const MPI_Status *in)
{
    if (out == MPI_STATUS_IGNORE)
        return;
    /* MPI_ERROR is only written by calls that complete several requests. */
    int error = out->MPI_ERROR;
    *out = *in;
    out->MPI_ERROR = error;
}

/* The blocking receive of MPI_Recv and MPI_Sendrecv: a request on the
 * stack that accepts a tiny message in its first cache line (pt2pt.h). */
static void blocking_recv_post(struct strand_request *req, struct strand_comm *c, void *buf,
                               int count, MPI_Datatype type, int source, int tag)
{
    /* Only what the engine reads of a receive (not a whole-struct
     * initializer: this is on the latency path of every MPI_Recv). */
    request_init(req, strand_self, REQUEST_RECV);
    req->comm = c;
    req->buf = buf;
    req->count = count;
    req->type = type;
    req->peer = source;
    req->tag = tag;
    req->accepts_payload = true;
    recv_start(req);
}

static int blocking_recv_finish(struct strand_request *req, MPI_Comm comm, MPI_Status *status,
                                const char *where)
{
    if (!request_is_done(req))
        rank_wait_until(strand_self, request_done_cond, req);
    if (req->done.payload_inline)
        dt_unpack(req->buf, (size_t)req->count, req->type, req->payload,
                  (size_t)req->status.strand_count);
    status_copy_out(status, &req->status);
    if (req->status.MPI_ERROR != MPI_SUCCESS)
        return error_report(comm, req->status.MPI_ERROR, where,
                            "message from rank %d (tag %d) is longer than the receive buffer of %lld bytes",
                            req->status.MPI_SOURCE, req->status.MPI_TAG,
                            (long long)req->count * (long long)req->type->size);
    return MPI_SUCCESS;
}

int PMPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    struct strand_comm *c;
    int rc = check_recv_args("MPI_Recv", comm, &c, buf, count, type, source, tag);
    if (rc != MPI_SUCCESS)
        return rc;
    struct strand_request req;
    blocking_recv_post(&req, c, buf, count, type, source, tag);
    return blocking_recv_finish(&req, comm, status, "MPI_Recv");
}
STRAND_MPI_ALIAS(MPI_Recv);

static int recv_request_create(const char *where, void *buf, int count, MPI_Datatype type, int source,
                               int tag, MPI_Comm comm, MPI_Request *request, bool persistent)
{
    struct strand_comm *c;
    int rc = check_recv_args(where, comm, &c, buf, count, type, source, tag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (request == NULL)
        return error_report(comm, MPI_ERR_ARG, where, "request must not be NULL");
    struct strand_request *req = request_take(strand_self, REQUEST_RECV);
    if (req == NULL)
        return error_report(comm, MPI_ERR_NO_MEM, where, "cannot allocate a request");
    req->persistent = persistent;
    req->comm = c;
    comm_retain_by_owner(c, strand_self); /* the request may outlive MPI_Comm_free */
    req->buf = buf;
    req->count = count;
    req->type = type;
    req->peer = source;
    req->tag = tag;
    dt_retain(type);
    *request = req;
    if (persistent) {
        atomic_store(&req->done.state, COMPLETION_DONE);
        return MPI_SUCCESS;
    }
    req->active = true;
    return recv_start(req);
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    return recv_request_create("MPI_Irecv", buf, count, type, source, tag, comm, request, false);
}
STRAND_MPI_ALIAS(MPI_Irecv);

int PMPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    return recv_request_create("MPI_Recv_init", buf, count, type, source, tag, comm, request, true);
}
STRAND_MPI_ALIAS(MPI_Recv_init);

static int probe_check(const char *where, int source, int tag, MPI_Comm comm, struct strand_comm **c)
{
    /* A probe has no buffer: check it as a zero-count receive of bytes. */
    return check_recv_args(where, comm, c, NULL, 0, MPI_BYTE, source, tag);
}

struct probe_wait {
    struct rank *self;
    uint32_t context_id;
    int source, tag;
    MPI_Status *status;
};

static bool probe_found_cond(void *arg)
{
    struct probe_wait *w = arg;
    return mailbox_probe(w->self, w->context_id, w->source, w->tag, w->status, 0);
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    struct strand_comm *c;
    int rc = probe_check("MPI_Probe", source, tag, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        if (status != MPI_STATUS_IGNORE)
            proc_null_status(status);
        return MPI_SUCCESS;
    }
    struct probe_wait w = { strand_self, c->core->context_id, source, tag, status };
    if (mailbox_probe(w.self, w.context_id, source, tag, status, +1)) {
        mailbox_probe(w.self, w.context_id, source, tag, MPI_STATUS_IGNORE, -1);
        return MPI_SUCCESS;
    }
    rank_wait_until(w.self, probe_found_cond, &w);
    mailbox_probe(w.self, w.context_id, source, tag, MPI_STATUS_IGNORE, -1);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Probe);

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    struct strand_comm *c;
    int rc = probe_check("MPI_Iprobe", source, tag, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (flag == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Iprobe", "flag must not be NULL");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            proc_null_status(status);
        return MPI_SUCCESS;
    }
    *flag = mailbox_probe(strand_self, c->core->context_id, source, tag, status, 0);
    if (!*flag)
        rank_poll_missed(strand_self);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Iprobe);

/* MPI_Sendrecv, its errors reported as `where` (also MPI_Sendrecv_replace). */
static int sendrecv(const char *where, const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                    MPI_Comm comm, MPI_Status *status)
{
    struct strand_comm *c;
    int rc = check_recv_args(where, comm, &c, recvbuf, recvcount, recvtype, source, recvtag);
    if (rc == MPI_SUCCESS)
        rc = check_send_args(where, comm, &c, sendbuf, sendcount, sendtype, dest, sendtag);
    if (rc != MPI_SUCCESS)
        return rc;
    struct strand_request req;
    blocking_recv_post(&req, c, recvbuf, recvcount, recvtype, source, recvtag);
    rc = send_blocking(where, SEND_STANDARD, sendbuf, sendcount, sendtype, dest, sendtag, comm);
    /* The request lives on this stack: leave only once nobody can match it. */
    if (rc != MPI_SUCCESS && mailbox_cancel_receive(strand_self, &req))
        return rc;
    int recv_rc = blocking_recv_finish(&req, comm, status, where);
    return rc != MPI_SUCCESS ? rc : recv_rc;
}

int PMPI_Sendrecv(void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    return sendrecv("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                    source, recvtag, comm, status);
}
STRAND_MPI_ALIAS(MPI_Sendrecv);

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                          int recvtag, MPI_Comm comm, MPI_Status *status)
{
    struct strand_comm *c;
    int rc = check_send_args("MPI_Sendrecv_replace", comm, &c, buf, count, type, dest, sendtag);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The outgoing data must be set aside before the incoming overwrites it. */
    size_t bytes = (size_t)count * type->size;
    unsigned char small[256];
    void *copy = bytes <= sizeof small ? small : malloc(bytes);
    if (copy == NULL)
        return error_report(comm, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace", "cannot allocate %zu bytes", bytes);
    dt_pack(copy, buf, (size_t)count, type);
    rc = sendrecv("MPI_Sendrecv_replace", copy, (int)bytes, MPI_BYTE, dest, sendtag, buf, count, type, source,
                  recvtag, comm, status);
    if (copy != small)
        free(copy);
    return rc;
}
STRAND_MPI_ALIAS(MPI_Sendrecv_replace);
