/* libc functions whose process-wide meaning must become per rank (DESIGN
 * §4 traps 3 and 4).  libmpi comes before libc in every program's lookup
 * scope, so these definitions are the ones a program's copies call.
 *
 * Outside a privatized rank (privatize_current_run == NULL: the node
 * process's own threads, or a program not started by strand_program_start)
 * and in a rank's fork() child, each behaves exactly like libc's, which is
 * found with dlsym(RTLD_NEXT) (exit in a child: see start.c).
 *
 * Calls libc makes to itself (assert -> abort, quick_exit -> _exit, thrd_exit)
 * do not come here: those still end the process. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <threads.h>
#include <unistd.h>

/* (the pointers lose noreturn: each call is followed by __builtin_unreachable) */
typedef void exit_function(int);
typedef void abort_function(void);
typedef void pthread_exit_function(void *);
typedef int pthread_create_function(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                    void *);
typedef int thrd_create_function(thrd_t *, thrd_start_t, void *);

/* libc's definition of name, looked up once. */
static void *libc_function(_Atomic(void *) *cache, const char *name)
{
    void *f = atomic_load_explicit(cache, memory_order_acquire);
    if (f == NULL) {
        f = dlsym(RTLD_NEXT, name);
        if (f == NULL) {
            static const char msg[] = "Strand MPI: cannot find libc's own version of a function\n";
            (void)!write(2, msg, sizeof msg - 1);
            syscall(SYS_exit_group, 127);
        }
        atomic_store_explicit(cache, f, memory_order_release);
    }
    return f;
}

#define LIBC(type, name)                                                                   \
    ({                                                                                     \
        static _Atomic(void *) cache_;                                                     \
        (type *)libc_function(&cache_, name);                                              \
    })

void strand_real_exit(int status)
{
    LIBC(exit_function, "exit")(status);
    __builtin_unreachable();
}

void privatize_real_quick_exit(int status)
{
    LIBC(exit_function, "_exit")(status);
    __builtin_unreachable();
}

static int libc_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                               void *(*start)(void *), void *arg)
{
    return LIBC(pthread_create_function, "pthread_create")(thread, attr, start, arg);
}

#if defined(__SANITIZE_THREAD__)
/* Under ThreadSanitizer (a build with --enable-tsan, its runtime
 * preloaded so that it sees libc's locks): a thread must start through the
 * sanitizer's wrapper of pthread_create, once, or it has no sanitizer
 * state and crashes at its first instrumented call. Calls into the
 * pthread_create below all come through that wrapper (it is first in the
 * lookup scope); libmpi's own threads go to the wrapper from here, and the
 * wrapper's call of "the real" pthread_create, which it finds in libmpi,
 * goes on to libc's. */
static _Thread_local bool creating_through_sanitizer;

_Noreturn static void sanitizer_refuses(const char *why)
{
    fprintf(stderr, "Strand MPI: under ThreadSanitizer, %s\n", why);
    syscall(SYS_exit_group, 127);
    __builtin_unreachable();
}

int strand_real_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                               void *(*start)(void *), void *arg)
{
    pthread_create_function *wrapper =
        (pthread_create_function *)dlsym(RTLD_DEFAULT, "__interceptor_pthread_create");
    /* (libmpi binds its own symbols first, -Bsymbolic: a lock tells
     * whether the runtime comes before libc) */
    void *lock = dlsym(RTLD_DEFAULT, "pthread_mutex_lock");
    if (wrapper == NULL || lock != dlsym(RTLD_DEFAULT, "__interceptor_pthread_mutex_lock"))
        sanitizer_refuses("its runtime must be preloaded: "
                          "LD_PRELOAD=$(gcc -print-file-name=libtsan.so)");
    creating_through_sanitizer = true;
    int rc = wrapper(thread, attr, start, arg);
    creating_through_sanitizer = false;
    return rc;
}

static bool called_by_sanitizer(void)
{
    return creating_through_sanitizer;
}

/* A rank's thread would start in adopted_thread_main, instrumented code
 * that runs before the start the sanitizer's wrapper put in its place. */
static void check_adoption_possible(void)
{
    sanitizer_refuses("a rank cannot create threads of its own");
}
#else
int strand_real_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                               void *(*start)(void *), void *arg)
{
    return libc_pthread_create(thread, attr, start, arg);
}

static bool called_by_sanitizer(void)
{
    return false;
}

static void check_adoption_possible(void)
{
}
#endif

/* ---- ending a rank ----------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static _Noreturn void end_job(struct rank_run *run,
                                                                    int status,
                                                                    const char *fmt, ...)
{
    char message[1024];
    int n = snprintf(message, sizeof message, "Strand MPI: rank %d: ",
                     run->rank != NULL ? strand_rank_world_number(run->rank) : -1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message + n, sizeof message - (size_t)n - 1, fmt, ap);
    va_end(ap);
    strcat(message, "\n");
    strand_job_abort(status, message);
}

/* Ends the calling rank as `call` (e.g. "exit(3)") would end a process.
 *
 * Only the rank's program thread can: it jumps back into run_one_rank.  A
 * thread the rank created cannot end the rank: the rank's other threads,
 * the program thread among them, cannot be stopped from outside (there is
 * no safe way to kill a thread), yet a process's exit would have stopped
 * them.  So the whole job ends.  The same holds while the copy is being
 * loaded or unloaded, where dlopen/dlclose hold the loader's lock. */
static _Noreturn void end_rank(struct rank_run *run, int status, enum rank_ending how,
                               const char *call)
{
    if (!rank_run_is_program_thread(run))
        end_job(run, status,
                "%s called in a thread the rank created; the rank's other threads cannot "
                "be stopped, so the job ends",
                call);
    if (run->phase != RANK_RUNNING)
        end_job(run, status, "%s called while the program was being %s, so the job ends", call,
                run->phase == RANK_LOADING ? "loaded (in a constructor)"
                                           : "unloaded (in an atexit handler or destructor)");
    rank_run_end(run, status, how);
}

PRIVATIZE_EXPORT void exit(int status)
{
    struct rank_run *run = privatize_current_run;
    char call[32];
    if (run == NULL)
        strand_real_exit(status);
    if (privatize_forked_child)
        privatize_forked_child_exit(status);
    snprintf(call, sizeof call, "exit(%d)", status);
    end_rank(run, status, RANK_RETURNED, call);
}

PRIVATIZE_EXPORT void _exit(int status)
{
    struct rank_run *run = privatize_current_run;
    char call[32];
    if (run == NULL || privatize_forked_child)
        privatize_real_quick_exit(status);
    snprintf(call, sizeof call, "_exit(%d)", status);
    end_rank(run, status, RANK_ENDED_QUICKLY, call);
}

PRIVATIZE_EXPORT void _Exit(int status)
{
    _exit(status);
}

/* A process killed by SIGABRT reports 128 + 6 through a shell. */
#define ABORT_STATUS 134

PRIVATIZE_EXPORT void abort(void)
{
    struct rank_run *run = privatize_current_run;
    if (run == NULL || privatize_forked_child) {
        LIBC(abort_function, "abort")();
        __builtin_unreachable();
    }
    if (rank_run_is_program_thread(run) && run->phase == RANK_RUNNING)
        fprintf(stderr, "Strand MPI: rank %d called abort(); it ends with status %d\n",
                run->rank != NULL ? strand_rank_world_number(run->rank) : -1, ABORT_STATUS);
    end_rank(run, ABORT_STATUS, RANK_ENDED_QUICKLY, "abort()");
}

/* pthread_exit in a process's main thread lets the other threads finish,
 * then the process exits with status 0: the same for a rank. */
PRIVATIZE_EXPORT void pthread_exit(void *value)
{
    struct rank_run *run = privatize_current_run;
    if (run != NULL && !privatize_forked_child && run->phase == RANK_RUNNING &&
        rank_run_is_program_thread(run)) {
        rank_run_wait_for_threads(run);
        rank_run_end(run, 0, RANK_RETURNED);
    }
    LIBC(pthread_exit_function, "pthread_exit")(value);
    __builtin_unreachable();
}

/* ---- threads a rank creates (trap 4) ----------------------------------- */

struct adopted_start {
    void *(*start)(void *);
    void *arg;
    struct rank *rank;
    struct rank_run *run;
};

static void thread_leaves_rank(void *run)
{
    if (run != NULL)
        rank_run_thread_ended(run);
}

static void *adopted_thread_main(void *p)
{
    struct adopted_start s = *(struct adopted_start *)p;
    void *result;
    free(p);
    if (s.rank != NULL)
        strand_thread_adopt_rank(s.rank);
    privatize_current_run = s.run;
    pthread_cleanup_push(thread_leaves_rank, s.run);
    result = s.start(s.arg);
    pthread_cleanup_pop(1);
    return result;
}

/* Starts a thread that acts for the calling thread's rank and counts as one
 * of the rank's threads until it ends. */
static int create_adopted_thread(pthread_t *thread, const pthread_attr_t *attr,
                                 void *(*start)(void *), void *arg, struct rank *rank,
                                 struct rank_run *run)
{
    check_adoption_possible();
    struct adopted_start *s = malloc(sizeof *s);
    if (s == NULL)
        return EAGAIN;
    *s = (struct adopted_start){.start = start, .arg = arg, .rank = rank, .run = run};
    if (run != NULL)
        rank_run_thread_started(run);
    int rc = libc_pthread_create(thread, attr, adopted_thread_main, s);
    if (rc != 0) {
        if (run != NULL)
            rank_run_thread_ended(run);
        free(s);
    }
    return rc;
}

PRIVATIZE_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                                    void *(*start)(void *), void *arg)
{
    struct rank_run *run = privatize_current_run;
    struct rank *rank = strand_current_rank();
    if ((rank == NULL && run == NULL) || called_by_sanitizer())
        return libc_pthread_create(thread, attr, start, arg);
    return create_adopted_thread(thread, attr, start, arg, rank, run);
}

/* C11 threads: glibc's thrd_create calls its pthread_create internally. */
struct c11_start {
    thrd_start_t start;
    void *arg;
};

static void *c11_thread_main(void *p)
{
    struct c11_start s = *(struct c11_start *)p;
    free(p);
    /* glibc's thrd_join reads the int result back through uintptr_t */
    return (void *)(uintptr_t)(unsigned)s.start(s.arg);
}

PRIVATIZE_EXPORT int thrd_create(thrd_t *thread, thrd_start_t start, void *arg)
{
    struct rank_run *run = privatize_current_run;
    struct rank *rank = strand_current_rank();
    if (rank == NULL && run == NULL)
        return LIBC(thrd_create_function, "thrd_create")(thread, start, arg);
    struct c11_start *s = malloc(sizeof *s);
    if (s == NULL)
        return thrd_nomem;
    *s = (struct c11_start){.start = start, .arg = arg};
    int rc = create_adopted_thread((pthread_t *)thread, NULL, c11_thread_main, s, rank, run);
    if (rc != 0)
        free(s);
    return rc == 0 ? thrd_success : rc == ENOMEM ? thrd_nomem : thrd_error;
}
