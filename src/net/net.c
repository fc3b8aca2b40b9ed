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
#include "../rma/remote.h"
#include "net.h"

static struct net_job job;
static const struct net_ops *ops;
static pthread_t progress_thread;
static bool active;

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

/* STRAND_NET_HOSTS: one host per node process, comma-separated; missing
 * entries (or no variable) mean this machine. */
static void hosts_from_environment(void)
{
    job.hosts = calloc((size_t)job.nnodes, sizeof *job.hosts);
    if (job.hosts == NULL)
        config_error("%s", "out of memory");
    const char *list = getenv("STRAND_NET_HOSTS");
    char *copy = strdup(list != NULL ? list : "");
    char *save = NULL;
    int i = 0;
    for (char *h = strtok_r(copy, ",", &save); h != NULL && i < job.nnodes; h = strtok_r(NULL, ",", &save))
        job.hosts[i++] = strdup(h);
    for (; i < job.nnodes; i++)
        job.hosts[i] = strdup("127.0.0.1");
    free(copy);
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
    job.eager_limit = strand_node.config.eager_limit;
    hosts_from_environment();
    job.first_rank = net_node_first_rank(nranks, job.nnodes, job.ppn, job.node);
    job.local_ranks = net_node_first_rank(nranks, job.nnodes, job.ppn, job.node + 1) - job.first_rank;
    if (job.local_ranks < 1)
        config_error("%s: this node process would host no rank", "STRAND_PPN");
    job.peers = calloc((size_t)job.nnodes, sizeof *job.peers);
    if (job.peers == NULL)
        config_error("%s", "out of memory");
    for (int j = 0; j < job.nnodes; j++) {
        struct net_peer *p = &job.peers[j];
        p->node = j;
        p->first_rank = net_node_first_rank(nranks, job.nnodes, job.ppn, j);
        p->nranks = net_node_first_rank(nranks, job.nnodes, job.ppn, j + 1) - p->first_rank;
        if (j == job.node)
            continue;
        for (int r = p->first_rank; r < p->first_rank + p->nranks; r++)
            ranks[r] = proxy_create(r, p);
    }
    ops = &net_tcp_ops;
    char why[256];
    if (ops->init(&job, why, sizeof why) != 0) {
        char line[512];
        snprintf(line, sizeof line, "Strand MPI: node %d cannot start its %s network: %s\n", job.node,
                 ops->name, why);
        strand_job_abort(1, line);
    }
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
    active = false;
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

void net_rma_arrived(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload)
{
    rma_remote_serve(from, f, payload);
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
