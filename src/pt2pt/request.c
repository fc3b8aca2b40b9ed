/* Request objects: a per-rank pool (no allocation per message once warm),
 * and the per-rank point-to-point state's life cycle. */
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "lane.h"
#include "pt2pt.h"
#include "request.h"

enum { REQUEST_CHUNK = 64 };

struct strand_request request_send_complete = {
    .done = { .state = COMPLETION_DONE },
    .status = { .MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG, .MPI_ERROR = MPI_SUCCESS },
    .kind = REQUEST_SEND,
    .type = MPI_DATATYPE_NULL,
};

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

/* Moves the requests other threads gave back onto `free`. */
static void pool_take_returned(struct request_pool *pool)
{
    struct atomic_stack_node *node = atomic_stack_take_all(&pool->returned);
    while (node != NULL) {
        struct atomic_stack_node *next = node->next;
        struct strand_request *req =
            (struct strand_request *)((char *)node - offsetof(struct strand_request, link));
        req->next = pool->free;
        pool->free = req;
        node = next;
    }
}

void pt2pt_rank_destroy(struct rank *r)
{
    lanes_release(r);
    mailbox_destroy(&r->pt2pt.mailbox);
    pool_take_returned(&r->pt2pt.requests);
    request_list_free(r->pt2pt.requests.free);
    r->pt2pt.requests.free = NULL;
}

void pt2pt_finalize_rank(struct rank *r)
{
    pt2pt_before_sleep(r);
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

struct strand_request *request_take_slow(struct rank *self)
{
    struct request_pool *pool = &self->pt2pt.requests;
    bool shared = self->thread_level == MPI_THREAD_MULTIPLE;
    if (shared)
        lite_lock(&pool->lock);
    if (pool->free == NULL)
        pool_take_returned(pool);
    if (pool->free == NULL)
        pool_refill(pool);
    struct strand_request *req = pool->free;
    if (req != NULL)
        pool->free = req->next;
    if (shared)
        lite_unlock(&pool->lock);
    return req;
}

void request_put_shared(struct rank *self, struct strand_request *req)
{
    struct request_pool *pool = &self->pt2pt.requests;
    lite_lock(&pool->lock);
    req->next = pool->free;
    pool->free = req;
    lite_unlock(&pool->lock);
}

struct strand_request *request_alloc(struct rank *self, enum request_kind kind)
{
    return request_take(self, kind);
}

void request_free(struct rank *self, struct strand_request *req)
{
    request_release(self, req);
}

void request_give_back(struct rank *pool_owner, struct strand_request *req)
{
    atomic_stack_push(&pool_owner->pt2pt.requests.returned, &req->link);
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
