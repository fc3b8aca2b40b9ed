/* mpiexec: runs an MPI program built with Strand's mpicc on this node.
 *
 * All ranks of a node are threads of one process (DESIGN §3), so mpiexec
 * starts the program once and tells it, through the environment, how many
 * ranks to run and how:
 *   STRAND_NRANKS, STRAND_BIND, STRAND_PREFIX_OUTPUT, STRAND_STACK_SIZE,
 *   STRAND_UNIVERSE_SIZE.
 * It forwards SIGINT, SIGTERM and SIGHUP to the program's process group and
 * exits with the program's exit status (128 + N if signal N killed it).
 * A job of several node processes (--nodes, -hosts) starts them by fork on
 * this machine and through ssh elsewhere (remote.h), and serves the job's
 * key-value store (kvs.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../src/net/layout.h"
#include "foreign.h"
#include "../src/core/apps.h"
#include "../src/core/node_pid.h"
#include "../src/util/cpus.h"
#include "kvs.h"
#include "remote.h"

struct options {
    long nranks;
    long nnodes;            /* node processes (0: from the hosts, else 1) */
    long ppn;               /* ranks per node process (0: balanced blocks) */
    const char *hosts;      /* comma-separated, from -hosts or -hostfile */
    const char *launcher;   /* "fork" or "ssh", NULL: fork for this machine */
    const char *bind; /* "cores", "none", or NULL for the default */
    int prefix_output;
    const char *stack_size;
    const char *universe_size;
    char **forward;         /* NAME=VALUE for node processes on other hosts (-genv, -x) */
    int nforward;
    char **program_argv; /* program and its arguments (the first app's) */
    struct app_context *apps;   /* `-n 2 a : -n 3 b`: one per program (MPMD) */
    int napps;
};

/* One program of the command line and its ranks (MPI-2.2 §8.8). */
struct app_context {
    long nranks;
    char **argv;            /* NULL-terminated, in mpiexec's own argv */
};

static const char usage_text[] =
    "Usage: mpiexec [options] program [arguments...]\n"
    "       mpiexec [options] -n N1 program1 [args...] : -n N2 program2 [args...] : ...\n"
    "Runs an MPI program built with Strand's mpicc; all ranks are threads of one\n"
    "process on this node. Several programs separated by ':' form one job (one\n"
    "MPI_COMM_WORLD, ranks in command-line order, MPI_APPNUM 0, 1, ...); only -n\n"
    "may follow a ':', the other options go first and apply to all.\n"
    "\n"
    "Options:\n"
    "  -n N, -np N          run N ranks (default 1)\n"
    "  --bind cores|none    place each rank thread on a core (cores) or let the\n"
    "                       kernel move them (none); default: cores when N is at\n"
    "                       most the number of usable cores, else none\n"
    "  -l, --prefix-output  start every line of output with the writing rank's\n"
    "                       number, \"[r] \"; lines of different ranks never mix\n"
    "  --stack-size BYTES   stack size of each rank thread (default: ulimit -s);\n"
    "                       a k, m or g suffix multiplies by 1024, 1024^2, 1024^3\n"
    "  -usize N             MPI_UNIVERSE_SIZE (ranks the job may grow to)\n"
    "  --nameserver HOST:PORT  publish and look up service names (MPI_Publish_name)\n"
    "                       at this strand-nameserver instead of mpiexec's own\n"
    "                       name service, so that separately started jobs meet\n"
    "                       (also STRAND_NAMESERVER)\n"
    "\n"
    "Several node processes (ranks spread over them in blocks):\n"
    "  --nodes K            K node processes (default: one per host given)\n"
    "  -hosts H1,H2,...     hosts of the node processes, in order (repeated when\n"
    "                       there are more node processes than hosts); H:N\n"
    "                       gives host H N slots: MPI_UNIVERSE_SIZE is the sum\n"
    "  -hostfile FILE, -f FILE  the hosts, one a line ('#' comments; \"H:N\" or\n"
    "                       \"H slots=N\" for slots)\n"
    "  -ppn P               P ranks per node process\n"
    "  --launcher fork|ssh  how node processes start: fork (this machine only) or\n"
    "                       ssh; default: fork for this machine's names and\n"
    "                       addresses, ssh for other hosts\n"
    "  --ssh-config FILE    ssh's configuration file (ssh -F; also STRAND_SSH_CONFIG)\n"
    "  --net tcp|ucx|auto   the network between node processes (STRAND_NET): TCP,\n"
    "                       UCX (when built with it), or auto (the default): UCX\n"
    "                       where an RDMA device is present, else TCP\n"
    "  -genv NAME VALUE     set NAME=VALUE for the program on every host\n"
    "  -x NAME[=VALUE]      pass NAME (its value here, or VALUE) to other hosts\n"
    "                       (STRAND_* and UCX_* variables always are)\n"
    "  --version            show Strand's version\n"
    "  --help, -h           show this help\n"
    "  --                   end of options (the next word is the program)\n"
    "\n"
    "The program is found through PATH like a shell would (use ./prog for one in\n"
    "the current directory).  mpiexec passes the settings in the environment:\n"
    "STRAND_NRANKS, STRAND_BIND, STRAND_PREFIX_OUTPUT, STRAND_STACK_SIZE,\n"
    "STRAND_UNIVERSE_SIZE; a program run without mpiexec reads the same variables\n"
    "(without them, it runs as one rank).\n"
    "\n"
    "Time limit: with MPIEXEC_TIMEOUT=S in the environment, a job still running\n"
    "after S seconds is killed and mpiexec exits with 124.\n"
    "\n"
    "Exit status: the program's (the highest of its ranks'), or 128+N if signal\n"
    "N killed it; 127 if the program could not be started; 2 for bad options.\n"
    "With several node processes: the highest status among them; when one aborts\n"
    "(MPI_Abort, a fatal MPI error), is killed, cannot be started or loses its\n"
    "ssh connection, mpiexec ends all the others.\n"
    "\n"
    "Over ssh: BatchMode (no password prompts), ~/.ssh/config applies; the same\n"
    "mpiexec path must exist on every host (STRAND_REMOTE_MPIEXEC overrides it),\n"
    "the program is started in the same working directory, and the hosts must\n"
    "reach this one over TCP. STRAND_SSH replaces the ssh command,\n"
    "STRAND_SSH_CONNECT_TIMEOUT (seconds, default 10) bounds each login.\n";

static _Noreturn void usage_error(const char *fmt, const char *what)
{
    fprintf(stderr, "mpiexec: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, " (see mpiexec --help)\n");
    exit(2);
}

static long parse_count(const char *option, const char *text)
{
    char *end;
    if (text == NULL)
        usage_error("%s needs a number", option);
    errno = 0;
    long n = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0) {
        fprintf(stderr, "mpiexec: %s: '%s' is not a number (see mpiexec --help)\n", option, text);
        exit(2);
    }
    if (n < 1 || n > INT_MAX) {
        fprintf(stderr, "mpiexec: %s: %ld is out of range: it must be at least 1\n", option, n);
        exit(2);
    }
    return n;
}

/* Checks BYTES[k|m|g] and returns it as a plain number of bytes. */
static const char *parse_size(const char *option, const char *text)
{
    static char bytes[32];
    char *end;
    if (text == NULL)
        usage_error("%s needs a size in bytes", option);
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    int shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10;
    else if (*end == 'm' || *end == 'M')
        shift = 20;
    else if (*end == 'g' || *end == 'G')
        shift = 30;
    if (shift != 0)
        end++;
    if (end == text || *end != '\0' || errno != 0 || text[0] == '-' || n > (~0ULL >> shift)) {
        fprintf(stderr, "mpiexec: %s: '%s' is not a size (BYTES, or a number with k, m, g)\n",
                option, text);
        exit(2);
    }
    n <<= shift;
    if (n < 16384) {
        fprintf(stderr, "mpiexec: %s: %llu bytes is too small for a thread stack (16k at least)\n",
                option, n);
        exit(2);
    }
    snprintf(bytes, sizeof bytes, "%llu", n);
    return bytes;
}

/* "--opt=value" or "--opt value": returns the value and advances *i. */
static const char *option_value(char **argv, int *i, const char *name)
{
    size_t len = strlen(name);
    if (strncmp(argv[*i], name, len) == 0 && argv[*i][len] == '=')
        return argv[*i] + len + 1;
    return argv[++*i];
}

static int is_option(const char *arg, const char *name)
{
    size_t len = strlen(name);
    return strncmp(arg, name, len) == 0 && (arg[len] == '\0' || arg[len] == '=');
}

/* -hostfile: one host per line, '#' comments, blank lines skipped;
 * returned as a comma-separated list like -hosts. */
static const char *hosts_from_file(const char *path)
{
    if (path == NULL)
        usage_error("%s needs a file name", "-hostfile");
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "mpiexec: cannot read the host file %s: %s\n", path, strerror(errno));
        exit(2);
    }
    size_t cap = 256, len = 0;
    char *list = malloc(cap), line[1024];
    list[0] = '\0';
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "#\r\n")] = '\0';
        char *host = line + strspn(line, " \t");
        /* "host", "host:N" or "host slots=N": N slots (MPI_UNIVERSE_SIZE) */
        char *rest = host + strcspn(host, " \t:");
        long slots = 0;
        if (*rest == ':')
            slots = strtol(rest + 1, NULL, 10);
        else if (strstr(rest, "slots=") != NULL)
            slots = strtol(strstr(rest, "slots=") + 6, NULL, 10);
        *rest = '\0';
        if (*host == '\0')
            continue;
        size_t n = strlen(host) + 24;
        while (len + n + 2 > cap)
            list = realloc(list, cap *= 2);
        len += (size_t)sprintf(list + len, "%s%s", len > 0 ? "," : "", host);
        if (slots > 0)
            len += (size_t)sprintf(list + len, ":%ld", slots);
    }
    fclose(f);
    if (len == 0) {
        fprintf(stderr, "mpiexec: the host file %s names no host\n", path);
        exit(2);
    }
    return list;
}

static void add_forward(struct options *o, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *entry = malloc(len);
    snprintf(entry, len, "%s=%s", name, value);
    o->forward = realloc(o->forward, (size_t)(o->nforward + 1) * sizeof *o->forward);
    o->forward[o->nforward++] = entry;
}

/* -n N or -np N (also -n=N): the rank count. */
static long ranks_option(char **argv, int *i)
{
    const char *name = argv[*i][2] == 'p' ? "-np" : "-n";
    return parse_count(name, option_value(argv, i, name));
}

/* After the options: `program args : [-n N] program args : ...`. Each
 * ':' ends a program's arguments (it is replaced by NULL); the first
 * program's rank count is the global -n. */
static void split_app_contexts(struct options *o, int argc, char **argv, int first)
{
    o->apps = calloc((size_t)argc, sizeof *o->apps);
    o->napps = 0;
    long nranks = o->nranks, total = 0;
    for (int i = first; i < argc;) {
        struct app_context *app = &o->apps[o->napps++];
        app->nranks = nranks;
        app->argv = argv + i;
        total += nranks;
        while (i < argc && strcmp(argv[i], ":") != 0)
            i++;
        if (i == argc)
            break;
        argv[i++] = NULL;
        nranks = 1;
        for (; i < argc && argv[i][0] == '-'; i++) {
            const char *a = argv[i];
            if (!is_option(a, "-n") && !is_option(a, "-np"))
                usage_error("after ':', only -n N may come before the program, not '%s' (other options "
                            "go before the first program and apply to all)", a);
            nranks = ranks_option(argv, &i);
        }
        if (i >= argc)
            usage_error("%s", "no program after ':'");
    }
    o->nranks = total;
    o->program_argv = o->apps[0].argv;
}

static void parse_options(int argc, char **argv, struct options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->nranks = 1;
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (strcmp(a, "--version") == 0) {
            printf("mpiexec (Strand MPI) %s\n", VERSION);
            exit(0);
        } else if (is_option(a, "-n") || is_option(a, "-np")) {
            o->nranks = ranks_option(argv, &i);
        } else if (is_option(a, "--bind")) {
            o->bind = option_value(argv, &i, "--bind");
            if (o->bind == NULL)
                usage_error("%s needs cores or none", "--bind");
            if (strcmp(o->bind, "cores") != 0 && strcmp(o->bind, "none") != 0)
                usage_error("--bind must be cores or none, not '%s'", o->bind);
        } else if (strcmp(a, "-l") == 0 || strcmp(a, "--prefix-output") == 0) {
            o->prefix_output = 1;
        } else if (is_option(a, "--stack-size")) {
            o->stack_size = parse_size("--stack-size", option_value(argv, &i, "--stack-size"));
        } else if (is_option(a, "-usize") || is_option(a, "--usize")) {
            const char *name = a[1] == '-' ? "--usize" : "-usize";
            static char text[24];
            snprintf(text, sizeof text, "%ld", parse_count(name, option_value(argv, &i, name)));
            o->universe_size = text;
        } else if (is_option(a, "--nameserver")) {
            const char *server = option_value(argv, &i, "--nameserver");
            if (server == NULL || strchr(server, ':') == NULL)
                usage_error("%s needs HOST:PORT (what strand-nameserver printed)", "--nameserver");
            setenv("STRAND_NAMESERVER", server, 1);
        } else if (is_option(a, "--nodes")) {
            o->nnodes = parse_count("--nodes", option_value(argv, &i, "--nodes"));
        } else if (is_option(a, "-ppn") || is_option(a, "--ppn")) {
            const char *name = a[1] == '-' ? "--ppn" : "-ppn";
            o->ppn = parse_count(name, option_value(argv, &i, name));
        } else if (is_option(a, "-hosts") || is_option(a, "--hosts")) {
            const char *name = a[1] == '-' ? "--hosts" : "-hosts";
            o->hosts = option_value(argv, &i, name);
            if (o->hosts == NULL || *o->hosts == '\0')
                usage_error("%s needs a comma-separated list of hosts", name);
        } else if (is_option(a, "-hostfile") || is_option(a, "--hostfile") || is_option(a, "-f")) {
            const char *name = a[1] == '-' ? "--hostfile" : a[1] == 'f' ? "-f" : "-hostfile";
            o->hosts = hosts_from_file(option_value(argv, &i, name));
        } else if (strcmp(a, "-genv") == 0 || strcmp(a, "--genv") == 0) {
            if (i + 2 >= argc)
                usage_error("%s needs a NAME and a VALUE", a);
            const char *name = argv[++i], *value = argv[++i];
            setenv(name, value, 1);
            add_forward(o, name, value);
        } else if (strcmp(a, "-x") == 0) {
            if (i + 1 >= argc)
                usage_error("%s needs a NAME or NAME=VALUE", a);
            char *name = strdup(argv[++i]), *eq = strchr(name, '=');
            if (eq != NULL)
                *eq = '\0';
            const char *value = eq != NULL ? eq + 1 : getenv(name);
            if (value != NULL)
                add_forward(o, name, value);
        } else if (is_option(a, "--ssh-config")) {
            const char *file = option_value(argv, &i, "--ssh-config");
            if (file == NULL || *file == '\0')
                usage_error("%s needs a file name", "--ssh-config");
            setenv("STRAND_SSH_CONFIG", file, 1);
        } else if (is_option(a, "--net")) {
            const char *net = option_value(argv, &i, "--net");
            if (net == NULL || (strcmp(net, "tcp") != 0 && strcmp(net, "ucx") != 0 && strcmp(net, "auto") != 0))
                usage_error("--net must be tcp, ucx or auto, not '%s'", net ? net : "");
            setenv("STRAND_NET", net, 1);
        } else if (is_option(a, "--launcher")) {
            o->launcher = option_value(argv, &i, "--launcher");
            if (o->launcher == NULL || (strcmp(o->launcher, "fork") != 0 && strcmp(o->launcher, "ssh") != 0))
                usage_error("--launcher must be fork or ssh, not '%s'", o->launcher ? o->launcher : "");
        } else {
            usage_error("unknown option '%s'", a);
        }
    }
    if (i >= argc)
        usage_error("%s", "no program to run");
    split_app_contexts(o, argc, argv, i);
}

/* The file execvp would run for `name`: itself when it has a '/', else
 * the first executable one in PATH. Returns 0, or -1 when there is none. */
static int program_file(const char *name, char *out, size_t len)
{
    if (strchr(name, '/') != NULL)
        return snprintf(out, len, "%s", name) < (int)len ? 0 : -1;
    const char *path = getenv("PATH");
    char *dirs = strdup(path != NULL && *path != '\0' ? path : "/bin:/usr/bin"), *save = NULL;
    int found = -1;
    for (char *d = strtok_r(dirs, ":", &save); d != NULL && found != 0; d = strtok_r(NULL, ":", &save))
        if (snprintf(out, len, "%s/%s", *d != '\0' ? d : ".", name) < (int)len && access(out, X_OK) == 0)
            found = 0;
    free(dirs);
    return found;
}

/* MPMD: STRAND_APPS and STRAND_APP_<k> (src/core/apps.h), read by every
 * node process. */
static void set_apps_environment(const struct options *o)
{
    if (o->napps < 2)
        return;
    char name[32], text[24];
    snprintf(text, sizeof text, "%d", o->napps);
    setenv("STRAND_APPS", text, 1);
    long first = 0;
    for (int k = 0; k < o->napps; k++) {
        const struct app_context *app = &o->apps[k];
        char file[PATH_MAX], value[65536];
        if (program_file(app->argv[0], file, sizeof file) != 0 || access(file, X_OK) != 0) {
            int err = strchr(app->argv[0], '/') == NULL ? ENOENT : errno;
            fprintf(stderr, "mpiexec: cannot run %s: %s\n", app->argv[0], strerror(err));
            exit(err == ENOENT ? 127 : 126);
        }
        size_t used = (size_t)snprintf(value, sizeof value, "%ld %ld %d ", first, app->nranks, k);
        int fits = apps_encode(file, value, sizeof value, &used) == 0;
        for (char **arg = app->argv; fits && *arg != NULL; arg++) {
            fits = used + 1 < sizeof value;
            value[used++] = ' ';
            fits = fits && apps_encode(*arg, value, sizeof value, &used) == 0;
        }
        if (!fits) {
            fprintf(stderr, "mpiexec: the command line of program %d (%s) is longer than %zu bytes\n", k + 1,
                    app->argv[0], sizeof value);
            exit(2);
        }
        snprintf(name, sizeof name, "STRAND_APP_%d", k);
        setenv(name, value, 1);
        first += app->nranks;
    }
}

static void set_environment(const struct options *o)
{
    char text[24];
    snprintf(text, sizeof text, "%ld", o->nranks);
    setenv("STRAND_NRANKS", text, 1);
    /* More ranks than cores: left to the kernel. Runs of consecutive ranks
     * bound per core kept a token ring's hand-offs on one core but cost
     * when other processes load a core (doc/performance.md §12c). */
    if (o->bind != NULL)
        setenv("STRAND_BIND", o->bind, 1);
    else
        setenv("STRAND_BIND", o->nranks > (long)cpus_allowed() ? "none" : "cores", 1);
    if (o->prefix_output)
        setenv("STRAND_PREFIX_OUTPUT", "1", 1);
    if (o->stack_size != NULL)
        setenv("STRAND_STACK_SIZE", o->stack_size, 1);
    if (o->universe_size != NULL)
        setenv("STRAND_UNIVERSE_SIZE", o->universe_size, 1);
    set_apps_environment(o);
}

/* ---- running the program ----------------------------------------------- */

static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NFORWARDED (sizeof forwarded_signals / sizeof forwarded_signals[0])

static volatile sig_atomic_t program_group;

static volatile sig_atomic_t timed_out;

/* MPIEXEC_TIMEOUT expired: end the whole job at once. */
static void kill_on_timeout(int sig)
{
    (void)sig;
    timed_out = 1;
    if (program_group > 0)
        kill(-program_group, SIGKILL);
}

static void arm_time_limit(void)
{
    const char *text = getenv("MPIEXEC_TIMEOUT");
    if (text == NULL || *text == '\0')
        return;
    unsigned seconds = (unsigned)parse_count("MPIEXEC_TIMEOUT", text);
    on_signal(SIGALRM, kill_on_timeout);
    alarm(seconds);
}

/* A signal from the user (^C, kill) went to the job: the ends it causes
 * are not failures to explain. */
static volatile sig_atomic_t signal_forwarded;

static void forward_signal(int sig)
{
    signal_forwarded = 1;
    if (program_group > 0)
        kill(-program_group, sig);
}

static void block_forwarded_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < NFORWARDED; i++)
        sigaddset(&set, forwarded_signals[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

static void install_forwarding(void)
{
    for (size_t i = 0; i < NFORWARDED; i++)
        on_signal(forwarded_signals[i], forward_signal);
}

/* In the child: a process group of its own (so that signals reach all its
 * processes), default signal handling, then exec.  An exec failure is
 * reported to the parent through the close-on-exec pipe. */
static _Noreturn void exec_program(char **argv, const sigset_t *mask, int report_fd)
{
    int err;
    setpgid(0, 0);
    for (size_t i = 0; i < NFORWARDED; i++)
        signal(forwarded_signals[i], SIG_DFL);
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvp(argv[0], argv);
    err = errno;
    (void)!write(report_fd, &err, sizeof err);
    _exit(127);
}

/* With a terminal, the program's group becomes its foreground group: its
 * ranks read the terminal and get ^C and ^Z directly. */
static int terminal_given = 0;

static void give_terminal(pid_t group)
{
    if (!isatty(STDIN_FILENO) || tcgetpgrp(STDIN_FILENO) != getpgrp())
        return;
    signal(SIGTTOU, SIG_IGN);
    if (tcsetpgrp(STDIN_FILENO, group) == 0)
        terminal_given = 1;
}

static void take_terminal_back(void)
{
    if (terminal_given)
        tcsetpgrp(STDIN_FILENO, getpgrp());
}

/* ^Z stopped the program: stop mpiexec too, so the shell sees the job
 * stopped; when continued, continue the program. */
static void follow_stop(pid_t child)
{
    int had_terminal = terminal_given;
    take_terminal_back();
    signal(SIGTTOU, SIG_DFL);
    raise(SIGSTOP);
    if (had_terminal)
        give_terminal(child);
    kill(-child, SIGCONT);
}

static int wait_for_program(pid_t child, const char *name)
{
    int status;
    for (;;) {
        pid_t got = waitpid(child, &status, WUNTRACED);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            perror("mpiexec: waitpid");
            return 1;
        }
        if (WIFSTOPPED(status)) {
            follow_stop(child);
            continue;
        }
        break;
    }
    take_terminal_back();
    if (timed_out) {
        fprintf(stderr, "mpiexec: %s exceeded the time limit (MPIEXEC_TIMEOUT=%s s) and was killed\n",
                name, getenv("MPIEXEC_TIMEOUT"));
        return 124;
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    fprintf(stderr, "mpiexec: %s was killed by signal %d (%s)\n", name, sig, strsignal(sig));
    return 128 + sig;
}

/* The job's processes (process group `group`) were forked: it gets the
 * terminal and the time limit, signals are let through again. Returns
 * true when a process could not exec the program (its errno in *err). */
static int job_started(pid_t group, const sigset_t *old_mask, int report[2], int *err)
{
    program_group = group;
    give_terminal(group);
    arm_time_limit();
    sigprocmask(SIG_SETMASK, old_mask, NULL);
    close(report[1]);
    ssize_t n;
    while ((n = read(report[0], err, sizeof *err)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    return n == (ssize_t)sizeof *err;
}

static int run_program(char **argv)
{
    int report[2], err = 0;
    sigset_t old_mask;
    if (pipe2(report, O_CLOEXEC) != 0) {
        perror("mpiexec: pipe");
        return 127;
    }
    block_forwarded_signals(&old_mask);
    install_forwarding();
    pid_t child = fork();
    if (child < 0) {
        perror("mpiexec: fork");
        return 127;
    }
    if (child == 0)
        exec_program(argv, &old_mask, report[1]);
    setpgid(child, child); /* also here: no race with a signal sent right away */
    if (job_started(child, &old_mask, report, &err)) {
        waitpid(child, NULL, 0);
        take_terminal_back();
        fprintf(stderr, "mpiexec: cannot run %s: %s\n", argv[0], strerror(err));
        return err == ENOENT ? 127 : 126;
    }
    return wait_for_program(child, argv[0]);
}

/* ---- several node processes ------------------------------------------- */

struct node_plan {
    int nnodes, nranks, ppn;
    char **hosts;           /* per node */
    bool *remote;           /* per node: started through ssh */
    int nremote;
    int base_port;
    int kv_port;            /* the job's key-value store (kvs.h) */
    pid_t *pids;            /* per node (for a remote one, its ssh), 0 once it ended */
    int *control;           /* per remote node: the stdin of its ssh, else -1 */
    char **forward;         /* -genv and -x: NAME=VALUE */
    int nforward;
    char ***node_argv;      /* per node: the program of its first rank (MPMD: each loads the others) */
};

static int port_is_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* Node j listens on base + j: a base whose K ports are free now (checked
 * on this machine; STRAND_NET_PORT overrides). A node process that finds
 * its port taken all the same takes another and publishes it. */
static int choose_base_port(int nnodes)
{
    const char *fixed = getenv("STRAND_NET_PORT");
    if (fixed != NULL && *fixed != '\0')
        return (int)parse_count("STRAND_NET_PORT", fixed);
    unsigned seed = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);
    for (int attempt = 0; attempt < 64; attempt++) {
        int base = 20000 + (int)((seed + (unsigned)attempt * 7919u) % (unsigned)(40000 - nnodes));
        int free_all = 1;
        for (int j = 0; j < nnodes && free_all; j++)
            free_all = port_is_free(base + j);
        if (free_all)
            return base;
    }
    fprintf(stderr, "mpiexec: found no %d free consecutive TCP ports; set STRAND_NET_PORT\n", nnodes);
    exit(2);
}

static void check_layout(const struct options *o, long nnodes)
{
    if (o->ppn > 0 && (long)o->ppn * nnodes < o->nranks) {
        fprintf(stderr, "mpiexec: -ppn %ld on %ld node processes holds only %ld of the %ld ranks\n",
                o->ppn, nnodes, o->ppn * nnodes, o->nranks);
        exit(2);
    }
    if (o->ppn > 0 && (long)o->ppn * (nnodes - 1) >= o->nranks) {
        fprintf(stderr, "mpiexec: -ppn %ld leaves node process %ld without a rank\n", o->ppn, nnodes - 1);
        exit(2);
    }
}

/* False for the plain one-process job on this machine (no node options). */
static int plan_nodes(const struct options *o, struct node_plan *p)
{
    int nhosts = 0;
    char **hosts = NULL;
    long slots = 0;
    bool slots_given = false;
    if (o->hosts != NULL) {
        char *copy = strdup(o->hosts), *save = NULL;
        for (char *h = strtok_r(copy, ",", &save); h != NULL; h = strtok_r(NULL, ",", &save)) {
            /* "host:N": N slots of the host (MPI_UNIVERSE_SIZE) */
            char *colon = strrchr(h, ':');
            long n = colon != NULL && colon[1] != '\0' && strspn(colon + 1, "0123456789") == strlen(colon + 1)
                         ? strtol(colon + 1, NULL, 10) : -1;
            if (n >= 0) {
                *colon = '\0';
                slots += n;
                slots_given = true;
            }
            hosts = realloc(hosts, (size_t)(nhosts + 1) * sizeof *hosts);
            hosts[nhosts++] = h;
        }
    }
    /* MPI_UNIVERSE_SIZE from the slots of the host list, when it gives
     * any and neither -usize nor STRAND_UNIVERSE_SIZE did. */
    if (slots_given && getenv("STRAND_UNIVERSE_SIZE") == NULL) {
        char text[24];
        snprintf(text, sizeof text, "%ld", slots > o->nranks ? slots : o->nranks);
        setenv("STRAND_UNIVERSE_SIZE", text, 1);
    }
    bool ssh_all = o->launcher != NULL && strcmp(o->launcher, "ssh") == 0;
    bool fork_all = o->launcher != NULL && strcmp(o->launcher, "fork") == 0;
    long nnodes = o->nnodes;
    if (nnodes == 0 && o->ppn > 0)
        nnodes = (o->nranks + o->ppn - 1) / o->ppn;
    if (nnodes == 0)
        nnodes = nhosts > 0 ? nhosts : 1;
    /* Every node process needs a rank: a job smaller than the node count
     * uses the first nodes only (as MPICH's mpiexec uses the first hosts),
     * so that one command line can run jobs of every size. */
    if (nnodes > o->nranks)
        nnodes = o->nranks;
    if (nnodes == 1 && !ssh_all && (nhosts == 0 || host_is_this_machine(hosts[0])))
        return 0;
    check_layout(o, nnodes);
    p->nnodes = (int)nnodes;
    p->nranks = (int)o->nranks;
    p->ppn = (int)o->ppn;
    p->hosts = calloc((size_t)nnodes, sizeof *p->hosts);
    p->remote = calloc((size_t)nnodes, sizeof *p->remote);
    p->nremote = 0;
    for (int j = 0; j < nnodes; j++) {
        p->hosts[j] = nhosts > 0 ? hosts[j % nhosts] : "127.0.0.1";
        bool here = host_is_this_machine(p->hosts[j]);
        if (fork_all && !here) {
            fprintf(stderr, "mpiexec: host %s is not this machine: --launcher fork starts node processes "
                            "here only (use --launcher ssh, or leave the launcher out)\n", p->hosts[j]);
            exit(2);
        }
        p->remote[j] = ssh_all || !here;
        p->nremote += p->remote[j];
    }
    p->base_port = choose_base_port(p->nnodes);
    p->pids = calloc((size_t)nnodes, sizeof *p->pids);
    p->control = malloc((size_t)nnodes * sizeof *p->control);
    for (int j = 0; j < nnodes; j++)
        p->control[j] = -1;
    p->forward = o->forward;
    p->nforward = o->nforward;
    p->node_argv = malloc((size_t)nnodes * sizeof *p->node_argv);
    for (int j = 0; j < nnodes; j++) {
        long first = net_node_first_rank(p->nranks, p->nnodes, p->ppn, j), end = 0;
        int k = 0;
        while (k + 1 < o->napps && first >= (end += o->apps[k].nranks))
            k++;
        p->node_argv[j] = o->apps[k].argv;
    }
    return 1;
}

/* SIGUSR1 from a node process: it is aborting (strand_job_abort). */
static volatile sig_atomic_t node_aborted;

static void note_abort(int sig)
{
    (void)sig;
    node_aborted = 1;
}

static void set_node_environment(const struct node_plan *p, int node)
{
    char text[320];
    snprintf(text, sizeof text, "%d", p->nnodes);
    setenv("STRAND_NODES", text, 1);
    snprintf(text, sizeof text, "%d", node);
    setenv("STRAND_NODE_INDEX", text, 1);
    snprintf(text, sizeof text, "%d", p->base_port);
    setenv("STRAND_NET_PORT", text, 1);
    if (p->ppn > 0) {
        snprintf(text, sizeof text, "%d", p->ppn);
        setenv("STRAND_PPN", text, 1);
    }
    /* The store, at the address by which that host reaches this one. */
    char here[256];
    if (!p->remote[node])
        snprintf(here, sizeof here, "127.0.0.1");
    else if (address_toward(p->hosts[node], here, sizeof here) != 0) {
        fprintf(stderr, "mpiexec: host %s does not resolve or has no route from here\n", p->hosts[node]);
        exit(2);
    }
    snprintf(text, sizeof text, "%s:%d", here, p->kv_port);
    setenv("STRAND_KV_ADDR", text, 1);
}

/* A job id no other job on these hosts has: names the job's node
 * processes (their HELLOs), its store, its launched world. */
static void set_job_id(void)
{
    char id[32];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(id, sizeof id, "%llx", (unsigned long long)ts.tv_nsec * 6364136223846793005ull ^
                                       ((unsigned long long)getpid() << 32) ^ (unsigned long long)ts.tv_sec);
    setenv("STRAND_JOB_ID", id, 1);
}

static void set_job_environment(const struct node_plan *p)
{
    size_t len = 1;
    for (int j = 0; j < p->nnodes; j++)
        len += strlen(p->hosts[j]) + 1;
    char *list = malloc(len);
    list[0] = '\0';
    for (int j = 0; j < p->nnodes; j++) {
        if (j > 0)
            strcat(list, ",");
        strcat(list, p->hosts[j]);
    }
    setenv("STRAND_NET_HOSTS", list, 1);
    free(list);
    set_job_id();
    char id[32];
    snprintf(id, sizeof id, "%ld", (long)getpid());
    setenv("STRAND_LAUNCHER_PID", id, 1);
    on_signal(SIGUSR1, note_abort);
}

static void describe_node(const struct node_plan *p, int node, char *out, size_t len)
{
    int first = net_node_first_rank(p->nranks, p->nnodes, p->ppn, node);
    int end = net_node_first_rank(p->nranks, p->nnodes, p->ppn, node + 1);
    int n = end - first == 1 ? snprintf(out, len, "node %d (rank %d)", node, first)
                             : snprintf(out, len, "node %d (ranks %d-%d)", node, first, end - 1);
    if (p->remote[node])
        snprintf(out + n, len - (size_t)n, " on host %s", p->hosts[node]);
}

static int node_of_pid(const struct node_plan *p, pid_t pid)
{
    for (int j = 0; j < p->nnodes; j++)
        if (p->pids[j] == pid)
            return j;
    return -1;
}

/* What a node process on another host gets: every STRAND_* variable but
 * the launcher's pid (its agent is its launcher there), every UCX_* one
 * (UCX reads its settings from the environment), -genv and -x. */
static char **forwarded_environment(const struct node_plan *p)
{
    extern char **environ;
    int n = 0;
    for (char **e = environ; *e != NULL; e++)
        n++;
    char **env = calloc((size_t)(n + p->nforward + 1), sizeof *env);
    int k = 0;
    for (char **e = environ; *e != NULL; e++)
        if ((strncmp(*e, "STRAND_", 7) == 0 && strncmp(*e, "STRAND_LAUNCHER_PID=", 20) != 0) ||
            strncmp(*e, "UCX_", 4) == 0)
            env[k++] = *e;
    for (int i = 0; i < p->nforward; i++)
        env[k++] = p->forward[i];
    return env;
}

/* In a forked child: join the job's process group, die with mpiexec
 * (PR_SET_PDEATHSIG: no orphan if mpiexec is killed), default signals. */
static void enter_job(pid_t group, const sigset_t *mask)
{
    setpgid(0, group);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        _exit(1);
    for (size_t i = 0; i < NFORWARDED; i++)
        signal(forwarded_signals[i], SIG_DFL);
    sigprocmask(SIG_SETMASK, mask, NULL);
}

/* Node `node` on another host: its ssh joins the job's process group (so
 * signals, the time limit and the end of the job reach it); its stdin is a
 * pipe kept open by mpiexec, whose end tells the agent to end the node. */
static pid_t start_remote_node(struct node_plan *p, int node, char **argv, pid_t group, const sigset_t *mask)
{
    char **env = forwarded_environment(p);
    struct remote_command rc = { .host = p->hosts[node], .env = env, .program_argv = argv };
    char **ssh = remote_ssh_argv(&rc);
    free(env);
    int control[2];
    if (pipe2(control, O_CLOEXEC) != 0)
        return -1;
    pid_t child = fork();
    if (child == 0) {
        enter_job(group, mask);
        dup2(control[0], STDIN_FILENO);
        execvp(ssh[0], ssh);
        fprintf(stderr, "mpiexec: cannot run %s to reach host %s: %s\n", ssh[0], p->hosts[node], strerror(errno));
        _exit(127);
    }
    close(control[0]);
    free(ssh);
    if (child < 0)
        close(control[1]);
    else
        p->control[node] = control[1];
    return child;
}

/* Every node process (or its ssh) is in one process group (the first
 * one's): signals, the time limit and the end of the job reach all of
 * them at once. Each also dies with mpiexec (PR_SET_PDEATHSIG). */
static int start_nodes(struct node_plan *p, const sigset_t *mask, int report_fd)
{
    pid_t group = 0;
    for (int j = 0; j < p->nnodes; j++) {
        set_node_environment(p, j);
        char **argv = p->node_argv[j];
        pid_t child = p->remote[j] ? start_remote_node(p, j, argv, group, mask) : fork();
        if (child < 0) {
            perror("mpiexec: fork");
            if (group > 0)
                kill(-group, SIGKILL);
            return -1;
        }
        if (child == 0) {
            enter_job(group, mask);
            execvp(argv[0], argv);
            int err = errno;
            (void)!write(report_fd, &err, sizeof err);
            _exit(127);
        }
        setpgid(child, group == 0 ? child : group);
        if (group == 0)
            group = child;
        p->pids[j] = child;
    }
    return group;
}

/* How node `node` ended (waitpid's `status` of it, or of its ssh):
 * returns its exit status for the job and whether that ends the job; says
 * why when it does. */
static int node_outcome(const struct node_plan *p, int node, int status, bool *ends_job)
{
    char who[300];
    describe_node(p, node, who, sizeof who);
    int value = 0;
    enum node_end end = NODE_END_EXIT;
    if (!p->remote[node]) {
        if (WIFSIGNALED(status))
            end = NODE_END_SIGNAL, value = WTERMSIG(status);
        else
            end = node_aborted && WEXITSTATUS(status) != 0 ? NODE_END_ABORT : NODE_END_EXIT,
            value = WEXITSTATUS(status);
    } else if ((end = kvs_node_end(node, &value)) == NODE_END_UNKNOWN) {
        /* The agent never reported: ssh failed or the connection died. */
        *ends_job = true;
        int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        if (timed_out || signal_forwarded)
            return code;
        if (WIFSIGNALED(status))
            fprintf(stderr, "mpiexec: lost the ssh connection to %s (ssh was killed by signal %d); "
                            "ending the job\n", who, WTERMSIG(status));
        else if (!kvs_agent_started(node))
            fprintf(stderr, "mpiexec: cannot start %s through ssh (ssh exit status %d, see its message "
                            "above); ending the job\n", who, code);
        else
            fprintf(stderr, "mpiexec: lost the ssh connection to %s (ssh exit status %d); ending the job\n",
                    who, code);
        return code != 0 ? code : 1;
    }
    switch (end) {
    case NODE_END_SIGNAL:
        if (!timed_out && !signal_forwarded)
            fprintf(stderr, "mpiexec: %s was killed by signal %d (%s); ending the job\n", who, value,
                    strsignal(value));
        *ends_job = true;
        return 128 + value;
    case NODE_END_ABORT:
        fprintf(stderr, "mpiexec: %s aborted with status %d; ending the job\n", who, value);
        *ends_job = true;
        return value;
    case NODE_END_NOSTART:
        fprintf(stderr, "mpiexec: %s could not start (see above); ending the job\n", who);
        *ends_job = true;
        return value;
    default:
        /* Its ranks all ended (even with a non-zero status): the others finish. */
        *ends_job = false;
        return value;
    }
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Ends the job: local node processes at once; remote ones through their
 * agents (the end of their stdin: they end their node process and report),
 * their ssh killed only if still there after a grace period. Returns when
 * to kill what is left. */
static double end_job(struct node_plan *p, pid_t group)
{
    for (int j = 0; j < p->nnodes; j++) {
        if (p->control[j] >= 0) {
            close(p->control[j]);
            p->control[j] = -1;
        }
        if (!p->remote[j] && p->pids[j] > 0)
            kill(p->pids[j], SIGKILL);
    }
    if (p->nremote == 0) {
        kill(-group, SIGKILL);
        return 0;
    }
    return seconds_now() + 3.0;
}

static int run_nodes(struct node_plan *p, char **argv)
{
    int report[2], err = 0;
    sigset_t old_mask;
    char why[256];
    set_job_environment(p);
    p->kv_port = kvs_start(p->nnodes, getenv("STRAND_JOB_ID"), p->nremote > 0, why, sizeof why);
    if (p->kv_port < 0) {
        fprintf(stderr, "mpiexec: %s\n", why);
        return 1;
    }
    if (pipe2(report, O_CLOEXEC) != 0) {
        perror("mpiexec: pipe");
        return 127;
    }
    block_forwarded_signals(&old_mask);
    install_forwarding();
    pid_t group = start_nodes(p, &old_mask, report[1]);
    if (group < 0)
        return 127;
    if (job_started(group, &old_mask, report, &err)) {
        end_job(p, group);
        kill(-group, SIGKILL);
        while (waitpid(-group, NULL, 0) > 0 || errno == EINTR)
            ;
        take_terminal_back();
        fprintf(stderr, "mpiexec: cannot run %s: %s\n", argv[0], strerror(err));
        return err == ENOENT ? 127 : 126;
    }
    int running = p->nnodes, result = 0;
    bool ending = false;
    double kill_at = 0;
    while (running > 0) {
        int status;
        pid_t got = waitpid(-group, &status, ending ? WNOHANG : WUNTRACED);
        if (got == 0) {     /* ending, remote nodes still closing */
            if (kill_at > 0 && seconds_now() > kill_at) {
                kill(-group, SIGKILL);
                kill_at = 0;
            }
            struct timespec ms20 = { 0, 20000000 };
            nanosleep(&ms20, NULL);
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        if (WIFSTOPPED(status)) {
            follow_stop(group);
            continue;
        }
        int node = node_of_pid(p, got);
        if (node < 0)
            continue;
        p->pids[node] = 0;
        running--;
        if (ending)
            continue;   /* ended by us: its status is not the job's */
        bool ends_job = false;
        int code = node_outcome(p, node, status, &ends_job);
        if (code > result)
            result = code;
        if (!ends_job)
            kvs_note_exited(node, code);
        if (ends_job && running > 0) {
            ending = true;
            kill_at = end_job(p, group);
        }
    }
    for (int j = 0; j < p->nnodes; j++)
        if (p->control[j] >= 0)
            close(p->control[j]);
    take_terminal_back();
    if (timed_out) {
        fprintf(stderr, "mpiexec: %s exceeded the time limit (MPIEXEC_TIMEOUT=%s s) and was killed\n",
                argv[0], getenv("MPIEXEC_TIMEOUT"));
        return 124;
    }
    return result;
}

/* A job of one node process gets a store too: the name service of the
 * job and of the jobs it spawns (kvs.h). */
static int run_single(char **argv)
{
    char why[256], addr[64];
    set_job_id();
    int port = kvs_start(1, getenv("STRAND_JOB_ID"), false, why, sizeof why);
    if (port < 0) {
        fprintf(stderr, "mpiexec: %s\n", why);
        return 1;
    }
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    setenv("STRAND_KV_ADDR", addr, 1);
    return run_program(argv);
}

int main(int argc, char **argv)
{
    /* Run by a rank of another job: the node processes of this one are
     * node processes all the same (src/core/node_pid.h). */
    unsetenv(NODE_PID_VARIABLE);
    if (argc > 1 && strcmp(argv[1], "--node-agent") == 0)
        node_agent_main(argc - 2, argv + 2);
    struct options o;
    parse_options(argc, argv, &o);
    set_environment(&o);
    for (int k = 0; k < o.napps; k++)
        if (foreign_mpi_check(o.apps[k].argv[0], o.nranks) != 0)
            return 1;
    struct node_plan plan;
    if (!plan_nodes(&o, &plan))
        return run_single(o.program_argv);
    return run_nodes(&plan, o.program_argv);
}
