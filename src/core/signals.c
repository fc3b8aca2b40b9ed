/* Fatal signals in ranks: say which rank, and why.
 *
 * A process-per-rank MPI shows which process crashed; in Strand every rank
 * is a thread of one process, so a crash would otherwise name nobody.
 * signals_install() (once per node process, before the ranks start) catches
 * SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT; the handler, on the rank's
 * alternate signal stack (signals_rank_thread_start), prints one report to
 * stderr:
 *   - a stack overflow (a fault in the guard below the rank's stack, or a
 *     stack pointer below it): one line naming the rank, its stack size and
 *     mpiexec --stack-size;
 *   - anything else: the rank, the signal, and a short backtrace of the
 *     thread with the program's function names (the program is a shared
 *     object, so dladdr finds them; static functions show as their
 *     neighbour's name plus an offset).
 * Then the signal's default action ends the process, so the job ends with
 * 128 + signal, as a crashed process would.  A program that installs its
 * own handler for these signals replaces this (signal dispositions are per
 * process). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "core.h"

enum { BACKTRACE_FRAMES = 16 };

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

static void put(const char *text, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, text, n);
        if (w <= 0)
            return;
        text += w;
        n -= (size_t)w;
    }
}

/* Where the signal stopped the thread: its program counter and stack pointer. */
struct stopped_at {
    uintptr_t pc, sp;
};

static struct stopped_at stopped_at(const void *context)
{
    const ucontext_t *uc = context;
#if defined(__x86_64__)
    return (struct stopped_at){(uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
                               (uintptr_t)uc->uc_mcontext.gregs[REG_RSP]};
#elif defined(__aarch64__)
    return (struct stopped_at){(uintptr_t)uc->uc_mcontext.pc, (uintptr_t)uc->uc_mcontext.sp};
#else
    (void)uc;
    return (struct stopped_at){0, UINTPTR_MAX};
#endif
}

/* The rank's program thread ran off the bottom of its stack: the fault is
 * in the guard below it, or the stack pointer is below the stack (a frame
 * larger than the guard moves it further; up to 1 GiB counts). */
static bool is_stack_overflow(const struct rank *r, const siginfo_t *info, const void *context)
{
    if (r->stack_low == NULL || !pthread_equal(r->program_thread, pthread_self()))
        return false;
    uintptr_t low = (uintptr_t)r->stack_low, addr = (uintptr_t)info->si_addr;
    uintptr_t sp = stopped_at(context).sp;
    return (addr < low && addr >= low - r->stack_guard) || (sp < low && low - sp <= (1u << 30));
}

static void report_overflow(const struct rank *r)
{
    char line[320];
    int n = snprintf(line, sizeof line,
                     "Strand MPI: rank %d overflowed its stack of %zu KiB (deep recursion or large "
                     "local arrays); give each rank more with mpiexec --stack-size (the default "
                     "follows ulimit -s)\n",
                     r->world_rank, r->stack_size >> 10);
    put(line, (size_t)n);
}

/* "  #i function+0xoff (object)" for each frame from the faulting one up
 * to the program's main (below it are Strand's own frames). */
static void report_backtrace(const void *context)
{
    void *frames[BACKTRACE_FRAMES + 8];
    int count = backtrace(frames, BACKTRACE_FRAMES + 8);
    uintptr_t pc = stopped_at(context).pc;
    int first = 0; /* frames before the faulting one are this handler's */
    for (int i = 0; i < count; i++)
        if ((uintptr_t)frames[i] == pc) {
            first = i;
            break;
        }
    for (int i = first; i < count && i - first < BACKTRACE_FRAMES; i++) {
        char line[512];
        Dl_info where = {0};
        /* a return address points after its call: look up the call itself */
        uintptr_t at = (uintptr_t)frames[i] - (i > first ? 1 : 0);
        int n;
        if (dladdr((void *)at, &where) != 0 && where.dli_sname != NULL)
            n = snprintf(line, sizeof line, "  #%d %s+0x%lx (%s)\n", i - first, where.dli_sname,
                         (unsigned long)(at - (uintptr_t)where.dli_saddr),
                         where.dli_fname != NULL ? where.dli_fname : "?");
        else
            n = snprintf(line, sizeof line, "  #%d %p (%s)\n", i - first, frames[i],
                         dladdr((void *)at, &where) != 0 && where.dli_fname != NULL
                             ? where.dli_fname
                             : "?");
        put(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        if (where.dli_sname != NULL && strcmp(where.dli_sname, "main") == 0)
            break;
    }
}

static void report_signal(const struct rank *r, int sig, const siginfo_t *info,
                          const void *context)
{
    char line[256];
    const char *name = sigabbrev_np(sig), *what = sigdescr_np(sig);
    int n = snprintf(line, sizeof line, "Strand MPI: rank %d received SIG%s (%s)", r->world_rank,
                     name != NULL ? name : "?", what != NULL ? what : "?");
    if (sig == SIGSEGV || sig == SIGBUS)
        n += snprintf(line + n, sizeof line - (size_t)n, " at address %p", info->si_addr);
    n += snprintf(line + n, sizeof line - (size_t)n, "; the job ends. Backtrace of the rank's thread:\n");
    put(line, (size_t)n);
    report_backtrace(context);
}

static void fatal_signal(int sig, siginfo_t *info, void *context)
{
    const struct rank *r = strand_self;
    static atomic_flag reported = ATOMIC_FLAG_INIT;
    /* one report: a second rank crashing meanwhile only waits for the end */
    if (r != NULL && !atomic_flag_test_and_set(&reported)) {
        if (sig == SIGSEGV && is_stack_overflow(r, info, context))
            report_overflow(r);
        else
            report_signal(r, sig, info, context);
    }
    /* the default action: when the handler returns, a fault recurs and a
     * sent signal (raise, abort) is delivered, now unblocked */
    signal(sig, SIG_DFL);
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

void signals_install(void)
{
    void *warm[1];
    /* backtrace loads libgcc's unwinder on first use: not inside a handler */
    backtrace(warm, 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        struct sigaction old;
        /* a disposition the process already chose (a debugger's, a tool's) stays */
        if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
            !(old.sa_flags & SA_SIGINFO))
            sigaction(fatal_signals[i], &sa, NULL);
    }
}

void signals_rank_thread_start(const struct rank *r)
{
    if (r->alt_stack == NULL)
        return;
    stack_t alt = {.ss_sp = r->alt_stack, .ss_size = r->alt_stack_size, .ss_flags = 0};
    sigaltstack(&alt, NULL);
}
