/* The TCP network module (net.h): one progress thread drives non-blocking
 * sockets with epoll. See src/net/README.md for the connection life cycle.
 *
 * Threads: rank threads build operations and enqueue them on a wait-free
 * queue (liburcu wfcqueue), waking the progress thread through an eventfd
 * when it may be asleep. One shortcut: a small eager message to a peer
 * whose connection is open and idle (nothing queued on it, nothing of
 * ours still in the submission queue) is written by the rank thread
 * itself with a non-blocking sendmsg under the connection's lock, which
 * saves the progress thread's wake-up on the sending side; whatever the
 * kernel does not take at once is queued for the progress thread. The
 * connection's write queue and socket writes are under that lock; the rest
 * (reading, cookie tables, connection set-up) belongs to the progress
 * thread alone. */
#define _LGPL_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <urcu/wfcqueue.h>

#include "../datatype/datatype.h"
#include "net.h"
#include "wire.h"

enum {
    READ_BUFFER_BYTES = 64 << 10,
    CONNECT_RETRY_MS = 20,
    DEFAULT_CONNECT_TIMEOUT_S = 60,
    MAX_EVENTS = 64,
};

/* ---- operations handed from rank threads to the progress thread ---- */

enum op_kind {
    OP_FRAME,           /* header (+ data) ready to write: EAGER */
    OP_RTS,             /* a rendezvous send: register its cookie, then write the RTS */
    OP_CTS,             /* a pull: register its cookie, then write the CTS */
    OP_DATA,            /* the answer to a CTS: written, then the send completes */
    OP_CANCEL,          /* MPI_Cancel of a rendezvous send: find its cookie, write CANCEL */
    OP_KICK,            /* a rank thread queued a partly written frame: flush the connection */
};

struct rndv_send {      /* a rendezvous send waiting for its CTS */
    const void *buf;
    int count;
    MPI_Datatype type;
    size_t bytes;
    struct completion *done;
    struct net_peer *peer;
    int dest;                       /* receiving world rank */
};

struct net_pull {       /* a remote rendezvous message at the receiver */
    struct net_pull_id id;          /* first (net.h): its sender and the sender's cookie */
    struct net_envelope env;
    struct strand_request *req;     /* set by pull */
    size_t want;                    /* bytes asked for */
    char *temp;                     /* non-contiguous receive: the bytes land here first */
};

struct op {
    struct cds_wfcq_node qnode;     /* rank thread -> progress thread */
    struct op *next;                /* the connection's write queue */
    enum op_kind kind;
    struct net_peer *peer;
    unsigned char header[WIRE_HEADER_BYTES];
    const char *data;
    size_t data_len;
    size_t written;                 /* of header + data */
    char *owned;                    /* freed once written */
    struct rndv_send *rndv;         /* OP_RTS, OP_DATA */
    struct net_pull *pull;          /* OP_CTS */
    struct completion *cancel;      /* OP_CANCEL */
    bool submitted;                 /* came through the queue: counted in `pending` */
};

/* ---- connections ---- */

enum conn_state { CONN_CONNECTING, CONN_OPEN, CONN_CLOSED };

struct conn {
    struct lite_lock lock;          /* the write queue and socket writes */
    int fd;
    enum conn_state state;
    bool outgoing;                  /* we connected: we write frames on it */
    struct net_peer *peer;          /* incoming: known after HELLO */
    struct op *head, *tail;         /* outgoing: frames to write, in order */
    bool want_write;                /* EPOLLOUT armed */
    bool peer_said_bye;
    /* reading */
    unsigned char *rbuf;
    size_t rpos, rlen;
    bool in_payload;
    struct wire_frame frame;
    char *pdst;
    size_t pgot;
    struct net_pull *data_pull;     /* DATA being received */
    char *eager;                    /* EAGER payloads that do not fit rbuf */
    size_t eager_cap;
};

struct peer_state {                 /* net_peer.transport */
    struct conn *out;               /* the connection we send on, NULL until the first message */
    _Atomic(struct conn *) out_open; /* `out` once open and the peer is not gone: rank threads may write */
    atomic_int pending;             /* operations for this peer submitted, not yet on out's queue */
    double retry_at;                /* connect refused: try again then (0: not waiting) */
    double give_up_at;
    bool gone;                      /* it ended cleanly: messages to it are dropped */
};

/* Cookies name rendezvous state on the wire: (generation << 32) | (slot + 1),
 * looked up and checked, never turned into a pointer. Progress thread only. */
struct cookie_table {
    void **obj;
    uint32_t *gen;
    uint32_t *free;
    uint32_t nfree, cap;
};

static struct {
    const struct net_job *job;
    struct wire_limits limits;
    int epfd, listen_fd, wake_fd;
    struct __cds_wfcq_head qhead;
    struct cds_wfcq_tail qtail;
    atomic_bool asleep;             /* the progress thread may be in epoll_wait */
    atomic_bool stopping;
    bool bye_sent;
    struct peer_state *peers;
    struct conn **conns;            /* every open connection, for shutdown */
    int nconns, conns_cap;
    struct cookie_table sends, pulls;
    double connect_timeout;
} tcp;

static _Noreturn void out_of_memory(void)
{
    strand_job_abort(1, "Strand MPI: out of memory in the TCP network module\n");
}

/* ---- cookie tables ---- */

static uint64_t cookie_insert(struct cookie_table *t, void *obj)
{
    if (t->nfree == 0) {
        uint32_t cap = t->cap == 0 ? 64 : t->cap * 2;
        void **o = realloc(t->obj, cap * sizeof *o);
        uint32_t *g = realloc(t->gen, cap * sizeof *g);
        uint32_t *f = realloc(t->free, cap * sizeof *f);
        if (o == NULL || g == NULL || f == NULL)
            out_of_memory();
        t->obj = o, t->gen = g, t->free = f;
        for (uint32_t i = t->cap; i < cap; i++) {
            o[i] = NULL;
            g[i] = 1;
            f[t->nfree++] = cap - 1 - (i - t->cap);
        }
        t->cap = cap;
    }
    uint32_t slot = t->free[--t->nfree];
    t->obj[slot] = obj;
    return ((uint64_t)t->gen[slot] << 32) | (slot + 1);
}

/* Removes and returns the object a cookie names, or NULL if it names none. */
static void *cookie_take(struct cookie_table *t, uint64_t cookie)
{
    uint32_t slot = (uint32_t)cookie - 1;
    if ((uint32_t)cookie == 0 || slot >= t->cap || t->gen[slot] != (uint32_t)(cookie >> 32) ||
        t->obj[slot] == NULL)
        return NULL;
    void *obj = t->obj[slot];
    t->obj[slot] = NULL;
    t->gen[slot]++;
    t->free[t->nfree++] = slot;
    return obj;
}

/* ---- waking the progress thread ---- */

static void wake_progress(void)
{
    if (atomic_exchange(&tcp.asleep, false)) {
        uint64_t one = 1;
        (void)!write(tcp.wake_fd, &one, sizeof one);
    }
}

static void submit(struct op *op)
{
    op->submitted = true;
    atomic_fetch_add_explicit(&((struct peer_state *)op->peer->transport)->pending, 1, memory_order_seq_cst);
    cds_wfcq_node_init(&op->qnode);
    cds_wfcq_enqueue(&tcp.qhead, &tcp.qtail, &op->qnode);
    wake_progress();
}

static struct op *op_new(enum op_kind kind, struct net_peer *peer, size_t extra)
{
    struct op *op = calloc(1, sizeof *op + extra);
    if (op == NULL)
        return NULL;
    op->kind = kind;
    op->peer = peer;
    return op;
}

/* ---- entries called by rank threads ---- */

static void frame_queue(struct conn *c, struct op *op);

/* A frame the kernel did not take whole: `written` bytes went out. */
static struct op *eager_op(struct net_peer *peer, const unsigned char *header, const void *buf, int count,
                           MPI_Datatype type, size_t bytes, size_t written)
{
    struct op *op = op_new(OP_FRAME, peer, bytes);
    if (op == NULL)
        return NULL;
    memcpy(op->header, header, WIRE_HEADER_BYTES);
    char *data = (char *)(op + 1);
    dt_pack(data, buf, (size_t)count, type);
    op->data = data;
    op->data_len = bytes;
    op->written = written;
    return op;
}

/* The shortcut (see the top of this file). Returns false when the frame
 * must go through the progress thread instead. */
static bool send_direct(struct net_peer *peer, const unsigned char *header, const void *buf, int count,
                        MPI_Datatype type, size_t bytes)
{
    struct peer_state *ps = peer->transport;
    struct conn *c = atomic_load_explicit(&ps->out_open, memory_order_acquire);
    if (c == NULL || !type->contiguous || atomic_load_explicit(&ps->pending, memory_order_seq_cst) != 0)
        return false;
    lite_lock(&c->lock);
    /* Under the lock: no earlier frame of ours may still be unwritten. */
    if (c->head != NULL || c->state != CONN_OPEN || atomic_load(&ps->pending) != 0 ||
        atomic_load_explicit(&ps->out_open, memory_order_relaxed) != c) {
        lite_unlock(&c->lock);
        return false;
    }
    struct iovec iov[2] = { { (void *)header, WIRE_HEADER_BYTES },
                            { (char *)buf + type->lb, bytes } };
    struct msghdr msg = { .msg_iov = iov, .msg_iovlen = bytes > 0 ? 2 : 1 };
    ssize_t sent;
    do
        sent = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (sent < 0 && errno == EINTR);
    if (sent == (ssize_t)(WIRE_HEADER_BYTES + bytes)) {
        lite_unlock(&c->lock);
        return true;
    }
    /* The rest (or, after an error, all of it) waits on the queue, where
     * the progress thread writes it, or meets the error and handles it. */
    struct op *rest = eager_op(peer, header, buf, count, type, bytes, sent > 0 ? (size_t)sent : 0);
    if (rest == NULL)
        out_of_memory();
    frame_queue(c, rest);
    lite_unlock(&c->lock);
    struct op *kick = op_new(OP_KICK, peer, 0);
    if (kick == NULL)
        out_of_memory();
    submit(kick);
    return true;
}

static int tcp_send_eager(struct net_peer *peer, const struct net_envelope *env, const void *buf, int count,
                          MPI_Datatype type)
{
    unsigned char header[WIRE_HEADER_BYTES];
    struct wire_frame f = net_envelope_frame(WIRE_EAGER, env);
    f.payload_len = (uint32_t)env->bytes;
    wire_encode_header(header, &f);
    if (send_direct(peer, header, buf, count, type, env->bytes))
        return MPI_SUCCESS;
    struct op *op = eager_op(peer, header, buf, count, type, env->bytes, 0);
    if (op == NULL)
        return MPI_ERR_NO_MEM;
    submit(op);
    return MPI_SUCCESS;
}

static int tcp_send_rendezvous(struct net_peer *peer, const struct net_envelope *env, const void *buf,
                               int count, MPI_Datatype type, struct completion *done)
{
    /* The send outlives its RTS frame: it waits in the cookie table for
     * the CTS, and is freed once its DATA frame is written. */
    struct op *op = op_new(OP_RTS, peer, 0);
    struct rndv_send *s = malloc(sizeof *s);
    if (op == NULL || s == NULL) {
        free(op);
        free(s);
        return MPI_ERR_NO_MEM;
    }
    *s = (struct rndv_send){ buf, count, type, env->bytes, done, peer, env->dest };
    op->rndv = s;
    struct wire_frame f = net_envelope_frame(WIRE_RTS, env);
    wire_encode_header(op->header, &f);     /* the cookie (b) is added by the progress thread */
    submit(op);
    return MPI_SUCCESS;
}

static void tcp_pull(struct net_pull *pull, struct strand_request *req)
{
    pull->req = req;
    size_t capacity = (size_t)req->count * req->type->size;
    pull->want = pull->env.bytes < capacity ? pull->env.bytes : capacity;
    if (pull->want > UINT32_MAX)
        strand_job_abort(1, "Strand MPI: a message between node processes is limited to 4 GiB - 1 "
                            "(see doc/limits.md)\n");
    struct op *op = op_new(OP_CTS, pull->id.peer, 0);
    if (op == NULL)
        out_of_memory();
    op->pull = pull;
    submit(op);
}

/* One-sided frames keep their order with everything else this node sends
 * the peer: a small one is written at once when the connection is idle
 * (send_direct, as eager messages; also from the progress thread, which
 * holds no connection's write lock while it serves arrivals), otherwise
 * it goes through the progress thread's queue like RTS. */
static int tcp_rma_send(struct net_peer *peer, const struct net_rma *r, void *payload, size_t payload_len)
{
    struct wire_frame f = net_rma_frame(r, payload_len);
    struct op *op = op_new(OP_FRAME, peer, 0);
    if (op == NULL) {
        free(payload);
        return MPI_ERR_NO_MEM;
    }
    wire_encode_header(op->header, &f);
    if (payload_len <= tcp.job->eager_limit &&
        send_direct(peer, op->header, payload, (int)payload_len, MPI_BYTE, payload_len)) {
        free(op);
        free(payload);
        return MPI_SUCCESS;
    }
    op->data = payload;
    op->data_len = payload_len;
    op->owned = payload;
    submit(op);
    return MPI_SUCCESS;
}

static void tcp_cancel_send(struct net_peer *peer, struct completion *done)
{
    struct op *op = op_new(OP_CANCEL, peer, 0);
    if (op == NULL)
        out_of_memory();
    op->cancel = done;
    submit(op);
}

/* ---- connections (progress thread) ---- */

static void epoll_add(int fd, uint32_t events, void *ptr)
{
    struct epoll_event ev = { .events = events, .data.ptr = ptr };
    if (epoll_ctl(tcp.epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        strand_job_abort(1, "Strand MPI: epoll_ctl failed in the TCP network module\n");
}

/* Every connection is kept for shutdown (BYE) and close. */
static void conn_track(struct conn *c)
{
    if (tcp.nconns == tcp.conns_cap) {
        tcp.conns_cap = tcp.conns_cap == 0 ? 16 : 2 * tcp.conns_cap;
        tcp.conns = realloc(tcp.conns, (size_t)tcp.conns_cap * sizeof *tcp.conns);
        if (tcp.conns == NULL)
            out_of_memory();
    }
    tcp.conns[tcp.nconns++] = c;
}

static void conn_want_write(struct conn *c, bool want)
{
    if (c->want_write == want || c->state == CONN_CLOSED)
        return;
    c->want_write = want;
    struct epoll_event ev = { .events = EPOLLIN | (want ? EPOLLOUT : 0), .data.ptr = c };
    epoll_ctl(tcp.epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static struct conn *conn_new(int fd, bool outgoing, struct net_peer *peer)
{
    struct conn *c = calloc(1, sizeof *c);
    if (c == NULL || (c->rbuf = malloc(READ_BUFFER_BYTES)) == NULL)
        out_of_memory();
    c->fd = fd;
    c->outgoing = outgoing;
    c->peer = peer;
    c->state = outgoing ? CONN_CONNECTING : CONN_OPEN;
    return c;
}

static void set_socket_options(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int resolve(const char *host, int port, struct sockaddr_storage *addr, socklen_t *len)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    if (getaddrinfo(host, service, &hints, &res) != 0)
        return -1;
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}


/* The first message to a peer opens our connection to it (non-blocking:
 * EPOLLOUT says when it is established). Its address follows from the
 * host list and the base port: no exchange at startup. */
static void connect_peer(struct net_peer *peer)
{
    struct peer_state *ps = peer->transport;
    const struct net_job *job = tcp.job;
    struct sockaddr_storage addr;
    socklen_t len;
    if (resolve(net_peer_host(peer), net_peer_port(peer), &addr, &len) != 0)
        net_peer_lost(peer, "its host name does not resolve");
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        net_peer_lost(peer, "cannot create a socket to it");
    set_socket_options(fd);
    struct conn *c = ps->out;
    if (c == NULL) {
        c = conn_new(-1, true, peer);
        conn_track(c);
        ps->out = c;
        /* The HELLO goes first, before whatever the caller queues. */
        struct op *hello = op_new(OP_FRAME, peer, 0);
        if (hello == NULL)
            out_of_memory();
        struct wire_frame f = { .type = WIRE_HELLO, .a = job->job_id, .b = (uint64_t)job->node,
                                .c = (uint64_t)job->nnodes };
        wire_encode_header(hello->header, &f);
        frame_queue(c, hello);
        ps->give_up_at = net_now_seconds() + tcp.connect_timeout;
    }
    c->fd = fd;
    c->state = CONN_CONNECTING;
    c->want_write = true;
    ps->retry_at = 0;
    /* A refusal now or later is handled alike: epoll reports it, then SO_ERROR. */
    (void)!connect(fd, (struct sockaddr *)&addr, len);
    epoll_add(fd, EPOLLIN | EPOLLOUT, c);
}

/* The peer is not listening yet (it may still be starting): try again a
 * little later, up to the connect timeout. */
static void connect_failed(struct conn *c, int err)
{
    struct peer_state *ps = c->peer->transport;
    epoll_ctl(tcp.epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    c->want_write = false;
    if (err == ECONNREFUSED)
        net_peer_refused(c->peer);
    if (net_now_seconds() > ps->give_up_at) {
        char what[160];
        snprintf(what, sizeof what, "cannot connect to %s:%d: %s", net_peer_host(c->peer),
                 net_peer_port(c->peer), strerror(err));
        net_peer_lost(c->peer, what);
    }
    ps->retry_at = net_now_seconds() + CONNECT_RETRY_MS * 1e-3;
}

static void op_finish(struct op *op)
{
    if (op->kind == OP_DATA) {
        completion_signal(op->rndv->done);
        free(op->rndv);
    }
    free(op->owned);
    free(op);
}

static void conn_drop_queue(struct conn *c)
{
    while (c->head != NULL) {
        struct op *op = c->head;
        c->head = op->next;
        op_finish(op);
    }
    c->tail = NULL;
}

/* Writes queued frames until the kernel takes no more. */
static void conn_flush(struct conn *c)
{
    if (c->state != CONN_OPEN)
        return;
    while (c->head != NULL) {
        struct op *op = c->head;
        struct iovec iov[2];
        int n = 0;
        if (op->written < WIRE_HEADER_BYTES)
            iov[n++] = (struct iovec){ op->header + op->written, WIRE_HEADER_BYTES - op->written };
        size_t data_done = op->written > WIRE_HEADER_BYTES ? op->written - WIRE_HEADER_BYTES : 0;
        if (op->data_len > data_done)
            iov[n++] = (struct iovec){ (char *)op->data + data_done, op->data_len - data_done };
        struct msghdr msg = { .msg_iov = iov, .msg_iovlen = (size_t)n };
        ssize_t sent = n == 0 ? 0 : sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                conn_want_write(c, true);
                return;
            }
            if (errno == EINTR)
                continue;
            struct peer_state *ps = c->peer->transport;
            if (ps->gone || atomic_load(&tcp.stopping)) {
                conn_drop_queue(c);
                return;
            }
            net_peer_lost(c->peer, strerror(errno));
        }
        op->written += (size_t)sent;
        if (op->written < WIRE_HEADER_BYTES + op->data_len)
            continue;
        c->head = op->next;
        if (c->head == NULL)
            c->tail = NULL;
        op_finish(op);
    }
    conn_want_write(c, false);
}

static void frame_queue(struct conn *c, struct op *op)
{
    op->next = NULL;
    if (c->tail == NULL)
        c->head = op;
    else
        c->tail->next = op;
    c->tail = op;
}

/* A submitted operation is done with without a frame on the queue. */
static void op_drop(struct op *op)
{
    if (op->submitted)
        atomic_fetch_sub(&((struct peer_state *)op->peer->transport)->pending, 1);
    op_finish(op);
}

/* An operation from a rank thread (or a DATA answer) for `peer`. */
static void dispatch(struct op *op)
{
    struct peer_state *ps = op->peer->transport;
    if (ps->gone) {
        op_drop(op);
        return;
    }
    if (op->kind == OP_KICK) {
        lite_lock(&ps->out->lock);
        atomic_fetch_sub(&ps->pending, 1);
        conn_flush(ps->out);
        lite_unlock(&ps->out->lock);
        op_finish(op);
        return;
    }
    if (op->kind == OP_RTS) {
        /* The header was encoded by the rank thread; the cookie (field b,
         * offset 32) is only known now. */
        uint64_t cookie = cookie_insert(&tcp.sends, op->rndv);
        for (int i = 0; i < 8; i++)
            op->header[32 + i] = (unsigned char)(cookie >> (8 * i));
        op->rndv = NULL;    /* it lives on in the table, not with this frame */
        op->kind = OP_FRAME;
    } else if (op->kind == OP_CANCEL) {
        /* Rare: a scan of the pending sends. None found: the send already
         * got its CTS and completes normally. */
        uint64_t cookie = 0;
        for (uint32_t i = 0; i < tcp.sends.cap && cookie == 0; i++) {
            struct rndv_send *s = tcp.sends.obj[i];
            if (s != NULL && s->done == op->cancel)
                cookie = ((uint64_t)tcp.sends.gen[i] << 32) | (i + 1);
        }
        if (cookie == 0) {
            op_drop(op);
            return;
        }
        struct rndv_send *s = tcp.sends.obj[(uint32_t)cookie - 1];
        struct wire_frame f = { .type = WIRE_CANCEL, .dest = (uint32_t)s->dest, .a = cookie };
        wire_encode_header(op->header, &f);
        op->kind = OP_FRAME;
    } else if (op->kind == OP_CTS) {
        struct net_pull *p = op->pull;
        struct wire_frame f = { .type = WIRE_CTS, .a = p->id.sender_cookie, .b = cookie_insert(&tcp.pulls, p),
                                .c = p->want };
        wire_encode_header(op->header, &f);
        op->kind = OP_FRAME;
    }
    if (ps->out == NULL)
        connect_peer(op->peer);
    struct conn *c = ps->out;
    bool submitted = op->submitted;
    lite_lock(&c->lock);
    frame_queue(c, op);
    /* Only now may a rank thread write past it (send_direct). */
    if (submitted)
        atomic_fetch_sub(&ps->pending, 1);
    conn_flush(c);
    lite_unlock(&c->lock);
}

static void drain_submissions(void)
{
    struct cds_wfcq_node *node;
    while ((node = __cds_wfcq_dequeue_blocking(&tcp.qhead, &tcp.qtail)) != NULL)
        dispatch(caa_container_of(node, struct op, qnode));
}

/* ---- receiving (progress thread) ---- */

static _Noreturn void protocol_error(struct conn *c, const char *why)
{
    static struct net_peer unknown = { .node = -1 };
    char what[200];
    snprintf(what, sizeof what, "malformed frame: %s", why);
    net_peer_lost(c->peer != NULL ? c->peer : &unknown, what);
}

/* A CTS for one of our rendezvous sends: answer with the data, straight
 * from the user's buffer when it is contiguous. */
static void answer_cts(struct conn *c, const struct wire_frame *f)
{
    struct rndv_send *s = cookie_take(&tcp.sends, f->a);
    if (s == NULL || s->peer != c->peer)
        protocol_error(c, "CTS for an unknown message");
    if (f->c > s->bytes)
        protocol_error(c, "CTS asks for more than the message holds");
    struct op *op = op_new(OP_DATA, s->peer, 0);
    if (op == NULL)
        out_of_memory();
    op->rndv = s;
    if (s->type->contiguous) {
        op->data = (const char *)s->buf + s->type->lb;
    } else {
        op->owned = malloc(s->bytes > 0 ? s->bytes : 1);
        if (op->owned == NULL)
            out_of_memory();
        dt_pack(op->owned, s->buf, (size_t)s->count, s->type);
        op->data = op->owned;
    }
    op->data_len = (size_t)f->c;
    struct wire_frame d = { .type = WIRE_DATA, .payload_len = (uint32_t)f->c, .a = f->b };
    wire_encode_header(op->header, &d);
    dispatch(op);
}

static void pull_finish(struct net_pull *p)
{
    struct strand_request *req = p->req;
    size_t copied = p->want;
    if (p->temp != NULL) {
        copied = dt_unpack(req->buf, (size_t)req->count, req->type, p->temp, p->want);
        free(p->temp);
    }
    mailbox_receive_complete(req, p->env.source, p->env.tag, p->env.bytes, copied);
    free(p);
}

/* Where a frame's payload goes; NULL when it is consumed from rbuf at once. */
static void frame_begin(struct conn *c, const struct wire_frame *f)
{
    if (c->peer == NULL && f->type != WIRE_HELLO)
        protocol_error(c, "first frame is not HELLO");
    switch (f->type) {
    case WIRE_HELLO:
        if (c->peer != NULL || c->outgoing)
            protocol_error(c, "unexpected HELLO");
        c->peer = &tcp.job->peers[f->b];
        if ((int)f->b == tcp.job->node)
            protocol_error(c, "HELLO from this node process itself");
        return;
    case WIRE_EAGER:
    case WIRE_RMA_PUT:
    case WIRE_RMA_ACC:
    case WIRE_RMA_GET:
    case WIRE_RMA_GET_REPLY:
        if (c->eager_cap < f->payload_len) {
            free(c->eager);
            c->eager = malloc(f->payload_len);
            if (c->eager == NULL)
                out_of_memory();
            c->eager_cap = f->payload_len;
        }
        c->pdst = c->eager;
        return;
    case WIRE_DATA: {
        struct net_pull *p = cookie_take(&tcp.pulls, f->a);
        if (p == NULL || p->id.peer != c->peer)
            protocol_error(c, "DATA for an unknown pull");
        if (f->payload_len != p->want)
            protocol_error(c, "DATA size differs from what was asked");
        struct strand_request *req = p->req;
        if (req->type->contiguous) {
            c->pdst = (char *)req->buf + req->type->lb;
        } else {
            p->temp = malloc(p->want > 0 ? p->want : 1);
            if (p->temp == NULL)
                out_of_memory();
            c->pdst = p->temp;
        }
        c->data_pull = p;
        return;
    }
    default:
        return;
    }
}

/* The sender cancels: withdraw the message if no receive matched it yet. */
static void answer_cancel(struct conn *c, const struct wire_frame *f)
{
    struct net_pull *p = net_withdraw_remote(f->dest, c->peer, f->a);
    bool withdrawn = p != NULL;
    free(p);
    struct op *op = op_new(OP_FRAME, c->peer, 0);
    if (op == NULL)
        out_of_memory();
    struct wire_frame r = { .type = WIRE_CANCELLED, .a = f->a, .b = withdrawn };
    wire_encode_header(op->header, &r);
    dispatch(op);
}

static void cancel_answered(struct conn *c, const struct wire_frame *f)
{
    if (f->b == 0)
        return;     /* matched already: its CTS completes the send */
    struct rndv_send *s = cookie_take(&tcp.sends, f->a);
    if (s == NULL || s->peer != c->peer)
        protocol_error(c, "CANCELLED for an unknown message");
    pt2pt_send_cancelled(s->done);
    free(s);
}

/* A one-sided frame: served, unless its block list does not fit the window. */
static void rma_arrived(struct conn *c, const struct wire_frame *f, const unsigned char *payload)
{
    const char *why = net_rma_arrived(c->peer, f, payload);
    if (why != NULL)
        protocol_error(c, why);
}

static void frame_end(struct conn *c, const struct wire_frame *f, const char *payload)
{
    if (wire_is_rma(f->type)) {
        rma_arrived(c, f, (const unsigned char *)payload);
        return;
    }
    switch (f->type) {
    case WIRE_EAGER: {
        struct net_envelope env = net_frame_envelope(f);
        net_arrived_eager(&env, payload);
        return;
    }
    case WIRE_RTS: {
        struct net_pull *p = calloc(1, sizeof *p);
        if (p == NULL)
            out_of_memory();
        p->id = (struct net_pull_id){ c->peer, f->b };
        p->env = net_frame_envelope(f);
        net_arrived_rendezvous(&p->env, p);
        return;
    }
    case WIRE_CTS:
        answer_cts(c, f);
        return;
    case WIRE_DATA:
        pull_finish(c->data_pull);
        c->data_pull = NULL;
        return;
    case WIRE_CANCEL:
        answer_cancel(c, f);
        return;
    case WIRE_CANCELLED:
        cancel_answered(c, f);
        return;
    case WIRE_BYE: {
        struct peer_state *ps = c->peer->transport;
        c->peer_said_bye = true;
        ps->gone = true;
        atomic_store(&ps->out_open, NULL);
        return;
    }
    default:
        return;
    }
}

static void conn_closed(struct conn *c, const char *why)
{
    if (!c->peer_said_bye && !atomic_load(&tcp.stopping) && !(c->peer != NULL &&
                                                              ((struct peer_state *)c->peer->transport)->gone)) {
        if (c->peer == NULL) {
            /* A connection that never said who it was: not one of ours. */
        } else {
            net_peer_lost(c->peer, why);
        }
    }
    if (c->peer != NULL)
        atomic_store(&((struct peer_state *)c->peer->transport)->out_open, NULL);
    lite_lock(&c->lock);
    epoll_ctl(tcp.epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    c->state = CONN_CLOSED;
    conn_drop_queue(c);
    lite_unlock(&c->lock);
}

/* After a recv that returned n <= 0: true when reading must stop for now
 * (nothing more to read, or the connection is closed), false to retry. */
static bool read_stops(struct conn *c, ssize_t n, const char *eof_why)
{
    if (n == 0) {
        conn_closed(c, eof_why);
        return true;
    }
    if (errno == EINTR)
        return false;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
        conn_closed(c, strerror(errno));
    return true;
}

/* Reads what the kernel has and handles every complete frame. */
static void conn_read(struct conn *c)
{
    for (;;) {
        if (c->in_payload) {
            size_t need = c->frame.payload_len - c->pgot;
            size_t have = c->rlen - c->rpos;
            size_t take = have < need ? have : need;
            memcpy(c->pdst + c->pgot, c->rbuf + c->rpos, take);
            c->rpos += take;
            c->pgot += take;
            if (c->pgot < c->frame.payload_len) {
                /* The rest straight into its destination (a receive buffer). */
                ssize_t n = recv(c->fd, c->pdst + c->pgot, c->frame.payload_len - c->pgot, MSG_DONTWAIT);
                if (n > 0)
                    c->pgot += (size_t)n;
                else if (read_stops(c, n, "connection closed in the middle of a message"))
                    return;
                continue;
            }
            c->in_payload = false;
            frame_end(c, &c->frame, c->pdst);
            continue;
        }
        if (c->rlen - c->rpos >= WIRE_HEADER_BYTES) {
            const char *why = NULL;
            struct wire_frame f;
            if (wire_decode_header(c->rbuf + c->rpos, c->rlen - c->rpos, &tcp.limits, &f, &why) != WIRE_OK)
                protocol_error(c, why);
            if (c->outgoing && f.type != WIRE_BYE)
                protocol_error(c, "only BYE may come back on a connection we opened");
            c->rpos += WIRE_HEADER_BYTES;
            frame_begin(c, &f);
            if (f.type == WIRE_EAGER && c->rlen - c->rpos >= f.payload_len) {
                /* Whole in the read buffer: delivered from there. */
                const char *payload = (const char *)c->rbuf + c->rpos;
                c->rpos += f.payload_len;
                frame_end(c, &f, payload);
                continue;
            }
            if (f.payload_len == 0) {
                frame_end(c, &f, NULL);
                continue;
            }
            c->frame = f;
            c->pgot = 0;
            c->in_payload = true;
            continue;
        }
        if (c->rpos > 0) {
            memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
            c->rlen -= c->rpos;
            c->rpos = 0;
        }
        ssize_t n = recv(c->fd, c->rbuf + c->rlen, READ_BUFFER_BYTES - c->rlen, MSG_DONTWAIT);
        if (n > 0)
            c->rlen += (size_t)n;
        else if (read_stops(c, n, c->rlen != 0 ? "connection closed in the middle of a frame"
                                               : "connection closed without goodbye"))
            return;
    }
}

static void accept_all(void)
{
    for (;;) {
        int fd = accept4(tcp.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        set_socket_options(fd);
        struct conn *c = conn_new(fd, false, NULL);
        conn_track(c);
        epoll_add(fd, EPOLLIN, c);
    }
}

static void conn_writable(struct conn *c)
{
    if (c->state == CONN_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            connect_failed(c, err);
            return;
        }
        c->state = CONN_OPEN;
        struct peer_state *ps = c->peer->transport;
        if (!ps->gone)
            atomic_store_explicit(&ps->out_open, c, memory_order_release);
    }
    lite_lock(&c->lock);
    conn_flush(c);
    lite_unlock(&c->lock);
}

static void retry_connects(int *timeout_ms)
{
    double now = net_now_seconds();
    for (int j = 0; j < tcp.job->nnodes; j++) {
        struct peer_state *ps = &tcp.peers[j];
        if (ps->retry_at == 0)
            continue;
        if (now >= ps->retry_at) {
            connect_peer(&tcp.job->peers[j]);
        } else {
            int ms = (int)((ps->retry_at - now) * 1e3) + 1;
            if (*timeout_ms < 0 || ms < *timeout_ms)
                *timeout_ms = ms;
        }
    }
}

/* ---- shutdown ---- */

static bool all_written(void)
{
    for (int i = 0; i < tcp.nconns; i++)
        if (tcp.conns[i]->state != CONN_CLOSED && tcp.conns[i]->head != NULL)
            return false;
    return true;
}

/* Every open connection, both directions, gets a BYE: the peer then knows
 * the EOF that follows is a clean end. */
static void say_bye(void)
{
    unsigned char bye[WIRE_HEADER_BYTES];
    struct wire_frame f = { .type = WIRE_BYE };
    wire_encode_header(bye, &f);
    for (int i = 0; i < tcp.nconns; i++) {
        struct conn *c = tcp.conns[i];
        if (c->state != CONN_OPEN)
            continue;
        /* No rank is left to serve: a short busy retry is fine (48 bytes
         * rarely meet a full socket buffer; a peer that reads nothing is
         * given up on). */
        size_t off = 0;
        lite_lock(&c->lock);
        for (int tries = 0; off < sizeof bye && tries < 100000; tries++) {
            ssize_t n = send(c->fd, bye + off, sizeof bye - off, MSG_NOSIGNAL);
            if (n <= 0 && errno != EINTR && errno != EAGAIN)
                break;
            if (n > 0)
                off += (size_t)n;
        }
        lite_unlock(&c->lock);
    }
    tcp.bye_sent = true;
}

static bool tcp_progress(int timeout_ms)
{
    drain_submissions();
    retry_connects(&timeout_ms);
    if (atomic_load(&tcp.stopping) && all_written() && cds_wfcq_empty(&tcp.qhead, &tcp.qtail)) {
        say_bye();
        return false;
    }
    /* Announce sleep, then recheck: a submitter either sees `asleep` and
     * writes the eventfd, or we see its operation. */
    atomic_store(&tcp.asleep, true);
    if (!cds_wfcq_empty(&tcp.qhead, &tcp.qtail))
        timeout_ms = 0;
    struct epoll_event events[MAX_EVENTS];
    int n = epoll_wait(tcp.epfd, events, MAX_EVENTS, timeout_ms);
    atomic_store(&tcp.asleep, false);
    for (int i = 0; i < n; i++) {
        void *ptr = events[i].data.ptr;
        if (ptr == &tcp.listen_fd) {
            accept_all();
        } else if (ptr == &tcp.wake_fd) {
            uint64_t count;
            (void)!read(tcp.wake_fd, &count, sizeof count);
        } else {
            struct conn *c = ptr;
            if (c->fd < 0)
                continue;
            if (c->state == CONN_CONNECTING) {
                if (events[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
                    conn_writable(c);
                continue;
            }
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                conn_read(c);
            if (c->fd >= 0 && (events[i].events & EPOLLOUT))
                conn_writable(c);
        }
    }
    return true;
}

/* ---- setup and teardown (main thread) ---- */

static int listen_on(const struct net_job *job, char *why, size_t why_len)
{
    struct sockaddr_storage addr;
    socklen_t len;
    int port = job->base_port + job->node;
    if (resolve(job->hosts[job->node], port, &addr, &len) != 0) {
        snprintf(why, why_len, "host name %s does not resolve", job->hosts[job->node]);
        return -1;
    }
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int bound = fd >= 0 ? bind(fd, (struct sockaddr *)&addr, len) : -1;
    if (bound != 0 && errno == EADDRINUSE && net_port_fallback_allowed()) {
        /* Someone else holds our static port: take any, publish it. */
        ((struct sockaddr_in *)&addr)->sin_port = 0;    /* same offset in sockaddr_in6 */
        bound = bind(fd, (struct sockaddr *)&addr, len);
        if (bound == 0 && getsockname(fd, (struct sockaddr *)&addr, &len) == 0) {
            port = ntohs(((struct sockaddr_in *)&addr)->sin_port);
            if (net_publish_port(port, why, why_len) != 0) {
                close(fd);
                return -1;
            }
        }
    }
    if (fd < 0 || bound != 0 || listen(fd, 1024) != 0) {
        snprintf(why, why_len, "cannot listen on %s:%d: %s", job->hosts[job->node], port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    tcp.listen_fd = fd;
    return 0;
}

static int tcp_init(const struct net_job *job, char *why, size_t why_len)
{
    tcp.job = job;
    tcp.limits = (struct wire_limits){
        .first_rank = (uint32_t)job->first_rank, .local_ranks = (uint32_t)job->local_ranks,
        .nnodes = (uint32_t)job->nnodes, .job_id = job->job_id,
        .max_eager = (uint32_t)(job->eager_limit < UINT32_MAX ? job->eager_limit : UINT32_MAX),
        .max_data = UINT32_MAX, .tag_ub = INT32_MAX,
        .window = net_rma_window, .acc_element = net_rma_acc_element,
    };
    const char *timeout = getenv("STRAND_NET_CONNECT_TIMEOUT");
    tcp.connect_timeout = timeout != NULL ? atof(timeout) : DEFAULT_CONNECT_TIMEOUT_S;
    __cds_wfcq_init(&tcp.qhead, &tcp.qtail);
    tcp.peers = calloc((size_t)job->nnodes, sizeof *tcp.peers);
    if (tcp.peers == NULL) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    for (int j = 0; j < job->nnodes; j++)
        job->peers[j].transport = &tcp.peers[j];
    if (listen_on(job, why, why_len) != 0)
        return -1;
    tcp.epfd = epoll_create1(EPOLL_CLOEXEC);
    tcp.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (tcp.epfd < 0 || tcp.wake_fd < 0) {
        snprintf(why, why_len, "epoll/eventfd: %s", strerror(errno));
        return -1;
    }
    epoll_add(tcp.listen_fd, EPOLLIN, &tcp.listen_fd);
    epoll_add(tcp.wake_fd, EPOLLIN, &tcp.wake_fd);
    return 0;
}

static void tcp_shutdown(void)
{
    atomic_store(&tcp.stopping, true);
    atomic_store(&tcp.asleep, true);
    wake_progress();
}

static void tcp_close(void)
{
    for (int i = 0; i < tcp.nconns; i++) {
        struct conn *c = tcp.conns[i];
        if (c->fd >= 0)
            close(c->fd);
    }
    close(tcp.listen_fd);
    close(tcp.epfd);
    close(tcp.wake_fd);
}

const struct net_ops net_tcp_ops = {
    .name = "tcp",
    .init = tcp_init,
    .progress = tcp_progress,
    .send_eager = tcp_send_eager,
    .send_rendezvous = tcp_send_rendezvous,
    .pull = tcp_pull,
    .cancel_send = tcp_cancel_send,
    .rma_send = tcp_rma_send,
    .shutdown = tcp_shutdown,
    .close = tcp_close,
};
