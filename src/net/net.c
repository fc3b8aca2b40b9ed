/* The inter-node layer (net.h): the job's layout from the launcher's
 * environment, the registry of node processes, proxy ranks, the send
 * seam, delivery of arrivals into mailboxes, and the progress thread. */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../privatize/privatize.h"
#include "../datatype/datatype.h"
#include "../dpm/dpm.h"
#include "kv.h"
#include "../rma/remote.h"
#include "net.h"
#include "pmi.h"

enum { NET_EAGER_LIMIT = 64 << 10 };

static struct net_job job;
/* The module of this job's node processes (net_start; tcp in a job of one
 * node process started on demand). */
static const struct net_ops *ops;
static pthread_t progress_thread;
/* The module of peers of other jobs: always tcp, so that jobs whatever
 * their --net reach each other through port names that name a TCP
 * host:port, over one wire protocol. The same as `ops` in a job over tcp;
 * in a job over another module, a second instance of the layer's use of
 * tcp, started on demand (start_foreign_module) with its own progress
 * thread. NULL until this process can reach other jobs. */
static const struct net_ops *foreign_ops;
static struct net_job foreign_job;  /* what that second module serves: this job's identity, no peers */
static pthread_t foreign_thread;
static bool foreign_thread_runs;
static char foreign_failed[400];    /* why it could not start, if it could not (no retry) */
/* Until then, its port held by a bound socket (reserve_static_port), or -1. */
static int reserved_port_fd = -1;
/* Upcalls that touch state shared between frames (one-sided serving,
 * dynamic-process frames) run on one thread at a time: with a second
 * module there are two progress threads. Taken always, not only once the
 * second module runs: an upcall of the first module may be under way
 * when the second starts (uncontended, it costs a few ns per frame). */
static pthread_mutex_t serve_lock = PTHREAD_MUTEX_INITIALIZER;
static bool active;                 /* several node processes of this job */
static atomic_bool started;         /* the progress thread runs */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
/* Per node: the port it listens on when it could not take its static one
 * (learned from the key-value store), else 0. Progress thread only. */
static int *moved_ports;

/* Peers of other jobs, by (job id, node index). This job's are the
 * static array job.peers, indexed directly. */
static struct registry foreign_peers = REGISTRY_INIT;
static atomic_int next_peer_index;  /* net_peer.node of the next one */

/* Who this process is, and where it listens. */
static struct {
    pthread_once_t once;
    uint64_t job_id;
    int node;
    char host[256];                 /* the contact host others connect to */
    atomic_int port;
} self = { .once = PTHREAD_ONCE_INIT };

static void publish_host(void);
static void reserve_static_port(void);

bool net_active(void) { return active; }
bool net_started(void) { return atomic_load_explicit(&started, memory_order_acquire); }

bool net_waits_poll;

/* The module that reaches `peer`. A peer of another job exists only once
 * foreign_ops is set (net_peer_get starts it first). */
static inline const struct net_ops *module_of(const struct net_peer *peer)
{
    return STRAND_LIKELY(!peer->foreign) ? ops : __atomic_load_n(&foreign_ops, __ATOMIC_ACQUIRE);
}

static bool two_modules(void)
{
    const struct net_ops *f = __atomic_load_n(&foreign_ops, __ATOMIC_ACQUIRE);
    return f != NULL && f != ops;
}


/* A waiting rank polls the tcp module for other jobs too while it runs
 * beside this job's: else every frame between jobs costs two wake-ups
 * (its progress thread's, then the rank's), and spinning waiters starve
 * that thread on a busy machine (doc/performance.md §16). Decided when the
 * wait begins, so that begin and end pair up per module. */
static __thread bool wait_polls_foreign __attribute__((tls_model("initial-exec")));

bool net_wait_begin_slow(void)
{
    ops->poll_begin();
    wait_polls_foreign = two_modules();
    if (wait_polls_foreign)
        net_tcp_ops.poll_begin();
    return true;
}

void net_wait_poll(void)
{
    ops->poll();
    if (wait_polls_foreign)
        net_tcp_ops.poll();
}

void net_wait_end(bool sleeping)
{
    ops->poll_end(sleeping);
    if (wait_polls_foreign)
        net_tcp_ops.poll_end(sleeping);
}
const struct net_job *net_job(void) { return &job; }

static _Noreturn void config_error(const char *fmt, const char *what)
{
    char line[512];
    int n = snprintf(line, sizeof line, "Strand MPI: bad node-process configuration: ");
    snprintf(line + n, sizeof line - (size_t)n, fmt, what);
    strncat(line, "\n", sizeof line - strlen(line) - 1);
    strand_job_abort(1, line);
}

static long env_number(const char *name, long fallback, long min, long max)
{
    const char *text = getenv(name);
    if (text == NULL || *text == '\0')
        return fallback;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        config_error("%s is out of range", name);
    return v;
}

/* This node's own host under PMI: STRAND_NET_HOST, else its host name. */
static char *own_host(void)
{
    const char *fixed = getenv("STRAND_NET_HOST");
    char name[256];
    if (fixed != NULL && *fixed != '\0')
        return strdup(fixed);
    if (gethostname(name, sizeof name) != 0)
        config_error("%s", "gethostname failed (set STRAND_NET_HOST)");
    name[sizeof name - 1] = '\0';
    return strdup(name);
}

/* ---- who this process is ---- */

static uint64_t random_id(void)
{
    uint64_t v = 0;
    while (v == 0)
        if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
            v = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
    return v;
}

/* The host other processes are told to connect to when this process does
 * not come from a host list: STRAND_NET_HOST, else its host name if that
 * resolves, else the loopback address (reachable from this machine). */
static void contact_host_default(char *out, size_t len)
{
    const char *fixed = getenv("STRAND_NET_HOST");
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
    if (fixed != NULL && *fixed != '\0') {
        snprintf(out, len, "%s", fixed);
        return;
    }
    if (gethostname(out, len) == 0 && (out[len - 1] = '\0', getaddrinfo(out, NULL, &hints, &res) == 0)) {
        freeaddrinfo(res);
        return;
    }
    snprintf(out, len, "127.0.0.1");
}

uint64_t net_new_world_id(void) { return random_id(); }

static void self_init(void)
{
    const char *id = getenv("STRAND_JOB_ID"), *node = getenv("STRAND_NODE_INDEX");
    self.job_id = id != NULL && *id != '\0' ? strtoull(id, NULL, 16) : 0;
    if (self.job_id == 0)
        self.job_id = random_id();
    self.node = node != NULL ? atoi(node) : 0;
    contact_host_default(self.host, sizeof self.host);
}

uint64_t net_self_job_id(void)
{
    pthread_once(&self.once, self_init);
    return self.job_id;
}

int net_self_node(void)
{
    pthread_once(&self.once, self_init);
    return self.node;
}

const char *net_self_host(void)
{
    pthread_once(&self.once, self_init);
    return self.host;
}

int net_self_port(void) { return atomic_load(&self.port); }

void net_listening_on(int port) { atomic_store(&self.port, port); }

size_t net_self_contact(char *out, size_t len)
{
    int n = snprintf(out, len, "%d %s", net_self_port(), net_self_host());
    return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* STRAND_NET_HOSTS: one host per node process, comma-separated; missing
 * entries (or no variable) mean this machine. Under PMI there is no list:
 * each node process publishes its own host, the others are looked up on
 * first use (net_peer_host). */
static void hosts_from_environment(void)
{
    job.hosts = calloc((size_t)job.nnodes, sizeof *job.hosts);
    if (job.hosts == NULL)
        config_error("%s", "out of memory");
    const char *list = getenv("STRAND_NET_HOSTS");
    if (list == NULL && pmi_active()) {
        job.hosts[job.node] = own_host();
        return;
    }
    char *copy = strdup(list != NULL ? list : "");
    char *save = NULL;
    int i = 0;
    for (char *h = strtok_r(copy, ",", &save); h != NULL && i < job.nnodes; h = strtok_r(NULL, ",", &save))
        job.hosts[i++] = strdup(h);
    for (; i < job.nnodes; i++)
        job.hosts[i] = strdup("127.0.0.1");
    free(copy);
}

/* STRAND_RANK_NODES: the node process of each world rank (under Slurm,
 * the node of each PMI rank, whatever the distribution); without it,
 * layout.h's blocks. Returns nranks entries. */
static int *rank_nodes(int nranks)
{
    int *node_of = malloc((size_t)nranks * sizeof *node_of);
    if (node_of == NULL)
        config_error("%s", "out of memory");
    const char *spec = getenv("STRAND_RANK_NODES");
    if (spec == NULL || *spec == '\0') {
        for (int j = 0; j < job.nnodes; j++)
            for (int r = net_node_first_rank(nranks, job.nnodes, job.ppn, j),
                     end = net_node_first_rank(nranks, job.nnodes, job.ppn, j + 1);
                 r < end; r++)
                node_of[r] = j;
        return node_of;
    }
    if (net_layout_list(spec, node_of, nranks, 0, job.nnodes - 1) != nranks)
        config_error("%s: one node index (below STRAND_NODES) per world rank, comma-separated", "STRAND_RANK_NODES");
    return node_of;
}

/* Node `node`'s world ranks as ranges ("3-5,9"), cut short with "...":
 * for messages. */
static void node_ranks_text(int node, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int r = 0; r < job.nranks; r++) {
        if (job.node_of[r] != node || (r > 0 && job.node_of[r - 1] == node))
            continue;
        int last = r;
        while (last + 1 < job.nranks && job.node_of[last + 1] == node)
            last++;
        int n = last > r ? snprintf(out + used, len - used, "%s%d-%d", used > 0 ? "," : "", r, last)
                         : snprintf(out + used, len - used, "%s%d", used > 0 ? "," : "", r);
        if (n < 0 || (size_t)n >= len - used) {
            snprintf(out + (used < len - 4 ? used : len - 4), 4, "...");
            return;
        }
        used += (size_t)n;
    }
}

/* ---- peers and proxies ---- */

struct rank *net_proxy_create(int world_rank, struct net_peer *peer)
{
    struct rank *r = aligned_alloc(_Alignof(struct rank), sizeof *r);
    if (r == NULL)
        return NULL;
    memset(r, 0, sizeof *r);
    r->world_rank = world_rank;
    r->remote = peer;
    pt2pt_rank_init(r);     /* an empty mailbox: cancel of a remote send looks there and finds nothing */
    if (peer->foreign)
        atomic_fetch_add(&peer->users, 1);
    __atomic_store_n(&strand_node.has_proxies, true, __ATOMIC_RELAXED);
    return r;
}

void net_proxy_destroy(struct rank *proxy)
{
    if (proxy->remote->foreign)
        atomic_fetch_sub(&proxy->remote->users, 1);
    pt2pt_rank_destroy(proxy);
    free(proxy);
}

static struct net_peer *foreign_peer_new(uint64_t job_id, int node, const char *host, int port)
{
    struct net_peer *p = calloc(1, sizeof *p);
    if (p == NULL || (p->host = strdup(host)) == NULL) {
        free(p);
        return NULL;
    }
    p->job_id = job_id;
    p->job_node = node;
    p->foreign = true;
    p->port = port;
    p->reg.key[0] = job_id;
    p->reg.key[1] = (uint64_t)node;
    return p;
}

struct net_peer *net_peer_get(uint64_t job_id, int node, const char *host, int port)
{
    if (job_id == net_self_job_id())
        return active && node >= 0 && node < job.nnodes && node != job.node ? &job.peers[node] : NULL;
    registry_read_lock();
    struct registry_node *found = registry_find(&foreign_peers, job_id, (uint64_t)node);
    registry_read_unlock();
    if (found != NULL)
        return caa_container_of(found, struct net_peer, reg);
    char why[400];
    if (net_ensure_started(why, sizeof why) != MPI_SUCCESS)
        return NULL;        /* no way to other jobs: nothing could reach it */
    struct net_peer *p = foreign_peer_new(job_id, node, host, port);
    if (p == NULL)
        return NULL;
    /* Indices after this job's: hier.c and span.c tell node processes
     * apart by them (one lost to a racing registration is never reused). */
    p->node = (active ? job.nnodes : 1) + atomic_fetch_add(&next_peer_index, 1);
    registry_read_lock();
    struct registry_node *in = registry_add(&foreign_peers, &p->reg);
    registry_read_unlock();
    if (in != &p->reg) {        /* another thread registered it first, or no memory */
        free(p->host);
        free(p);
        return in != NULL ? caa_container_of(in, struct net_peer, reg) : NULL;
    }
    return p;
}

/* "PORT HOST" (not NUL-terminated): false when malformed. */
static bool contact_parse(const char *contact, size_t len, int *port, char *host, size_t host_len)
{
    char text[WIRE_CONTACT_MAX + 1];
    if (len == 0 || len > WIRE_CONTACT_MAX)
        return false;
    memcpy(text, contact, len);
    text[len] = '\0';
    char *end;
    long p = strtol(text, &end, 10);
    if (end == text || *end != ' ' || p <= 0 || p > 65535 || end[1] == '\0' || strlen(end + 1) >= host_len)
        return false;
    for (const char *c = end + 1; *c != '\0'; c++)
        if (*c <= ' ' || *c > '~')
            return false;
    *port = (int)p;
    snprintf(host, host_len, "%s", end + 1);
    return true;
}

struct net_peer *net_peer_hello(uint64_t job_id, uint64_t node, uint64_t nnodes, const char *contact,
                                size_t contact_len, const char **why)
{
    if (job_id == net_self_job_id()) {
        if ((int)node == net_self_node() || !active) {
            *why = "HELLO from this node process itself";
            return NULL;
        }
        if (ops != &net_tcp_ops) {
            *why = "HELLO over tcp from a node process of this job, which talks over another module";
            return NULL;
        }
        return &job.peers[node];    /* the decoder checked node < nnodes of this job */
    }
    char host[256];
    int port;
    (void)nnodes;
    if (!contact_parse(contact, contact_len, &port, host, sizeof host)) {
        *why = "HELLO from another job with a malformed contact";
        return NULL;
    }
    struct net_peer *p = net_peer_get(job_id, (int)node, host, port);
    if (p == NULL)
        *why = "out of memory for a peer";
    return p;
}

/* ---- peers lost (progress thread) ----
 *
 * A node process of this job lost ends the job LOST_OWN_PEER_GRACE_S
 * later: a launcher that saw the death too ends every node process
 * meanwhile, so that the user reads its one message rather than ours, and
 * a JOB_ABORT that explains the loss may still arrive (the progress thread
 * keeps serving).
 *
 * MPI_Comm_disconnect ends when every member has reached its barrier, so
 * the other job may return from it, go on and end (or abort) while the
 * ranks here are still between that barrier and the release of the
 * proxies. A peer of another job lost while some proxy reaches it is
 * therefore given LOST_PEER_GRACE_S seconds for the proxies to go before
 * the loss ends this job; the progress thread checks every
 * LOST_PEER_CHECK_MS meanwhile. A program still using the communicator
 * (a receive from the lost job) ends after that grace, with the same
 * message. */
enum { LOST_PEER_CHECK_MS = 20, LOST_PEERS_MAX = 64 };
static const double LOST_PEER_GRACE_S = 3.0, LOST_OWN_PEER_GRACE_S = 2.0;

/* Under lost_lock: both progress threads lose peers (own and foreign). */
static struct lost_peer {
    struct net_peer *peer;
    double deadline;
    char what[160];
} lost_peers[LOST_PEERS_MAX];
static atomic_int nlost_peers;
static pthread_mutex_t lost_lock = PTHREAD_MUTEX_INITIALIZER;

static _Noreturn void foreign_peer_loss_ends_job(const struct net_peer *peer, const char *what)
{
    char line[512];
    snprintf(line, sizeof line,
             "Strand MPI: lost node %d of job %" PRIx64 " (%s:%d), which a communicator here still "
             "reaches: %s; ending the job\n",
             peer->job_node, peer->job_id, peer->host, peer->port, what);
    strand_job_abort(1, line);
}

static _Noreturn void own_peer_loss_ends_job(const struct net_peer *peer, const char *what)
{
    char line[512], ranks[64];
    node_ranks_text(peer->node, ranks, sizeof ranks);
    snprintf(line, sizeof line, "Strand MPI: node %d lost node %d (ranks %s): %s; ending the job\n", job.node,
             peer->node, ranks, what);
    strand_job_abort(1, line);
}

static _Noreturn void peer_loss_ends_job(const struct net_peer *peer, const char *what)
{
    if (peer->foreign)
        foreign_peer_loss_ends_job(peer, what);
    own_peer_loss_ends_job(peer, what);
}

/* Lost: the job ends after the peer's grace, unless (another job's peer)
 * no proxy reaches it by then (the first loss counts). */
static void peer_lost_later(struct net_peer *peer, const char *what)
{
    pthread_mutex_lock(&lost_lock);
    int n = atomic_load(&nlost_peers);
    for (int i = 0; i < n; i++)
        if (lost_peers[i].peer == peer) {
            pthread_mutex_unlock(&lost_lock);
            return;
        }
    if (n == LOST_PEERS_MAX)
        peer_loss_ends_job(peer, what);
    struct lost_peer *l = &lost_peers[n];
    l->peer = peer;
    l->deadline = net_now_seconds() + (peer->foreign ? LOST_PEER_GRACE_S : LOST_OWN_PEER_GRACE_S);
    snprintf(l->what, sizeof l->what, "%s", what);
    atomic_store(&nlost_peers, n + 1);
    pthread_mutex_unlock(&lost_lock);
}

/* Forgets the lost peers of other jobs nothing reaches any more; ends the
 * job for one still reached past its grace. Returns the progress timeout: the next
 * check while some remain, else none (-1). */
static int lost_peers_check(void)
{
    if (STRAND_LIKELY(atomic_load_explicit(&nlost_peers, memory_order_relaxed) == 0))
        return -1;
    double now = net_now_seconds();
    pthread_mutex_lock(&lost_lock);
    int n = atomic_load(&nlost_peers);
    for (int i = 0; i < n;) {
        struct lost_peer *l = &lost_peers[i];
        if (l->peer->foreign && atomic_load(&l->peer->users) == 0) {
            *l = lost_peers[--n];
            continue;
        }
        if (now >= l->deadline)
            peer_loss_ends_job(l->peer, l->what);
        i++;
    }
    atomic_store(&nlost_peers, n);
    pthread_mutex_unlock(&lost_lock);
    return n > 0 ? LOST_PEER_CHECK_MS : -1;
}

/* STRAND_NET (mpiexec --net): tcp, ucx, or auto (the default): ucx where
 * it is built and the host has a fabric UCX drives better than the tcp
 * module does (net_ucx_fabric_present), else tcp. Every node process of a
 * job must choose the same module: forced, or the same hardware everywhere
 * (doc/limits.md). */
static const struct net_ops *choose_module(void)
{
    const char *want = getenv("STRAND_NET");
    if (want == NULL || *want == '\0' || strcmp(want, "auto") == 0) {
#ifdef HAVE_UCX
        if (net_ucx_fabric_present())
            return &net_ucx_ops;
#endif
        return &net_tcp_ops;
    }
    if (strcmp(want, "tcp") == 0)
        return &net_tcp_ops;
    if (strcmp(want, "ucx") == 0) {
#ifdef HAVE_UCX
        return &net_ucx_ops;
#else
        config_error("%s=ucx, but this Strand was built without UCX (configure --with-ucx)", "STRAND_NET");
#endif
    }
    config_error("%s must be tcp, ucx or auto", "STRAND_NET");
}

/* `arg`: the module whose progress it runs. */
static void *progress_main(void *arg)
{
    const struct net_ops *module = arg;
    /* Signals are for the rank threads and the main thread. */
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    while (module->progress(lost_peers_check()))
        ;
    return NULL;
}

bool net_start(int nranks, struct rank **ranks, const int **local_out, int *count)
{
    job.nnodes = (int)env_number("STRAND_NODES", 1, 1, 1 << 20);
    if (job.nnodes == 1)
        return false;
    if (job.nnodes > nranks)
        config_error("%s: more node processes than ranks", "STRAND_NODES");
    job.nranks = nranks;
    job.node = (int)env_number("STRAND_NODE_INDEX", -1, 0, job.nnodes - 1);
    if (job.node < 0)
        config_error("%s is missing", "STRAND_NODE_INDEX");
    job.ppn = (int)env_number("STRAND_PPN", 0, 0, nranks);
    if (job.node != net_self_node())
        config_error("%s changed while the node process started", "STRAND_NODE_INDEX");
    job.base_port = (int)env_number("STRAND_NET_PORT", 0, 1, 65535 - job.nnodes);
    if (job.base_port == 0)
        config_error("%s is missing", "STRAND_NET_PORT");
    job.job_id = net_self_job_id();
    /* Between node processes a rendezvous costs a round trip through both
     * progress threads, more than copying a medium message once more:
     * messages up to NET_EAGER_LIMIT go eager even when the local limit
     * is lower (STRAND_NET_EAGER_LIMIT overrides; every node process of
     * the job has the same environment, so all agree). */
    size_t local = strand_node.config.eager_limit;
    job.eager_limit = (size_t)env_number("STRAND_NET_EAGER_LIMIT",
                                         (long)(local > NET_EAGER_LIMIT ? local : NET_EAGER_LIMIT), 0, INT32_MAX);
    hosts_from_environment();
    snprintf(self.host, sizeof self.host, "%s", job.hosts[job.node]);
    job.peers = calloc((size_t)job.nnodes, sizeof *job.peers);
    moved_ports = calloc((size_t)job.nnodes, sizeof *moved_ports);
    job.local = malloc((size_t)nranks * sizeof *job.local);
    if (job.peers == NULL || job.local == NULL || moved_ports == NULL)
        config_error("%s", "out of memory");
    job.node_of = rank_nodes(nranks);
    for (int j = 0; j < job.nnodes; j++) {
        struct net_peer *p = &job.peers[j];
        p->node = p->job_node = j;
        p->job_id = job.job_id;
    }
    job.local_ranks = 0;
    for (int r = 0; r < nranks; r++) {
        int j = job.node_of[r];
        job.peers[j].nranks++;
        if (j == job.node)
            job.local[job.local_ranks++] = r;
        else if ((ranks[r] = net_proxy_create(r, &job.peers[j])) == NULL)
            config_error("%s", "out of memory for the remote ranks");
    }
    for (int j = 0; j < job.nnodes; j++)
        if (job.peers[j].nranks < 1)
            config_error("%s: a node process would host no rank", job.ppn > 0 ? "STRAND_PPN" : "STRAND_RANK_NODES");
    active = true;
    ops = choose_module();
    if (ops == &net_tcp_ops)
        foreign_ops = ops;
    else
        reserve_static_port();
    char why[400];
    if (ops->init(&job, why, sizeof why) != 0) {
        /* Every node process usually fails alike: let node 0 say it, and
         * the launcher end the others before they repeat it. */
        if (job.node != 0)
            sleep(1);
        char line[600];
        snprintf(line, sizeof line, "Strand MPI: node %d cannot start its %s network: %s\n", job.node,
                 ops->name, why);
        strand_job_abort(1, line);
    }
    publish_host();
    *local_out = job.local;
    *count = job.local_ranks;
    return true;
}

/* A runtime thread running `module`'s progress that never adopts a rank,
 * whichever thread starts it, with every signal blocked from its first
 * instruction. */
static int progress_thread_create(pthread_t *thread, const struct net_ops *module)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = strand_real_pthread_create(thread, NULL, progress_main, (void *)module);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static int progress_thread_start(void)
{
    int rc = progress_thread_create(&progress_thread, ops);
    if (rc == 0)
        atomic_store_explicit(&started, true, memory_order_release);
    return rc;
}

static bool on_progress_thread(void)
{
    return pthread_equal(pthread_self(), progress_thread) ||
           (foreign_thread_runs && pthread_equal(pthread_self(), foreign_thread));
}

void net_run(void)
{
    if (!active)
        return;
    int rc = progress_thread_start();
    if (rc != 0)
        config_error("cannot create the progress thread: %s", strerror(rc));
    /* STRAND_NET_RANK_POLL=0: only the progress thread reads the network
     * (for measurements). */
    net_waits_poll = ops->poll != NULL && env_number("STRAND_NET_RANK_POLL", 1, 0, 1) == 1;
}

/* The layer of a job of one node process, started on demand: the job is
 * this process alone, listening on any port (its host's address given by
 * STRAND_NET_HOST, else every address). */
static int start_alone(char *why, size_t why_len)
{
    job.nnodes = 1;
    job.node = net_self_node();
    job.job_id = net_self_job_id();
    job.nranks = job.local_ranks = strand_node.config.nranks;
    job.base_port = 0;
    size_t local = strand_node.config.eager_limit;
    job.eager_limit = local > NET_EAGER_LIMIT ? local : NET_EAGER_LIMIT;
    const char *bind_host = getenv("STRAND_NET_HOST");
    job.hosts = calloc(1, sizeof *job.hosts);
    job.peers = calloc(1, sizeof *job.peers);
    if (job.hosts == NULL || job.peers == NULL ||
        (job.hosts[0] = strdup(bind_host != NULL && *bind_host != '\0' ? bind_host : "0.0.0.0")) == NULL) {
        snprintf(why, why_len, "out of memory");
        return MPI_ERR_NO_MEM;
    }
    ops = &net_tcp_ops;
    if (ops->init(&job, why, why_len) != 0)
        return MPI_ERR_OTHER;
    int rc = progress_thread_start();
    if (rc != 0) {
        snprintf(why, why_len, "cannot create the progress thread: %s", strerror(rc));
        return MPI_ERR_OTHER;
    }
    __atomic_store_n(&foreign_ops, ops, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

/* A job over another module than tcp: the node's static port, where
 * net_peer_contact says it listens for other jobs, is held from the start
 * by a bound socket that does not listen (another job's connection is
 * refused as if nothing ran there), so that no outgoing connection takes
 * it as its local port meanwhile (mpiexec's ports lie in the ephemeral
 * range, and the tcp module may start hours later); start_foreign_module
 * closes it right before the tcp module binds the port. Taken already:
 * none (the tcp module then listens elsewhere and publishes it, as at
 * the start of a job over tcp). */
static void reserve_static_port(void)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
    struct addrinfo *res = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", job.base_port + job.node);
    if (getaddrinfo(job.hosts[job.node], port, &hints, &res) != 0)
        return;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && bind(fd, res->ai_addr, res->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    reserved_port_fd = fd;
}

static void release_static_port(void)
{
    if (reserved_port_fd >= 0)
        close(reserved_port_fd);
    reserved_port_fd = -1;
}

/* A job of several node processes over another module than tcp: the tcp
 * module for peers of other jobs, next to it. It listens where this job's
 * node would over tcp (base_port + node on its host, net_peer_contact's
 * static rule; a taken port is replaced and published as over tcp), has
 * its own state and progress thread, and waiting ranks poll it too
 * (net_wait_poll). Never retried: a failure is kept and told to every
 * later caller. */
static int start_foreign_module(char *why, size_t why_len)
{
    if (foreign_failed[0] != '\0') {
        snprintf(why, why_len, "%s", foreign_failed);
        return MPI_ERR_OTHER;
    }
    foreign_job = job;
    foreign_job.peers = NULL;   /* this job's peers are the other module's */
    release_static_port();
    int rc = net_tcp_ops.init(&foreign_job, foreign_failed, sizeof foreign_failed);
    if (rc == 0 && (rc = progress_thread_create(&foreign_thread, &net_tcp_ops)) != 0)
        snprintf(foreign_failed, sizeof foreign_failed, "cannot create the progress thread of tcp: %s",
                 strerror(rc));
    if (rc != 0) {
        snprintf(why, why_len, "%s", foreign_failed);
        return MPI_ERR_OTHER;
    }
    foreign_thread_runs = true;
    __atomic_store_n(&foreign_ops, &net_tcp_ops, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

int net_ensure_started(char *why, size_t why_len)
{
    if (__atomic_load_n(&foreign_ops, __ATOMIC_ACQUIRE) != NULL)
        return MPI_SUCCESS;
    pthread_mutex_lock(&start_lock);
    int rc = foreign_ops != NULL ? MPI_SUCCESS
             : net_started()     ? start_foreign_module(why, why_len)
                                 : start_alone(why, why_len);
    pthread_mutex_unlock(&start_lock);
    return rc;
}

void net_end(void)
{
    if (!net_started())
        return;
    net_waits_poll = false;
    /* Both modules say BYE to their peers and drain, each on its thread. */
    pthread_mutex_lock(&start_lock);
    bool second = foreign_thread_runs;
    release_static_port();
    pthread_mutex_unlock(&start_lock);
    ops->shutdown();
    if (second)
        net_tcp_ops.shutdown();
    pthread_join(progress_thread, NULL);
    if (second)
        pthread_join(foreign_thread, NULL);
    ops->close();
    if (second)
        net_tcp_ops.close();
    if (active)
        pmi_finalize();
    active = false;
    atomic_store(&started, false);
}

/* ---- MPI_Abort without a launcher that passes the code on ----
 *
 * Under srun --mpi=pmi2 the process manager's abort kills every task, and
 * srun then exits with 137 whatever the code (it reports 128 + the signal
 * when a task was killed, else the highest exit code). So the node
 * process that aborts has every other one exit with the code itself, in
 * WIRE_DPM frames of the layer's own kinds:
 *  1. JOB_ABORT (a: status) to every other node process: each answers
 *     JOB_ABORT_ACK and from then on exits with the status when it loses
 *     any peer;
 *  2. once every node process answered (or had ended already),
 *     JOB_ABORT_GO to each: they exit; the aborting one exits at the first
 *     loss that shows they go, or JOB_ABORT_GONE_S later (the frames had
 *     time to leave; a node process that missed GO sees the aborting one
 *     go).
 * No node process exits before all know the status, so none takes another
 * one's exit for a failure. PMI's abort, the kill, only when some do not
 * answer within JOB_ABORT_WAIT_S or the caller cannot wait (the progress
 * thread, or the layer not running yet). */
enum {                                  /* beside src/dpm's kinds (dpm.h), never one of them */
    NET_DPM_JOB_ABORT = 0x4a41, NET_DPM_JOB_ABORT_ACK, NET_DPM_JOB_ABORT_GO,
};
static const double JOB_ABORT_WAIT_S = 5.0, JOB_ABORT_GONE_S = 1.0;

static struct {
    atomic_bool known;                  /* the job aborts with `status`: a loss ends this process */
    atomic_int status;
    atomic_bool *acked;                 /* on the aborting node: by node, JOB_ABORT_ACK received */
} job_abort;

static _Noreturn void exit_aborted(void)
{
    syscall(SYS_exit_group, atomic_load(&job_abort.status));
    __builtin_unreachable();
}

/* Every other node process answered JOB_ABORT, or had ended (its ranks
 * all finished). */
static bool all_acked(void)
{
    for (int j = 0; j < job.nnodes; j++)
        if (j != job.node && !atomic_load(&job_abort.acked[j]) && !atomic_load(&job.peers[j].ended))
            return false;
    return true;
}

static bool never(void) { return false; }

/* Waits up to `seconds` for `done`. */
static bool abort_wait(bool (*done)(void), double seconds)
{
    for (double end = net_now_seconds() + seconds; net_now_seconds() < end;) {
        if (done())
            return true;
        struct timespec ms5 = { 0, 5000000 };
        nanosleep(&ms5, NULL);
    }
    return done();
}

/* JOB_ABORT or JOB_ABORT_GO to every other node process. */
static bool abort_tell_all(uint32_t kind, int status)
{
    for (int j = 0; j < job.nnodes; j++)
        if (j != job.node &&
            net_dpm_send(&job.peers[j], kind, (uint64_t)(unsigned)status, 0, 0, NULL, 0) != MPI_SUCCESS)
            return false;
    return true;
}

/* Any thread but the progress thread: has the job's other node processes
 * exit with `status`. True when all went (the caller exits with it). */
static bool peers_abort(int status)
{
    if (!net_started() || on_progress_thread() ||
        (job_abort.acked = calloc((size_t)job.nnodes, sizeof *job_abort.acked)) == NULL)
        return false;
    atomic_store(&job_abort.status, status);
    atomic_store(&job_abort.known, true);
    if (!abort_tell_all(NET_DPM_JOB_ABORT, status) || !abort_wait(all_acked, JOB_ABORT_WAIT_S) ||
        !abort_tell_all(NET_DPM_JOB_ABORT_GO, status))
        return false;
    abort_wait(never, JOB_ABORT_GONE_S);
    return true;
}

/* The layer's own WIRE_DPM frames (from this job's node processes). */
static void job_abort_frame(struct net_peer *from, const struct wire_frame *f)
{
    switch (f->context_id) {
    case NET_DPM_JOB_ABORT:
        atomic_store(&job_abort.status, (int)(unsigned)f->a);
        atomic_store(&job_abort.known, true);
        net_dpm_send(from, NET_DPM_JOB_ABORT_ACK, 0, 0, 0, NULL, 0);
        return;
    case NET_DPM_JOB_ABORT_ACK:
        if (job_abort.acked != NULL)
            atomic_store(&job_abort.acked[from->node], true);
        return;
    default:
        exit_aborted();     /* GO: the aborting rank said why */
    }
}

void net_job_aborting(int status, const char *message)
{
    if (pmi_active() && !pmi_abort_has_status()) {
        /* One node process: its exit is the job's (the node's other
         * tasks left after the fence, with 0). */
        if (!active || peers_abort(status))
            return;
    }
    pmi_abort(status, message);
}

/* ---- addressing: the static rule, then the store ---- */

/* The job's store: PMI's key-value space under srun, else mpiexec's. */
bool net_store_available(void)
{
    return pmi_active() || net_kv_available();
}

int net_store_get(int node, const char *key, char *value, size_t len)
{
    return pmi_active() ? pmi_get(node, key, value, len) : net_kv_get(key, value, len);
}

int net_store_put(const char *key, const char *value, char *why, size_t why_len)
{
    if (!pmi_active())
        return net_kv_put(key, value, why, why_len);
    if (pmi_put(key, value) == 0)
        return 0;
    snprintf(why, why_len, "cannot put %s in PMI's key-value space", key);
    return -1;
}

/* Under PMI: this node's host goes to the key-value space, then the one
 * fence of the job (every task takes part in it, see pmi.c). */
static void publish_host(void)
{
    if (!pmi_active())
        return;
    char key[32];
    snprintf(key, sizeof key, "host.%d", job.node);
    if (pmi_put(key, job.hosts[job.node]) != 0)
        config_error("%s: PMI2_KVS_Put failed", key);
    pmi_fence();
}

/* This job's node `node`'s host: from the host list, else (under PMI)
 * looked up in the store on first use, by any thread (the first to
 * publish it wins); NULL when the store has none. */
static const char *own_peer_host(int node)
{
    char key[32], value[256];
    const char *h = __atomic_load_n(&job.hosts[node], __ATOMIC_ACQUIRE);
    if (h != NULL)
        return h;
    snprintf(key, sizeof key, "host.%d", node);
    char *found = net_store_get(node, key, value, sizeof value) == 1 ? strdup(value) : NULL;
    if (found == NULL)
        return NULL;
    char *expected = NULL;
    if (__atomic_compare_exchange_n(&job.hosts[node], &expected, found, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return found;
    free(found);
    return expected;
}

const char *net_peer_host(const struct net_peer *peer)
{
    if (peer->foreign)
        return peer->host;
    const char *h = own_peer_host(peer->node);
    return h != NULL ? h : "(unknown: not in the key-value space)";
}

/* For another process: a node of this job listens at its static port (or
 * the one it published, once a refusal here learned it), over tcp or, in
 * a job over another module, in the tcp module it runs for other jobs. */
void net_peer_contact(const struct net_peer *peer, const char **host, int *port)
{
    if (peer->foreign) {
        *host = peer->host;
        *port = peer->port;
        return;
    }
    const char *h = own_peer_host(peer->node);
    *host = h != NULL ? h : "";
    *port = net_peer_port(peer);
}

int net_peer_port(const struct net_peer *peer)
{
    if (peer->foreign)
        return peer->port;
    int moved = moved_ports[peer->node];
    return moved != 0 ? moved : job.base_port + peer->node;
}

bool net_peer_refused(const struct net_peer *peer)
{
    char key[32], value[32];
    if (peer->foreign)
        return false;       /* it said where it listens: there is nowhere else to look */
    snprintf(key, sizeof key, "port.%d", peer->node);
    if (net_store_get(peer->node, key, value, sizeof value) == 1) {
        long port = strtol(value, NULL, 10);
        if (port > 0 && port < 65536 && port != net_peer_port(peer)) {
            moved_ports[peer->node] = (int)port;
            return true;
        }
    }
    return false;
}

bool net_peer_exited(const struct net_peer *peer, int *status)
{
    char request[32], answer[64];
    if (peer->foreign || pmi_active() || !net_kv_available())
        return false;
    snprintf(request, sizeof request, "exited %d", peer->node);
    if (!net_kv_request(request, answer, sizeof answer) || strncmp(answer, "value ", 6) != 0)
        return false;
    *status = (int)strtol(answer + 6, NULL, 10);
    return true;
}

bool net_port_fallback_allowed(void)
{
    return net_store_available();
}

int net_publish_port(int port, char *why, size_t why_len)
{
    char key[32], value[32];
    snprintf(key, sizeof key, "port.%d", job.node);
    snprintf(value, sizeof value, "%d", port);
    return net_store_put(key, value, why, why_len);
}

static struct net_envelope envelope_of(const struct rank *dest, const struct message *m)
{
    return (struct net_envelope){
        .context_id = m->context_id,
        .source = m->source,
        .tag = m->tag,
        .dest = dest->world_rank,
        .bytes = m->bytes,
        .world = dest->world->gid,
    };
}

enum delivery net_send_message(struct rank *dest, const struct message *m, bool sync,
                               struct completion *done)
{
    struct net_envelope env = envelope_of(dest, m);
    const struct net_ops *module = module_of(dest->remote);
    if (!sync && m->bytes <= job.eager_limit) {
        if (module->send_eager(dest->remote, &env, m->buf, m->count, m->type) != MPI_SUCCESS)
            strand_job_abort(1, "Strand MPI: out of memory for a message to another node process\n");
        return QUEUED_EAGER;
    }
    done->queued = NULL;    /* not cancellable: it is in no local mailbox */
    if (module->send_rendezvous(dest->remote, &env, m->buf, m->count, m->type, done) != MPI_SUCCESS)
        strand_job_abort(1, "Strand MPI: out of memory for a message to another node process\n");
    return QUEUED_RENDEZVOUS;
}

void net_cancel_send(struct rank *dest, struct completion *done)
{
    module_of(dest->remote)->cancel_send(dest->remote, done);
}

/* Its first member is its id (net.h): the module is the sender's. */
static const struct net_ops *module_of_pull(const struct net_pull *pull)
{
    return module_of(((const struct net_pull_id *)pull)->peer);
}

void net_pull(struct net_pull *pull, struct strand_request *req)
{
    module_of_pull(pull)->pull(pull, req);
}

static struct message message_of(const struct net_envelope *env, const void *data)
{
    return (struct message){
        .context_id = env->context_id,
        .source = env->source,
        .tag = env->tag,
        .buf = data,
        .count = (int)env->bytes,
        .type = MPI_BYTE,
        .bytes = env->bytes,
    };
}

/* The launched world's ranks are found by index; other worlds' through
 * their registry, inside its read-side section (the world cannot go away
 * while its rank receives). The decoder checked that the rank is here;
 * a world that ended since then drops the message. */
static bool launched_world(uint64_t world) { return world == job.job_id || world == net_self_job_id(); }

void net_arrived_eager(const struct net_envelope *env, const void *data)
{
    struct message m = message_of(env, data);
    if (STRAND_LIKELY(launched_world(env->world))) {
        mailbox_deliver_remote(strand_node.ranks[env->dest], &m, NULL);
        return;
    }
    registry_read_lock();
    struct rank *r = world_rank_here(env->world, env->dest);
    if (r != NULL)
        mailbox_deliver_remote(r, &m, NULL);
    registry_read_unlock();
}

void net_arrived_rendezvous(const struct net_envelope *env, struct net_pull *pull)
{
    struct message m = message_of(env, NULL);
    struct strand_request *matched = NULL;
    if (STRAND_LIKELY(launched_world(env->world))) {
        matched = mailbox_deliver_remote(strand_node.ranks[env->dest], &m, pull);
    } else {
        registry_read_lock();
        struct rank *r = world_rank_here(env->world, env->dest);
        if (r != NULL)
            matched = mailbox_deliver_remote(r, &m, pull);
        registry_read_unlock();
    }
    if (matched != NULL)
        module_of_pull(pull)->pull(pull, matched);
}

/* Its first member is its id (net.h). */
static bool pull_named(const struct net_pull *p, const void *arg)
{
    const struct net_pull_id *id = (const struct net_pull_id *)p, *wanted = arg;
    return id->peer == wanted->peer && id->sender_cookie == wanted->sender_cookie;
}

struct net_pull *net_withdraw_remote(uint64_t world, uint32_t dest, struct net_peer *peer, uint64_t cookie)
{
    struct net_pull_id wanted = { peer, cookie };
    if (launched_world(world))
        return mailbox_withdraw_remote(strand_node.ranks[dest], pull_named, &wanted);
    registry_read_lock();
    struct rank *r = world_rank_here(world, (int)dest);
    struct net_pull *p = r != NULL ? mailbox_withdraw_remote(r, pull_named, &wanted) : NULL;
    registry_read_unlock();
    return p;
}

bool net_world_rank_here(uint64_t world, uint32_t rank)
{
    if (launched_world(world))
        return rank < (uint32_t)strand_node.config.nranks && strand_node.ranks[rank]->remote == NULL;
    registry_read_lock();
    bool here = world_rank_here(world, (int)rank) != NULL;
    registry_read_unlock();
    return here;
}

const char *net_rma_arrived(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload)
{
    static const struct wire_limits windows = { .window = net_rma_window, .acc_element = net_rma_acc_element };
    if (f->type == WIRE_RMA_PUT || f->type == WIRE_RMA_ACC || f->type == WIRE_RMA_GET) {
        const char *why = wire_check_rma_blocks(f, payload, &windows);
        if (why != NULL)
            return why;
    }
    pthread_mutex_lock(&serve_lock);
    rma_remote_serve(from, f, payload);
    pthread_mutex_unlock(&serve_lock);
    return NULL;
}

int net_rma_send(struct net_peer *peer, const struct net_rma *frame, void *payload, size_t payload_len)
{
    return module_of(peer)->rma_send(peer, frame, payload, payload_len);
}

bool net_rma_window(uint64_t id, uint32_t dest, uint32_t source, struct wire_window *out)
{
    return rma_remote_window(id, dest, source, out);
}

bool net_rma_acc_element(uint32_t op, uint32_t element, struct wire_element *out)
{
    return rma_remote_acc_element(op, element, out);
}

int net_dpm_send(struct net_peer *peer, uint32_t kind, uint64_t a, uint64_t b, uint64_t c, void *payload,
                 size_t payload_len)
{
    if (atomic_load(&peer->ended)) {
        free(payload);
        dpm_peer_lost(peer, "it ended (its ranks all finished)");
        return MPI_SUCCESS;
    }
    struct net_rma f = { .type = WIRE_DPM, .flags = kind, .window = a, .b = b, .c = c };
    return module_of(peer)->rma_send(peer, &f, payload, payload_len);
}

void net_dpm_arrived(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload)
{
    if (f->context_id >= NET_DPM_JOB_ABORT && f->context_id <= NET_DPM_JOB_ABORT_GO && !from->foreign) {
        job_abort_frame(from, f);
        return;
    }
    pthread_mutex_lock(&serve_lock);
    dpm_frame_arrived(from, f, payload);
    pthread_mutex_unlock(&serve_lock);
}

void net_peer_ended(struct net_peer *peer)
{
    atomic_store(&peer->ended, true);
    dpm_peer_lost(peer, "it ended (its ranks all finished)");
}

void net_peer_lost(struct net_peer *peer, const char *what)
{
    if (peer->foreign) {
        /* Nothing waiting for it can succeed now; whether the job ends
         * too is decided once the disconnects under way had their time. */
        dpm_peer_lost(peer, what);
        if (atomic_load(&peer->users) != 0)
            peer_lost_later(peer, what);
        return;
    }
    if (atomic_load(&job_abort.known))
        exit_aborted();     /* it goes because the job aborts */
    peer_lost_later(peer, what);
}

_Noreturn void net_peer_lost_fatal(struct net_peer *peer, const char *what)
{
    net_peer_lost(peer, what);
    if (!peer->foreign)
        sleep((unsigned)LOST_OWN_PEER_GRACE_S);
    peer_loss_ends_job(peer, what);
}
