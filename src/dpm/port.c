/* Ports, MPI_Comm_accept / MPI_Comm_connect, MPI_Comm_join,
 * MPI_Comm_disconnect, within one node process.
 *
 * A port name is printable: "strand-port:HOST:PID:TAG" names the node
 * process and a tag unique in it. The process keeps a table of its open
 * ports. A connecting root queues a request (its group, on its stack) on
 * the port and sleeps; the accepting root takes the oldest request, builds
 * the intercommunicator (acceptor's group: side 0, connector's: side 1),
 * hands side 1 to the connector and wakes it. Each root then passes its
 * side to its communicator (outcome.c). Closing a port refuses the requests
 * still queued and wakes an acceptor waiting on it (MPI_ERR_PORT).
 *
 * A port of another process (another PID or host) needs the network layer:
 * connecting to it fails with MPI_ERR_PORT, as a bogus or closed name does,
 * at once (the bounded wait is zero: a name of this process that is not in
 * the table can never become valid, tags are not reused). */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../pt2pt/pt2pt.h"
#include "dpm.h"

enum connect_state { CONNECT_QUEUED, CONNECT_ACCEPTED, CONNECT_REFUSED };

struct connect_request {
    struct connect_request *next;
    struct rank **members;          /* the connecting group */
    int size;
    struct rank *waiter;            /* the connecting root */
    atomic_int state;
    struct comm_core *core;         /* ACCEPTED: the connector's side (one reference per member) */
    int accept_error;               /* ACCEPTED with core NULL: why */
};

struct port {
    struct port *next;
    char name[MPI_MAX_PORT_NAME];
    struct connect_request *queue, **queue_tail;
    struct rank *acceptor;          /* a root sleeping in accept, or NULL */
    atomic_bool closed;
    atomic_int users;               /* the table + acceptors inside accept */
};

static struct {
    pthread_mutex_t lock;
    struct port *list;
    uint64_t next_tag;
} ports = { PTHREAD_MUTEX_INITIALIZER, NULL, 1 };

static void port_name_make(char *out, uint64_t tag)
{
    char host[128];
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(out, MPI_MAX_PORT_NAME, "strand-port:%s:%ld:%" PRIu64, host, (long)getpid(), tag);
}

/* Under the lock. */
static struct port *port_find(const char *name)
{
    struct port *p = ports.list;
    while (p != NULL && strncmp(p->name, name, MPI_MAX_PORT_NAME) != 0)
        p = p->next;
    return p;
}

static void port_release(struct port *p)
{
    if (atomic_fetch_sub(&p->users, 1) == 1)
        free(p);
}

/* Why a port name cannot be used, for messages. */
static const char *port_unknown_reason(const char *name)
{
    long pid;
    if (strncmp(name, "strand-port:", 12) != 0)
        return "not a Strand port name (strand-port:HOST:PID:TAG)";
    const char *p = strchr(name + 12, ':');
    if (p == NULL || sscanf(p + 1, "%ld:", &pid) != 1)
        return "a damaged port name";
    if (pid != (long)getpid())
        return "a port of another node process (connecting across processes needs the network layer)";
    return "the port is not open (closed, or never opened)";
}

/* Opens a port; its name goes to `name` (MPI_MAX_PORT_NAME bytes). */
static int port_open(char *name)
{
    struct port *p = calloc(1, sizeof *p);
    if (p == NULL)
        return MPI_ERR_NO_MEM;
    p->queue_tail = &p->queue;
    atomic_store(&p->users, 1);
    pthread_mutex_lock(&ports.lock);
    port_name_make(p->name, ports.next_tag++);
    p->next = ports.list;
    ports.list = p;
    pthread_mutex_unlock(&ports.lock);
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

/* Closes a port: its queued connectors are refused, its acceptor woken.
 * MPI_ERR_PORT when no such port is open. */
static int port_close(const char *name)
{
    pthread_mutex_lock(&ports.lock);
    struct port **pp = &ports.list;
    while (*pp != NULL && strncmp((*pp)->name, name, MPI_MAX_PORT_NAME) != 0)
        pp = &(*pp)->next;
    struct port *p = *pp;
    if (p != NULL) {
        *pp = p->next;
        atomic_store(&p->closed, true);
        for (struct connect_request *r = p->queue; r != NULL;) {
            struct connect_request *next = r->next;
            struct rank *waiter = r->waiter;
            atomic_store_explicit(&r->state, CONNECT_REFUSED, memory_order_release);
            rank_wake(waiter);      /* r may be gone once the state is set */
            r = next;
        }
        p->queue = NULL;
        if (p->acceptor != NULL)
            rank_wake(p->acceptor);
    }
    pthread_mutex_unlock(&ports.lock);
    if (p == NULL)
        return MPI_ERR_PORT;
    port_release(p);
    return MPI_SUCCESS;
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

static bool port_has_request(void *arg)
{
    struct port *p = arg;
    return atomic_load_explicit(&p->closed, memory_order_acquire) ||
           __atomic_load_n(&p->queue, __ATOMIC_ACQUIRE) != NULL;
}

static void accept_at_root(const char *port_name, const struct strand_comm *c, struct dpm_outcome *o)
{
    pthread_mutex_lock(&ports.lock);
    struct port *p = port_find(port_name);
    if (p != NULL)
        atomic_fetch_add(&p->users, 1);
    pthread_mutex_unlock(&ports.lock);
    if (p == NULL) {
        o->error = MPI_ERR_PORT;
        snprintf(o->message, sizeof o->message, "%s: %s", port_name, port_unknown_reason(port_name));
        return;
    }
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
    if (r == NULL) {
        o->error = MPI_ERR_PORT;
        snprintf(o->message, sizeof o->message, "%s was closed while accepting", port_name);
    } else {
        struct comm_core *lc = c->core;
        o->core = comm_intercomm_pair_create(lc->local_members, lc->local_size, r->members, r->size);
        if (o->core == NULL) {
            o->error = r->accept_error = MPI_ERR_NO_MEM;
            snprintf(o->message, sizeof o->message, "out of memory");
        }
        r->core = o->core != NULL ? o->core->peer : NULL;
        struct rank *waiter = r->waiter;
        atomic_store_explicit(&r->state, CONNECT_ACCEPTED, memory_order_release);
        rank_wake(waiter);
    }
    port_release(p);
}

static bool connect_answered(void *arg)
{
    struct connect_request *r = arg;
    return atomic_load_explicit(&r->state, memory_order_acquire) != CONNECT_QUEUED;
}

static void connect_at_root(const char *port_name, const struct strand_comm *c, struct dpm_outcome *o)
{
    struct connect_request r = { .members = c->core->local_members, .size = c->core->local_size,
                                 .waiter = strand_self };
    atomic_init(&r.state, CONNECT_QUEUED);
    pthread_mutex_lock(&ports.lock);
    struct port *p = port_find(port_name);
    if (p != NULL) {
        *p->queue_tail = &r;
        p->queue_tail = &r.next;
        if (p->acceptor != NULL)
            rank_wake(p->acceptor);
    }
    pthread_mutex_unlock(&ports.lock);
    if (p == NULL) {
        o->error = MPI_ERR_PORT;
        snprintf(o->message, sizeof o->message, "%s: %s", port_name, port_unknown_reason(port_name));
        return;
    }
    rank_wait_until(strand_self, connect_answered, &r);
    if (atomic_load(&r.state) == CONNECT_REFUSED) {
        o->error = MPI_ERR_PORT;
        snprintf(o->message, sizeof o->message, "%s was closed before the connection was accepted", port_name);
    } else if (r.core == NULL) {
        o->error = r.accept_error;
        snprintf(o->message, sizeof o->message, "the accepting side ran out of memory");
    }
    o->core = r.core;
}

struct handshake {
    const char *port_name;
    void (*at_root)(const char *port_name, const struct strand_comm *c, struct dpm_outcome *o);
};

/* The root's part of accept or connect (dpm_root_fn). */
static struct dpm_outcome *handshake_root(struct strand_comm *c, void *arg)
{
    const struct handshake *h = arg;
    struct dpm_outcome *o = dpm_outcome_alloc(c->core->local_size, 0);
    if (o != NULL && h->port_name == NULL) {
        o->error = MPI_ERR_ARG;
        snprintf(o->message, sizeof o->message, "port_name must not be NULL at the root");
    } else if (o != NULL) {
        h->at_root(h->port_name, c, o);
    }
    return o;
}

static int accept_or_connect(const char *where, struct handshake h, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
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

/* Each side opens a port and sends its name; the side with the smaller
 * name accepts on its port, the other connects to it. Both ends must be
 * ranks of this node process (a port of another process is refused by
 * connect until the network layer exists). */
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
    rc = comm_free_handle(c, where);
    if (rc != MPI_SUCCESS)
        return rc;
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_disconnect);
