/* Ports, MPI_Comm_accept / MPI_Comm_connect, MPI_Comm_join,
 * MPI_Comm_disconnect, within a node process and between node processes
 * of any jobs.
 *
 * A port name is printable and names the node process that opened it and
 * a tag unique there: "strand-port:HOST:PORT:JOB:NODE:TAG" (where the
 * node process listens, its job id in hex, its node index, the tag), e.g.
 * strand-port:vm:41235:5f0c3e1a9b7d2c44:0:1. Opening a port starts the
 * network layer of a job of one node process (net_ensure_started), so
 * that another process can reach it.
 *
 * The process keeps a registry of its open ports by tag (util/registry.h:
 * the network progress thread looks ports up when a connection request
 * arrives). A connecting root sends its offer (its group's highest
 * context id proposal and the group's rank identities) to the port: into
 * the port's queue directly when the port is in this process, else in a
 * DPM_CONNECT frame that the port's progress thread queues. The accepting
 * root takes the oldest request, agrees on the context id (the larger
 * proposal), and answers with the id and its own group's identities
 * (directly, or in a DPM_ACCEPT frame). The acceptor's group is side 0.
 * Each root then hands the description to its communicator (outcome.c),
 * and every node process of either group builds its copy of the
 * intercommunicator. Closing a port refuses the requests still queued and
 * wakes an acceptor waiting on it (MPI_ERR_PORT).
 *
 * Connecting fails with MPI_ERR_PORT: at once for a name that is not a
 * Strand port name, or names a port of this process that is not open; as
 * soon as the port's node process answers that the port is not open, or
 * refuses the connection (nothing listens there any more); after
 * STRAND_PORT_TIMEOUT seconds (default 10) when its host cannot be
 * reached or something else answers there. A port that is open but where
 * nobody accepts yet makes connect wait, as MPI-2.2 10.4.2 allows. */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../coll/coll.h"
#include "../net/net.h"
#include "../pt2pt/pt2pt.h"
#include "dpm.h"

/* ---- port names */

struct port_address {
    char host[160];                 /* leaves room for the rest in MPI_MAX_PORT_NAME */
    int port;                       /* where its node process listens (0: nowhere) */
    uint64_t job;
    int node;
    uint64_t tag;
};

static void port_name_make(char *out, const struct port_address *a)
{
    snprintf(out, MPI_MAX_PORT_NAME, "strand-port:%.159s:%d:%" PRIx64 ":%d:%" PRIu64, a->host, a->port, a->job,
             a->node, a->tag);
}

static bool number_field(const char *text, int base, uint64_t max, uint64_t *out)
{
    char *end;
    if (*text == '\0' || *text == '-' || *text == '+')
        return false;
    unsigned long long v = strtoull(text, &end, base);
    if (*end != '\0' || v > max)
        return false;
    *out = v;
    return true;
}

/* Fields from the right, so that the host may hold colons (IPv6). */
static bool port_parse(const char *name, struct port_address *a)
{
    char copy[MPI_MAX_PORT_NAME];
    if (strncmp(name, "strand-port:", 12) != 0 || strnlen(name, MPI_MAX_PORT_NAME) == MPI_MAX_PORT_NAME)
        return false;
    snprintf(copy, sizeof copy, "%s", name + 12);
    const char *field[4];
    for (int i = 3; i >= 0; i--) {
        char *colon = strrchr(copy, ':');
        if (colon == NULL)
            return false;
        field[i] = colon + 1;
        *colon = '\0';
    }
    uint64_t port, node;
    if (copy[0] == '\0' || strlen(copy) >= sizeof a->host || !number_field(field[0], 10, 65535, &port) ||
        !number_field(field[1], 16, UINT64_MAX, &a->job) || !number_field(field[2], 10, WIRE_MAX_NODES, &node) ||
        !number_field(field[3], 10, UINT64_MAX, &a->tag))
        return false;
    snprintf(a->host, sizeof a->host, "%s", copy);
    a->port = (int)port;
    a->node = (int)node;
    return true;
}

static bool port_is_here(const struct port_address *a)
{
    return a->job == net_self_job_id() && a->node == net_self_node();
}

/* ---- the connecting side's wait for an answer */

enum connect_state { CONNECT_WAITING, CONNECT_ANSWERED };

/* A connecting root waiting for the acceptor: answered by the accepting
 * root (same process) or by the progress thread (DPM_ACCEPT, or the
 * port's node process lost). Lives on the connector's stack; remote waits
 * are also in `waits` (found by cookie). */
struct connect_wait {
    struct connect_wait *next;
    uint64_t cookie;
    struct net_peer *peer;          /* the port's node process, NULL when here */
    struct rank *waiter;
    atomic_int state;
    struct bytes_out answer;        /* status, agreed id, the acceptor's identities */
    char why[256];                  /* the port's process cannot be reached: why */
};

/* Remote waits: touched twice per connect, never on a message path, so a
 * list under a mutex. */
static struct {
    pthread_mutex_t lock;
    struct connect_wait *list;
    uint64_t next_cookie;
} waits = { PTHREAD_MUTEX_INITIALIZER, NULL, 1 };

static void wait_answer(struct connect_wait *w, const unsigned char *answer, size_t len, const char *why)
{
    bytes_put(&w->answer, answer, len);
    if (why != NULL)
        snprintf(w->why, sizeof w->why, "%s", why);
    struct rank *waiter = w->waiter;
    atomic_store_explicit(&w->state, CONNECT_ANSWERED, memory_order_release);
    rank_wake(waiter);      /* w may be gone once the state is set */
}

/* Answers (an offer or an acceptance) start with these. */
enum { ANSWER_HEADER_BYTES = 8 };

static void answer_header(struct bytes_out *out, int status, uint32_t id)
{
    bytes_put_u32(out, (uint32_t)status);
    bytes_put_u32(out, id);
}

/* ---- the port registry */

struct connect_request {
    struct connect_request *next;
    unsigned char *offer;           /* proposal, then the connecting group's identities */
    size_t offer_len;
    struct connect_wait *local;     /* a connector of this process, or */
    struct net_peer *peer;          /* the node process of a connector elsewhere ... */
    uint64_t cookie;                /* ... and its wait there */
};

struct port {
    struct registry_node reg;       /* key (tag, 0) */
    char name[MPI_MAX_PORT_NAME];
    struct connect_request *queue, **queue_tail;    /* under ports.lock */
    struct rank *acceptor;          /* a root sleeping in accept, or NULL */
    atomic_bool closed;
    atomic_int users;               /* the registry + acceptors inside accept */
};

static struct {
    pthread_mutex_t lock;           /* queues and acceptors of every port */
    struct registry registry;
    uint64_t next_tag;
} ports = { PTHREAD_MUTEX_INITIALIZER, REGISTRY_INIT, 1 };

/* The open port `tag`, with a use (NULL if none). */
static struct port *port_use(uint64_t tag)
{
    registry_read_lock();
    struct registry_node *n = registry_find(&ports.registry, tag, 0);
    struct port *p = n != NULL ? caa_container_of(n, struct port, reg) : NULL;
    if (p != NULL && atomic_load(&p->closed))
        p = NULL;
    if (p != NULL)
        atomic_fetch_add(&p->users, 1);
    registry_read_unlock();
    return p;
}

static void port_release(struct port *p)
{
    if (atomic_fetch_sub(&p->users, 1) == 1) {
        registry_synchronize();     /* the progress thread may still be looking at it */
        free(p);
    }
}

static void connect_request_free(struct connect_request *r)
{
    free(r->offer);
    free(r);
}

/* Tells a connector its request was refused or answered: `answer` bytes. */
static void request_answer(struct connect_request *r, struct bytes_out *answer)
{
    if (r->local != NULL) {
        wait_answer(r->local, answer->data, answer->len, NULL);
        free(answer->data);
    } else if (net_dpm_send(r->peer, DPM_ACCEPT, r->cookie, 0, 0, answer->data, answer->len) != MPI_SUCCESS) {
        strand_job_abort(1, "Strand MPI: out of memory while answering a connection request\n");
    }
    answer->data = NULL;
}

static void request_refuse(struct connect_request *r)
{
    struct bytes_out no = { 0 };
    answer_header(&no, MPI_ERR_PORT, 0);
    request_answer(r, &no);
    connect_request_free(r);
}

/* Queues a request on an open port (false: not open) and wakes its acceptor. */
static bool request_queue(uint64_t tag, struct connect_request *r)
{
    struct port *p = port_use(tag);
    if (p == NULL)
        return false;
    pthread_mutex_lock(&ports.lock);
    bool open = !atomic_load(&p->closed);
    if (open) {
        r->next = NULL;
        *p->queue_tail = r;
        p->queue_tail = &r->next;
        if (p->acceptor != NULL)
            rank_wake(p->acceptor);
    }
    pthread_mutex_unlock(&ports.lock);
    port_release(p);
    return open;
}

/* Opens a port; its name goes to `name` (MPI_MAX_PORT_NAME bytes). */
static int port_open(char *name)
{
    char why[256];
    struct port *p = calloc(1, sizeof *p);
    if (p == NULL)
        return MPI_ERR_NO_MEM;
    /* Reachable from other processes; without a network (it cannot
     * start) the port still serves this process. */
    (void)net_ensure_started(why, sizeof why);
    struct port_address a = { .port = net_self_port(), .job = net_self_job_id(), .node = net_self_node() };
    snprintf(a.host, sizeof a.host, "%s", net_self_host());
    p->queue_tail = &p->queue;
    atomic_store(&p->users, 1);
    pthread_mutex_lock(&ports.lock);
    a.tag = ports.next_tag++;
    pthread_mutex_unlock(&ports.lock);
    port_name_make(p->name, &a);
    p->reg.key[0] = a.tag;
    registry_read_lock();
    struct registry_node *in = registry_add(&ports.registry, &p->reg);
    registry_read_unlock();
    if (in != &p->reg) {
        free(p);
        return MPI_ERR_NO_MEM;
    }
    memcpy(name, p->name, strlen(p->name) + 1);
    return MPI_SUCCESS;
}

int PMPI_Open_port(MPI_Info info, char *port_name)
{
    const char *where = "MPI_Open_port";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (port_name == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "port_name must not be NULL");
    (void)info; /* no port info keys: ignored, as the standard allows */
    rc = port_open(port_name);
    return rc != MPI_SUCCESS ? error_report(MPI_COMM_WORLD, rc, where, "out of memory") : MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Open_port);

/* The open port of this process that `name` names, with a use, or NULL. */
static struct port *port_named(const char *name)
{
    struct port_address a;
    if (!port_parse(name, &a) || !port_is_here(&a))
        return NULL;
    struct port *p = port_use(a.tag);
    if (p != NULL && strncmp(p->name, name, MPI_MAX_PORT_NAME) != 0) {
        port_release(p);        /* the tag of another port: a damaged name */
        p = NULL;
    }
    return p;
}

/* Closes a port: its queued connectors are refused, its acceptor woken.
 * MPI_ERR_PORT when no such port is open. */
static int port_close(const char *name)
{
    struct port *p = port_named(name);
    if (p == NULL)
        return MPI_ERR_PORT;
    pthread_mutex_lock(&ports.lock);
    bool was_open = !atomic_exchange(&p->closed, true);
    struct connect_request *queue = was_open ? p->queue : NULL;
    if (was_open) {
        p->queue = NULL;
        p->queue_tail = &p->queue;
        registry_read_lock();
        registry_remove(&ports.registry, &p->reg);
        registry_read_unlock();
        if (p->acceptor != NULL)
            rank_wake(p->acceptor);
    }
    pthread_mutex_unlock(&ports.lock);
    while (queue != NULL) {
        struct connect_request *next = queue->next;
        request_refuse(queue);
        queue = next;
    }
    port_release(p);            /* our use */
    if (was_open)
        port_release(p);        /* the registry's */
    return was_open ? MPI_SUCCESS : MPI_ERR_PORT;
}

/* Why a port name cannot be used, for messages. */
static const char *port_unknown_reason(const char *name)
{
    struct port_address a;
    if (strncmp(name, "strand-port:", 12) != 0)
        return "not a Strand port name (strand-port:HOST:PORT:JOB:NODE:TAG)";
    if (!port_parse(name, &a))
        return "a damaged port name";
    return "the port is not open (closed, or never opened)";
}

int PMPI_Close_port(char *port_name)
{
    const char *where = "MPI_Close_port";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (port_name == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "port_name must not be NULL");
    rc = port_close(port_name);
    return rc != MPI_SUCCESS ? error_report(MPI_COMM_WORLD, rc, where, "%s: %s", port_name,
                                            port_unknown_reason(port_name))
                             : MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Close_port);

/* ---- the roots' handshake */

/* What a root offers: its group's highest proposal and its identities. */
static bool offer_make(const struct strand_comm *c, uint32_t proposal, int status, struct bytes_out *out)
{
    answer_header(out, status, proposal);
    identity_encode(c->core->local_members, c->core->local_size, out);
    return !out->failed;
}

static bool port_has_request(void *arg)
{
    struct port *p = arg;
    return atomic_load_explicit(&p->closed, memory_order_acquire) ||
           __atomic_load_n(&p->queue, __ATOMIC_ACQUIRE) != NULL;
}

/* The oldest request on the port, waiting for one; NULL once it closed. */
static struct connect_request *request_take(struct port *p)
{
    struct connect_request *r = NULL;
    pthread_mutex_lock(&ports.lock);
    while (!atomic_load(&p->closed) && (r = p->queue) == NULL) {
        p->acceptor = strand_self;
        pthread_mutex_unlock(&ports.lock);
        rank_wait_until(strand_self, port_has_request, p);
        pthread_mutex_lock(&ports.lock);
        p->acceptor = NULL;
    }
    if (r != NULL) {
        p->queue = r->next;
        if (p->queue == NULL)
            p->queue_tail = &p->queue;
    }
    pthread_mutex_unlock(&ports.lock);
    return r;
}

static void accept_at_root(const char *port_name, const struct strand_comm *c, uint32_t proposal,
                           struct dpm_outcome *o)
{
    struct port *p = port_named(port_name);
    if (p == NULL) {
        o->error = MPI_ERR_PORT;
        snprintf(o->message, sizeof o->message, "%s: %s", port_name, port_unknown_reason(port_name));
        return;
    }
    struct connect_request *r = request_take(p);
    port_release(p);
    if (r == NULL) {
        o->error = MPI_ERR_PORT;
        snprintf(o->message, sizeof o->message, "%s was closed while accepting", port_name);
        return;
    }
    struct bytes_in offer = { r->offer, r->offer_len, 0, false };
    bytes_get_u32(&offer);      /* a connector's status: 0 */
    uint32_t theirs = bytes_get_u32(&offer), id = theirs > proposal ? theirs : proposal;
    struct bytes_out answer = { 0 };
    if (offer.bad || !offer_make(c, id, MPI_SUCCESS, &answer)) {
        free(answer.data);
        request_refuse(r);
        o->error = MPI_ERR_NO_MEM;
        snprintf(o->message, sizeof o->message, "out of memory, or a malformed connection request");
        return;
    }
    dpm_outcome_describe(o, id, 0, r->offer + offer.pos, bytes_left(&offer));
    request_answer(r, &answer);
    connect_request_free(r);
}

static bool connect_answered(void *arg)
{
    struct connect_wait *w = arg;
    return atomic_load_explicit(&w->state, memory_order_acquire) != CONNECT_WAITING;
}

/* Sends the offer to the port's node process, which queues it on the port. */
static int connect_remote(const struct port_address *a, struct connect_wait *w, struct bytes_out *offer)
{
    char why[256];
    if (net_ensure_started(why, sizeof why) != MPI_SUCCESS) {
        snprintf(w->why, sizeof w->why, "this process cannot reach others: %.200s", why);
        return MPI_ERR_PORT;
    }
    w->peer = net_peer_get(a->job, a->node, a->host, a->port);
    if (w->peer == NULL)
        return MPI_ERR_NO_MEM;
    pthread_mutex_lock(&waits.lock);
    w->cookie = waits.next_cookie++;
    w->next = waits.list;
    waits.list = w;
    pthread_mutex_unlock(&waits.lock);
    if (net_dpm_send(w->peer, DPM_CONNECT, a->tag, w->cookie, 0, offer->data, offer->len) != MPI_SUCCESS)
        strand_job_abort(1, "Strand MPI: out of memory while connecting\n");
    offer->data = NULL;
    return MPI_SUCCESS;
}

static void wait_forget(struct connect_wait *w)
{
    pthread_mutex_lock(&waits.lock);
    struct connect_wait **link = &waits.list;
    while (*link != NULL && *link != w)
        link = &(*link)->next;
    if (*link == w)
        *link = w->next;
    pthread_mutex_unlock(&waits.lock);
}

static void connect_at_root(const char *port_name, const struct strand_comm *c, uint32_t proposal,
                            struct dpm_outcome *o)
{
    struct port_address a;
    struct connect_wait w = { .waiter = strand_self };
    atomic_init(&w.state, CONNECT_WAITING);
    if (!port_parse(port_name, &a)) {
        o->error = MPI_ERR_PORT;
        snprintf(o->message, sizeof o->message, "%s: %s", port_name, port_unknown_reason(port_name));
        return;
    }
    /* Remote ranks must be able to reach this process's ranks. */
    char why[256];
    if (!port_is_here(&a) && net_ensure_started(why, sizeof why) != MPI_SUCCESS) {
        o->error = MPI_ERR_PORT;
        snprintf(o->message, sizeof o->message, "%s: this process cannot reach others: %s", port_name, why);
        return;
    }
    struct bytes_out offer = { 0 };
    int rc = offer_make(c, proposal, MPI_SUCCESS, &offer) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && port_is_here(&a)) {
        struct connect_request *r = calloc(1, sizeof *r);
        if (r == NULL) {
            rc = MPI_ERR_NO_MEM;
        } else {
            *r = (struct connect_request){ .offer = offer.data, .offer_len = offer.len, .local = &w };
            offer.data = NULL;
            if (!request_queue(a.tag, r)) {
                r->local = NULL;
                connect_request_free(r);
                rc = MPI_ERR_PORT;
                snprintf(w.why, sizeof w.why, "the port is not open (closed, or never opened)");
            }
        }
    } else if (rc == MPI_SUCCESS) {
        rc = connect_remote(&a, &w, &offer);
    }
    free(offer.data);
    if (rc == MPI_SUCCESS) {
        rank_wait_until(strand_self, connect_answered, &w);
        if (w.peer != NULL)
            wait_forget(&w);
    }
    struct bytes_in in = { w.answer.data, w.answer.len, 0, false };
    int status = rc == MPI_SUCCESS ? (int)bytes_get_u32(&in) : rc;
    uint32_t id = bytes_get_u32(&in);
    if (rc == MPI_SUCCESS && in.bad)
        status = MPI_ERR_PORT;      /* no answer: the port's node process was lost */
    if (status == MPI_SUCCESS) {
        dpm_outcome_describe(o, id, 1, w.answer.data + in.pos, bytes_left(&in));
    } else {
        o->error = status;
        snprintf(o->message, sizeof o->message, "%s: %s", port_name,
                 w.why[0] != '\0' ? w.why
                 : status == MPI_ERR_PORT ? "the port was closed, or is not open, before the connection was accepted"
                                          : "out of memory");
    }
    free(w.answer.data);
}

/* ---- frames from other node processes (the progress thread) */

void dpm_port_frame(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload)
{
    if (f->context_id == DPM_CONNECT) {
        struct connect_request *r = calloc(1, sizeof *r);
        unsigned char *copy = malloc(f->payload_len + 1);
        if (r == NULL || copy == NULL)
            strand_job_abort(1, "Strand MPI: out of memory for a connection request\n");
        memcpy(copy, payload, f->payload_len);
        *r = (struct connect_request){ .offer = copy, .offer_len = f->payload_len, .peer = from, .cookie = f->b };
        if (!request_queue(f->a, r))
            request_refuse(r);
        return;
    }
    /* DPM_ACCEPT: the answer to one of our waits */
    pthread_mutex_lock(&waits.lock);
    struct connect_wait *w = waits.list;
    while (w != NULL && (w->cookie != f->a || w->peer != from))
        w = w->next;
    if (w != NULL && atomic_load(&w->state) == CONNECT_WAITING)
        wait_answer(w, payload, f->payload_len, NULL);
    pthread_mutex_unlock(&waits.lock);
}

void dpm_port_peer_lost(struct net_peer *peer, const char *what)
{
    pthread_mutex_lock(&waits.lock);
    for (struct connect_wait *w = waits.list; w != NULL; w = w->next)
        if (w->peer == peer && atomic_load(&w->state) == CONNECT_WAITING)
            wait_answer(w, NULL, 0, what);
    pthread_mutex_unlock(&waits.lock);
}

struct handshake {
    const char *port_name;
    void (*at_root)(const char *port_name, const struct strand_comm *c, uint32_t proposal, struct dpm_outcome *o);
};

/* The root's part of accept or connect (dpm_root_fn). */
static struct dpm_outcome *handshake_root(struct strand_comm *c, void *arg, const struct dpm_root_context *ctx)
{
    const struct handshake *h = arg;
    struct dpm_outcome *o = dpm_outcome_alloc(c->core->local_size, 0);
    if (o != NULL && h->port_name == NULL) {
        o->error = MPI_ERR_ARG;
        snprintf(o->message, sizeof o->message, "port_name must not be NULL at the root");
    } else if (o != NULL) {
        h->at_root(h->port_name, c, ctx->proposal, o);
    }
    return o;
}

/* Every member's node process must be reachable from the other job before
 * the root hands out the group's rank identities (they name where each
 * node process listens): in a job whose own node processes talk over
 * another module than tcp, each member starts the tcp module for other
 * jobs here (net_ensure_started), before the root gathers the members'
 * proposals. One that cannot is refused by the other job's connections
 * (a loss there, MPI_ERR_PORT). */
static int accept_or_connect(const char *where, struct handshake h, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    char why[400];
    if (net_active())
        (void)net_ensure_started(why, sizeof why);
    return dpm_rooted_collective(where, comm, root, handshake_root, &h, newcomm, NULL);
}

int PMPI_Comm_accept(char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    (void)info;
    struct handshake h = { port_name, accept_at_root };
    return accept_or_connect("MPI_Comm_accept", h, root, comm, newcomm);
}
STRAND_MPI_ALIAS(MPI_Comm_accept);

int PMPI_Comm_connect(char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    (void)info;
    struct handshake h = { port_name, connect_at_root };
    return accept_or_connect("MPI_Comm_connect", h, root, comm, newcomm);
}
STRAND_MPI_ALIAS(MPI_Comm_connect);

/* ---- join: two ranks holding the two ends of a connected socket */

static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = recv(fd, buf, len, 0);
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Each side opens a port and sends its name over the socket; the side
 * with the smaller name accepts on its port, the other connects to it
 * (the two ends may be in one node process or in two of any jobs). */
int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    const char *where = "MPI_Comm_join";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (intercomm == NULL)
        return error_report(MPI_COMM_SELF, MPI_ERR_ARG, where, "intercomm must not be NULL");
    *intercomm = MPI_COMM_NULL;
    char mine[MPI_MAX_PORT_NAME] = "", theirs[MPI_MAX_PORT_NAME] = "";
    rc = port_open(mine);
    if (rc != MPI_SUCCESS)
        return error_report(MPI_COMM_SELF, rc, where, "out of memory");
    if (write_all(fd, mine, sizeof mine) != 0 || read_all(fd, theirs, sizeof theirs) != 0 ||
        memchr(theirs, '\0', sizeof theirs) == NULL) {
        port_close(mine);
        return error_report(MPI_COMM_SELF, MPI_ERR_ARG, where,
                            "fd %d is not a socket connected to another MPI_Comm_join", fd);
    }
    struct handshake h = strcmp(mine, theirs) < 0 ? (struct handshake){ mine, accept_at_root }
                                                  : (struct handshake){ theirs, connect_at_root };
    rc = accept_or_connect(where, h, 0, MPI_COMM_SELF, intercomm);
    /* Accept returns once the connector's request is taken: no side needs
     * a port any more. */
    port_close(mine);
    return rc;
}
STRAND_MPI_ALIAS(MPI_Comm_join);

/* ---- disconnect */

int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    const char *where = "MPI_Comm_disconnect";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "comm must not be NULL");
    struct strand_comm *c = comm_checked(*comm, where, &rc);
    if (c == NULL)
        return rc;
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return error_report(*comm, MPI_ERR_COMM, where, "a predefined communicator cannot be disconnected");
    /* Pending communication: the requests the program freed on comm while
     * still under way complete first (requests it still holds keep the
     * communicator's memory alive on their own, comm_retain). */
    for (;;) {
        request_reap_detached(strand_self);
        if (!request_detached_on(strand_self, c))
            break;
        sched_yield();
    }
    /* Across node processes, every member is done sending on it once all
     * are here: after that no message of it is in flight (each sender's
     * messages to a receiver arrive in order), and the proxies of other
     * jobs that only this communicator reached may go with it, which makes
     * the jobs independent again. */
    if (comm_core_spans_nodes(c->core)) {
        rc = coll_barrier(c);
        if (rc != MPI_SUCCESS)
            return error_report(*comm, rc, where, "the members could not meet");
    }
    rc = comm_free_handle(c, where);
    if (rc != MPI_SUCCESS)
        return rc;
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_disconnect);
