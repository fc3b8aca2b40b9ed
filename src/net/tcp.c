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
 * (reading, cookie tables, connection set-up, the submission queue's
 * consumer side) belongs to whoever runs a round of progress, under
 * `tcp.round`: the progress thread, or a rank thread spinning in a wait
 * (tcp_poll, net.h). A peer's state is made on its first use, by whichever
 * thread that is (peers of other jobs appear at run time).
 *
 * Rank threads that poll read the sockets themselves; meanwhile the
 * progress thread parks (park.h): it sleeps on the eventfd (submissions,
 * kicks) and the park's timer instead of every socket.
 *
 * Connection set-up: the connector writes HELLO (who it is and where it
 * listens) and waits for the acceptor's HELLO_ACK before it writes
 * anything else, so a connection that reached some other program (a
 * foreign process listening on a node's static port, which the node then
 * left for another port, published in the job's store) is noticed and
 * redone at the published port instead of losing frames or hanging. The
 * acceptor then sends on that connection too (conn_pair, tcp_pair.h): one
 * connection per pair of node processes, whose frames in one direction
 * carry the acknowledgements of the other's. */
#define _LGPL_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
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
#include "park.h"
#include "tcp_pair.h"
#include "wire.h"

enum {
    READ_BUFFER_BYTES = 64 << 10,
    DATA_FRAME_BYTES = 1 << 20,         /* DATA frame of a contiguous buffer (STRAND_NET_DATA_FRAME) */
    MAX_DATA_FRAME_BYTES = 1 << 30,     /* the most STRAND_NET_DATA_FRAME may ask for */
    STAGE_BYTES = 1 << 20,              /* a non-contiguous buffer is packed / unpacked this much at a time */
    CONNECT_RETRY_MS = 20,
    CLOSE_DRAIN_MS = 2000,              /* at the end, waiting for peers to close their ends */
    DEFAULT_CONNECT_TIMEOUT_S = 60,     /* a node of this job may still be starting */
    DEFAULT_PORT_TIMEOUT_S = 10,        /* a node of another job is there or not */
    HELLO_CHECK_MS = 1000,              /* no HELLO_ACK yet: ask the store whether the peer moved */
    MAX_EVENTS = 64,
    QUICKACK_FRAME_BYTES = 512 << 10,   /* DATA frames acknowledged at once from this size (ack_promptly) */
    RCVLOWAT_BYTES = 512 << 10,         /* most a reader waits to have queued in a DATA frame (rcvlowat_begin) */
    RCVLOWAT_MIN_BYTES = 32 << 10,      /* a smaller mark is not worth its system call */
    EPOLL_EVERY_POLLS = 16,             /* one connection: a poller asks epoll this seldom (tcp_poll) */
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
    int dest;                       /* receiving rank ... */
    uint64_t world;                 /* ... of this world */
};

struct net_pull {       /* a remote rendezvous message at the receiver */
    struct net_pull_id id;          /* first (net.h): its sender and the sender's cookie */
    struct net_envelope env;
    struct strand_request *req;     /* set by pull */
    size_t want;                    /* bytes asked for */
    size_t got;                     /* of them, in DATA frames received whole */
    struct dt_stream *stream;       /* non-contiguous receive: unpacked from `temp` as bytes arrive */
    char *temp;                     /* STAGE_BYTES */
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
    /* OP_DATA: the bytes a CTS asked for go out in frames of at most
     * tcp.data_frame bytes (a DATA payload is at most 4 GiB - 1); the op
     * is framed again for the next part once a frame is written. */
    uint64_t data_cookie;           /* the receiver's */
    uint64_t data_sent, data_total; /* bytes framed so far / asked for */
    const char *data_from;          /* a contiguous send buffer */
    struct dt_stream *stream;       /* a non-contiguous one, packed into `owned` a frame at a time */
    struct completion *cancel;      /* OP_CANCEL */
    bool submitted;                 /* came through the queue: counted in `pending` */
};

/* ---- connections ---- */

enum conn_state {
    CONN_CONNECTING,                /* ours: connect() under way (or refused, waiting to retry) */
    CONN_HELLO,                     /* ours: HELLO written, waiting for HELLO_ACK */
    CONN_OPEN,
    CONN_CLOSED,
};

struct conn {
    struct lite_lock lock;          /* the write queue and socket writes */
    int fd;
    enum conn_state state;
    struct net_peer *peer;          /* accepted: known after HELLO */
    struct op *head, *tail;         /* the peer's `out`: frames to write, in order */
    bool want_write;                /* EPOLLOUT armed */
    bool peer_said_bye;
    int port;                       /* ours: the port connected to */
    double hello_check_at;          /* CONN_HELLO: when to ask the store again */
    /* reading */
    unsigned char *rbuf;
    size_t rpos, rlen;
    bool in_payload;
    int lowat;                      /* SO_RCVLOWAT on fd (1: the kernel's default) */
    int lowat_cap;                  /* the most it may be during this frame (rcvlowat_begin) */
    struct wire_frame frame;
    char *pdst;                     /* where the payload goes (NULL: through data_pull's stream) */
    size_t pgot;
    struct net_pull *data_pull;     /* DATA being received */
    char *eager;                    /* EAGER payloads that do not fit rbuf */
    size_t eager_cap;
};

struct peer_state {                 /* net_peer.transport */
    struct net_peer *peer;
    struct conn *out;               /* the connection we send on: ours, or the peer's we adopted
                                       (tcp_pair.h); NULL until the first message either way */
    _Atomic(struct conn *) out_open; /* `out` once open and the peer is not gone: rank threads may write */
    atomic_int pending;             /* operations for this peer submitted, not yet on out's queue */
    double retry_at;                /* connect refused: try again then (0: not waiting) */
    double give_up_at;
    bool gone;                      /* it ended cleanly: messages to it are dropped */
    size_t pulled_bytes;            /* progress rounds: what our CTSs asked of it, its DATA
                                       frames not yet begun (rcvlowat_begin) */
    struct peer_state *retry_next;  /* progress thread: peers waiting to connect again */
    bool in_retry_list;
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
    atomic_bool asleep;             /* the progress thread may be in epoll_wait or parked */
    atomic_bool stopping;
    pthread_mutex_t round;          /* one round of progress at a time */
    struct net_park park;           /* rank threads spinning in a wait (tcp_poll), the progress thread parked */
    bool bye_sent;
    struct peer_state *peers;       /* this job's, by node index */
    struct peer_state *retrying;    /* progress thread: retry_at != 0 */
    struct conn **conns;            /* every open connection, for shutdown */
    int nconns, conns_cap;
    int hellos_waiting;             /* connections in CONN_HELLO */
    unsigned polls;                 /* rounds run by pollers (tcp_poll), under `round` */
    struct cookie_table sends, pulls;
    double connect_timeout, port_timeout;
    size_t data_frame;              /* largest DATA payload we send */
    int rcvlowat;                   /* RCVLOWAT_BYTES, or STRAND_NET_RCVLOWAT (0: never raised) */
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

/* The object a cookie names, or NULL if it names none. */
static void *cookie_find(const struct cookie_table *t, uint64_t cookie)
{
    uint32_t slot = (uint32_t)cookie - 1;
    if ((uint32_t)cookie == 0 || slot >= t->cap || t->gen[slot] != (uint32_t)(cookie >> 32))
        return NULL;
    return t->obj[slot];
}

/* Removes and returns the object a cookie names, or NULL if it names none. */
static void *cookie_take(struct cookie_table *t, uint64_t cookie)
{
    void *obj = cookie_find(t, cookie);
    if (obj == NULL)
        return NULL;
    uint32_t slot = (uint32_t)cookie - 1;
    t->obj[slot] = NULL;
    t->gen[slot]++;
    t->free[t->nfree++] = slot;
    return obj;
}

/* ---- per-peer state ---- */

/* Made on the peer's first use (this job's peers have theirs from init). */
static struct peer_state *peer_state_of(struct net_peer *peer)
{
    struct peer_state *ps = __atomic_load_n(&peer->transport, __ATOMIC_ACQUIRE);
    if (STRAND_LIKELY(ps != NULL))
        return ps;
    struct peer_state *mine = calloc(1, sizeof *mine);
    if (mine == NULL)
        out_of_memory();
    mine->peer = peer;
    void *expected = NULL;
    if (__atomic_compare_exchange_n(&peer->transport, &expected, mine, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return mine;
    free(mine);
    return expected;
}

/* ---- waking the progress thread ---- */

static void wake_progress(void)
{
    if (atomic_exchange(&tcp.asleep, false)) {
        uint64_t one = 1;
        (void)!write(tcp.wake_fd, &one, sizeof one);
    }
}

/* Wakes the progress thread even while rank threads poll (it owns the timers). */
static void kick_progress(void)
{
    uint64_t one = 1;
    atomic_store(&tcp.asleep, false);
    (void)!write(tcp.wake_fd, &one, sizeof one);
}

/* A spinning poller will run the operation's round itself: no wake-up.
 * seq_cst on both sides (the enqueue, then this load; a poller's
 * decrement, then its look at the queue in net_park_end): one of them
 * sees the other. */
static void submit(struct op *op)
{
    op->submitted = true;
    atomic_fetch_add_explicit(&peer_state_of(op->peer)->pending, 1, memory_order_seq_cst);
    cds_wfcq_node_init(&op->qnode);
    cds_wfcq_enqueue(&tcp.qhead, &tcp.qtail, &op->qnode);
    if (atomic_load(&tcp.park.pollers) == 0)
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
    struct peer_state *ps = peer_state_of(peer);
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
    *s = (struct rndv_send){ buf, count, type, env->bytes, done, peer, env->dest, env->world };
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

static bool peer_forget(struct peer_state *ps, const char *what);
static void conn_flush(struct conn *c);
static void conn_drop(struct conn *c);

static struct conn *conn_new(int fd, bool ours, struct net_peer *peer)
{
    struct conn *c = calloc(1, sizeof *c);
    if (c == NULL || (c->rbuf = malloc(READ_BUFFER_BYTES)) == NULL)
        out_of_memory();
    c->fd = fd;
    c->lowat = 1;
    c->peer = peer;
    c->state = ours ? CONN_CONNECTING : CONN_OPEN;
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
 * EPOLLOUT says when it is established). A peer of this job is found by
 * the host list and the base port (no exchange at startup); one of another
 * job where it said it listens. Returns false when the peer was given up
 * (net_peer_lost returned: nothing is left to send it). */
static bool connect_peer(struct net_peer *peer)
{
    struct peer_state *ps = peer_state_of(peer);
    struct sockaddr_storage addr;
    socklen_t len;
    int port = net_peer_port(peer);
    struct conn *c = ps->out;
    if (c == NULL || c->state == CONN_CLOSED) {
        if (c == NULL) {
            c = conn_new(-1, true, peer);
            conn_track(c);
            ps->out = c;
        }
        c->rpos = c->rlen = 0;
        c->in_payload = false;
        c->peer_said_bye = false;
        ps->give_up_at = net_now_seconds() + (peer->foreign ? tcp.port_timeout : tcp.connect_timeout);
    }
    ps->retry_at = 0;
    if (resolve(net_peer_host(peer), port, &addr, &len) != 0)
        return peer_forget(ps, "its host name does not resolve");
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return peer_forget(ps, "cannot create a socket to it");
    set_socket_options(fd);
    c->fd = fd;
    c->lowat = 1;
    c->port = port;
    c->state = CONN_CONNECTING;
    c->want_write = true;
    /* A refusal now or later is handled alike: epoll reports it, then SO_ERROR. */
    (void)!connect(fd, (struct sockaddr *)&addr, len);
    epoll_add(fd, EPOLLIN | EPOLLOUT, c);
    return true;
}

static void retry_later(struct peer_state *ps)
{
    if (!ps->in_retry_list) {
        ps->retry_next = tcp.retrying;
        tcp.retrying = ps;
        ps->in_retry_list = true;
    }
    ps->retry_at = net_now_seconds() + CONNECT_RETRY_MS * 1e-3;
    /* The retry is the progress thread's timer: a rank's round that got
     * here must make it recompute its timeout. */
    kick_progress();
}

/* Closes the socket of a connection that is being redone or given up. */
static void conn_socket_close(struct conn *c)
{
    if (c->fd < 0)
        return;
    epoll_ctl(tcp.epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    c->want_write = false;
}

/* The connection attempt reached nobody, or somebody else: a peer of this
 * job may still be starting, or may have moved to the port it published
 * (asked for on every failure): try again a little later, up to the
 * connect timeout. A peer of another job said where it listens: nothing
 * there is final, unless a communicator here reaches it (its node process
 * may be starting to listen right now: a job over another module starts
 * its tcp module when it learns of ours, src/net/net.c): then up to the
 * port timeout. */
static void connect_failed(struct conn *c, const char *why)
{
    struct peer_state *ps = peer_state_of(c->peer);
    int port = c->port;
    conn_socket_close(c);
    c->state = CONN_CONNECTING;
    c->rpos = c->rlen = 0;          /* whatever the other program sent */
    c->in_payload = false;
    char what[300];
    int status;
    if (!c->peer->foreign && net_peer_exited(c->peer, &status)) {
        snprintf(what, sizeof what, "its node process ended (exit status %d) before it took a connection", status);
        peer_forget(ps, what);
        return;
    }
    if (!c->peer->foreign)
        net_peer_refused(c->peer);
    bool final = c->peer->foreign && atomic_load(&c->peer->users) == 0;
    if (final || net_now_seconds() > ps->give_up_at) {
        snprintf(what, sizeof what, "cannot connect to %s:%d: %s", net_peer_host(c->peer), port, why);
        peer_forget(ps, what);
        return;
    }
    retry_later(ps);
}

/* Connected: say who we are and where we listen, then wait for the answer
 * (48 bytes and a short contact on a fresh socket: the kernel takes them
 * at once; a full buffer counts as a failed attempt). */
static void hello_send(struct conn *c)
{
    unsigned char msg[WIRE_HEADER_BYTES + WIRE_CONTACT_MAX];
    size_t contact = net_self_contact((char *)msg + WIRE_HEADER_BYTES, WIRE_CONTACT_MAX);
    const struct net_job *job = tcp.job;
    struct wire_frame f = { .type = WIRE_HELLO, .payload_len = (uint32_t)contact, .a = job->job_id,
                            .b = (uint64_t)job->node, .c = (uint64_t)job->nnodes };
    wire_encode_header(msg, &f);
    ssize_t n;
    do
        n = send(c->fd, msg, WIRE_HEADER_BYTES + contact, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)(WIRE_HEADER_BYTES + contact)) {
        connect_failed(c, n < 0 ? strerror(errno) : "cannot write HELLO");
        return;
    }
    c->state = CONN_HELLO;
    c->hello_check_at = net_now_seconds() + HELLO_CHECK_MS * 1e-3;
    tcp.hellos_waiting++;
    conn_want_write(c, false);
    kick_progress();                /* the HELLO check is the progress thread's timer, as a retry */
}

/* The answer to our HELLO: the peer we meant, or another process. A
 * connection of ours that gave way to the peer's meanwhile (conn_pair)
 * then stays open and idle, or is closed quietly: nothing of ours is on it. */
static void hello_answered(struct conn *c, const struct wire_frame *f)
{
    tcp.hellos_waiting--;
    struct net_peer *peer = c->peer;
    struct peer_state *ps = peer_state_of(peer);
    bool reached = f->type == WIRE_HELLO_ACK && f->a == peer->job_id && f->b == (uint64_t)peer->job_node;
    if (c != ps->out) {
        if (reached)
            c->state = CONN_OPEN;
        else
            conn_drop(c);
        return;
    }
    if (!reached) {
        connect_failed(c, "another process answered there");
        return;
    }
    lite_lock(&c->lock);
    c->state = CONN_OPEN;
    if (!ps->gone)
        atomic_store_explicit(&ps->out_open, c, memory_order_release);
    conn_flush(c);
    lite_unlock(&c->lock);
}

/* A connection of ours closed or spoke garbage before HELLO_ACK (one
 * that gave way to the peer's: closed, nothing else). */
static void hello_failed(struct conn *c, const char *why)
{
    tcp.hellos_waiting--;
    if (c != peer_state_of(c->peer)->out)
        conn_drop(c);
    else
        connect_failed(c, why);
}

/* Progress thread, each round: connections whose HELLO is not answered
 * yet. A silent listener on a static port is told from a slow peer by the
 * store: the peer moved (published another port) or it did not. */
static void check_hellos(int *timeout_ms)
{
    if (tcp.hellos_waiting == 0)
        return;
    double now = net_now_seconds();
    for (int i = 0; i < tcp.nconns; i++) {
        struct conn *c = tcp.conns[i];
        if (c->state != CONN_HELLO)
            continue;
        if (now >= c->hello_check_at) {
            struct peer_state *ps = peer_state_of(c->peer);
            if ((!c->peer->foreign && net_peer_refused(c->peer)) || now > ps->give_up_at) {
                hello_failed(c, "no answer to HELLO (another program listens there?)");
                continue;
            }
            c->hello_check_at = now + HELLO_CHECK_MS * 1e-3;
        }
        int ms = (int)((c->hello_check_at - now) * 1e3) + 1;
        if (*timeout_ms < 0 || ms < *timeout_ms)
            *timeout_ms = ms;
    }
}

static void op_finish(struct op *op)
{
    if (op->kind == OP_DATA) {
        completion_signal(op->rndv->done);
        free(op->rndv);
        dt_stream_free(op->stream);
    }
    free(op->owned);
    free(op);
}

/* Frames the next part of a DATA answer: true when there was one (the
 * first call always frames one, possibly empty). Under the connection's
 * lock (conn_flush) or before the op is queued. */
static bool data_frame_next(struct op *op)
{
    if (op->data_sent == op->data_total && op->written > 0)
        return false;
    uint64_t left = op->data_total - op->data_sent;
    size_t limit = op->stream != NULL && STAGE_BYTES < tcp.data_frame ? STAGE_BYTES : tcp.data_frame;
    size_t part = left < limit ? (size_t)left : limit;
    if (op->stream != NULL) {
        dt_stream_pack(op->stream, op->owned, part);
        op->data = op->owned;
    } else {
        op->data = op->data_from + op->data_sent;
    }
    op->data_len = part;
    struct wire_frame d = { .type = WIRE_DATA, .payload_len = (uint32_t)part, .a = op->data_cookie,
                            .b = op->data_sent };
    wire_encode_header(op->header, &d);
    op->data_sent += part;
    op->written = 0;
    return true;
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
            struct peer_state *ps = peer_state_of(c->peer);
            if (!ps->gone && !atomic_load(&tcp.stopping))
                net_peer_lost(c->peer, strerror(errno));    /* returns for a peer nothing uses */
            conn_drop_queue(c);
            return;
        }
        op->written += (size_t)sent;
        if (op->written < WIRE_HEADER_BYTES + op->data_len)
            continue;
        if (op->kind == OP_DATA && data_frame_next(op))
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
        atomic_fetch_sub(&peer_state_of(op->peer)->pending, 1);
    op_finish(op);
}

/* Rendezvous sends to a peer that was given up: complete them (their data
 * can no longer be delivered). */
static void sends_drop_for(const struct net_peer *peer)
{
    for (uint32_t i = 0; i < tcp.sends.cap; i++) {
        struct rndv_send *s = tcp.sends.obj[i];
        if (s != NULL && s->peer == peer) {
            cookie_take(&tcp.sends, ((uint64_t)tcp.sends.gen[i] << 32) | (i + 1));
            completion_signal(s->done);
            free(s);
        }
    }
}

/* Forgets the connection to a peer given up on (its socket, its queued
 * frames, its pending rendezvous sends); its next message connects
 * afresh, reusing the connection's memory. */
static void peer_reset(struct peer_state *ps)
{
    struct conn *c = ps->out;
    atomic_store(&ps->out_open, NULL);
    if (c != NULL && c->state != CONN_CLOSED) {
        if (c->state == CONN_HELLO)
            tcp.hellos_waiting--;
        lite_lock(&c->lock);
        conn_socket_close(c);
        c->state = CONN_CLOSED;
        conn_drop_queue(c);
        lite_unlock(&c->lock);
    }
    ps->retry_at = 0;
    sends_drop_for(ps->peer);
}

/* The peer is lost or cannot be reached: net_peer_lost ends the job unless
 * nothing here uses the peer; then its connection is forgotten. Returns
 * false (for connect_peer). */
static bool peer_forget(struct peer_state *ps, const char *what)
{
    net_peer_lost(ps->peer, what);
    peer_reset(ps);
    return false;
}

/* An operation from a rank thread (or a DATA answer) for `peer`. */
static void dispatch(struct op *op)
{
    struct peer_state *ps = peer_state_of(op->peer);
    if (ps->gone || (op->kind == OP_KICK && (ps->out == NULL || ps->out->state == CONN_CLOSED))) {
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
        struct wire_frame f = { .type = WIRE_CANCEL, .dest = (uint32_t)s->dest, .a = cookie, .c = s->world };
        wire_encode_header(op->header, &f);
        op->kind = OP_FRAME;
    } else if (op->kind == OP_CTS) {
        struct net_pull *p = op->pull;
        struct wire_frame f = { .type = WIRE_CTS, .a = p->id.sender_cookie, .b = cookie_insert(&tcp.pulls, p),
                                .c = p->want };
        wire_encode_header(op->header, &f);
        ps->pulled_bytes += p->want;
        op->kind = OP_FRAME;
    }
    if ((ps->out == NULL || ps->out->state == CONN_CLOSED) && !connect_peer(op->peer)) {
        op_drop(op);
        return;
    }
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

/* A malformed frame from a peer that introduced itself ends the job
 * (from a peer of another job too: nothing it sends can be trusted). */
static _Noreturn void protocol_error(struct conn *c, const char *why)
{
    char what[200];
    snprintf(what, sizeof what, "malformed frame: %s", why);
    net_peer_lost(c->peer, what);
    char line[400];
    snprintf(line, sizeof line, "Strand MPI: node %d of job %" PRIx64 " sent a %s; ending the job\n",
             c->peer->job_node, c->peer->job_id, what);
    strand_job_abort(1, line);
}

/* A connection that never said who it was, or that cannot say: not one of
 * ours (a port scanner, a stale client): closed, nothing else. */
static void conn_drop(struct conn *c)
{
    lite_lock(&c->lock);
    conn_socket_close(c);
    c->state = CONN_CLOSED;
    conn_drop_queue(c);
    lite_unlock(&c->lock);
}

/* Our connection to the peer, still being set up, gives way to the
 * peer's `to` (tcp_pair.h): its queued frames (none of them written yet)
 * move there. One not connected yet is closed (the peer, if it accepted
 * it, sees a caller that never said who it was); one whose HELLO went out
 * stays until the peer's answer makes it an idle connection (hello_answered):
 * closed now, it would look like a crash to a peer that read the HELLO.
 * Under `to`'s lock. */
static void conn_give_way(struct conn *ours, struct conn *to)
{
    lite_lock(&ours->lock);
    if (ours->head != NULL) {
        if (to->tail == NULL)
            to->head = ours->head;
        else
            to->tail->next = ours->head;
        to->tail = ours->tail;
        ours->head = ours->tail = NULL;
    }
    if (ours->state == CONN_CONNECTING) {
        conn_socket_close(ours);
        ours->state = CONN_CLOSED;
    }
    lite_unlock(&ours->lock);
}

static enum pair_ours pair_ours_of(const struct conn *ours)
{
    if (ours == NULL || ours->state == CONN_CLOSED)
        return PAIR_OURS_NONE;
    return ours->state == CONN_OPEN ? PAIR_OURS_OPEN : PAIR_OURS_SETTING_UP;
}

/* A caller answered with HELLO_ACK: one connection per pair of node
 * processes, so its connection carries our frames to it too, unless we
 * hold one that wins (tcp_pair.h). */
static void conn_pair(struct conn *c)
{
    struct peer_state *ps = peer_state_of(c->peer);
    const struct net_job *job = tcp.job;
    bool peer_wins = pair_peer_wins(job->job_id, (uint64_t)job->node, c->peer->job_id, (uint64_t)c->peer->job_node);
    enum pair_choice choice = pair_choose(pair_ours_of(ps->out), peer_wins);
    if (ps->gone || choice == PAIR_RECEIVE_ONLY)
        return;
    lite_lock(&c->lock);
    if (choice == PAIR_ADOPT_REPLACING)
        conn_give_way(ps->out, c);
    ps->out = c;
    ps->retry_at = 0;           /* a refused connect of ours waiting to retry: not any more */
    atomic_store_explicit(&ps->out_open, c, memory_order_release);
    conn_flush(c);
    lite_unlock(&c->lock);
}

/* The first frame on an accepted connection: who is calling. Answered
 * with HELLO_ACK (this process's identity), so that the caller knows it
 * reached the node process it meant; then the connection is paired. */
static void hello_arrived(struct conn *c, const struct wire_frame *f, const char *contact)
{
    const char *why = NULL;
    struct net_peer *peer = net_peer_hello(f->a, f->b, f->c, contact, f->payload_len, &why);
    if (peer == NULL) {
        conn_drop(c);
        return;
    }
    c->peer = peer;
    const struct net_job *job = tcp.job;
    unsigned char ack[WIRE_HEADER_BYTES];
    struct wire_frame a = { .type = WIRE_HELLO_ACK, .a = job->job_id, .b = (uint64_t)job->node,
                            .c = (uint64_t)job->nnodes };
    wire_encode_header(ack, &a);
    ssize_t n;
    do
        n = send(c->fd, ack, sizeof ack, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof ack)
        conn_drop(c);
    else
        conn_pair(c);
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
    op->data_cookie = f->b;
    op->data_total = f->c;
    if (s->type->contiguous) {
        op->data_from = (const char *)s->buf + s->type->lb;
    } else if ((op->stream = dt_stream_new(s->buf, (size_t)s->count, s->type)) == NULL ||
               (op->owned = malloc(STAGE_BYTES)) == NULL) {
        out_of_memory();
    }
    data_frame_next(op);
    dispatch(op);
}

static void pull_finish(struct net_pull *p)
{
    dt_stream_free(p->stream);
    free(p->temp);
    mailbox_receive_complete(p->req, p->env.source, p->env.tag, p->env.bytes, p->want);
    free(p);
}

/* A DATA frame: the next part of a pull, at the offset where the last
 * one ended. Its payload goes straight into a contiguous receive buffer,
 * else through a staging buffer into the receive layout. */
static void data_begin(struct conn *c, const struct wire_frame *f)
{
    struct net_pull *p = cookie_find(&tcp.pulls, f->a);
    if (p == NULL || p->id.peer != c->peer)
        protocol_error(c, "DATA for an unknown pull");
    if (f->b != p->got || f->payload_len > p->want - p->got || (f->payload_len == 0 && p->want > 0))
        protocol_error(c, "DATA frame out of place or beyond what was asked");
    struct peer_state *ps = peer_state_of(c->peer);
    ps->pulled_bytes -= f->payload_len < ps->pulled_bytes ? f->payload_len : ps->pulled_bytes;
    struct strand_request *req = p->req;
    c->pdst = NULL;
    if (req->type->contiguous) {
        c->pdst = (char *)req->buf + req->type->lb + p->got;
    } else if (p->stream == NULL) {
        p->stream = dt_stream_new(req->buf, (size_t)req->count, req->type);
        p->temp = malloc(STAGE_BYTES);
        if (p->stream == NULL || p->temp == NULL)
            out_of_memory();
    }
    c->data_pull = p;
}

/* The frame ended: once every byte asked for is in, the receive completes. */
static void data_end(struct conn *c, const struct wire_frame *f)
{
    struct net_pull *p = c->data_pull;
    c->data_pull = NULL;
    p->got += f->payload_len;
    if (p->got < p->want)
        return;
    cookie_take(&tcp.pulls, f->a);
    pull_finish(p);
}

/* Where a frame's payload goes; NULL when it is consumed from rbuf at once. */
static void frame_begin(struct conn *c, const struct wire_frame *f)
{
    switch (f->type) {
    case WIRE_HELLO:
        if (c->peer != NULL)
            protocol_error(c, "unexpected HELLO");
        __attribute__((fallthrough));   /* its contact lands in the payload buffer */
    case WIRE_DPM:
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
    case WIRE_DATA:
        data_begin(c, f);
        return;
    default:
        return;
    }
}

/* The sender cancels: withdraw the message if no receive matched it yet. */
static void answer_cancel(struct conn *c, const struct wire_frame *f)
{
    struct net_pull *p = net_withdraw_remote(f->c, f->dest, c->peer, f->a);
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
        data_end(c, f);
        return;
    case WIRE_CANCEL:
        answer_cancel(c, f);
        return;
    case WIRE_CANCELLED:
        cancel_answered(c, f);
        return;
    case WIRE_BYE: {
        struct peer_state *ps = peer_state_of(c->peer);
        c->peer_said_bye = true;
        if (!ps->gone)
            net_peer_ended(c->peer);
        ps->gone = true;
        atomic_store(&ps->out_open, NULL);
        return;
    }
    case WIRE_HELLO:
        hello_arrived(c, f, payload);
        return;
    case WIRE_DPM:
        net_dpm_arrived(c->peer, f, (const unsigned char *)payload);
        return;
    default:
        return;
    }
}

/* EOF or an error. Expected after BYE, at shutdown, or from a connection
 * that never said who it was; otherwise the peer is lost (net_peer_lost
 * returns for a peer of another job that nothing here uses). */
static void conn_closed(struct conn *c, const char *why)
{
    struct peer_state *ps = c->peer != NULL ? peer_state_of(c->peer) : NULL;
    if (ps != NULL && !c->peer_said_bye && !atomic_load(&tcp.stopping) && !ps->gone)
        net_peer_lost(c->peer, why);
    if (ps != NULL && c == ps->out)
        peer_reset(ps);
    else
        conn_drop(c);
}

/* After a recv that returned n <= 0: true when reading must stop for now
 * (nothing more to read, or the connection is closed), false to retry. */
static bool read_stops(struct conn *c, ssize_t n, const char *eof_why)
{
    if (n < 0 && errno == EINTR)
        return false;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return true;
    if (c->state == CONN_HELLO)
        hello_failed(c, n == 0 ? "closed before answering HELLO" : strerror(errno));
    else
        conn_closed(c, n == 0 ? eof_why : strerror(errno));
    return true;
}

/* Where the next payload bytes of the frame being read go, and how many
 * fit there. */
static char *payload_room(struct conn *c, size_t *room)
{
    size_t left = c->frame.payload_len - c->pgot;
    if (c->pdst != NULL) {
        *room = left;
        return c->pdst + c->pgot;
    }
    *room = left < STAGE_BYTES ? left : STAGE_BYTES;
    return c->data_pull->temp;
}

static void payload_filled(struct conn *c, size_t n)
{
    if (c->pdst == NULL)
        dt_stream_unpack(c->data_pull->stream, c->data_pull->temp, n);
    c->pgot += n;
}

/* Reads what the kernel has and handles every complete frame. */
/* A large DATA payload is about to stream in: have the kernel acknowledge
 * it as it arrives. The connection carries frames both ways (one per
 * pair, tcp_pair.h): a receiver that sent a CTS just before is taken for
 * an interactive peer, whose ACKs the kernel delays to ride on its next
 * frame, and the stream then stalls on them. TCP_QUICKACK ends that mode
 * until the next such send. Only from QUICKACK_FRAME_BYTES: for smaller
 * frames the prompt ACKs cost more than they save (doc/performance.md
 * §15). */
static void ack_promptly(struct conn *c)
{
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

/* A large DATA payload streams in while more DATA is due from the same
 * peer: have epoll report the socket only once a good part of it is
 * queued, so that it arrives in a few large recvs rather than in one
 * wake-up and one system call per few segments. The mark follows what is
 * left of the frame as it comes in (rcvlowat_wanted), and is 1 again at
 * its end (rcvlowat_end). The last frame due is read as it arrives
 * (rcvlowat_begin): the mark costs a message what the reader copies after
 * its last byte is in. Linux clamps the receive window to the mark for good
 * when the buffer space the mark needs exceeds the socket's receive
 * buffer (tcp_set_rcvlowat): a 1 MiB mark then stalled a 1 MiB ping-pong.
 * A mark of at most a quarter of the buffer, read at each frame, never
 * needs that, and the window always lets more than the mark in, so the
 * sender never waits on a reader that waits on it (epoll also reports a
 * socket whose window is closing). */
static void rcvlowat_set(struct conn *c, int bytes)
{
    if (bytes < 1)
        bytes = 1;
    if (bytes == c->lowat)
        return;
    setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes);
    c->lowat = bytes;
}

/* All of the rest of the frame, up to the cap. (Half of the rest woke
 * the reader more often and lost streams 5-13 %, doc/performance.md §20.) */
static int rcvlowat_wanted(const struct conn *c)
{
    size_t rest = c->frame.payload_len - c->pgot;
    if (rest < RCVLOWAT_MIN_BYTES)
        return 1;
    return rest < (size_t)c->lowat_cap ? (int)rest : c->lowat_cap;
}

/* A large DATA frame starts: how high its mark may go (0: not raised).
 * Not at all when no more DATA is due from the peer after it: a single
 * message, or the last of a stream, waits for whatever the reader has
 * still to copy once the last byte is in, and with the mark that was up
 * to half a frame (a 1 MiB ping-pong lost 7-20 %, §20a). */
static void rcvlowat_begin(struct conn *c)
{
    c->lowat_cap = 0;
    int rcvbuf = 0;
    socklen_t len = sizeof rcvbuf;
    if (tcp.rcvlowat > 1 && peer_state_of(c->peer)->pulled_bytes > 0
        && getsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len) == 0)
        c->lowat_cap = rcvbuf / 4 < tcp.rcvlowat ? rcvbuf / 4 : tcp.rcvlowat;
}

/* The reader took all there was of the frame and waits for more: the mark
 * for the rest. Only here, where nothing of the frame is left in rbuf, is
 * the rest exactly what must still arrive on the socket; a mark above it
 * would wait for bytes that never come. */
static void rcvlowat_follow(struct conn *c)
{
    if (c->lowat_cap > 1)
        rcvlowat_set(c, rcvlowat_wanted(c));
}

static void rcvlowat_end(struct conn *c)
{
    c->lowat_cap = 0;
    if (c->lowat > 1)
        rcvlowat_set(c, 1);
}

static void conn_read(struct conn *c)
{
    /* A recv that returned less than it asked for emptied the socket: a
     * second one would only say EAGAIN (one system call more per small
     * message). Level-triggered epoll reports what arrives later. */
    bool drained = false;
    for (;;) {
        if (c->fd < 0)
            return;         /* closed or redone by the frame just handled */
        if (c->in_payload) {
            size_t room;
            char *to = payload_room(c, &room);
            size_t have = c->rlen - c->rpos;
            size_t take = have < room ? have : room;
            memcpy(to, c->rbuf + c->rpos, take);
            c->rpos += take;
            payload_filled(c, take);
            if (c->pgot < c->frame.payload_len) {
                if (drained) {
                    rcvlowat_follow(c);
                    return;
                }
                /* The rest straight into its destination (a receive buffer). */
                to = payload_room(c, &room);
                ssize_t n = recv(c->fd, to, room, MSG_DONTWAIT);
                if (n > 0) {
                    payload_filled(c, (size_t)n);
                    drained = (size_t)n < room;
                } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                    drained = true;
                } else if (read_stops(c, n, "connection closed in the middle of a message")) {
                    return;
                }
                continue;
            }
            c->in_payload = false;
            rcvlowat_end(c);
            frame_end(c, &c->frame, c->pdst);
            continue;
        }
        if (c->rlen - c->rpos >= WIRE_HEADER_BYTES) {
            const char *why = NULL;
            struct wire_frame f;
            enum wire_status st = wire_decode_header(c->rbuf + c->rpos, c->rlen - c->rpos, &tcp.limits, &f, &why);
            if (c->state == CONN_HELLO) {
                /* Ours: the answer to our HELLO comes first; then frames
                 * flow both ways (the peer may have adopted it). */
                c->rpos += WIRE_HEADER_BYTES;
                if (st != WIRE_OK)
                    hello_failed(c, "something that is not a Strand node process answered");
                else
                    hello_answered(c, &f);
                if (c->state != CONN_OPEN)
                    return;     /* redone or dropped */
                continue;
            }
            if (c->peer == NULL && (st != WIRE_OK || f.type != WIRE_HELLO)) {
                conn_drop(c);       /* not one of ours */
                return;
            }
            if (st != WIRE_OK)
                protocol_error(c, why);
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
            if (f.type == WIRE_DATA && f.payload_len >= QUICKACK_FRAME_BYTES) {
                ack_promptly(c);
                rcvlowat_begin(c);
            }
            continue;
        }
        if (drained)
            return;
        if (c->rpos > 0) {
            memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
            c->rlen -= c->rpos;
            c->rpos = 0;
        }
        size_t room = READ_BUFFER_BYTES - c->rlen;
        ssize_t n = recv(c->fd, c->rbuf + c->rlen, room, MSG_DONTWAIT);
        if (n > 0) {
            c->rlen += (size_t)n;
            drained = (size_t)n < room;
        } else if (read_stops(c, n, c->rlen != 0 ? "connection closed in the middle of a frame"
                                                   : "connection closed without goodbye")) {
            return;
        }
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

/* A connect to a port of this host on which nobody listens yet can pick
 * that very port as its own ephemeral port, and TCP's simultaneous open
 * then connects the socket to itself: we would read our own HELLO. */
static bool connected_to_itself(int fd)
{
    struct sockaddr_storage local, remote;
    socklen_t local_len = sizeof local, remote_len = sizeof remote;
    return getsockname(fd, (struct sockaddr *)&local, &local_len) == 0 &&
           getpeername(fd, (struct sockaddr *)&remote, &remote_len) == 0 && local_len == remote_len &&
           memcmp(&local, &remote, local_len) == 0;
}

static void conn_writable(struct conn *c)
{
    if (c->state == CONN_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == 0 && connected_to_itself(c->fd))
            err = ECONNREFUSED;     /* the peer does not listen yet */
        if (err != 0)
            connect_failed(c, strerror(err));
        else
            hello_send(c);
        return;
    }
    lite_lock(&c->lock);
    conn_flush(c);
    lite_unlock(&c->lock);
}

static void retry_connects(int *timeout_ms)
{
    check_hellos(timeout_ms);       /* first: it may schedule retries */
    double now = net_now_seconds();
    struct peer_state **link = &tcp.retrying;
    while (*link != NULL) {
        struct peer_state *ps = *link;
        if (ps->retry_at == 0 || now >= ps->retry_at) {
            *link = ps->retry_next;     /* out of the list before connect_peer may put it back */
            ps->in_retry_list = false;
            if (ps->retry_at != 0)
                connect_peer(ps->peer);
            continue;
        }
        int ms = (int)((ps->retry_at - now) * 1e3) + 1;
        if (*timeout_ms < 0 || ms < *timeout_ms)
            *timeout_ms = ms;
        link = &ps->retry_next;
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
        /* One whose HELLO is not answered yet has nothing of ours queued
         * (all_written) but may have given way to the peer's, which then
         * read our HELLO: a BYE there too, or the EOF looks like a crash. */
        if (c->state != CONN_OPEN && c->state != CONN_HELLO)
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

/* The eventfd is the progress thread's alone: a poller that read it
 * could swallow a kick meant to make the progress thread look again. */
static void handle_events(const struct epoll_event *events, int n, bool progress_thread)
{
    for (int i = 0; i < n; i++) {
        void *ptr = events[i].data.ptr;
        if (ptr == &tcp.listen_fd) {
            accept_all();
        } else if (ptr == &tcp.wake_fd) {
            uint64_t count;
            if (progress_thread)
                (void)!read(tcp.wake_fd, &count, sizeof count);
        } else {
            /* Events are hints: another round may have handled this one
             * already (every handler below is non-blocking). */
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
}

/* The progress thread's sleep, outside the round lock: on every socket,
 * or parked (see the top of the file). Returns the events to handle. */
static int progress_sleep(struct epoll_event *events, int timeout_ms)
{
    if (timeout_ms != 0 && net_park_announce(&tcp.park)) {
        net_park_sleep(&tcp.park, timeout_ms);
        return 0;
    }
    return epoll_wait(tcp.epfd, events, MAX_EVENTS, timeout_ms);
}

static bool tcp_progress(int timeout_ms)
{
    pthread_mutex_lock(&tcp.round);
    drain_submissions();
    retry_connects(&timeout_ms);
    if (atomic_load(&tcp.stopping) && all_written() && cds_wfcq_empty(&tcp.qhead, &tcp.qtail)) {
        say_bye();
        pthread_mutex_unlock(&tcp.round);
        return false;
    }
    pthread_mutex_unlock(&tcp.round);
    /* Announce sleep, then recheck: a submitter either sees `asleep` and
     * writes the eventfd, or we see its operation. */
    atomic_store(&tcp.asleep, true);
    if (!cds_wfcq_empty(&tcp.qhead, &tcp.qtail))
        timeout_ms = 0;
    struct epoll_event events[MAX_EVENTS];
    int n = progress_sleep(events, timeout_ms);
    atomic_store(&tcp.asleep, false);
    pthread_mutex_lock(&tcp.round);
    handle_events(events, n, true);
    pthread_mutex_unlock(&tcp.round);
    return true;
}

/* ---- rank threads that poll while they wait (net.h) ---- */

static void tcp_poll_begin(void)
{
    net_park_begin(&tcp.park);
}

/* The one connection of a node process that has no other (two node
 * processes, one connection per pair), open, with nothing waiting to be
 * written and no large payload coming in; NULL otherwise. (While a large
 * payload streams in, a spinning recv would hold the socket's lock
 * against the sender's softirq at every try: epoll_wait, which does not
 * take it, waits for the data instead.) */
static struct conn *only_connection(void)
{
    if (tcp.nconns != 1)
        return NULL;
    struct conn *c = tcp.conns[0];
    return c->state == CONN_OPEN && c->fd >= 0 && !c->want_write && !c->in_payload ? c : NULL;
}

/* One non-blocking round, unless another thread runs one. With a single
 * connection, a recv on it answers what epoll_wait would, and saves that
 * call on the way of every arrival; epoll is still asked every
 * EPOLL_EVERY_POLLS rounds, for callers on the listening socket (other
 * jobs) and whatever else it may report. */
static void tcp_poll(void)
{
    if (pthread_mutex_trylock(&tcp.round) != 0)
        return;
    drain_submissions();
    struct conn *only = only_connection();
    if (only != NULL && ++tcp.polls % EPOLL_EVERY_POLLS != 0) {
        conn_read(only);
    } else {
        struct epoll_event events[MAX_EVENTS];
        int n = epoll_wait(tcp.epfd, events, MAX_EVENTS, 0);
        handle_events(events, n, false);
    }
    drain_submissions();    /* what the arrivals queued (a CTS for a matched RTS) */
    pthread_mutex_unlock(&tcp.round);
}

static void tcp_poll_end(bool sleeping)
{
    net_park_end(&tcp.park, sleeping);
}

/* Submissions no poller will drain (net_park_end, after the poller count
 * went down: see submit). */
static bool submissions_queued(void)
{
    return !cds_wfcq_empty(&tcp.qhead, &tcp.qtail);
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
    if (bound == 0 && job->base_port == 0 && getsockname(fd, (struct sockaddr *)&addr, &len) == 0)
        port = ntohs(((struct sockaddr_in *)&addr)->sin_port);     /* any port: the kernel's choice */
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
    net_listening_on(port);
    return 0;
}

static int tcp_init(const struct net_job *job, char *why, size_t why_len)
{
    tcp.job = job;
    tcp.limits = net_wire_limits(job, UINT32_MAX);
    const char *timeout = getenv("STRAND_NET_CONNECT_TIMEOUT");
    tcp.connect_timeout = timeout != NULL ? atof(timeout) : DEFAULT_CONNECT_TIMEOUT_S;
    pthread_mutex_init(&tcp.round, NULL);
    /* 1 MiB frames: every frame of a long message starts with a prompt
     * ACK from the receiver (ack_promptly), which keeps long streams from
     * stalling on delayed ACKs (doc/performance.md §19). Tests set small
     * frames to exercise messages of many frames. */
    const char *frame = getenv("STRAND_NET_DATA_FRAME");
    long long frame_bytes = frame != NULL ? atoll(frame) : DATA_FRAME_BYTES;
    tcp.data_frame = frame_bytes >= 1 && frame_bytes <= MAX_DATA_FRAME_BYTES ? (size_t)frame_bytes : DATA_FRAME_BYTES;
    const char *lowat = getenv("STRAND_NET_RCVLOWAT");
    tcp.rcvlowat = lowat != NULL ? atoi(lowat) : RCVLOWAT_BYTES;
    timeout = getenv("STRAND_PORT_TIMEOUT");
    tcp.port_timeout = timeout != NULL ? atof(timeout) : DEFAULT_PORT_TIMEOUT_S;
    __cds_wfcq_init(&tcp.qhead, &tcp.qtail);
    tcp.peers = calloc((size_t)job->nnodes, sizeof *tcp.peers);
    if (tcp.peers == NULL) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    /* No peers: this job talks over another module, this one serves
     * other jobs' peers only (net.c, start_foreign_module). */
    for (int j = 0; job->peers != NULL && j < job->nnodes; j++) {
        tcp.peers[j].peer = &job->peers[j];
        job->peers[j].transport = &tcp.peers[j];
    }
    if (listen_on(job, why, why_len) != 0)
        return -1;
    tcp.epfd = epoll_create1(EPOLL_CLOEXEC);
    tcp.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (tcp.epfd < 0 || tcp.wake_fd < 0 || net_park_init(&tcp.park, tcp.wake_fd, kick_progress, submissions_queued) != 0) {
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

/* After BYE, before close: half-close every connection and read,
 * discarding, until the peer closes its end (it does once it has read our
 * BYE and end of file), for at most CLOSE_DRAIN_MS. A socket closed with
 * bytes still unread sends RST instead of FIN, and the peer's kernel then
 * drops what that peer had not read yet — our BYE among it, so the peer
 * would take our clean end for a crash. */
static void drain_before_close(void)
{
    struct pollfd *fds = calloc((size_t)tcp.nconns, sizeof *fds);
    int open = 0;
    for (int i = 0; fds != NULL && i < tcp.nconns; i++) {
        fds[i] = (struct pollfd){ .fd = tcp.conns[i]->fd, .events = POLLIN };
        if (fds[i].fd >= 0 && shutdown(fds[i].fd, SHUT_WR) == 0)
            open++;
        else
            fds[i].fd = -1;
    }
    double deadline = net_now_seconds() + CLOSE_DRAIN_MS * 1e-3;
    while (open > 0 && net_now_seconds() < deadline) {
        if (poll(fds, (nfds_t)tcp.nconns, (int)((deadline - net_now_seconds()) * 1e3) + 1) <= 0)
            break;
        for (int i = 0; i < tcp.nconns; i++) {
            char discard[4096];
            if (fds[i].fd < 0 || fds[i].revents == 0)
                continue;
            ssize_t n = recv(fds[i].fd, discard, sizeof discard, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                fds[i].fd = -1;     /* the peer closed: nothing more can come */
                open--;
            }
        }
    }
    free(fds);
}

static void tcp_close(void)
{
    drain_before_close();
    for (int i = 0; i < tcp.nconns; i++) {
        struct conn *c = tcp.conns[i];
        if (c->fd >= 0)
            close(c->fd);
    }
    close(tcp.listen_fd);
    close(tcp.epfd);
    close(tcp.wake_fd);
    net_park_close(&tcp.park);
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
    .poll_begin = tcp_poll_begin,
    .poll = tcp_poll,
    .poll_end = tcp_poll_end,
    .shutdown = tcp_shutdown,
    .close = tcp_close,
};
