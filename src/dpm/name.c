/* MPI_Publish_name, MPI_Unpublish_name, MPI_Lookup_name.
 *
 * The name service is a server (launcher/kvs.h, its name verbs): the one
 * named by STRAND_NAMESERVER (mpiexec --nameserver HOST:PORT, or set by
 * the user: a standalone strand-nameserver that separately started jobs
 * share), else the key-value store of the mpiexec that started the job
 * (shared by the job and every job it spawns, whose ranks run in the
 * job's node processes). Each call is one request line and one answer
 * line (src/net/kv.c); names and ports travel percent-encoded, so any
 * service name works.
 *
 * Without either (a program run without mpiexec) the names live in a
 * table of the node process, shared by all its worlds. The table is not
 * liburcu's hash table: it is touched once per publish or lookup (a few
 * per connection), never on a message path, and a mutex over a list is
 * simpler for that. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../net/kv.h"
#include "dpm.h"

/* ---- the server */

enum { ENCODED_MAX = 3 * MPI_MAX_PORT_NAME + 1 };

static bool plain_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~:/", c) != NULL;
}

/* Every byte but plain ones as %XX; false when it does not fit. An empty
 * name is "%" (no line may hold an empty word). */
static bool encode(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    if (*in == '\0')
        return snprintf(out, cap, "%%") < (int)cap;
    for (const unsigned char *p = (const unsigned char *)in; *p != '\0'; p++) {
        if (n + 4 > cap)
            return false;
        n += plain_byte(*p) ? (size_t)snprintf(out + n, cap - n, "%c", *p) : (size_t)snprintf(out + n, cap - n, "%%%02X", *p);
    }
    out[n] = '\0';
    return true;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool decode(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    if (strcmp(in, "%") == 0)
        in = "";
    for (; *in != '\0'; n++) {
        if (n + 1 >= cap)
            return false;
        if (*in != '%') {
            out[n] = *in++;
            continue;
        }
        int hi = hex_digit(in[1]), lo = hi >= 0 ? hex_digit(in[2]) : -1;
        if (lo < 0)
            return false;
        out[n] = (char)(hi * 16 + lo);
        in += 3;
    }
    out[n] = '\0';
    return true;
}

/* One name verb to the server: true with its answer; false with why. */
static bool server_ask(const char *verb, const char *service, const char *port, char *answer, size_t len, char *why,
                       size_t why_len)
{
    char s[ENCODED_MAX], p[ENCODED_MAX], line[2 * ENCODED_MAX + 32];
    if (!encode(service, s, sizeof s) || (port != NULL && !encode(port, p, sizeof p))) {
        snprintf(why, why_len, "the service or port name is longer than MPI_MAX_PORT_NAME");
        return false;
    }
    snprintf(line, sizeof line, "%s %s%s%s", verb, s, port != NULL ? " " : "", port != NULL ? p : "");
    if (!net_names_request(line, answer, len)) {
        snprintf(why, why_len, "cannot reach the name server at %.200s", net_names_address());
        return false;
    }
    return true;
}

/* ---- the table of this node process (no server) */

struct published {
    struct published *next;
    char *service;
    char port[MPI_MAX_PORT_NAME];
};

static struct {
    pthread_mutex_t lock;
    struct published *list;
} names = { PTHREAD_MUTEX_INITIALIZER, NULL };

/* Under the lock: the link pointing at `service`'s entry (or at NULL). */
static struct published **name_find(const char *service)
{
    struct published **p = &names.list;
    while (*p != NULL && strcmp((*p)->service, service) != 0)
        p = &(*p)->next;
    return p;
}

/* The answers the server would give (launcher/kvs.h). */
static const char *table_publish(const char *service, const char *port)
{
    struct published *e = calloc(1, sizeof *e);
    if (e == NULL || (e->service = strdup(service)) == NULL) {
        free(e);
        return NULL;
    }
    snprintf(e->port, sizeof e->port, "%s", port);
    pthread_mutex_lock(&names.lock);
    struct published **at = name_find(service);
    bool taken = *at != NULL;
    if (!taken)
        *at = e;
    pthread_mutex_unlock(&names.lock);
    if (taken) {
        free(e->service);
        free(e);
    }
    return taken ? "taken" : "ok";
}

static const char *table_unpublish(const char *service, const char *port)
{
    pthread_mutex_lock(&names.lock);
    struct published **at = name_find(service), *e = *at;
    bool same_port = e != NULL && strncmp(e->port, port, MPI_MAX_PORT_NAME) == 0;
    if (same_port)
        *at = e->next;
    pthread_mutex_unlock(&names.lock);
    if (same_port) {
        free(e->service);
        free(e);
    }
    return e == NULL ? "unknown" : same_port ? "ok" : "other";
}

static bool table_lookup(const char *service, char *port)
{
    pthread_mutex_lock(&names.lock);
    struct published *e = *name_find(service);
    if (e != NULL)
        strcpy(port, e->port);
    pthread_mutex_unlock(&names.lock);
    return e != NULL;
}

/* ---- the calls */

static int name_args_check(const char *where, const char *service, const char *port)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (service == NULL || port == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "service_name and port_name must not be NULL");
    if (strnlen(port, MPI_MAX_PORT_NAME) == MPI_MAX_PORT_NAME)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "port_name is longer than MPI_MAX_PORT_NAME");
    return MPI_SUCCESS;
}

/* Publish or unpublish: the server's (or the table's) answer word. */
static int change(const char *where, const char *verb, const char *service, const char *port)
{
    char answer[64] = "", why[300];
    const char *said;
    if (net_names_address() != NULL) {
        if (!server_ask(verb, service, port, answer, sizeof answer, why, sizeof why))
            return error_report(MPI_COMM_WORLD, MPI_ERR_SERVICE, where, "%s", why);
        said = answer;
    } else {
        said = verb[0] == 'p' ? table_publish(service, port) : table_unpublish(service, port);
        if (said == NULL)
            return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, where, "out of memory");
    }
    if (strcmp(said, "ok") == 0)
        return MPI_SUCCESS;
    return error_report(MPI_COMM_WORLD, MPI_ERR_SERVICE, where, "service \"%s\" %s", service,
                        strcmp(said, "taken") == 0     ? "is already published"
                        : strcmp(said, "unknown") == 0 ? "is not published"
                        : strcmp(said, "other") == 0   ? "is published with another port"
                                                       : "got an unexpected answer from the name server");
}

int PMPI_Publish_name(char *service_name, MPI_Info info, char *port_name)
{
    const char *where = "MPI_Publish_name";
    int rc = name_args_check(where, service_name, port_name);
    (void)info;
    return rc != MPI_SUCCESS ? rc : change(where, "publish", service_name, port_name);
}
STRAND_MPI_ALIAS(MPI_Publish_name);

int PMPI_Unpublish_name(char *service_name, MPI_Info info, char *port_name)
{
    const char *where = "MPI_Unpublish_name";
    int rc = name_args_check(where, service_name, port_name);
    (void)info;
    return rc != MPI_SUCCESS ? rc : change(where, "unpublish", service_name, port_name);
}
STRAND_MPI_ALIAS(MPI_Unpublish_name);

int PMPI_Lookup_name(char *service_name, MPI_Info info, char *port_name)
{
    const char *where = "MPI_Lookup_name";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (service_name == NULL || port_name == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "service_name and port_name must not be NULL");
    (void)info;
    if (net_names_address() == NULL) {
        if (!table_lookup(service_name, port_name))
            return error_report(MPI_COMM_WORLD, MPI_ERR_NAME, where, "no service \"%s\" is published", service_name);
        return MPI_SUCCESS;
    }
    char answer[ENCODED_MAX + 16], why[300];
    if (!server_ask("lookup", service_name, NULL, answer, sizeof answer, why, sizeof why))
        return error_report(MPI_COMM_WORLD, MPI_ERR_NAME, where, "%s", why);
    if (strncmp(answer, "value ", 6) != 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NAME, where, "no service \"%s\" is published", service_name);
    if (!decode(answer + 6, port_name, MPI_MAX_PORT_NAME))
        return error_report(MPI_COMM_WORLD, MPI_ERR_NAME, where, "the name server sent a malformed port name");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Lookup_name);
