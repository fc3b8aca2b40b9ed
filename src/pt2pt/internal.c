/* Library-internal messages (pt2pt.h): the same engine as user sends, on a
 * context the caller chooses, without argument checks or user requests. */
#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "pt2pt.h"

void pt2pt_isend_internal(struct strand_request *req, struct strand_comm *c, uint32_t context,
                          const void *buf, int count, MPI_Datatype type, int dest, int tag)
{
    req->done = (struct completion){ .owner = strand_self, .waited_at_once = true };
    struct message m = {
        .context_id = context, .source = c->rank, .tag = tag, .buf = buf, .count = count, .type = type,
        .bytes = (size_t)count * type->size,
    };
    if (pt2pt_deliver(c->core->members[dest], &m, false, &req->done) != QUEUED_RENDEZVOUS)
        completion_signal(&req->done);
}

void pt2pt_irecv_internal(struct strand_request *req, struct strand_comm *c, uint32_t context, void *buf,
                          int count, MPI_Datatype type, int source, int tag)
{
    *req = (struct strand_request){
        .done = { .owner = strand_self },
        .kind = REQUEST_RECV,
        .comm = c,
        .context_id = context,
        .buf = buf,
        .count = count,
        .type = type,
        .peer = source,
        .tag = tag,
    };
    mailbox_post_receive(strand_self, req);
}

static bool request_done_cond(void *arg)
{
    pt2pt_progress(strand_self);
    return request_is_done(arg);
}

void pt2pt_wait_internal(struct strand_request *req)
{
    if (!request_is_done(req))
        rank_wait_until(strand_self, request_done_cond, req);
}
