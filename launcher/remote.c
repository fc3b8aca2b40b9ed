/* ssh launch and the node agent (remote.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/net/kv.h"
#include "remote.h"

/* ---- which hosts are this machine ------------------------------------- */

static bool same_address(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a == NULL || b == NULL || a->sa_family != b->sa_family)
        return false;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
                      sizeof(struct in6_addr)) == 0;
    return false;
}

bool host_is_this_machine(const char *host)
{
    char name[256];
    if (strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0)
        return true;
    if (gethostname(name, sizeof name) == 0 && strcmp(host, name) == 0)
        return true;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res;
    struct ifaddrs *ifs;
    if (getaddrinfo(host, NULL, &hints, &res) != 0)
        return false;
    bool here = false;
    if (getifaddrs(&ifs) == 0) {
        for (struct addrinfo *r = res; r != NULL && !here; r = r->ai_next)
            for (struct ifaddrs *i = ifs; i != NULL && !here; i = i->ifa_next)
                here = same_address(r->ai_addr, i->ifa_addr);
        freeifaddrs(ifs);
    }
    freeaddrinfo(res);
    return here;
}

int address_toward(const char *host, char *out, size_t len)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM }, *res;
    if (getaddrinfo(host, "9", &hints, &res) != 0)
        return -1;
    /* A UDP "connection" sends nothing: it only picks the route. */
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in local;
    socklen_t local_len = sizeof local;
    int rc = -1;
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&local, &local_len) == 0 &&
        getnameinfo((struct sockaddr *)&local, local_len, out, (socklen_t)len, NULL, 0, NI_NUMERICHOST) == 0)
        rc = 0;
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return rc;
}

/* ---- the ssh command (mpiexec's side) ---------------------------------- */

/* `word` as one word of a POSIX shell command: in single quotes, each '
 * written as '\''. */
static char *shell_quote(const char *word)
{
    size_t len = 3;
    for (const char *p = word; *p; p++)
        len += *p == '\'' ? 4 : 1;
    char *out = malloc(len), *o = out;
    *o++ = '\'';
    for (const char *p = word; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}

/* Appends " 'word'" to the growing command *cmd. */
static void append_word(char **cmd, size_t *len, const char *word)
{
    char *q = shell_quote(word);
    size_t n = strlen(q);
    *cmd = realloc(*cmd, *len + n + 2);
    if (*len > 0)
        (*cmd)[(*len)++] = ' ';
    memcpy(*cmd + *len, q, n + 1);
    *len += n;
    free(q);
}

static const char *this_mpiexec(void)
{
    static char path[PATH_MAX];
    const char *fixed = getenv("STRAND_REMOTE_MPIEXEC");
    if (fixed != NULL && *fixed != '\0')
        return fixed;
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return "mpiexec";
    path[n] = '\0';
    return path;
}

char **remote_ssh_argv(const struct remote_command *rc)
{
    char *cmd = NULL, cwd[PATH_MAX];
    size_t len = 0;
    append_word(&cmd, &len, this_mpiexec());
    append_word(&cmd, &len, "--node-agent");
    append_word(&cmd, &len, "--wdir");
    append_word(&cmd, &len, getcwd(cwd, sizeof cwd) != NULL ? cwd : ".");
    append_word(&cmd, &len, "--host");
    append_word(&cmd, &len, rc->host);
    for (char **e = rc->env; *e != NULL; e++) {
        append_word(&cmd, &len, "--setenv");
        append_word(&cmd, &len, *e);
    }
    append_word(&cmd, &len, "--");
    for (char **a = rc->program_argv; *a != NULL; a++)
        append_word(&cmd, &len, *a);
    char *remote = malloc(len + 6);
    snprintf(remote, len + 6, "exec %s", cmd);
    free(cmd);

    static char timeout_option[64];
    const char *timeout = getenv("STRAND_SSH_CONNECT_TIMEOUT");
    snprintf(timeout_option, sizeof timeout_option, "ConnectTimeout=%s",
             timeout != NULL && *timeout != '\0' ? timeout : "10");
    const char *ssh = getenv("STRAND_SSH");
    const char *config = getenv("STRAND_SSH_CONFIG");
    char **argv = calloc(16, sizeof *argv);
    int n = 0;
    argv[n++] = (char *)(ssh != NULL && *ssh != '\0' ? ssh : "ssh");
    if (config != NULL && *config != '\0') {
        argv[n++] = "-F";
        argv[n++] = (char *)config;
    }
    argv[n++] = "-o";
    argv[n++] = "BatchMode=yes";
    argv[n++] = "-o";
    argv[n++] = timeout_option;
    argv[n++] = "-T";
    argv[n++] = "-x";
    argv[n++] = (char *)rc->host;
    argv[n++] = remote;
    argv[n] = NULL;
    return argv;
}

/* ---- the node agent (on the remote host) ------------------------------- */

static volatile sig_atomic_t node_aborted;
static volatile sig_atomic_t child_group;
static int wake_pipe[2] = {-1, -1};

static void on_abort_signal(int sig)
{
    (void)sig;
    node_aborted = 1;
}

static void on_child(int sig)
{
    (void)sig;
    int saved = errno;
    (void)!write(wake_pipe[1], "c", 1);
    errno = saved;
}

/* SIGTERM, SIGINT, SIGHUP to the agent (sshd ending the session, a user
 * on that host): the node process goes with it. */
static void on_end_signal(int sig)
{
    if (child_group > 0)
        kill(-child_group, SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
}

void on_signal(int sig, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, NULL);
}

static const char *agent_host = "?";

static _Noreturn void agent_fail(int status, const char *fmt, const char *what, const char *why)
{
    fprintf(stderr, "mpiexec: node %s on host %s: ", getenv("STRAND_NODE_INDEX"), agent_host);
    fprintf(stderr, fmt, what, why);
    fputc('\n', stderr);
    char answer[64], line[64];
    snprintf(line, sizeof line, "end nostart %d", status);
    net_kv_request(line, answer, sizeof answer);
    exit(status);
}

/* Reports how the node process ended (the store answers before mpiexec
 * sees ssh end, so mpiexec always finds the report), then exits alike. */
static _Noreturn void report_end(int status)
{
    char line[64], answer[64];
    int code;
    if (WIFSIGNALED(status)) {
        snprintf(line, sizeof line, "end signal %d", WTERMSIG(status));
        code = 128 + WTERMSIG(status);
    } else {
        code = WEXITSTATUS(status);
        snprintf(line, sizeof line, "end %s %d", node_aborted && code != 0 ? "abort" : "exit", code);
    }
    net_kv_request(line, answer, sizeof answer);
    exit(code);
}

/* mpiexec is gone or ends the job: the node process's group ends too,
 * politely first. */
static _Noreturn void end_node(pid_t child)
{
    kill(-child, SIGTERM);
    for (int i = 0; i < 100; i++) {
        if (waitpid(child, NULL, WNOHANG) == child)
            exit(1);
        struct timespec ms10 = { 0, 10000000 };
        nanosleep(&ms10, NULL);
    }
    kill(-child, SIGKILL);
    waitpid(child, NULL, 0);
    exit(1);
}

static pid_t start_node_process(char **argv)
{
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0)
        agent_fail(126, "%s: %s", "pipe", strerror(errno));
    pid_t child = fork();
    if (child < 0)
        agent_fail(126, "%s: %s", "fork", strerror(errno));
    if (child == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, STDIN_FILENO);
        signal(SIGUSR1, SIG_DFL);
        signal(SIGCHLD, SIG_DFL);
        execvp(argv[0], argv);
        int err = errno;
        (void)!write(report[1], &err, sizeof err);
        _exit(127);
    }
    setpgid(child, child);
    child_group = child;
    close(report[1]);
    int err;
    ssize_t n;
    while ((n = read(report[0], &err, sizeof err)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    if (n == (ssize_t)sizeof err) {
        waitpid(child, NULL, 0);
        agent_fail(err == ENOENT ? 127 : 126, "cannot run %s: %s", argv[0], strerror(err));
    }
    return child;
}

_Noreturn void node_agent_main(int argc, char **argv)
{
    const char *wdir = NULL;
    int i = 0;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--wdir") == 0 && i + 1 < argc)
            wdir = argv[++i];
        else if (strcmp(argv[i], "--host") == 0 && i + 1 < argc)
            agent_host = argv[++i];
        else if (strcmp(argv[i], "--setenv") == 0 && i + 1 < argc)
            putenv(argv[++i]);
        else {
            fprintf(stderr, "mpiexec --node-agent: unexpected '%s' (started by mpiexec through ssh only)\n",
                    argv[i]);
            exit(2);
        }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "mpiexec --node-agent: no program\n");
        exit(2);
    }
    char answer[64];
    if (!net_kv_request("started", answer, sizeof answer)) {
        fprintf(stderr, "mpiexec: node %s on host %s cannot reach mpiexec at %s (STRAND_KV_ADDR)\n",
                getenv("STRAND_NODE_INDEX"), agent_host, getenv("STRAND_KV_ADDR"));
        exit(126);
    }
    if (wdir != NULL && chdir(wdir) != 0)
        agent_fail(126, "cannot change to the directory %s: %s", wdir, strerror(errno));
    char pid[24];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    setenv("STRAND_LAUNCHER_PID", pid, 1);
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        agent_fail(126, "%s: %s", "pipe", strerror(errno));
    on_signal(SIGUSR1, on_abort_signal);
    on_signal(SIGCHLD, on_child);
    on_signal(SIGTERM, on_end_signal);
    on_signal(SIGINT, on_end_signal);
    on_signal(SIGHUP, on_end_signal);
    signal(SIGPIPE, SIG_IGN);
    pid_t child = start_node_process(argv + i + 1);
    for (;;) {
        int status;
        if (waitpid(child, &status, WNOHANG) == child)
            report_end(status);
        struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN }, { .fd = wake_pipe[0], .events = POLLIN } };
        if (poll(p, 2, 1000) < 0)
            continue;
        if (p[1].revents & POLLIN) {
            char drain[64];
            while (read(wake_pipe[0], drain, sizeof drain) > 0)
                ;
        }
        if (p[0].revents != 0) {
            char byte[64];
            ssize_t n = read(STDIN_FILENO, byte, sizeof byte);
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
                end_node(child);
        }
    }
}
