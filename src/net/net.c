/* The inter-node layer (net.h): the job's layout from the launcher's
 * environment, proxy ranks, the send seam, delivery of arrivals into
 * mailboxes, and the progress thread. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../datatype/datatype.h"
#include "kv.h"
#include "../rma/remote.h"
#include "net.h"
#include "pmi.h"

enum { NET_EAGER_LIMIT = 64 << 10 };

static struct net_job job;
static const struct net_ops *ops;
static pthread_t progress_thread;
static bool active;
/* Per node: the port it listens on when it could not take its static one
 * (learned from the key-value store), else 0. Progress thread only. */
static int *moved_ports;

static void publish_host(void);

bool net_active(void) { return active; }
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

/* STRAND_NODE_RANKS: ranks of each node process, comma-separated (under
 * Slurm: its tasks per node); without it, layout.h's rule. Returns the
 * first world rank of each node, nnodes + 1 entries. */
static int *node_firsts(int nranks)
{
    int *first = calloc((size_t)job.nnodes + 1, sizeof *first);
    if (first == NULL)
        config_error("%s", "out of memory");
    const char *counts = getenv("STRAND_NODE_RANKS");
    for (int j = 0; j <= job.nnodes; j++)
        first[j] = net_node_first_rank(nranks, job.nnodes, job.ppn, j);
    if (counts == NULL || *counts == '\0')
        return first;
    const char *p = counts;
    for (int j = 0; j < job.nnodes; j++) {
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p || n < 1 || (*end != ',' && *end != '\0'))
            config_error("%s: one positive count per node process, comma-separated", "STRAND_NODE_RANKS");
        first[j + 1] = first[j] + (int)n;
        p = *end == ',' ? end + 1 : end;
    }
    if (first[job.nnodes] != nranks || *p != '\0')
        config_error("%s does not add up to the job's ranks", "STRAND_NODE_RANKS");
    return first;
}

static struct rank *proxy_create(int world_rank, struct net_peer *peer)
{
    struct rank *r = calloc(1, sizeof *r);
    if (r == NULL)
        config_error("%s", "out of memory for the remote ranks");
    r->world_rank = world_rank;
    r->remote = peer;
    pt2pt_rank_init(r);     /* an empty mailbox: cancel of a remote send looks there and finds nothing */
    return r;
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

static void *progress_main(void *arg)
{
    (void)arg;
    /* Signals are for the rank threads and the main thread. */
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    while (ops->progress(-1))
        ;
    return NULL;
}

bool net_start(int nranks, struct rank **ranks, int *first, int *count)
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
    job.base_port = (int)env_number("STRAND_NET_PORT", 0, 1, 65535 - job.nnodes);
    if (job.base_port == 0)
        config_error("%s is missing", "STRAND_NET_PORT");
    const char *id = getenv("STRAND_JOB_ID");
    job.job_id = id != NULL ? strtoull(id, NULL, 16) : 0;
    /* Between node processes a rendezvous costs a round trip through both
     * progress threads, more than copying a medium message once more:
     * messages up to NET_EAGER_LIMIT go eager even when the local limit
     * is lower (STRAND_NET_EAGER_LIMIT overrides; every node process of
     * the job has the same environment, so all agree). */
    size_t local = strand_node.config.eager_limit;
    job.eager_limit = (size_t)env_number("STRAND_NET_EAGER_LIMIT",
                                         (long)(local > NET_EAGER_LIMIT ? local : NET_EAGER_LIMIT), 0, INT32_MAX);
    hosts_from_environment();
    int *first_of = node_firsts(nranks);
    job.first_rank = first_of[job.node];
    job.local_ranks = first_of[job.node + 1] - job.first_rank;
    if (job.local_ranks < 1)
        config_error("%s: this node process would host no rank", "STRAND_PPN");
    job.peers = calloc((size_t)job.nnodes, sizeof *job.peers);
    moved_ports = calloc((size_t)job.nnodes, sizeof *moved_ports);
    if (job.peers == NULL || moved_ports == NULL)
        config_error("%s", "out of memory");
    for (int j = 0; j < job.nnodes; j++) {
        struct net_peer *p = &job.peers[j];
        p->node = j;
        p->first_rank = first_of[j];
        p->nranks = first_of[j + 1] - p->first_rank;
        if (j == job.node)
            continue;
        for (int r = p->first_rank; r < p->first_rank + p->nranks; r++)
            ranks[r] = proxy_create(r, p);
    }
    ops = choose_module();
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
    free(first_of);
    publish_host();
    active = true;
    *first = job.first_rank;
    *count = job.local_ranks;
    return true;
}

void net_run(void)
{
    if (!active)
        return;
    /* A runtime thread: created by the main thread before any rank runs,
     * it never adopts a rank. */
    int rc = pthread_create(&progress_thread, NULL, progress_main, NULL);
    if (rc != 0)
        config_error("cannot create the progress thread: %s", strerror(rc));
}

void net_end(void)
{
    if (!active)
        return;
    ops->shutdown();
    pthread_join(progress_thread, NULL);
    ops->close();
    pmi_finalize();
    active = false;
}

void net_job_aborting(const char *message)
{
    pmi_abort(message);
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

const char *net_peer_host(const struct net_peer *peer)
{
    char key[32], value[256];
    if (job.hosts[peer->node] != NULL)
        return job.hosts[peer->node];
    snprintf(key, sizeof key, "host.%d", peer->node);
    if (net_store_get(peer->node, key, value, sizeof value) == 1)
        job.hosts[peer->node] = strdup(value);
    return job.hosts[peer->node] != NULL ? job.hosts[peer->node] : "(unknown: not in the key-value space)";
}

int net_peer_port(const struct net_peer *peer)
{
    int moved = moved_ports[peer->node];
    return moved != 0 ? moved : job.base_port + peer->node;
}

void net_peer_refused(const struct net_peer *peer)
{
    char key[32], value[32];
    snprintf(key, sizeof key, "port.%d", peer->node);
    if (net_store_get(peer->node, key, value, sizeof value) == 1) {
        long port = strtol(value, NULL, 10);
        if (port > 0 && port < 65536)
            moved_ports[peer->node] = (int)port;
    }
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
    };
}

enum delivery net_send_message(struct rank *dest, const struct message *m, bool sync,
                               struct completion *done)
{
    struct net_envelope env = envelope_of(dest, m);
    if (!sync && m->bytes <= job.eager_limit) {
        if (ops->send_eager(dest->remote, &env, m->buf, m->count, m->type) != MPI_SUCCESS)
            strand_job_abort(1, "Strand MPI: out of memory for a message to another node process\n");
        return QUEUED_EAGER;
    }
    done->queued = NULL;    /* not cancellable: it is in no local mailbox */
    if (ops->send_rendezvous(dest->remote, &env, m->buf, m->count, m->type, done) != MPI_SUCCESS)
        strand_job_abort(1, "Strand MPI: out of memory for a message to another node process\n");
    return QUEUED_RENDEZVOUS;
}

void net_cancel_send(struct rank *dest, struct completion *done)
{
    ops->cancel_send(dest->remote, done);
}

void net_pull(struct net_pull *pull, struct strand_request *req)
{
    ops->pull(pull, req);
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

void net_arrived_eager(const struct net_envelope *env, const void *data)
{
    struct message m = message_of(env, data);
    mailbox_deliver_remote(strand_node.ranks[env->dest], &m, NULL);
}

void net_arrived_rendezvous(const struct net_envelope *env, struct net_pull *pull)
{
    struct message m = message_of(env, NULL);
    struct strand_request *matched = mailbox_deliver_remote(strand_node.ranks[env->dest], &m, pull);
    if (matched != NULL)
        ops->pull(pull, matched);
}

/* Its first member is its id (net.h). */
static bool pull_named(const struct net_pull *p, const void *arg)
{
    const struct net_pull_id *id = (const struct net_pull_id *)p, *wanted = arg;
    return id->peer == wanted->peer && id->sender_cookie == wanted->sender_cookie;
}

struct net_pull *net_withdraw_remote(uint32_t dest, struct net_peer *peer, uint64_t cookie)
{
    struct net_pull_id wanted = { peer, cookie };
    return mailbox_withdraw_remote(strand_node.ranks[dest], pull_named, &wanted);
}

const char *net_rma_arrived(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload)
{
    static const struct wire_limits windows = { .window = net_rma_window, .acc_element = net_rma_acc_element };
    if (f->type == WIRE_RMA_PUT || f->type == WIRE_RMA_ACC || f->type == WIRE_RMA_GET) {
        const char *why = wire_check_rma_blocks(f, payload, &windows);
        if (why != NULL)
            return why;
    }
    rma_remote_serve(from, f, payload);
    return NULL;
}

int net_rma_send(struct net_peer *peer, const struct net_rma *frame, void *payload, size_t payload_len)
{
    return ops->rma_send(peer, frame, payload, payload_len);
}

bool net_rma_window(uint64_t id, uint32_t dest, uint32_t source, struct wire_window *out)
{
    return rma_remote_window(id, dest, source, out);
}

bool net_rma_acc_element(uint32_t op, uint32_t element, struct wire_element *out)
{
    return rma_remote_acc_element(op, element, out);
}

_Noreturn void net_peer_lost(const struct net_peer *peer, const char *what)
{
    /* The launcher sees the death too and ends every node process; give it
     * a moment so that the user reads its one message rather than ours. */
    sleep(2);
    char line[512];
    snprintf(line, sizeof line,
             "Strand MPI: node %d lost node %d (ranks %d-%d): %s; ending the job\n", job.node, peer->node,
             peer->first_rank, peer->first_rank + peer->nranks - 1, what);
    strand_job_abort(1, line);
}
