/* mpiexec: runs an MPI program built with Strand's mpicc on this node.
 *
 * All ranks of a node are threads of one process (DESIGN §3), so mpiexec
 * starts the program once and tells it, through the environment, how many
 * ranks to run and how:
 *   STRAND_NRANKS, STRAND_BIND, STRAND_PREFIX_OUTPUT, STRAND_STACK_SIZE,
 *   STRAND_UNIVERSE_SIZE.
 * It forwards SIGINT, SIGTERM and SIGHUP to the program's process group and
 * exits with the program's exit status (128 + N if signal N killed it). */
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
#include <unistd.h>

#include "foreign.h"

struct options {
    long nranks;
    const char *bind; /* "cores", "none", or NULL for the default */
    int prefix_output;
    const char *stack_size;
    const char *universe_size;
    char **program_argv; /* program and its arguments */
};

static const char usage_text[] =
    "Usage: mpiexec [options] program [arguments...]\n"
    "Runs an MPI program built with Strand's mpicc; all ranks are threads of one\n"
    "process on this node.\n"
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
    "N killed it; 127 if the program could not be started; 2 for bad options.\n";

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
            o->nranks = parse_count(a[2] == 'p' ? "-np" : "-n",
                                    option_value(argv, &i, a[2] == 'p' ? "-np" : "-n"));
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
        } else {
            usage_error("unknown option '%s'", a);
        }
    }
    if (i >= argc)
        usage_error("%s", "no program to run");
    o->program_argv = argv + i;
}

static long usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

static void set_environment(const struct options *o)
{
    char text[24];
    snprintf(text, sizeof text, "%ld", o->nranks);
    setenv("STRAND_NRANKS", text, 1);
    if (o->bind != NULL)
        setenv("STRAND_BIND", o->bind, 1);
    else
        setenv("STRAND_BIND", o->nranks > usable_cores() ? "none" : "cores", 1);
    if (o->prefix_output)
        setenv("STRAND_PREFIX_OUTPUT", "1", 1);
    if (o->stack_size != NULL)
        setenv("STRAND_STACK_SIZE", o->stack_size, 1);
    if (o->universe_size != NULL)
        setenv("STRAND_UNIVERSE_SIZE", o->universe_size, 1);
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
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = kill_on_timeout;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    alarm(seconds);
}

static void forward_signal(int sig)
{
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
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < NFORWARDED; i++)
        sigaction(forwarded_signals[i], &sa, NULL);
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
    program_group = child;
    give_terminal(child);
    arm_time_limit();
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    close(report[1]);
    ssize_t n;
    while ((n = read(report[0], &err, sizeof err)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    if (n == (ssize_t)sizeof err) {
        waitpid(child, NULL, 0);
        take_terminal_back();
        fprintf(stderr, "mpiexec: cannot run %s: %s\n", argv[0], strerror(err));
        return err == ENOENT ? 127 : 126;
    }
    return wait_for_program(child, argv[0]);
}

int main(int argc, char **argv)
{
    struct options o;
    parse_options(argc, argv, &o);
    set_environment(&o);
    if (foreign_mpi_check(o.program_argv[0], o.nranks) != 0)
        return 1;
    return run_program(o.program_argv);
}
