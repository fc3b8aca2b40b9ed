/* The key-value store thread of mpiexec (kvs.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kvs.h"

enum { LINE_MAX_BYTES = KVS_LINE_MAX };

struct client {
    int fd;
    int node;               /* from its hello; -1 before */
    size_t len;
    char line[LINE_MAX_BYTES];
};

struct node_report {
    bool started;
    enum node_end end;
    int value;
    bool exited;            /* mpiexec saw the node process end (kvs_note_exited) */
    int exit_status;
};

static struct {
    int listen_fd, nnodes;
    bool names_only;        /* the standalone name server: any job, name verbs only */
    char job_id[64];
    struct client *clients;
    int nclients;
    char **keys, **values;
    int nkeys;
    pthread_mutex_t lock;   /* reports: read by the main thread */
    struct node_report *reports;
} kvs = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *lookup(const char *key)
{
    for (int i = 0; i < kvs.nkeys; i++)
        if (strcmp(kvs.keys[i], key) == 0)
            return kvs.values[i];
    return NULL;
}

static void forget(const char *key)
{
    for (int i = 0; i < kvs.nkeys; i++)
        if (strcmp(kvs.keys[i], key) == 0) {
            free(kvs.keys[i]);
            free(kvs.values[i]);
            kvs.keys[i] = kvs.keys[--kvs.nkeys];
            kvs.values[i] = kvs.values[kvs.nkeys];
            return;
        }
}

static void store(const char *key, const char *value)
{
    for (int i = 0; i < kvs.nkeys; i++)
        if (strcmp(kvs.keys[i], key) == 0) {
            free(kvs.values[i]);
            kvs.values[i] = strdup(value);
            return;
        }
    kvs.keys = realloc(kvs.keys, (size_t)(kvs.nkeys + 1) * sizeof *kvs.keys);
    kvs.values = realloc(kvs.values, (size_t)(kvs.nkeys + 1) * sizeof *kvs.values);
    kvs.keys[kvs.nkeys] = strdup(key);
    kvs.values[kvs.nkeys++] = strdup(value);
}

static enum node_end end_kind(const char *word)
{
    static const char *const names[] = {
        [NODE_END_EXIT] = "exit", [NODE_END_SIGNAL] = "signal",
        [NODE_END_ABORT] = "abort", [NODE_END_NOSTART] = "nostart",
    };
    for (int k = NODE_END_EXIT; k <= NODE_END_NOSTART; k++)
        if (strcmp(word, names[k]) == 0)
            return (enum node_end)k;
    return NODE_END_UNKNOWN;
}

/* The name verbs: services live in the store under "name:" + their
 * (encoded) name. NULL for another verb. */
static const char *answer_names(const char *verb, const char *service, const char *port, char *out, size_t out_len)
{
    char key[LINE_MAX_BYTES + 8];
    if (service == NULL)
        return NULL;
    snprintf(key, sizeof key, "name:%s", service);
    const char *published = lookup(key);
    if (strcmp(verb, "lookup") == 0) {
        if (published == NULL)
            return "none";
        snprintf(out, out_len, "value %s", published);
        return out;
    }
    if (port == NULL)
        return NULL;
    if (strcmp(verb, "publish") == 0) {
        if (published != NULL)
            return "taken";
        store(key, port);
        return "ok";
    }
    if (strcmp(verb, "unpublish") == 0) {
        if (published == NULL)
            return "unknown";
        if (strcmp(published, port) != 0)
            return "other";
        forget(key);
        return "ok";
    }
    return NULL;
}

/* Handles one request; returns the answer, or NULL to drop the client. */
static const char *answer(struct client *c, char *line, char *out, size_t out_len)
{
    char *save = NULL;
    char *verb = strtok_r(line, " ", &save), *a = strtok_r(NULL, " ", &save), *b = strtok_r(NULL, " ", &save);
    if (verb == NULL)
        return NULL;
    if (c->node < 0) {
        long node = b != NULL ? strtol(b, NULL, 10) : -1;
        if (strcmp(verb, "hello") != 0 || a == NULL || node < 0 ||
            (!kvs.names_only && (strcmp(a, kvs.job_id) != 0 || node >= kvs.nnodes)))
            return NULL;
        c->node = (int)node;
        return "ok";
    }
    const char *named = answer_names(verb, a, b, out, out_len);
    if (named != NULL || kvs.names_only)
        return named;
    if (strcmp(verb, "put") == 0 && a != NULL && b != NULL) {
        store(a, b);
        return "ok";
    }
    if (strcmp(verb, "get") == 0 && a != NULL) {
        const char *v = lookup(a);
        if (v == NULL)
            return "none";
        snprintf(out, out_len, "value %s", v);
        return out;
    }
    pthread_mutex_lock(&kvs.lock);
    struct node_report *r = &kvs.reports[c->node];
    const char *reply = NULL;
    if (strcmp(verb, "started") == 0) {
        r->started = true;
        reply = "ok";
    } else if (strcmp(verb, "end") == 0 && a != NULL && b != NULL && end_kind(a) != NODE_END_UNKNOWN) {
        r->end = end_kind(a);
        r->value = (int)strtol(b, NULL, 10);
        reply = "ok";
    } else if (strcmp(verb, "exited") == 0 && a != NULL) {
        long node = strtol(a, NULL, 10);
        if (node >= 0 && node < kvs.nnodes) {
            const struct node_report *e = &kvs.reports[node];
            if (e->exited)
                snprintf(out, out_len, "value %d", e->exit_status);
            reply = e->exited ? out : "none";
        }
    }
    pthread_mutex_unlock(&kvs.lock);
    return reply;
}

static void drop(int i)
{
    close(kvs.clients[i].fd);
    kvs.clients[i] = kvs.clients[--kvs.nclients];
}

/* Reads what client i sent and answers every complete line; false when
 * the client is gone (it was dropped). */
static bool serve(int i)
{
    struct client *c = &kvs.clients[i];
    ssize_t n = recv(c->fd, c->line + c->len, sizeof c->line - c->len, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (n <= 0) {
        drop(i);
        return false;
    }
    c->len += (size_t)n;
    char *nl;
    while ((nl = memchr(c->line, '\n', c->len)) != NULL) {
        *nl = '\0';
        char out[LINE_MAX_BYTES + 8], reply[LINE_MAX_BYTES + 16];
        const char *a = answer(c, c->line, out, sizeof out);
        if (a == NULL) {
            drop(i);
            return false;
        }
        int len = snprintf(reply, sizeof reply, "%s\n", a);
        if (send(c->fd, reply, (size_t)len, MSG_NOSIGNAL) != len) {
            drop(i);
            return false;
        }
        size_t used = (size_t)(nl - c->line) + 1;
        memmove(c->line, nl + 1, c->len - used);
        c->len -= used;
    }
    if (c->len == sizeof c->line) {     /* a line longer than the protocol allows */
        drop(i);
        return false;
    }
    return true;
}

static void *serve_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        struct pollfd *p = calloc((size_t)kvs.nclients + 1, sizeof *p);
        p[0] = (struct pollfd){ .fd = kvs.listen_fd, .events = POLLIN };
        for (int i = 0; i < kvs.nclients; i++)
            p[i + 1] = (struct pollfd){ .fd = kvs.clients[i].fd, .events = POLLIN };
        int n = kvs.nclients + 1;
        if (poll(p, (nfds_t)n, -1) < 0) {
            free(p);
            continue;
        }
        /* Clients from the last one down: drop() moves the last into i. */
        for (int i = n - 2; i >= 0; i--)
            if (p[i + 1].revents != 0)
                serve(i);
        if (p[0].revents & POLLIN) {
            int fd = accept4(kvs.listen_fd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0) {
                kvs.clients = realloc(kvs.clients, (size_t)(kvs.nclients + 1) * sizeof *kvs.clients);
                kvs.clients[kvs.nclients++] = (struct client){ .fd = fd, .node = -1 };
            }
        }
        free(p);
    }
    return NULL;
}

static int serve_start(bool any_address, int port, char *why, size_t why_len)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(any_address ? INADDR_ANY : INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1024) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        snprintf(why, why_len, "cannot listen on port %d: %s", port, strerror(errno));
        return -1;
    }
    kvs.listen_fd = fd;
    pthread_t thread;
    int rc = pthread_create(&thread, NULL, serve_main, NULL);
    if (rc != 0) {
        snprintf(why, why_len, "cannot start the key-value store thread: %s", strerror(rc));
        return -1;
    }
    pthread_detach(thread);
    return ntohs(a.sin_port);
}

int kvs_start(int nnodes, const char *job_id, bool remote_nodes, char *why, size_t why_len)
{
    kvs.nnodes = nnodes;
    snprintf(kvs.job_id, sizeof kvs.job_id, "%s", job_id);
    kvs.reports = calloc((size_t)nnodes, sizeof *kvs.reports);
    /* Remote nodes, and jobs that find this one by its name service, may
     * be on other hosts only with remote_nodes. */
    return serve_start(remote_nodes, 0, why, why_len);
}

int kvs_start_names(int port, bool local, char *why, size_t why_len)
{
    kvs.names_only = true;
    return serve_start(!local, port, why, why_len);
}

bool kvs_agent_started(int node)
{
    pthread_mutex_lock(&kvs.lock);
    bool started = kvs.reports[node].started;
    pthread_mutex_unlock(&kvs.lock);
    return started;
}

void kvs_note_exited(int node, int status)
{
    pthread_mutex_lock(&kvs.lock);
    kvs.reports[node].exited = true;
    kvs.reports[node].exit_status = status;
    pthread_mutex_unlock(&kvs.lock);
}

enum node_end kvs_node_end(int node, int *value)
{
    pthread_mutex_lock(&kvs.lock);
    enum node_end end = kvs.reports[node].end;
    *value = kvs.reports[node].value;
    pthread_mutex_unlock(&kvs.lock);
    return end;
}
