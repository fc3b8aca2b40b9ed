/* Point-to-point: requests, the matching engine, send modes.
 *
 * A message to a local rank is matched by the sender in the receiver's
 * mailbox. If a posted receive matches, the sender copies straight into the
 * receive buffer. Otherwise it leaves an envelope in the unexpected queue:
 * eager (data copied into the envelope) when small, rendezvous (pointing at
 * the sender's buffer; the receiver copies and completes the sender) when
 * large or synchronous. Either way a rendezvous message is copied once.
 * Between ranks on their own cores, small and mid-sized messages go
 * through lanes first (lane.h). */
#ifndef STRAND_PT2PT_H
#define STRAND_PT2PT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include "../core/core.h"

enum { COMPLETION_PENDING = 0, COMPLETION_DONE = 1 };

/* What a rendezvous envelope signals when its data has been taken. */
struct completion {
    atomic_uint state;
    bool payload_inline;             /* receives: the data waits in the request's payload */
    bool waited_at_once;             /* sends: its thread waits for it right away (a blocking
                                      * send, a library-internal one): no stream offer (lane.h) */
    struct rank *owner;              /* woken on completion */
    struct envelope *queued;         /* the envelope while it waits unmatched (for cancel) */
};

enum request_kind { REQUEST_SEND, REQUEST_RECV, REQUEST_GENERALIZED };
enum send_mode { SEND_STANDARD, SEND_BUFFERED, SEND_SYNCHRONOUS, SEND_READY };

enum { REQUEST_PAYLOAD_BYTES = 16 };

/* The first cache line holds what a sender writes when it completes a
 * posted receive: the completion word, the status and, for a tiny message
 * to a blocking MPI_Recv, the data itself, so that the waiting receiver
 * takes one line transfer to see all of it (and then copies the bytes into
 * its own buffer, which is already in its cache). */
struct strand_request {
    _Alignas(64) struct completion done; /* first: envelopes point here */
    MPI_Status status;
    unsigned char payload[REQUEST_PAYLOAD_BYTES];
    /* What a matching sender reads. */
    uint32_t context_id;             /* receives: the context to match */
    int peer;                        /* destination, or source to match */
    int tag;
    int count;
    void *buf;
    MPI_Datatype type;
    union {
        struct strand_request *next;     /* posted queue, pool */
        struct atomic_stack_node link;   /* request_pool.returned */
    };
    bool accepts_payload;            /* the receiver unpacks `payload` (MPI_Recv) */
    uint8_t kind;                    /* enum request_kind */
    uint8_t mode;                    /* enum send_mode */
    bool persistent;
    bool active;                     /* persistent: started and not yet completed */
    bool user_freed;                 /* MPI_Request_free while active */
    struct strand_comm *comm;
    struct strand_request *detached_next; /* freed by the user while active */
    /* generalized requests */
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
    bool greq_freed;                 /* free_fn has run */
    atomic_int greq_releases;        /* see greq_release() */
};
_Static_assert(offsetof(struct strand_request, context_id) == 64,
               "completion, status and payload fill exactly the first cache line");

/* One message as the matching engine sees it. */
struct message {
    uint32_t context_id;
    int source;                      /* sender's rank in the communicator */
    int tag;
    const void *buf;
    int count;
    MPI_Datatype type;
    size_t bytes;
};

enum delivery { DELIVERED, QUEUED_EAGER, QUEUED_RENDEZVOUS };

static inline bool completion_is_done(const struct completion *c)
{
    return atomic_load_explicit(&c->state, memory_order_acquire) == COMPLETION_DONE;
}

/* `owner` is c->owner, read by the caller before c may be reused (once
 * DONE is visible) and, on hot paths, early: see deliver_to_posted. */
static inline void completion_signal_owner(struct completion *c, struct rank *owner)
{
    atomic_store_explicit(&c->state, COMPLETION_DONE, memory_order_release);
    rank_wake_for(owner, c);
}

static inline void completion_signal(struct completion *c)
{
    completion_signal_owner(c, c->owner);
}

/* Per-rank state, from core. */
void pt2pt_rank_init(struct rank *r);
void pt2pt_rank_destroy(struct rank *r);
void pt2pt_finalize_rank(struct rank *r);

/* Matching engine (mailbox.c). `sync` forces rendezvous; `done` is signalled
 * when a queued rendezvous message has been copied. */
enum delivery mailbox_deliver(struct rank *dest, const struct message *m, bool sync,
                              struct completion *done);
/* The one branch between local and remote destinations (DESIGN §12a):
 * every send path calls this where it has loaded `dest`. For a local rank
 * it is mailbox_deliver; a remote rank (a proxy whose `remote` is set)
 * goes to the network layer with the same contract (src/net/net.h). */
struct net_pull;
enum delivery net_send_message(struct rank *dest, const struct message *m, bool sync,
                               struct completion *done);
static inline enum delivery pt2pt_deliver(struct rank *dest, const struct message *m, bool sync,
                                          struct completion *done)
{
    if (STRAND_UNLIKELY(dest->remote != NULL))
        return net_send_message(dest, m, sync, done);
    return mailbox_deliver(dest, m, sync, done);
}
/* For the network progress thread: a message from a remote sender. With
 * `pull` NULL, m->buf holds the data (copied before return; `m` is bytes,
 * MPI_BYTE). Otherwise it is a remote rendezvous: queued as an envelope
 * carrying `pull`, or, when a posted receive matches at once, that
 * request is returned and the caller must pull the data into it. */
struct strand_request *mailbox_deliver_remote(struct rank *dest, const struct message *m,
                                              struct net_pull *pull);
/* The receiver's progress thread takes back an unmatched remote message
 * for which `is_it` holds (the sender cancelled it); NULL if none. */
struct net_pull *mailbox_withdraw_remote(struct rank *dest, bool (*is_it)(const struct net_pull *, const void *),
                                         const void *arg);
/* A cancelled send to a remote rank was withdrawn by the receiver:
 * completes the request owning `done` as cancelled (completion.c). */
void pt2pt_send_cancelled(struct completion *done);
/* The network module finished pulling a remote message into `req`. */
void mailbox_receive_complete(struct strand_request *req, int source, int tag, size_t sent, size_t copied);
/* Matches `req` against unexpected messages or posts it; returns true when
 * it completed at once (false also when a remote message is being pulled). */
bool mailbox_post_receive(struct rank *self, struct strand_request *req);
/* `probers_change` (+1/-1/0) registers a blocked prober to be woken on arrival. */
bool mailbox_probe(struct rank *self, uint32_t context_id, int source, int tag, MPI_Status *status,
                   int probers_change);
/* Moves the small messages waiting in lanes into `self`'s mailbox (lane.h).
 * Every point-to-point wait, test and probe calls it before looking at its
 * requests: a receive posted for a lane message completes here. Any
 * thread of the rank. */
void pt2pt_progress(struct rank *self);
/* Before `self`'s thread sleeps (rank_wait_until) or finalizes: its
 * offers of mid-sized messages still open are withdrawn (lane.h), so that
 * no send of eager size waits for a receiver. The rank's thread. */
void pt2pt_before_sleep(struct rank *self);
bool mailbox_cancel_receive(struct rank *self, struct strand_request *req);
/* `dest`: the rank the send went to (NULL for MPI_PROC_NULL). */
bool mailbox_cancel_send(struct rank *dest, struct completion *done);
void mailbox_destroy(struct mailbox *mb);

/* Requests (request.c). */

/* What MPI_Isend returns for a send that is complete when the call
 * returns (a message into a lane, or to MPI_PROC_NULL): one request shared
 * by every rank, complete, with an empty status, never written and never
 * freed, so that such a send allocates nothing and touches no line
 * another rank writes. Wait, Test, Request_free and Cancel recognise it
 * (request_is_shared) and only set the handle to MPI_REQUEST_NULL. */
extern struct strand_request request_send_complete;
static inline bool request_is_shared(const struct strand_request *req)
{
    return req == &request_send_complete;
}
struct strand_request *request_alloc(struct rank *self, enum request_kind kind);
/* By one of the rank's threads (the pool is theirs, see request_pool). */
void request_free(struct rank *self, struct strand_request *req);
/* By any other thread: a request that holds no communicator or datatype
 * reference (a generalized one) goes back to `pool_owner`'s pool. */
void request_give_back(struct rank *pool_owner, struct strand_request *req);
static inline void request_set_empty_status(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    status->strand_cancelled = 0;
    status->strand_count = 0;
}
void request_detach(struct rank *self, struct strand_request *req);
void request_reap_detached(struct rank *self);
/* True while a request the rank freed before it completed is still under
 * way on `comm` (MPI_Comm_disconnect waits for those). */
bool request_detached_on(struct rank *self, const struct strand_comm *comm);
static inline bool request_is_done(const struct strand_request *req)
{
    return completion_is_done(&req->done);
}

/* A generalized request's memory is used by two parties: whoever calls
 * MPI_Grequest_complete, and the user's Wait/Test/Request_free. The second
 * to let go returns it to the pool (and runs free_fn if nobody has). */
void greq_release(struct rank *pool_owner, struct strand_request *req);

/* A blocking send in `mode`, its arguments checked and errors reported
 * as `where` (send.c): MPI_Send and friends, and MPI_Sendrecv's send. */
int send_blocking(const char *where, enum send_mode mode, const void *buf, int count, MPI_Datatype type,
                  int dest, int tag, MPI_Comm comm);

/* Starts a send or receive described by `req` (send.c / recv.c). */
int send_start(struct strand_request *req, const char *where);
int recv_start(struct strand_request *req);

/* Messages internal to the library (internal.c), e.g. collectives over
 * point-to-point on a communicator's collective context (context_id + 1),
 * which user receives never match. `req` is the caller's storage, valid
 * until pt2pt_wait_internal returned; the send's buffer may be reused then. */
void pt2pt_isend_internal(struct strand_request *req, struct strand_comm *c, uint32_t context,
                          const void *buf, int count, MPI_Datatype type, int dest, int tag);
void pt2pt_irecv_internal(struct strand_request *req, struct strand_comm *c, uint32_t context, void *buf,
                          int count, MPI_Datatype type, int source, int tag);
void pt2pt_wait_internal(struct strand_request *req);

/* Buffered sends (bsend.c). */
int bsend_start(struct rank *self, const struct message *m, struct rank *dest, const char *where,
                MPI_Comm comm);
void bsend_flush(struct rank *self);

/* Argument checks shared by all the calls: check.h. */

#endif
