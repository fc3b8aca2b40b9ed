/* The UCX network module (net.h): UCP active messages and, for small
 * eager frames, tagged messages carry the wire frames of wire.h, UCX's own
 * rendezvous moves large messages, one UCP worker per node process sleeps
 * on its event fd between events.
 * src/net/README.md and doc/architecture.md say why it is built this way.
 *
 * Frames. Every frame starts with FRAME_HEADER_BYTES: the sending node's
 * index and a sequence number (little-endian u32 each), then the 48-byte
 * header of wire.h, checked by wire_decode_header like a TCP frame. An
 * EAGER frame of up to TAGGED_PAYLOAD_MAX bytes whose payload follows its
 * header is one tagged message (FRAME_TAG) with both as its data: UCX 1.13
 * sends it with one send(), where an active message takes a sendmsg() with
 * an iovec, and its tag matching is the faster in UCX's own ping-pongs
 * (doc/performance.md §37). The receiver keeps TAGGED_SLOTS receives
 * posted for them. Every other frame is one active message (AM_ID) with
 * the FRAME_HEADER_BYTES as its header. Its data is the frame's payload
 * (EAGER, RMA_*), sent with UCP_AM_SEND_FLAG_EAGER, or, for RTS, the whole
 * message, sent with UCP_AM_SEND_FLAG_RNDV: the receiver gets the header
 * and a descriptor, and pulls the data (ucp_am_recv_data_nbx) when a
 * receive matches, so matching, MPI_ANY_SOURCE, probe and cancel stay in
 * Strand's mailbox. UCX completes the send once the receiver has the data.
 * CTS and DATA are not used: UCX's rendezvous replaces them, for messages
 * of any size (over 4 GiB too). Frames name their destination world as
 * over TCP (wire.h); dynamic-process frames (DPM) travel like one-sided
 * ones and go to net_dpm_arrived.
 *
 * Peers. The module reaches the node processes of its own job (their
 * worker addresses are in the job's store); the layer hands peers of other
 * jobs to the tcp module (net.c, module_of), never to this one.
 *
 * Endpoints. Node j creates its worker at start and puts the worker's
 * address in the job's key-value store (`ucx.<j>`, hex, in chunks); a node
 * fetches a peer's address when it first sends to it, creates an endpoint
 * and sends HELLO on it first. A node sends to a peer only on its own
 * endpoint. UCX keeps its tagged messages in order among themselves and
 * its active messages among themselves (what its transports do; UCP does
 * not promise it for active messages), not one kind against the other: a
 * tagged frame that finds no slot posted waits in UCX's unexpected queue
 * while later active messages are handed over. So the receiver runs each
 * peer's frames in sequence order (frame_in_turn), and a frame seen twice
 * ends the job.
 *
 * Threads. `ucx.lock` serializes the worker (UCS_THREAD_MODE_SERIALIZED)
 * and this module's state. The progress thread holds it whenever it is
 * awake and gives it up only to sleep (ucx_progress). Other threads never
 * wait for it: they take it only when it is free (lite_trylock), to hand
 * UCX a frame or a pull at once (a small contiguous eager frame straight
 * from the caller's buffer, if UCX's short protocol completes it:
 * UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL), and otherwise queue the work for the
 * lock's holder, awake, to do in its next round (hand_over). A rank thread spinning
 * in a wait (net.h, ops->poll) runs a round of the same work itself when
 * the lock is free (ucx_poll), while the progress thread parks (park.h:
 * on its own eventfd and a timer, not the worker's event fd, which every
 * arrival would make readable); the last poller to stop wakes it when
 * work is left that no poller will do. UCX's callbacks only record
 * events; whoever runs the round runs them after the worker's progress
 * call returned, still holding the lock: delivery into mailboxes,
 * one-sided serving, completions. No thread waits for the lock while it
 * holds another (rank threads never wait for it, the progress thread only
 * when it wakes up, holding nothing, and the main thread at the end), so
 * the upcalls may take other locks (a mailbox's, a window's) that a rank
 * thread holds while it hands work over, and may hand work over
 * themselves (an RMA reply: queued, done in the next round). */
#define _LGPL_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <urcu/list.h>
#include <urcu/wfcqueue.h>

#include "../datatype/datatype.h"
#include "net.h"
#include "park.h"
#include "ucx_api.h"
#include "wire.h"

enum {
    AM_ID = 1,                                  /* the one active-message handler */
    FRAME_HEADER_BYTES = 8 + WIRE_HEADER_BYTES, /* node, sequence number, wire header */
    RESOLVE_RETRY_MS = 20,
    DEFAULT_CONNECT_TIMEOUT_S = 60,
    BYE_ANSWER_TIMEOUT_S = 10,
    ADDRESS_CHUNK_BYTES = 200,                  /* address bytes per key: 400 hex digits */
    ADDRESS_MAX_BYTES = 64 << 10,
    PROGRESS_ROUNDS = 16,                       /* worker progress calls between deliveries */
    TAGGED_PAYLOAD_MAX = 1024,                  /* larger eager frames go as active messages */
    TAGGED_SLOTS = 8,                           /* receives kept posted for tagged frames */
    FRAME_TAG = 1,                              /* the one tag, matched exactly */
};

/* ---- state ---- */

enum peer_state {
    PEER_IDLE,          /* never sent to */
    PEER_RESOLVING,     /* frames queued; the progress thread fetches its address */
    PEER_OPEN,          /* `ep` exists: frames go straight to UCX */
};

struct rndv_send;

/* Work a thread hands to the worker: done at once when the lock is free
 * (and nothing queued before it could be overtaken), else queued for the
 * progress thread (hand_over). */
enum handoff_kind { HANDOFF_FRAME, HANDOFF_PULL, HANDOFF_CANCEL };

struct handoff {
    struct cds_wfcq_node qnode;
    enum handoff_kind kind;
    struct net_peer *ordered;       /* frames: keeps its order with the peer's other frames */
};

/* A frame on its way: its header must live until UCX completes the send
 * (UCP 1.13 may read it late), and so must an eager payload, copied here
 * since the caller's buffer is free once send_eager returns. */
struct outgoing {
    struct handoff handoff;
    struct cds_list_head waiting;   /* in the peer's `waiting` while PEER_RESOLVING */
    struct net_peer *peer;
    struct rndv_send *rndv;         /* RTS: the send it announces (its data); NULL: eager */
    unsigned flags;                 /* UCP_AM_SEND_FLAG_* besides EAGER/RNDV */
    bool hello;                     /* the HELLO that opens the peer's endpoint */
    size_t len;                     /* eager: payload bytes, at `payload` */
    const void *payload;            /* data[], or `owned` */
    void *owned;                    /* a payload lent by its owner: freed with the frame */
    unsigned char header[FRAME_HEADER_BYTES];
    unsigned char data[];           /* (right after the header: is_tagged sends both as one) */
};
_Static_assert(offsetof(struct outgoing, data) == offsetof(struct outgoing, header) + FRAME_HEADER_BYTES,
               "an outgoing frame's payload follows its header");

/* A rendezvous send from its RTS until UCX completed it (and, when it was
 * cancelled, until the receiver said whether it withdrew it). */
struct rndv_send {
    struct cds_list_head link;      /* ucx.sends, once handed to UCX */
    struct completion *done;
    struct net_peer *peer;
    uint64_t cookie;                /* names it in CANCEL/CANCELLED: never reused */
    int dest;                       /* receiving rank ... */
    uint64_t world;                 /* ... of this world */
    const void *data;               /* the user's buffer, or `packed` */
    size_t bytes;
    void *packed;                   /* a non-contiguous send's bytes */
    struct outgoing *rts;
    bool transferred;               /* UCX completed the send */
    ucs_status_t status;
    bool cancel_asked;
    enum { ANSWER_NONE, ANSWER_WITHDRAWN, ANSWER_MATCHED } answer;
};

struct net_pull {                   /* a remote rendezvous message at the receiver */
    struct net_pull_id id;          /* first (net.h): its sender and the sender's cookie */
    struct handoff handoff;
    struct cds_list_head link;      /* ucx.unpulled, while it holds `desc` */
    struct net_envelope env;
    void *desc;                     /* UCX's descriptor, until the pull starts */
    struct strand_request *req;
    size_t want;                    /* bytes the receive takes */
    char *temp;                     /* non-contiguous or truncated receive: the data lands here */
};

struct event;

struct ucx_peer {                   /* net_peer.transport; all under ucx.lock but `queued` */
    atomic_int queued;              /* its frames handed over, not yet submitted */
    enum peer_state state;
    ucp_ep_h ep;                    /* ours to it */
    struct cds_list_head waiting;   /* frames queued while PEER_RESOLVING, in order */
    uint32_t seq_out, seq_in;       /* the next frame's sequence number, to it and from it */
    struct event *early;            /* its frames that came before their turn, by sequence number */
    bool hello_seen;                /* its HELLO arrived: its frames may follow */
    bool said_bye;                  /* it ended cleanly: frames to it are dropped (but BYE's answer) */
    bool awaiting_answer;           /* our BYE to it is not answered yet */
    bool awaiting_bye;              /* stopping: it only sent to us, and its BYE has not come yet */
    bool hello_sent;                /* our HELLO completed locally */
    double retry_at, give_up_at;
};

/* What a UCX callback recorded for the progress thread to act on with the
 * lock released. */
enum event_kind { EV_FRAME, EV_PULL_DONE, EV_SEND_DONE, EV_FAILED, EV_BAD_FRAME };

struct tagged_slot;

struct event {
    struct event *next;
    enum event_kind kind;
    struct net_peer *peer;
    struct wire_frame frame;        /* EV_FRAME */
    uint32_t seq;                   /* EV_FRAME: its sequence number (frame_in_turn) */
    void *data;                     /* EV_FRAME: payload (UCX's until released) or RTS descriptor */
    bool owned;                     /* data was copied (free, not ucp_am_data_release) */
    struct tagged_slot *slot;       /* EV_FRAME sent by tag: data is in it; posted again at release */
    struct net_pull *pull;          /* EV_PULL_DONE */
    struct outgoing *sent;          /* EV_SEND_DONE */
    ucs_status_t status;
    const char *why;                /* EV_BAD_FRAME, EV_FAILED */
};

/* A receive kept posted for tagged frames (send_now): the whole frame,
 * header and payload, lands in `buf`. */
struct tagged_slot {
    bool posted;                    /* its receive is UCX's */
    void *request;                  /* the receive, once ucp_tag_recv_nbx returned it */
    unsigned char buf[FRAME_HEADER_BYTES + TAGGED_PAYLOAD_MAX];
};

static struct {
    const struct net_job *job;
    struct wire_limits limits;
    struct lite_lock lock;          /* the worker and everything below */
    ucp_context_h context;
    ucp_worker_h worker;
    int efd;
    ucp_err_handling_mode_t err_mode;
    struct ucx_peer *peers;
    struct event *events, **events_tail;
    struct cds_list_head sends;     /* rendezvous sends not over yet */
    struct cds_list_head unpulled;  /* remote rendezvous messages whose descriptor UCX keeps for us */
    long in_flight;                 /* eager sends UCX has not completed */
    int connecting;                 /* peers PEER_RESOLVING, or PEER_OPEN before HELLO completed */
    double connect_timeout;
    atomic_uint_fast64_t next_cookie;
    atomic_bool kicked;             /* work for the progress thread since it last looked */
    bool touched;                   /* a UCX operation started since the worker was last progressed */
    struct __cds_wfcq_head qhead;   /* handed-over work: any thread -> progress thread */
    struct cds_wfcq_tail qtail;
    atomic_bool asleep;             /* the progress thread may be in poll() or parked */
    bool resolve_started;           /* a peer became PEER_RESOLVING: the progress thread must fetch its address */
    int wake_fd;                    /* an eventfd: ends the progress thread's park */
    struct net_park park;           /* rank threads polling the worker (ucx_poll), the progress thread parked */
    atomic_bool stopping;
    bool bye_sent;
    int awaiting;                   /* peers with awaiting_answer or awaiting_bye */
    double bye_deadline;
    struct tagged_slot slots[TAGGED_SLOTS];
    bool slots_closed;              /* closing: slots are not posted again */
} ucx = { .lock = LITE_LOCK_INIT };

static struct net_peer unknown_peer = { .node = -1 };

static _Noreturn void out_of_memory(void)
{
    strand_job_abort(1, "Strand MPI: out of memory in the UCX network module\n");
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The UCX settings a failure message names. */
static void describe_settings(char *out, size_t len)
{
    const char *tls = getenv("UCX_TLS"), *devices = getenv("UCX_NET_DEVICES");
    snprintf(out, len, "UCX_TLS=%s, UCX_NET_DEVICES=%s", tls != NULL ? tls : "(unset: all)",
             devices != NULL ? devices : "(unset: all)");
}

/* ---- events (recorded under the lock, run without it) ---- */

static struct event *event_new(enum event_kind kind, struct net_peer *peer)
{
    struct event *ev = calloc(1, sizeof *ev);
    if (ev == NULL)
        out_of_memory();
    ev->kind = kind;
    ev->peer = peer;
    return ev;
}

static void event_append(struct event *ev)
{
    ev->next = NULL;
    *ucx.events_tail = ev;
    ucx.events_tail = &ev->next;
}

static struct event *event_push(enum event_kind kind, struct net_peer *peer)
{
    struct event *ev = event_new(kind, peer);
    event_append(ev);
    return ev;
}

static struct event *events_take(void)
{
    struct event *all = ucx.events;
    ucx.events = NULL;
    ucx.events_tail = &ucx.events;
    return all;
}

/* Any thread: wakes the progress thread if it sleeps or is about to: its
 * park's eventfd when parked, else the worker's signal. It announces a
 * park before its sleep (`parked`, then `asleep`), so whoever takes
 * `asleep` sees whether it parks. */
static void wake_progress(void)
{
    if (!atomic_exchange(&ucx.asleep, false))
        return;
    if (atomic_load(&ucx.park.parked)) {
        uint64_t one = 1;
        (void)!write(ucx.wake_fd, &one, sizeof one);
    } else {
        UCP(ucp_worker_signal)(ucx.worker);
    }
}

/* Any thread, after handing the progress thread work: wakes it, unless a
 * rank polls: that rank does the work in its next round, and the last
 * poller to stop looks at what is left (poller_left_work). */
static void wake_sleeper(void)
{
    if (atomic_load(&ucx.park.pollers) == 0)
        wake_progress();
}

/* Any thread, under the lock: releases it, and when `work` (the thread
 * queued a frame, pushed an event, or left UCX a request to progress)
 * makes sure the progress thread looks again. The worker's event fd alone
 * would not do: a request another thread started may need a progress call
 * before any descriptor becomes readable. The progress thread, about to
 * sleep, announces it (`asleep`) and then looks at `kicked` and the queue;
 * a thread with work sets one of those and then looks at `asleep`: one of
 * the two sees the other (both orders are sequentially consistent), so
 * either the progress thread does not sleep or it is signalled. */
static void unlock_and_kick(bool work)
{
    /* Only the progress thread fetches addresses (the store may be slow):
     * it is woken even while ranks poll. */
    bool resolve = ucx.resolve_started;
    ucx.resolve_started = false;
    if (work)
        atomic_store(&ucx.kicked, true);
    lite_unlock(&ucx.lock);
    if (resolve)
        wake_progress();
    else if (work)
        wake_sleeper();
}

static void bad_frame(struct net_peer *peer, const char *why)
{
    event_push(EV_BAD_FRAME, peer)->why = why;
}

/* ---- sending (under the lock) ---- */

static struct outgoing *outgoing_new(struct net_peer *peer, const struct wire_frame *f, size_t len)
{
    struct outgoing *o = malloc(sizeof *o + len);
    if (o == NULL)
        return NULL;
    *o = (struct outgoing){ .peer = peer, .len = len, .payload = o->data };
    put32(o->header, (uint32_t)ucx.job->node);
    put32(o->header + 4, 0);    /* the sequence number is set when it is sent */
    wire_encode_header(o->header + 8, f);
    return o;
}

/* UCX completed an eager frame (request NULL: at once, in the call). */
static void eager_sent(void *request, ucs_status_t status, void *user_data)
{
    struct outgoing *o = user_data;
    struct ucx_peer *ps = o->peer->transport;
    if (request != NULL)
        UCP(ucp_request_free)(request);
    ucx.in_flight--;
    if (status != UCS_OK) {
        struct event *ev = event_push(EV_FAILED, o->peer);
        ev->status = status;
        ev->why = o->hello ? "cannot connect to it" : "a send failed";
    } else if (o->hello) {
        ps->hello_sent = true;
        ucx.connecting--;
    }
    free(o->owned);
    free(o);
}

static void rndv_sent(void *request, ucs_status_t status, void *user_data)
{
    if (request != NULL)
        UCP(ucp_request_free)(request);
    struct outgoing *o = user_data;
    struct event *ev = event_push(EV_SEND_DONE, o->peer);
    ev->sent = o;
    ev->status = status;
}

/* A small EAGER frame whose payload follows its header: it goes as one
 * tagged message (src/net/README.md says why). */
static bool is_tagged(const struct outgoing *o)
{
    return o->rndv == NULL && o->payload == o->data && o->len <= TAGGED_PAYLOAD_MAX &&
           o->header[8 + 3] == WIRE_EAGER;
}

/* Hands one frame to UCX on the peer's endpoint (PEER_OPEN). Returns
 * true when it left a request or an event for the progress thread. */
static bool outgoing_send(struct ucx_peer *ps, struct outgoing *o)
{
    ucx.touched = true;
    put32(o->header + 4, ps->seq_out++);
    struct rndv_send *s = o->rndv;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
        .flags = o->flags | (s != NULL ? UCP_AM_SEND_FLAG_RNDV : UCP_AM_SEND_FLAG_EAGER),
        .cb.send = s != NULL ? rndv_sent : eager_sent,
        .user_data = o,
    };
    void *r;
    if (is_tagged(o)) {
        param.op_attr_mask &= ~(uint32_t)UCP_OP_ATTR_FIELD_FLAGS;
        r = UCP(ucp_tag_send_nbx)(ps->ep, o->header, FRAME_HEADER_BYTES + o->len, FRAME_TAG, &param);
    } else {
        r = UCP(ucp_am_send_nbx)(ps->ep, AM_ID, o->header, FRAME_HEADER_BYTES, s != NULL ? s->data : o->payload,
                                 s != NULL ? s->bytes : o->len, &param);
    }
    if (r != NULL && !UCS_PTR_IS_ERR(r)) {
        if (s == NULL)
            ucx.in_flight++;
        return true;
    }
    /* Done at once, or failed at once: the callback is not called. */
    ucs_status_t status = UCS_PTR_STATUS(r);
    if (s != NULL) {
        struct event *ev = event_push(EV_SEND_DONE, o->peer);
        ev->sent = o;
        ev->status = status;
        return true;
    }
    ucx.in_flight++;
    eager_sent(NULL, status, o);
    return status != UCS_OK;
}

static void start_resolving(struct net_peer *peer, struct ucx_peer *ps)
{
    ps->state = PEER_RESOLVING;
    ps->retry_at = 0;
    ps->give_up_at = net_now_seconds() + ucx.connect_timeout;
    ucx.connecting++;
    ucx.resolve_started = true;
}

/* A frame for `peer`: sent, queued until its endpoint exists, or dropped
 * (the peer ended). Returns true when the progress thread must act. */
static bool outgoing_submit(struct outgoing *o)
{
    struct ucx_peer *ps = o->peer->transport;
    if (ps->said_bye && o->header[8 + 3] != WIRE_BYE) {
        if (o->rndv != NULL) {
            /* Nothing can receive it any more (the program is erroneous):
             * completed rather than left hanging. */
            event_push(EV_SEND_DONE, o->peer)->sent = o;
            return true;
        }
        free(o->owned);
        free(o);
        return false;
    }
    switch (ps->state) {
    case PEER_OPEN:
        return outgoing_send(ps, o);
    case PEER_IDLE:
        start_resolving(o->peer, ps);
        /* fall through */
    case PEER_RESOLVING:
        cds_list_add_tail(&o->waiting, &ps->waiting);
        return true;
    }
    return false;
}

/* send_now's tagged frame: header and payload in one buffer, as UCX's
 * tag protocol sends a contiguous buffer in one piece. */
static bool send_tagged_now(struct ucx_peer *ps, const unsigned char *header, const void *data, size_t len)
{
    unsigned char frame[FRAME_HEADER_BYTES + TAGGED_PAYLOAD_MAX];
    memcpy(frame, header, FRAME_HEADER_BYTES);
    memcpy(frame + FRAME_HEADER_BYTES, data, len);
    ucp_request_param_t param = { .op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL };
    return UCP(ucp_tag_send_nbx)(ps->ep, frame, FRAME_HEADER_BYTES + len, FRAME_TAG, &param) == NULL;
}

/* The shortcut: a small contiguous eager frame to an open endpoint leaves
 * from the calling thread, if UCX can complete it at once (its short
 * protocol). Up to TAGGED_PAYLOAD_MAX bytes it goes as a tagged message
 * (why: src/net/README.md), larger ones as an active message straight
 * from the caller's buffer. */
static bool send_now(struct ucx_peer *ps, unsigned char *header, const void *data, size_t len)
{
    if (ps->state != PEER_OPEN)
        return false;
    put32(header + 4, ps->seq_out);
    if (len <= TAGGED_PAYLOAD_MAX) {
        if (!send_tagged_now(ps, header, data, len))
            return false;   /* not at once: the queued path sends it */
        ps->seq_out++;
        return true;
    }
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL | UCP_OP_ATTR_FIELD_FLAGS,
        .flags = UCP_AM_SEND_FLAG_EAGER,
    };
    if (UCP(ucp_am_send_nbx)(ps->ep, AM_ID, header, FRAME_HEADER_BYTES, data, len, &param) != NULL)
        return false;       /* not at once (or an error, which the queued path reports) */
    ps->seq_out++;
    return true;
}

struct cancel_request {
    struct handoff handoff;
    struct completion *done;
};

static void pull_received(void *request, ucs_status_t status, size_t length, void *user_data)
{
    (void)length;
    if (request != NULL)
        UCP(ucp_request_free)(request);
    struct net_pull *p = user_data;
    struct event *ev = event_push(EV_PULL_DONE, p->id.peer);
    ev->pull = p;
    ev->status = status;
}

/* Under the lock: UCX receives the pulled message (p->temp or the
 * receive buffer, chosen by ucx_pull); its end is an event. */
static bool pull_start(struct net_pull *p, void *dst)
{
    ucx.touched = true;
    cds_list_del(&p->link);
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.recv_am = pull_received,
        .user_data = p,
    };
    if (p->env.bytes == 0) {
        /* Nothing to move: releasing the descriptor answers the sender
         * (its send completes). ucp_am_recv_data_nbx would too, but, outside
         * the active-message callback, UCX 1.13 then never frees it. */
        UCP(ucp_am_data_release)(ucx.worker, p->desc);
        p->desc = NULL;
        pull_received(NULL, UCS_OK, 0, p);
        return true;
    }
    void *r = UCP(ucp_am_recv_data_nbx)(ucx.worker, p->desc, dst, p->env.bytes, &param);
    p->desc = NULL;     /* UCX's from now on */
    if (r == NULL || UCS_PTR_IS_ERR(r))
        pull_received(NULL, UCS_PTR_STATUS(r), 0, p);
    return true;
}

/* Under the lock: CANCEL for the rendezvous send owning `done`, unless it
 * is transferred already or unknown (then it completes as usual). */
static bool cancel_start(struct net_peer *peer, struct completion *done)
{
    struct rndv_send *s = NULL, *each;
    cds_list_for_each_entry(each, &ucx.sends, link)
        if (each->done == done)
            s = each;
    if (s == NULL || s->transferred || s->cancel_asked)
        return false;
    struct wire_frame f = { .type = WIRE_CANCEL, .dest = (uint32_t)s->dest, .a = s->cookie, .c = s->world };
    struct outgoing *o = outgoing_new(peer, &f, 0);
    if (o == NULL)
        out_of_memory();
    s->cancel_asked = true;
    return outgoing_submit(o);
}

/* Under the lock: does handed-over work. Returns true when the progress
 * thread must act. */
static bool handoff_run(struct handoff *h)
{
    switch (h->kind) {
    case HANDOFF_FRAME: {
        struct outgoing *o = caa_container_of(h, struct outgoing, handoff);
        if (o->rndv != NULL)
            cds_list_add(&o->rndv->link, &ucx.sends);   /* (an RTS is handed over once) */
        return outgoing_submit(o);
    }
    case HANDOFF_PULL: {
        struct net_pull *p = caa_container_of(h, struct net_pull, handoff);
        return pull_start(p, p->temp != NULL ? (void *)p->temp : (char *)p->req->buf + p->req->type->lb);
    }
    case HANDOFF_CANCEL: {
        struct cancel_request *c = caa_container_of(h, struct cancel_request, handoff);
        bool work = cancel_start(h->ordered, c->done);
        free(c);
        return work;
    }
    }
    return false;
}

/* Any thread: the work now if the lock is free, else (never waiting for
 * the lock: the progress thread looks at the queue before it sleeps, a
 * polling rank in its next round, and the last poller to stop wakes the
 * progress thread for what is left) through the queue. A
 * frame goes through the queue also while earlier frames to its peer are
 * there, so that it cannot overtake them. */
static void hand_over(struct handoff *h, enum handoff_kind kind, struct net_peer *ordered)
{
    h->kind = kind;
    h->ordered = ordered;
    struct ucx_peer *ps = ordered != NULL ? ordered->transport : NULL;
    if ((ps == NULL || atomic_load(&ps->queued) == 0) && lite_trylock(&ucx.lock)) {
        if (ps == NULL || atomic_load(&ps->queued) == 0) {
            unlock_and_kick(handoff_run(h));
            return;
        }
        lite_unlock(&ucx.lock);
    }
    if (ps != NULL)
        atomic_fetch_add(&ps->queued, 1);
    cds_wfcq_node_init(&h->qnode);
    cds_wfcq_enqueue(&ucx.qhead, &ucx.qtail, &h->qnode);   /* (a full barrier) */
    wake_sleeper();
}

/* Under the lock (the progress thread or a polling rank): everything
 * handed over, in order. */
static void handoffs_drain(void)
{
    struct cds_wfcq_node *n;
    while ((n = __cds_wfcq_dequeue_blocking(&ucx.qhead, &ucx.qtail)) != NULL) {
        struct handoff *h = caa_container_of(n, struct handoff, qnode);
        struct ucx_peer *ps = h->ordered != NULL ? h->ordered->transport : NULL;
        handoff_run(h);
        /* Only now may a direct sender pass it. */
        if (ps != NULL)
            atomic_fetch_sub(&ps->queued, 1);
    }
}

/* ---- entries called by rank threads ---- */

/* The shortcut of send_eager, when the lock is free and no frame of ours
 * to the peer waits in the queue. */
static bool send_eager_now(struct net_peer *peer, unsigned char *header, const void *data, size_t len)
{
    struct ucx_peer *ps = peer->transport;
    if (atomic_load(&ps->queued) != 0 || !lite_trylock(&ucx.lock))
        return false;
    bool sent = atomic_load(&ps->queued) == 0 && !ps->said_bye && send_now(ps, header, data, len);
    lite_unlock(&ucx.lock);
    return sent;
}

static int ucx_send_eager(struct net_peer *peer, const struct net_envelope *env, const void *buf, int count,
                          MPI_Datatype type)
{
    struct wire_frame f = net_envelope_frame(WIRE_EAGER, env);
    f.payload_len = (uint32_t)env->bytes;
    if (type->contiguous) {
        unsigned char header[FRAME_HEADER_BYTES];
        put32(header, (uint32_t)ucx.job->node);
        wire_encode_header(header + 8, &f);
        if (send_eager_now(peer, header, (const char *)buf + type->lb, env->bytes))
            return MPI_SUCCESS;
    }
    struct outgoing *o = outgoing_new(peer, &f, env->bytes);
    if (o == NULL)
        return MPI_ERR_NO_MEM;
    dt_pack(o->data, buf, (size_t)count, type);
    hand_over(&o->handoff, HANDOFF_FRAME, peer);
    return MPI_SUCCESS;
}

static int ucx_send_rendezvous(struct net_peer *peer, const struct net_envelope *env, const void *buf,
                               int count, MPI_Datatype type, struct completion *done)
{
    struct rndv_send *s = calloc(1, sizeof *s);
    if (s == NULL)
        return MPI_ERR_NO_MEM;
    s->done = done;
    s->peer = peer;
    s->dest = env->dest;
    s->world = env->world;
    s->bytes = env->bytes;
    s->cookie = atomic_fetch_add(&ucx.next_cookie, 1);
    if (type->contiguous) {
        s->data = (const char *)buf + type->lb;
    } else {
        /* Packed now: UCX reads contiguous bytes (the buffer is the
         * user's until the send completes anyway). */
        s->packed = malloc(s->bytes > 0 ? s->bytes : 1);
        if (s->packed == NULL) {
            free(s);
            return MPI_ERR_NO_MEM;
        }
        dt_pack(s->packed, buf, (size_t)count, type);
        s->data = s->packed;
    }
    struct wire_frame f = net_envelope_frame(WIRE_RTS, env);
    f.b = s->cookie;
    s->rts = outgoing_new(peer, &f, 0);
    if (s->rts == NULL) {
        free(s->packed);
        free(s);
        return MPI_ERR_NO_MEM;
    }
    s->rts->rndv = s;
    hand_over(&s->rts->handoff, HANDOFF_FRAME, peer);
    return MPI_SUCCESS;
}

static void ucx_pull(struct net_pull *p, struct strand_request *req)
{
    p->req = req;
    size_t capacity = (size_t)req->count * req->type->size;
    p->want = p->env.bytes < capacity ? p->env.bytes : capacity;
    if (!req->type->contiguous || capacity < p->env.bytes) {
        /* UCX receives whole messages only: a truncated or non-contiguous
         * receive takes the data through a temporary. */
        p->temp = malloc(p->env.bytes > 0 ? p->env.bytes : 1);
        if (p->temp == NULL)
            out_of_memory();
    }
    hand_over(&p->handoff, HANDOFF_PULL, NULL);
}

static int ucx_rma_send(struct net_peer *peer, const struct net_rma *r, void *payload, size_t payload_len)
{
    struct wire_frame f = net_rma_frame(r, payload_len);
    struct outgoing *o = outgoing_new(peer, &f, 0);
    if (o == NULL) {
        free(payload);
        return MPI_ERR_NO_MEM;
    }
    o->len = payload_len;
    o->payload = o->owned = payload;    /* sent from where the caller built it */
    hand_over(&o->handoff, HANDOFF_FRAME, peer);
    return MPI_SUCCESS;
}

static void ucx_cancel_send(struct net_peer *peer, struct completion *done)
{
    struct cancel_request *c = malloc(sizeof *c);
    if (c == NULL)
        out_of_memory();
    c->done = done;
    hand_over(&c->handoff, HANDOFF_CANCEL, peer);
}

/* ---- arrivals (UCX callbacks, progress thread, under the lock) ---- */

/* Checks the frame header; returns the reason it is unacceptable, or
 * NULL with *f filled. A HELLO starts the sender's sequence; the other
 * frames take their turn in it later (frame_in_turn). */
static const char *frame_check(struct net_peer *from, const unsigned char *header, size_t length, bool rndv,
                               const ucp_am_recv_param_t *param, struct wire_frame *f)
{
    struct ucx_peer *ps = from->transport;
    const char *why = NULL;
    if (wire_decode_header(header + 8, WIRE_HEADER_BYTES, &ucx.limits, f, &why) != WIRE_OK)
        return why;
    if (f->type == WIRE_HELLO) {
        if (ps->hello_seen || (int)f->b != from->node)
            return "unexpected HELLO";
        ps->hello_seen = true;
        ps->seq_in = get32(header + 4) + 1;
    } else if (f->type == WIRE_BYE && f->a == 1) {
        /* The answer to our BYE comes back on our own endpoint: no sequence. */
    } else if (!ps->hello_seen) {
        return "a frame before HELLO";
    }
    if (f->type == WIRE_CTS || f->type == WIRE_DATA)
        return "CTS or DATA frame (not used over UCX)";
    if (f->type == WIRE_BYE && f->a == 0 && !(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP))
        return "BYE without an endpoint to answer on";
    if (rndv != (f->type == WIRE_RTS))
        return rndv ? "rendezvous data for a frame that is not RTS" : "RTS without rendezvous data";
    if (rndv ? length != f->a : length != f->payload_len)
        return "data size differs from the frame's";
    return NULL;
}

/* A frame's event joins the events to run in its sender's order: at once
 * when it is the next in the sender's sequence (and then the frames that
 * came early and follow it), else it waits in the peer's `early` list.
 * Frames come early when a tagged frame before them waited in UCX's queue
 * of unexpected tagged messages for a slot to be posted again (every
 * tagged slot was taken): UCX keeps tagged messages in order among
 * themselves, active messages among themselves, not one kind against the
 * other. */
static void frame_in_turn(struct net_peer *from, uint32_t seq, struct event *ev)
{
    struct ucx_peer *ps = from->transport;
    ev->seq = seq;
    uint32_t ahead = seq - ps->seq_in;
    if (ahead == 0) {
        event_append(ev);
        ps->seq_in++;
        while (ps->early != NULL && ps->early->seq == ps->seq_in) {
            struct event *next = ps->early;
            ps->early = next->next;
            event_append(next);
            ps->seq_in++;
        }
    } else if (ahead < UINT32_MAX / 2) {
        struct event **at = &ps->early;
        while (*at != NULL && (uint32_t)((*at)->seq - ps->seq_in) < ahead)
            at = &(*at)->next;
        if (*at != NULL && (*at)->seq == seq)
            bad_frame(from, "a frame sent twice");
        ev->next = *at;
        *at = ev;
    } else {
        bad_frame(from, "a frame sent twice");
        event_append(ev);   /* (its data is released with it) */
    }
}

/* BYE a = 0: the peer's ranks all ended; it waits for our answer (BYE
 * a = 1) before it closes its endpoints, so that nothing it sent is still
 * unread here when its connections close (UCX's tcp transport shares one
 * socket for both directions, and a socket closed with unread data resets
 * the connection, which throws away what the other side has not read yet).
 * Everything it sent before has been read: UCX keeps the data of the
 * events not run yet. So the answer goes now, on the endpoint UCX gives
 * for replies (valid in this callback only), and the goodbye is recorded
 * now: the end of its connection may be reported in this same progress call. */
static ucs_status_t bye_arrived(struct net_peer *from, const struct wire_frame *f, uint32_t seq, ucp_ep_h reply_ep)
{
    struct ucx_peer *ps = from->transport;
    if (f->a == 0) {
        ps->said_bye = true;
        if (ps->awaiting_bye) {
            ps->awaiting_bye = false;
            ucx.awaiting--;
        }
        struct wire_frame answer = { .type = WIRE_BYE, .a = 1 };
        struct outgoing *o = outgoing_new(from, &answer, 0);
        if (o == NULL)
            out_of_memory();
        ucp_request_param_t param = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
            .flags = UCP_AM_SEND_FLAG_EAGER, .cb.send = eager_sent, .user_data = o,
        };
        ucx.in_flight++;
        void *r = UCP(ucp_am_send_nbx)(reply_ep, AM_ID, o->header, FRAME_HEADER_BYTES, NULL, 0, &param);
        if (r == NULL || UCS_PTR_IS_ERR(r))
            eager_sent(NULL, UCS_OK, o);    /* sent, or it is gone already: nothing to report */
        struct event *ev = event_new(EV_FRAME, from);
        ev->frame = *f;
        frame_in_turn(from, seq, ev);   /* whoever waits for it is told (net_peer_ended) */
    } else if (ps->awaiting_answer) {
        ps->awaiting_answer = false;
        ucx.awaiting--;
    } else {
        bad_frame(from, "an answer to a BYE that was not sent");
    }
    return UCS_OK;
}

static ucs_status_t frame_arrived(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                  const ucp_am_recv_param_t *param)
{
    (void)arg;
    bool rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    uint32_t node = header_length == FRAME_HEADER_BYTES ? get32(header) : UINT32_MAX;
    if (node >= (uint32_t)ucx.job->nnodes || (int)node == ucx.job->node) {
        bad_frame(&unknown_peer, "a frame header naming no other node process");
        return UCS_OK;
    }
    struct net_peer *from = &ucx.job->peers[node];
    struct wire_frame f;
    const char *why = frame_check(from, header, length, rndv, param, &f);
    if (why != NULL) {
        bad_frame(from, why);
        return UCS_OK;
    }
    uint32_t seq = get32((const unsigned char *)header + 4);
    if (f.type == WIRE_BYE)
        return bye_arrived(from, &f, seq, param->reply_ep);
    if (f.type == WIRE_HELLO)
        return UCS_OK;
    struct event *ev = event_new(EV_FRAME, from);
    ev->frame = f;
    ucs_status_t kept = UCS_OK;
    if (rndv || length == 0) {
        ev->data = rndv ? data : NULL;
        kept = rndv ? UCS_INPROGRESS : UCS_OK;
    } else if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) {
        ev->data = data;        /* UCX keeps it until ucp_am_data_release */
        kept = UCS_INPROGRESS;
    } else {
        /* (Not expected with UCP_AM_FLAG_PERSISTENT_DATA.) */
        ev->data = malloc(length);
        if (ev->data == NULL)
            out_of_memory();
        memcpy(ev->data, data, length);
        ev->owned = true;
    }
    frame_in_turn(from, seq, ev);
    return kept;
}

/* ---- tagged frames (send_now) at the receiver ---- */

static void slot_post(struct tagged_slot *slot);
static _Noreturn void lost(struct net_peer *peer, const char *what, ucs_status_t status);

/* A tagged frame of `length` bytes landed in `slot`: checked like an
 * active message's; its event keeps the slot until it is released. */
static void tagged_arrived(struct tagged_slot *slot, size_t length)
{
    const unsigned char *header = slot->buf;
    uint32_t node = length >= FRAME_HEADER_BYTES ? get32(header) : UINT32_MAX;
    if (node >= (uint32_t)ucx.job->nnodes || (int)node == ucx.job->node) {
        bad_frame(&unknown_peer, "a tagged frame naming no other node process");
        slot_post(slot);
        return;
    }
    struct net_peer *from = &ucx.job->peers[node];
    const ucp_am_recv_param_t no_attributes = { .recv_attr = 0 };
    struct wire_frame f;
    const char *why = frame_check(from, header, length - FRAME_HEADER_BYTES, false, &no_attributes, &f);
    if (why == NULL && f.type != WIRE_EAGER)
        why = "a tagged frame that is not EAGER";
    if (why != NULL) {
        bad_frame(from, why);
        slot_post(slot);
        return;
    }
    struct event *ev = event_new(EV_FRAME, from);
    ev->frame = f;
    ev->data = length > FRAME_HEADER_BYTES ? slot->buf + FRAME_HEADER_BYTES : NULL;
    ev->slot = slot;
    frame_in_turn(from, get32(header + 4), ev);
}

static void slot_received(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info, void *user_data)
{
    struct tagged_slot *slot = user_data;
    size_t length = info->length;   /* (info lives in the request: read it before the free) */
    UCP(ucp_request_free)(request);
    slot->posted = false;
    slot->request = NULL;
    if (status == UCS_ERR_CANCELED)
        return;
    if (status != UCS_OK) {
        bad_frame(&unknown_peer, status == UCS_ERR_MESSAGE_TRUNCATED ? "a tagged frame larger than a slot"
                                                                     : "a tagged receive failed");
        return;
    }
    tagged_arrived(slot, length);
}

/* Under the lock, outside UCX's callbacks: posts the slot's receive. A
 * tagged frame waiting in UCX's unexpected queue lands at once, through
 * the callback all the same: UCX 1.13 does not fill the receive
 * information it promises when a receive completes in the call. */
static void slot_post(struct tagged_slot *slot)
{
    if (ucx.slots_closed)
        return;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
        .cb.recv = slot_received,
        .user_data = slot,
    };
    slot->posted = true;
    void *r = UCP(ucp_tag_recv_nbx)(ucx.worker, slot->buf, sizeof slot->buf, FRAME_TAG, ~(ucp_tag_t)0, &param);
    if (UCS_PTR_IS_ERR(r))
        lost(&unknown_peer, "cannot post a receive for tagged frames", UCS_PTR_STATUS(r));
    if (slot->posted)   /* (else the callback ran in the call and freed the request) */
        slot->request = r;
}

static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    struct event *ev = event_push(EV_FAILED, arg);
    ev->status = status;
    ev->why = "its endpoint failed";
}

/* ---- events (progress thread, under the lock, outside UCX's callbacks) ---- */

static bool peer_ended(struct net_peer *peer)
{
    return ((struct ucx_peer *)peer->transport)->said_bye || atomic_load(&ucx.stopping);
}

/* Under the lock, stopping: a peer that ended or failed is waited for no
 * more. */
static void stop_awaiting(struct ucx_peer *ps)
{
    if (ps->awaiting_answer || ps->awaiting_bye)
        ucx.awaiting--;
    ps->awaiting_answer = ps->awaiting_bye = false;
}

/* Every peer frames come from or go to is of this job (peers of other
 * jobs go over tcp, net.c): losing one ends the job. */
static _Noreturn void job_peer_lost(struct net_peer *peer, const char *what)
{
    net_peer_lost_fatal(peer, what);
}

static _Noreturn void lost(struct net_peer *peer, const char *what, ucs_status_t status)
{
    char text[300], settings[160];
    describe_settings(settings, sizeof settings);
    snprintf(text, sizeof text, "UCX: %s: %s (%s)", what, UCP(ucs_status_string)(status), settings);
    job_peer_lost(peer, text);
}

static _Noreturn void malformed(struct net_peer *peer, const char *why)
{
    char what[200];
    snprintf(what, sizeof what, "malformed frame: %s", why);
    job_peer_lost(peer, what);
}

/* The sender cancels: withdraw its message if no receive matched it. A
 * withdrawn message's descriptor is released, which completes the send at
 * UCX's level; CANCELLED tells the sender which of the two it was. */
static void answer_cancel(struct net_peer *from, const struct wire_frame *f)
{
    struct net_pull *p = net_withdraw_remote(f->c, f->dest, from, f->a);
    struct wire_frame r = { .type = WIRE_CANCELLED, .a = f->a, .b = p != NULL };
    struct outgoing *o = outgoing_new(from, &r, 0);
    if (o == NULL)
        out_of_memory();
    if (p != NULL) {
        cds_list_del(&p->link);
        UCP(ucp_am_data_release)(ucx.worker, p->desc);     /* (sends UCX's ATS) */
    }
    ucx.touched = true;
    outgoing_submit(o);
    free(p);
}

/* A rendezvous send is over once UCX completed it and, if it was
 * cancelled, the receiver answered: true when it is over (and unlinked). */
static bool rndv_over(struct rndv_send *s)
{
    if (!s->transferred || (s->cancel_asked && s->answer == ANSWER_NONE))
        return false;
    cds_list_del(&s->link);
    return true;
}

static void rndv_finish(struct rndv_send *s)
{
    if (s->status != UCS_OK && !peer_ended(s->peer))
        lost(s->peer, "a rendezvous send failed", s->status);
    if (s->answer == ANSWER_WITHDRAWN)
        pt2pt_send_cancelled(s->done);
    else
        completion_signal(s->done);
    free(s->packed);
    free(s->rts);
    free(s);
}

static void cancel_answered(struct net_peer *from, const struct wire_frame *f)
{
    struct rndv_send *s = NULL, *each;
    cds_list_for_each_entry(each, &ucx.sends, link)
        if (each->cookie == f->a && each->peer == from && each->cancel_asked)
            s = each;
    if (s == NULL)
        malformed(from, "CANCELLED for an unknown message");
    s->answer = f->b ? ANSWER_WITHDRAWN : ANSWER_MATCHED;
    if (rndv_over(s))
        rndv_finish(s);
}

static void send_done(struct event *ev)
{
    struct rndv_send *s = ev->sent->rndv;
    s->transferred = true;
    s->status = ev->status;
    if (rndv_over(s))
        rndv_finish(s);
}

static void pull_done(struct net_pull *p, ucs_status_t status)
{
    if (status != UCS_OK) {
        if (!peer_ended(p->id.peer))
            lost(p->id.peer, "receiving a large message failed", status);
        free(p->temp);  /* its sender ended: nothing can complete it */
        free(p);
        return;
    }
    struct strand_request *req = p->req;
    size_t copied = p->want;
    if (p->temp != NULL) {
        if (req->type->contiguous)
            memcpy((char *)req->buf + req->type->lb, p->temp, p->want);
        else
            copied = dt_unpack(req->buf, (size_t)req->count, req->type, p->temp, p->want);
        free(p->temp);
    }
    mailbox_receive_complete(req, p->env.source, p->env.tag, p->env.bytes, copied);
    free(p);
}

static void frame_run(struct event *ev)
{
    const struct wire_frame *f = &ev->frame;
    if (wire_is_rma(f->type)) {
        const char *why = net_rma_arrived(ev->peer, f, ev->data);
        if (why != NULL)
            malformed(ev->peer, why);
        return;
    }
    switch (f->type) {
    case WIRE_EAGER: {
        struct net_envelope env = net_frame_envelope(f);
        net_arrived_eager(&env, ev->data);
        return;
    }
    case WIRE_RTS: {
        struct net_pull *p = calloc(1, sizeof *p);
        if (p == NULL)
            out_of_memory();
        p->id = (struct net_pull_id){ ev->peer, f->b };
        p->env = net_frame_envelope(f);
        p->desc = ev->data;
        ev->data = NULL;        /* the pull's now */
        cds_list_add(&p->link, &ucx.unpulled);
        net_arrived_rendezvous(&p->env, p);
        return;
    }
    case WIRE_CANCEL:
        answer_cancel(ev->peer, f);
        return;
    case WIRE_CANCELLED:
        cancel_answered(ev->peer, f);
        return;
    case WIRE_DPM:
        net_dpm_arrived(ev->peer, f, ev->data);
        return;
    case WIRE_BYE:
        net_peer_ended(ev->peer);   /* (its answer went in the callback) */
        return;
    default:
        return;
    }
}

static void event_run(struct event *ev)
{
    switch (ev->kind) {
    case EV_FRAME:
        frame_run(ev);
        return;
    case EV_PULL_DONE:
        pull_done(ev->pull, ev->status);
        return;
    case EV_SEND_DONE:
        send_done(ev);
        return;
    case EV_FAILED:
        if (!peer_ended(ev->peer))
            lost(ev->peer, ev->why, ev->status);
        stop_awaiting(ev->peer->transport);     /* stopping: nothing more comes from it */
        return;
    case EV_BAD_FRAME:
        malformed(ev->peer, ev->why);
    }
}

static void events_run(struct event *list)
{
    for (struct event *ev = list; ev != NULL; ev = ev->next)
        event_run(ev);
}

/* Under the lock: gives UCX back the payloads run events used (an RTS's
 * descriptor went to its pull), and frees the events. */
static void events_release(struct event *list)
{
    while (list != NULL) {
        struct event *next = list->next;
        if (list->slot != NULL) {
            slot_post(list->slot);
        } else if (list->kind == EV_FRAME && list->data != NULL) {
            if (list->owned)
                free(list->data);
            else
                UCP(ucp_am_data_release)(ucx.worker, list->data);
        }
        free(list);
        list = next;
    }
}

/* ---- addresses in the key-value store ---- */

/* `ucx.<j>` holds "LENGTH:HEX" with the first ADDRESS_CHUNK_BYTES bytes,
 * `ucx.<j>.<k>` the k-th further chunk: each fits a store line (and PMI-2's
 * value limit). */
static int publish_address(const unsigned char *addr, size_t len, char *why, size_t why_len)
{
    char key[48], value[2 * ADDRESS_CHUNK_BYTES + 32];
    for (size_t k = 0, off = 0; off < len || k == 0; k++, off += ADDRESS_CHUNK_BYTES) {
        size_t n = len - off < ADDRESS_CHUNK_BYTES ? len - off : ADDRESS_CHUNK_BYTES;
        int at = 0;
        if (k == 0) {
            snprintf(key, sizeof key, "ucx.%d", ucx.job->node);
            at = snprintf(value, sizeof value, "%zu:", len);
        } else {
            snprintf(key, sizeof key, "ucx.%d.%zu", ucx.job->node, k);
        }
        for (size_t i = 0; i < n; i++)
            at += snprintf(value + at, sizeof value - (size_t)at, "%02x", addr[off + i]);
        if (net_store_put(key, value, why, why_len) != 0)
            return -1;
    }
    return 0;
}

static bool unhex(const char *text, size_t n, unsigned char *out)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(text + 2 * i, "%2x", &v) != 1 || strchr("0123456789abcdef", text[2 * i]) == NULL ||
            strchr("0123456789abcdef", text[2 * i + 1]) == NULL)
            return false;
        out[i] = (unsigned char)v;
    }
    return true;
}

/* Progress thread, without the lock: 1 with the peer's address in *addr
 * (malloc'd), 0 when it is not in the store yet, -1 on a malformed entry
 * or an unreachable store (the reason in *why). */
static int fetch_address(const struct net_peer *peer, unsigned char **addr, size_t *len, const char **why)
{
    char key[48], value[2 * ADDRESS_CHUNK_BYTES + 32];
    snprintf(key, sizeof key, "ucx.%d", peer->node);
    int rc = net_store_get(peer->node, key, value, sizeof value);
    if (rc <= 0) {
        *why = "the key-value store cannot be reached";
        return rc;
    }
    char *hex;
    unsigned long total = strtoul(value, &hex, 10);
    *why = "its UCX address in the key-value store is malformed";
    if (*hex != ':' || total == 0 || total > ADDRESS_MAX_BYTES)
        return -1;
    hex++;
    unsigned char *out = malloc(total);
    if (out == NULL)
        out_of_memory();
    for (size_t k = 0, off = 0; off < total; k++, off += ADDRESS_CHUNK_BYTES) {
        size_t n = total - off < ADDRESS_CHUNK_BYTES ? total - off : ADDRESS_CHUNK_BYTES;
        if (k > 0) {
            snprintf(key, sizeof key, "ucx.%d.%zu", peer->node, k);
            if (net_store_get(peer->node, key, value, sizeof value) != 1) {
                free(out);
                return -1;
            }
            hex = value;
        }
        if (strlen(hex) != 2 * n || !unhex(hex, n, out + off)) {
            free(out);
            return -1;
        }
    }
    *addr = out;
    *len = total;
    return 1;
}

/* Under the lock: the peer's endpoint from its address, HELLO first, then
 * every queued frame. NULL, or why it failed. */
static const char *peer_open(struct net_peer *peer, const unsigned char *addr, ucs_status_t *status)
{
    struct ucx_peer *ps = peer->transport;
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = (const ucp_address_t *)addr,
        .err_mode = ucx.err_mode,
        .err_handler = { ep_failed, peer },
    };
    ucx.touched = true;
    *status = UCP(ucp_ep_create)(ucx.worker, &params, &ps->ep);
    if (*status != UCS_OK)
        return "cannot create an endpoint to it";
    const struct net_job *job = ucx.job;
    struct wire_frame hello = { .type = WIRE_HELLO, .a = job->job_id, .b = (uint64_t)job->node,
                                .c = (uint64_t)job->nnodes };
    struct outgoing *o = outgoing_new(peer, &hello, 0);
    if (o == NULL)
        out_of_memory();
    o->hello = true;
    ps->state = PEER_OPEN;
    outgoing_send(ps, o);
    struct outgoing *each, *next;
    cds_list_for_each_entry_safe(each, next, &ps->waiting, waiting) {
        cds_list_del(&each->waiting);
        outgoing_send(ps, each);    /* (may free it) */
    }
    return NULL;
}

/* Stopping, our endpoint to a peer cannot be made for the frames queued
 * to it: it ended meanwhile (it had our answer to its BYE, or the
 * launcher sees it die). Its frames are dropped, as for a peer that said
 * BYE, not the job. */
static void unreachable_while_stopping(struct net_peer *peer)
{
    struct ucx_peer *ps = peer->transport;
    struct outgoing *each, *next;
    cds_list_for_each_entry_safe(each, next, &ps->waiting, waiting) {
        cds_list_del(&each->waiting);
        if (each->rndv != NULL) {
            event_push(EV_SEND_DONE, peer)->sent = each;    /* completed, as for a peer that said BYE */
            continue;
        }
        free(each->owned);
        free(each);
    }
    ps->state = PEER_IDLE;
    ps->said_bye = true;
    ucx.connecting--;
    stop_awaiting(ps);
}

/* The progress thread: fetches the addresses of peers with queued frames,
 * opens their endpoints, and watches HELLOs that do not complete (a
 * transport that cannot reach the peer may never say so). Lowers
 * *wait_ms to the next retry. */
static void resolve_peers(int *wait_ms)
{
    double now = net_now_seconds();
    for (int j = 0; j < ucx.job->nnodes; j++) {
        struct net_peer *peer = &ucx.job->peers[j];
        struct ucx_peer *ps = peer->transport;
        enum peer_state state = ps->state;
        bool due = state == PEER_RESOLVING && now >= ps->retry_at;
        bool stuck = (state == PEER_RESOLVING || (state == PEER_OPEN && !ps->hello_sent)) && now > ps->give_up_at;
        double retry_at = ps->retry_at, give_up_at = ps->give_up_at;
        if (stuck) {
            char what[200];
            snprintf(what, sizeof what,
                     state == PEER_OPEN ? "no UCX connection to it after %.0f s"
                                        : "its UCX address is not in the key-value store after %.0f s "
                                          "(does it use the tcp module? see STRAND_NET)",
                     ucx.connect_timeout);
            lost(peer, what, UCS_ERR_TIMED_OUT);
        }
        if (state == PEER_OPEN && !ps->hello_sent) {
            int ms = (int)((give_up_at - now) * 1e3) + 1;
            if (*wait_ms < 0 || ms < *wait_ms)
                *wait_ms = ms;
        }
        if (state != PEER_RESOLVING)
            continue;
        if (!due) {
            int ms = (int)((retry_at - now) * 1e3) + 1;
            if (*wait_ms < 0 || ms < *wait_ms)
                *wait_ms = ms;
            continue;
        }
        unsigned char *addr = NULL;
        size_t len = 0;
        const char *why = NULL;
        int rc = fetch_address(peer, &addr, &len, &why);
        if (rc < 0)
            lost(peer, why, UCS_ERR_INVALID_ADDR);
        int exit_status;
        if (rc == 0 && net_peer_exited(peer, &exit_status)) {
            char what[100];
            snprintf(what, sizeof what, "its node process ended (exit status %d) before it published its address",
                     exit_status);
            lost(peer, what, UCS_ERR_UNREACHABLE);
        }
        ucs_status_t status = UCS_OK;
        if (rc == 0)
            ps->retry_at = now + RESOLVE_RETRY_MS * 1e-3;
        else
            why = peer_open(peer, addr, &status);
        free(addr);
        if (why != NULL && rc == 1 && atomic_load(&ucx.stopping))
            unreachable_while_stopping(peer);
        else if (why != NULL && rc == 1)
            lost(peer, why, status);
        if (rc == 0 && (*wait_ms < 0 || *wait_ms > RESOLVE_RETRY_MS))
            *wait_ms = RESOLVE_RETRY_MS;
    }
}

/* ---- the progress thread ---- */

/* Under the lock, once nothing is queued or in flight: BYE to every peer
 * we opened an endpoint to and that has not said BYE itself. A peer that
 * only sent to us (its HELLO came, we have no endpoint to it) opened its
 * own endpoint to us, so it BYEs us when its ranks end; we wait for that
 * instead of opening an endpoint now. (Opening one raced with its BYE:
 * if its BYE crossed ours, it could take our answer and exit before our
 * connection was made, and UCX logged the refused connection as an
 * error.) */
static void say_bye(void)
{
    struct wire_frame bye = { .type = WIRE_BYE };
    for (int j = 0; j < ucx.job->nnodes; j++) {
        struct net_peer *peer = &ucx.job->peers[j];
        struct ucx_peer *ps = peer->transport;
        if (j == ucx.job->node || ps->said_bye || (ps->state == PEER_IDLE && !ps->hello_seen))
            continue;
        if (ps->state == PEER_IDLE) {
            ps->awaiting_bye = true;
            ucx.awaiting++;
            continue;
        }
        struct outgoing *o = outgoing_new(peer, &bye, 0);
        if (o == NULL)
            out_of_memory();
        o->flags = UCP_AM_SEND_FLAG_REPLY;
        outgoing_submit(o);
        ps->awaiting_answer = true;
        ucx.awaiting++;
    }
    ucx.bye_sent = true;
    ucx.bye_deadline = net_now_seconds() + BYE_ANSWER_TIMEOUT_S;
}

/* Progress thread, stopping: true once every BYE we sent was answered (or
 * the answers took too long: a peer that died or reads nothing). */
static bool shutdown_done(void)
{
    if (!ucx.bye_sent && ucx.connecting == 0 && ucx.in_flight == 0 && cds_wfcq_empty(&ucx.qhead, &ucx.qtail))
        say_bye();
    bool done = ucx.bye_sent && ((ucx.awaiting == 0 && ucx.in_flight == 0 && ucx.connecting == 0) ||
                                 net_now_seconds() > ucx.bye_deadline);
    return done;
}

/* Under the lock: runs the events UCX's callbacks recorded, outside them
 * (their upcalls may start UCX operations: `touched`). True when any ran. */
static bool events_deliver(void)
{
    struct event *ran = events_take();
    events_run(ran);
    events_release(ran);
    return ran != NULL;
}

/* Under the lock, the progress thread or a polling rank: one round:
 * handed-over work, then the worker's progress (until it is idle, at most
 * PROGRESS_ROUNDS calls, or none when it was *drained and nothing started
 * since), delivering what each progress call read before the next call
 * (doc/performance.md §17). A polling rank (`poller`) stops at the first
 * call that delivered something and started nothing (no pull handed over,
 * no request left to UCX): it may be what the rank waits for, and a
 * further call only to find the worker idle cost every small message a
 * system call (§21); the worker is then not *drained. What a delivery
 * started (a rendezvous pull) is progressed in the same round, as
 * before. Returns true when events ran. */
static bool round_run(bool *drained, bool poller)
{
    atomic_store(&ucx.kicked, false);
    handoffs_drain();
    bool ran = false;
    if (!*drained || ucx.touched) {
        bool idle = false;
        ucx.touched = false;
        for (int i = 0; i < PROGRESS_ROUNDS && !idle; i++) {
            idle = UCP(ucp_worker_progress)(ucx.worker) == 0;
            ran |= events_deliver();
            if (poller && ran && !ucx.touched && cds_wfcq_empty(&ucx.qhead, &ucx.qtail))
                break;
        }
        *drained = idle;
    }
    return events_deliver() || ran;
}

/* Progress thread, the lock held, nothing left to do: chooses its sleep,
 * gives the lock up and sleeps. Parked (park.h) while ranks poll or did a
 * moment ago; otherwise on the worker's event fd, armed first. Returns
 * false, still holding the lock, when it must not sleep: the arm found
 * events (BUSY), or work came (the worker must be progressed first: an
 * operation started since the last progress call, such as a new
 * endpoint's HELLO, may need a progress call before UCX writes anything,
 * and an armed worker would sleep over it). */
static bool progress_sleep(int wait_ms)
{
    bool park = wait_ms != 0 && net_park_announce(&ucx.park);
    ucs_status_t status = UCS_ERR_BUSY;
    if (ucx.events == NULL && !ucx.touched && !atomic_load(&ucx.kicked))
        status = park ? UCS_OK : UCP(ucp_worker_arm)(ucx.worker);
    if (status == UCS_ERR_BUSY) {
        if (park)
            net_park_cancel(&ucx.park);
        return false;
    }
    if (status != UCS_OK)
        lost(&unknown_peer, "cannot arm the worker's event file descriptor", status);
    /* Give the lock up, then announce the sleep and look for work once
     * more (see unlock_and_kick): work handed over while we held the lock
     * (a rank woken by these events, replying) is found here, without a
     * signal. A signal that comes anyway makes the next arm fail with
     * BUSY: one round more. */
    lite_unlock(&ucx.lock);
    atomic_store(&ucx.asleep, true);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&ucx.kicked) || !cds_wfcq_empty(&ucx.qhead, &ucx.qtail)) {
        if (park)
            net_park_cancel(&ucx.park);
    } else if (park) {
        net_park_sleep(&ucx.park, wait_ms);
    } else {
        struct pollfd pfd = { .fd = ucx.efd, .events = POLLIN };
        poll(&pfd, 1, wait_ms);
    }
    atomic_store(&ucx.asleep, false);
    return true;
}

/* The progress thread holds the lock for as long as it is awake, and
 * gives it up only to sleep: rank threads never wait for it (they hand
 * their work over when it is taken, hand_over), so the thread may run the
 * upcalls with it held, and the lock is taken and handed back once per
 * sleep rather than once per event. Rounds until nothing is left, then
 * peers to resolve, then the sleep. */
static bool ucx_progress(int timeout_ms)
{
    bool drained = false;           /* the worker was progressed until idle, and nothing started since */
    lite_lock(&ucx.lock);
    for (;;) {
        if (round_run(&drained, false))
            continue;
        int wait_ms = timeout_ms;
        ucx.resolve_started = false;
        if (ucx.connecting > 0)
            resolve_peers(&wait_ms);
        if (atomic_load(&ucx.stopping)) {
            if (shutdown_done()) {
                lite_unlock(&ucx.lock);
                return false;
            }
            if (wait_ms < 0 || wait_ms > 10)
                wait_ms = 10;
        }
        if (progress_sleep(wait_ms))
            return true;
        drained = false;
    }
}

/* ---- rank threads that poll while they wait (net.h) ---- */

static void ucx_poll_begin(void)
{
    net_park_begin(&ucx.park);
}

/* One round, unless another thread is in the worker (UCP's serialized
 * thread mode: one thread at a time). What the arrivals handed over (an
 * RMA reply) goes out in the same round. What is left for the progress
 * thread (operations started since the worker's last progress call, or a
 * worker not progressed until idle) is noted in `kicked`. */
static void ucx_poll(void)
{
    if (!lite_trylock(&ucx.lock))
        return;
    bool drained = false;
    if (round_run(&drained, true))
        handoffs_drain();
    unlock_and_kick(ucx.touched || !drained || ucx.events != NULL);
}

static void ucx_poll_end(bool sleeping)
{
    net_park_end(&ucx.park, sleeping);
}

/* The park's kick (net_park_end): the progress thread looks again. */
static void progress_kick(void)
{
    atomic_store(&ucx.kicked, true);
    wake_progress();
}

/* The park's question when a poller stops: work no poller will do.
 * Handed-over work; or a worker a poller left unprogressed while the
 * progress thread sleeps on its event fd (a parked one looks anyway when
 * its grace is over). */
static bool poller_left_work(void)
{
    return !cds_wfcq_empty(&ucx.qhead, &ucx.qtail) || (atomic_load(&ucx.kicked) && !atomic_load(&ucx.park.parked));
}

/* ---- setup and teardown (main thread) ---- */

/* What UCX offers between node processes, read from its own description
 * of the context's resources ("resource N : md M dev D flags -- TL/DEVICE"):
 * a fabric transport (rc, dc, ud, ...), shared memory, its tcp transport
 * (self and device copies reach no other process). */
struct offered_transports {
    bool fabric, shared_memory, tcp;
};

static bool transport_named(const char *tl, size_t n, const char *const *names)
{
    for (int i = 0; names[i] != NULL; i++)
        if (strlen(names[i]) == n && strncmp(tl, names[i], n) == 0)
            return true;
    return false;
}

static struct offered_transports transports_offered(void)
{
    static const char *const shared_memory[] = { "sysv", "posix", "cma", "knem", "xpmem", "mm", NULL };
    static const char *const in_process[] = { "self", "cuda_copy", "cuda_ipc", "gdr_copy", "rocm_copy",
                                              "rocm_ipc", "rocm_gdr", NULL };
    struct offered_transports offered = { 0 };
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) {
        offered.fabric = true;      /* unknown: keep the reports */
        return offered;
    }
    UCP(ucp_context_print_info)(ucx.context, f);
    fclose(f);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *tl = strstr(line, "resource") != NULL ? strstr(line, "-- ") : NULL;
        if (tl == NULL)
            continue;
        tl += 3;
        size_t n = strcspn(tl, "/");
        if (transport_named(tl, n, shared_memory))
            offered.shared_memory = true;
        else if (n == 3 && strncmp(tl, "tcp", 3) == 0)
            offered.tcp = true;
        else if (!transport_named(tl, n, in_process))
            offered.fabric = true;
    }
    free(text);
    return offered;
}

/* Whether endpoints ask for peer-failure reports. Asking costs lanes in
 * UCX 1.13: its shared-memory transports give no reports (an endpoint
 * asking gets no shared-memory lane), and its tcp transport then gets no
 * zero-copy (rma_bw) lane, so large messages go as copied fragments
 * (about 0.6 of the bandwidth, doc/performance.md §17). They are asked
 * for with a fabric transport, and with tcp next to shared memory: there
 * the reports keep node processes of one host on tcp, whose wake-ups
 * cross network namespaces (containers) where shared memory's do not
 * (doc/limits.md). With tcp alone (UCX_TLS=tcp,self) or shared memory
 * alone they are not: a node process that dies is then the launcher's to
 * report (mpiexec ends the job). */
static ucp_err_handling_mode_t peer_failure_mode(void)
{
    struct offered_transports offered = transports_offered();
    bool reports = offered.fabric || (offered.tcp && offered.shared_memory);
    return reports ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
}

static int fail(char *why, size_t why_len, const char *what, ucs_status_t status)
{
    char settings[160];
    describe_settings(settings, sizeof settings);
    snprintf(why, why_len, "%s: %s (%s)", what, UCP(ucs_status_string)(status), settings);
    return -1;
}

/* UCX's adaptive progress leaves an interface no endpoint uses yet
 * inactive: its arrivals are watched by UCX's async thread, which then
 * activates it. With an armed worker that hand-over loses wake-ups (UCX
 * 1.13): a node process that two peers contact at once, over shared
 * memory, slept in poll() with their frames unread in its FIFO, about
 * once in 300 starts (doc/limits.md). Every interface stays active
 * instead, so the worker's event fd covers all of them from the start;
 * the cost is a poll of each interface per progress call, a handful.
 * A UCX_ADAPTIVE_PROGRESS the user set wins. */
static void keep_interfaces_active(ucp_config_t *config)
{
    if (getenv("UCX_ADAPTIVE_PROGRESS") == NULL)
        (void)UCP(ucp_config_modify)(config, "ADAPTIVE_PROGRESS", "n");
}

static int open_worker(char *why, size_t why_len)
{
    ucp_config_t *config;
    ucs_status_t status = UCP(ucp_config_read)(NULL, NULL, &config);
    if (status != UCS_OK)
        return fail(why, why_len, "UCX rejects its configuration (a UCX_* variable)", status);
    keep_interfaces_active(config);
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME,
        .features = UCP_FEATURE_AM | UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP,
        .name = "strand",
    };
    status = UCP(ucp_init_version)(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &ucx.context);
    UCP(ucp_config_release)(config);
    if (status != UCS_OK)
        return fail(why, why_len, "UCX finds no usable transport (ucp_init)", status);
    ucx.err_mode = peer_failure_mode();
    ucp_worker_params_t wp = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SERIALIZED,  /* ucx.lock serializes every call */
    };
    status = UCP(ucp_worker_create)(ucx.context, &wp, &ucx.worker);
    if (status != UCS_OK)
        return fail(why, why_len, "cannot create a UCP worker", status);
    status = UCP(ucp_worker_get_efd)(ucx.worker, &ucx.efd);
    if (status != UCS_OK)
        return fail(why, why_len, "the UCP worker has no event file descriptor", status);
    ucp_am_handler_param_t handler = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                      UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
        .id = AM_ID,
        .cb = frame_arrived,
        /* Whole messages whose data outlives the callback: delivery
         * happens after the worker's lock is released. */
        .flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA,
    };
    status = UCP(ucp_worker_set_am_recv_handler)(ucx.worker, &handler);
    if (status != UCS_OK)
        return fail(why, why_len, "cannot register the active-message handler", status);
    for (int i = 0; i < TAGGED_SLOTS; i++)
        slot_post(&ucx.slots[i]);
    ucp_address_t *addr;
    size_t len;
    status = UCP(ucp_worker_get_address)(ucx.worker, &addr, &len);
    if (status != UCS_OK)
        return fail(why, why_len, "cannot get the UCP worker's address", status);
    int rc = publish_address((const unsigned char *)addr, len, why, why_len);
    UCP(ucp_worker_release_address)(ucx.worker, addr);
    return rc;
}

static int ucx_init(const struct net_job *job, char *why, size_t why_len)
{
    ucx.job = job;
    ucx.limits = net_wire_limits(job, 0);
    ucx.events_tail = &ucx.events;
    __cds_wfcq_init(&ucx.qhead, &ucx.qtail);
    CDS_INIT_LIST_HEAD(&ucx.sends);
    CDS_INIT_LIST_HEAD(&ucx.unpulled);
    atomic_store(&ucx.next_cookie, 1);
    const char *timeout = getenv("STRAND_NET_CONNECT_TIMEOUT");
    ucx.connect_timeout = timeout != NULL ? atof(timeout) : DEFAULT_CONNECT_TIMEOUT_S;
    if (!net_store_available()) {
        snprintf(why, why_len, "the UCX module needs the job's key-value store (start the job with mpiexec or srun)");
        return -1;
    }
    ucx.peers = calloc((size_t)job->nnodes, sizeof *ucx.peers);
    if (ucx.peers == NULL) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    for (int j = 0; j < job->nnodes; j++) {
        CDS_INIT_LIST_HEAD(&ucx.peers[j].waiting);
        job->peers[j].transport = &ucx.peers[j];
    }
    if (ucx_api_load(why, why_len) != 0)
        return -1;
    /* UCX starts its own thread for asynchronous events; like the progress
     * thread it must not take the signals meant for the rank threads and
     * the main thread, so it is born with all of them blocked. */
    ucx.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ucx.wake_fd < 0 || net_park_init(&ucx.park, ucx.wake_fd, progress_kick, poller_left_work) != 0) {
        snprintf(why, why_len, "eventfd/timerfd: %s", strerror(errno));
        return -1;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = open_worker(why, why_len);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static void ucx_shutdown(void)
{
    atomic_store(&ucx.stopping, true);
    lite_lock(&ucx.lock);
    unlock_and_kick(true);
}

static void ucx_close(void)
{
    lite_lock(&ucx.lock);
    /* Forced, whatever the error mode: every peer we talked with answered
     * our BYE (or took too long), so nothing of ours is in flight, and a
     * flushing close without peer-failure handling waited for UCX's
     * endpoint timeout when the peer had closed first ("error during
     * flush: Endpoint timeout", UCX 1.13 over tcp). */
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
        .flags = UCP_EP_CLOSE_FLAG_FORCE,
    };
    for (int j = 0; j < ucx.job->nnodes; j++) {
        struct ucx_peer *ps = &ucx.peers[j];
        if (ps->ep == NULL)
            continue;
        void *r = UCP(ucp_ep_close_nbx)(ps->ep, &param);
        for (double until = net_now_seconds() + 1; r != NULL && !UCS_PTR_IS_ERR(r) &&
                                               UCP(ucp_request_check_status)(r) == UCS_INPROGRESS &&
                                               net_now_seconds() < until;)
            UCP(ucp_worker_progress)(ucx.worker);
        if (r != NULL && !UCS_PTR_IS_ERR(r))
            UCP(ucp_request_free)(r);
        ps->ep = NULL;
    }
    /* What UCX still keeps for us: frames that came too late to be run,
     * and messages nobody received (an erroneous program); and the posted
     * slots, withdrawn (their callbacks run in a progress call). */
    ucx.slots_closed = true;
    for (int i = 0; i < TAGGED_SLOTS; i++)
        if (ucx.slots[i].posted)
            UCP(ucp_request_cancel)(ucx.worker, ucx.slots[i].request);
    for (int i = 0; i < TAGGED_SLOTS; i++)
        for (double until = net_now_seconds() + 1; ucx.slots[i].posted && net_now_seconds() < until;)
            UCP(ucp_worker_progress)(ucx.worker);
    events_release(events_take());
    for (int j = 0; j < ucx.job->nnodes; j++)
        events_release(ucx.peers[j].early);
    struct net_pull *p, *next;
    cds_list_for_each_entry_safe(p, next, &ucx.unpulled, link) {
        cds_list_del(&p->link);
        UCP(ucp_am_data_release)(ucx.worker, p->desc);
    }
    UCP(ucp_worker_destroy)(ucx.worker);
    UCP(ucp_cleanup)(ucx.context);
    net_park_close(&ucx.park);
    close(ucx.wake_fd);
    lite_unlock(&ucx.lock);
}

const struct net_ops net_ucx_ops = {
    .name = "ucx",
    .init = ucx_init,
    .progress = ucx_progress,
    .send_eager = ucx_send_eager,
    .send_rendezvous = ucx_send_rendezvous,
    .pull = ucx_pull,
    .cancel_send = ucx_cancel_send,
    .rma_send = ucx_rma_send,
    .poll_begin = ucx_poll_begin,
    .poll = ucx_poll,
    .poll_end = ucx_poll_end,
    .shutdown = ucx_shutdown,
    .close = ucx_close,
};

bool net_ucx_fabric_present(void)
{
    /* Verbs devices (InfiniBand, RoCE, iWARP): what UCX drives with its
     * RDMA transports (rc, ud, dc). TCP alone is no fabric: the tcp module
     * is as fast over it and starts without loading UCX. */
    DIR *d = opendir("/sys/class/infiniband");
    if (d == NULL)
        return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d)) != NULL;)
        found = e->d_name[0] != '.';
    closedir(d);
    return found;
}
