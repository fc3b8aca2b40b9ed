/* strand-nameserver: a name service (MPI_Publish_name, MPI_Lookup_name)
 * for jobs started by separate mpiexec commands, on this host or others.
 *
 *   strand-nameserver [--port P] [--local] [--address-file FILE]
 *
 * Listens on port P (default: one the kernel picks) of every IPv4 address
 * (--local: loopback only), prints its address as HOST:PORT on one line,
 * writes it to FILE too (whole, by a rename), and serves until it is
 * killed (SIGTERM, ^C). Jobs use it with `mpiexec --nameserver HOST:PORT`
 * or STRAND_NAMESERVER=HOST:PORT in their environment. The protocol is
 * the name verbs of launcher/kvs.h; names live in this process's memory
 * only. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvs.h"

static const char usage_text[] =
    "Usage: strand-nameserver [--port P] [--local] [--address-file FILE]\n"
    "Serves MPI_Publish_name / MPI_Lookup_name for separately started jobs:\n"
    "prints HOST:PORT, which jobs give to mpiexec --nameserver HOST:PORT (or\n"
    "as STRAND_NAMESERVER), and serves until it is killed.\n"
    "  --port P             listen on port P (default: any free port)\n"
    "  --local              listen on the loopback address only\n"
    "  --address-file FILE  also write HOST:PORT to FILE\n";

static _Noreturn void usage(const char *what)
{
    fprintf(stderr, "strand-nameserver: %s\n%s", what, usage_text);
    exit(2);
}

/* The host name others can reach this one by: its name when it resolves,
 * else its loopback address. */
static void host_name(bool local, char *out, size_t len)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
    if (!local && gethostname(out, len) == 0) {
        out[len - 1] = '\0';
        if (getaddrinfo(out, NULL, &hints, &res) == 0) {
            freeaddrinfo(res);
            return;
        }
    }
    snprintf(out, len, "127.0.0.1");
}

static int write_address(const char *file, const char *address)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%s\n", address) < 0 || fclose(f) != 0 || rename(tmp, file) != 0)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    int port = 0;
    bool local = false;
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
            char *end;
            long p = strtol(argv[++i], &end, 10);
            if (*end != '\0' || p < 1 || p > 65535)
                usage("--port needs a number from 1 to 65535");
            port = (int)p;
        } else if (strcmp(argv[i], "--local") == 0) {
            local = true;
        } else if (strcmp(argv[i], "--address-file") == 0 && i + 1 < argc) {
            file = argv[++i];
        } else {
            usage("unknown option");
        }
    }
    char why[256], host[256], address[300];
    /* The server thread blocks every signal; this one waits for them. */
    sigset_t wait_for;
    sigemptyset(&wait_for);
    sigaddset(&wait_for, SIGTERM);
    sigaddset(&wait_for, SIGINT);
    sigaddset(&wait_for, SIGHUP);
    sigprocmask(SIG_BLOCK, &wait_for, NULL);
    int listening = kvs_start_names(port, local, why, sizeof why);
    if (listening < 0) {
        fprintf(stderr, "strand-nameserver: %s\n", why);
        return 1;
    }
    host_name(local, host, sizeof host);
    snprintf(address, sizeof address, "%s:%d", host, listening);
    if (file != NULL && write_address(file, address) != 0) {
        fprintf(stderr, "strand-nameserver: cannot write %s: %s\n", file, strerror(errno));
        return 1;
    }
    printf("%s\n", address);
    fflush(stdout);
    int sig;
    sigwait(&wait_for, &sig);
    return 0;
}
