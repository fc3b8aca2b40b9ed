/* Client of the job's key-value store (kv.h): one short TCP connection to
 * the launcher's store per call, one request line and one answer line
 * (protocol in launcher/kvs.h). */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kv.h"

/* KV_LINE is launcher/kvs.h's KVS_LINE_MAX. */
enum { KV_TIMEOUT_MS = 10000, KV_LINE = 4096 };

static pthread_mutex_t kv_lock = PTHREAD_MUTEX_INITIALIZER;
static int kv_fd = -1;

bool net_kv_available(void)
{
    const char *addr = getenv("STRAND_KV_ADDR");
    return addr != NULL && *addr != '\0';
}

/* Writes all of `line`; false on an error or a closed store. */
static bool send_line(const char *line)
{
    size_t len = strlen(line), off = 0;
    while (off < len) {
        ssize_t n = send(kv_fd, line + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        off += (size_t)n;
    }
    return true;
}

/* Reads one answer line (without its newline) into line[KV_LINE]. The
 * store answers every request with exactly one line, so reading a byte at
 * a time never takes bytes of the next answer. */
static bool read_line(char *line)
{
    size_t len = 0;
    for (;;) {
        struct pollfd p = { .fd = kv_fd, .events = POLLIN };
        int ready = poll(&p, 1, KV_TIMEOUT_MS);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            return false;
        char c;
        ssize_t n = recv(kv_fd, &c, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || len + 1 >= KV_LINE)
            return false;
        if (c == '\n') {
            line[len] = '\0';
            return true;
        }
        line[len++] = c;
    }
}

static int connect_to(const char *addr)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || (size_t)(colon - addr) >= sizeof host)
        return -1;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
        return -1;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

/* Under kv_lock: a connection to the server at `addr`, introduced. */
static bool kv_connect(const char *addr)
{
    if (addr == NULL || *addr == '\0')
        return false;
    kv_fd = connect_to(addr);
    if (kv_fd < 0)
        return false;
    char line[KV_LINE];
    const char *job = getenv("STRAND_JOB_ID"), *node = getenv("STRAND_NODE_INDEX");
    snprintf(line, sizeof line, "hello %s %s\n", job != NULL ? job : "0", node != NULL ? node : "0");
    if (send_line(line) && read_line(line) && strcmp(line, "ok") == 0)
        return true;
    close(kv_fd);
    kv_fd = -1;
    return false;
}

/* One request, one answer (under kv_lock), on a connection of its own:
 * requests are rare, and a node process keeps no socket open to mpiexec
 * (it holds only the connections its ranks' messages need). */
static bool transact(const char *addr, const char *request, char *answer)
{
    if (!kv_connect(addr))
        return false;
    bool ok = send_line(request) && read_line(answer);
    close(kv_fd);
    kv_fd = -1;
    return ok;
}

static bool request_to(const char *addr, const char *request, char *answer, size_t len)
{
    char line[KV_LINE], reply[KV_LINE];
    snprintf(line, sizeof line, "%s\n", request);
    pthread_mutex_lock(&kv_lock);
    bool ok = transact(addr, line, reply);
    pthread_mutex_unlock(&kv_lock);
    if (ok)
        snprintf(answer, len, "%s", reply);
    return ok;
}

bool net_kv_request(const char *request, char *answer, size_t len)
{
    return request_to(getenv("STRAND_KV_ADDR"), request, answer, len);
}

const char *net_names_address(void)
{
    const char *server = getenv("STRAND_NAMESERVER");
    if (server != NULL && *server != '\0')
        return server;
    return net_kv_available() ? getenv("STRAND_KV_ADDR") : NULL;
}

bool net_names_request(const char *request, char *answer, size_t len)
{
    return request_to(net_names_address(), request, answer, len);
}

int net_kv_put(const char *key, const char *value, char *why, size_t why_len)
{
    char line[KV_LINE], answer[KV_LINE];
    snprintf(line, sizeof line, "put %s %s", key, value);
    if (net_kv_request(line, answer, sizeof answer) && strcmp(answer, "ok") == 0)
        return 0;
    snprintf(why, why_len, "cannot store %s in the launcher's key-value store (STRAND_KV_ADDR=%s)", key,
             net_kv_available() ? getenv("STRAND_KV_ADDR") : "unset");
    return -1;
}

int net_kv_get(const char *key, char *value, size_t len)
{
    char line[KV_LINE], answer[KV_LINE];
    snprintf(line, sizeof line, "get %s", key);
    if (!net_kv_request(line, answer, sizeof answer))
        return -1;
    if (strncmp(answer, "value ", 6) != 0)
        return 0;
    snprintf(value, len, "%s", answer + 6);
    return 1;
}
