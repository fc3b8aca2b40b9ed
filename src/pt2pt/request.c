/* Request objects: a per-rank pool (no allocation per message once warm),
 * and the per-rank point-to-point state's life cycle. */
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "lane.h"
#include "pt2pt.h"

enum { REQUEST_CHUNK = 64 };

void pt2pt_rank_init(struct rank *r)
{
    memset(&r->pt2pt, 0, sizeof r->pt2pt);
}

static void request_list_free(struct strand_request *req)
{
    while (req != NULL) {
        struct strand_request *next = req->next;
        free(req);
        req = next;
    }
}

void pt2pt_rank_destroy(struct rank *r)
{
    lanes_release(r);
    mailbox_destroy(&r->pt2pt.mailbox);
    request_list_free(r->pt2pt.requests.free);
    r->pt2pt.requests.free = NULL;
}

void pt2pt_finalize_rank(struct rank *r)
{
    bsend_flush(r);
    request_reap_detached(r);
}

static void pool_refill(struct request_pool *pool)
{
    for (int i = 0; i < REQUEST_CHUNK; i++) {
        struct strand_request *req = aligned_alloc(_Alignof(struct strand_request), sizeof *req);
        if (req == NULL)
            break;
        req->next = pool->free;
        pool->free = req;
    }
}

struct strand_request *request_alloc(struct rank *self, enum request_kind kind)
{
    struct request_pool *pool = &self->pt2pt.requests;
    lite_lock(&pool->lock);
    if (pool->free == NULL)
        pool_refill(pool);
    struct strand_request *req = pool->free;
    if (req != NULL)
        pool->free = req->next;
    lite_unlock(&pool->lock);
    if (req == NULL)
        return NULL;
    memset(req, 0, sizeof *req);
    req->done.owner = self;
    req->kind = (uint8_t)kind;
    req->from_pool = true;
    return req;
}

void request_free(struct rank *self, struct strand_request *req)
{
    if (req->type != MPI_DATATYPE_NULL && req->kind != REQUEST_GENERALIZED)
        dt_release(req->type);
    if (req->comm != NULL)
        comm_release(req->comm);
    struct request_pool *pool = &self->pt2pt.requests;
    lite_lock(&pool->lock);
    req->next = pool->free;
    pool->free = req;
    lite_unlock(&pool->lock);
}

void request_set_empty_status(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    status->strand_cancelled = 0;
    status->strand_count = 0;
}

/* Requests the user freed while active are kept here until they finish. */
void request_detach(struct rank *self, struct strand_request *req)
{
    struct request_pool *pool = &self->pt2pt.requests;
    req->user_freed = true;
    lite_lock(&pool->lock);
    req->detached_next = pool->detached;
    pool->detached = req;
    lite_unlock(&pool->lock);
}

void request_reap_detached(struct rank *self)
{
    struct request_pool *pool = &self->pt2pt.requests;
    if (pool->detached == NULL)
        return;
    pt2pt_progress(self);
    lite_lock(&pool->lock);
    struct strand_request *list = pool->detached;
    pool->detached = NULL;
    lite_unlock(&pool->lock);
    while (list != NULL) {
        struct strand_request *next = list->detached_next;
        if (request_is_done(list))
            request_free(self, list);
        else
            request_detach(self, list);
        list = next;
    }
}

bool request_detached_on(struct rank *self, const struct strand_comm *comm)
{
    struct request_pool *pool = &self->pt2pt.requests;
    bool found = false;
    lite_lock(&pool->lock);
    for (struct strand_request *r = pool->detached; r != NULL && !found; r = r->detached_next)
        found = r->comm == comm;
    lite_unlock(&pool->lock);
    return found;
}
