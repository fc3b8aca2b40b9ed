/* The program side of a node process: from the entry stub to process exit.
 *
 * The file mpicc writes is a shared object with an entry point.  Run as
 * ./app, the kernel loads it once (the "node instance": its constructors do
 * not run, its destructors are disarmed, its main is never called), then
 * strand_program_start loads one private copy per rank, in that rank's
 * thread, and runs the copy's main there.  DESIGN §3, §4. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__thread struct rank_run *privatize_current_run;

/* What every rank runs: one image, the process's arguments. */
struct node_program {
    struct program_image *image;
    int argc;
    char **argv;
};

/* Copies left as they were when their rank ended with _exit or abort.
 * Their atexit handlers are still in the process's exit list, where libc's
 * exit would run them: the process then ends with _exit instead. */
static atomic_int copies_left_loaded;

__attribute__((format(printf, 2, 3))) static _Noreturn void abort_job(int status,
                                                                      const char *fmt, ...)
{
    char message[2048] = "Strand MPI: ";
    size_t n = strlen(message);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message + n, sizeof message - n - 1, fmt, ap);
    va_end(ap);
    strcat(message, "\n");
    strand_job_abort(status, message);
}

static int world_number(const struct rank_run *run)
{
    return run->rank != NULL ? strand_rank_world_number(run->rank) : -1;
}

/* ---- the rank's threads ------------------------------------------------ */

int rank_run_is_program_thread(const struct rank_run *run)
{
    return pthread_equal(run->program_thread, pthread_self());
}

void rank_run_thread_started(struct rank_run *run)
{
    pthread_mutex_lock(&run->threads_lock);
    run->live_threads++;
    pthread_mutex_unlock(&run->threads_lock);
}

void rank_run_thread_ended(struct rank_run *run)
{
    pthread_mutex_lock(&run->threads_lock);
    if (--run->live_threads == 0)
        pthread_cond_broadcast(&run->threads_gone);
    pthread_mutex_unlock(&run->threads_lock);
}

void rank_run_wait_for_threads(struct rank_run *run)
{
    pthread_mutex_lock(&run->threads_lock);
    while (run->live_threads > 0)
        pthread_cond_wait(&run->threads_gone, &run->threads_lock);
    pthread_mutex_unlock(&run->threads_lock);
}

static int live_threads(struct rank_run *run)
{
    pthread_mutex_lock(&run->threads_lock);
    int n = run->live_threads;
    pthread_mutex_unlock(&run->threads_lock);
    return n;
}

/* ---- one rank ---------------------------------------------------------- */

/* One block holding the pointer array and the strings. */
static char **copy_arguments(int argc, char **argv)
{
    size_t bytes = ((size_t)argc + 1) * sizeof(char *);
    for (int i = 0; i < argc; i++)
        bytes += strlen(argv[i]) + 1;
    char **copy = malloc(bytes);
    if (copy == NULL)
        return NULL;
    char *text = (char *)(copy + argc + 1);
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(argv[i]) + 1;
        copy[i] = memcpy(text, argv[i], n);
        text += n;
    }
    copy[argc] = NULL;
    return copy;
}

static struct rank_run *rank_run_create(const struct node_program *program)
{
    struct rank_run *run = calloc(1, sizeof *run);
    if (run == NULL)
        return NULL;
    run->argv = copy_arguments(program->argc, program->argv);
    if (run->argv == NULL) {
        free(run);
        return NULL;
    }
    run->argc = program->argc;
    run->rank = strand_current_rank();
    run->program_thread = pthread_self();
    run->phase = RANK_LOADING;
    pthread_mutex_init(&run->threads_lock, NULL);
    pthread_cond_init(&run->threads_gone, NULL);
    return run;
}

static void rank_run_free(struct rank_run *run)
{
    pthread_mutex_destroy(&run->threads_lock);
    pthread_cond_destroy(&run->threads_gone);
    free(run->argv);
    free(run);
}

void rank_run_end(struct rank_run *run, int status, enum rank_ending how)
{
    run->exit_status = status & 0xff; /* what a process's parent would see */
    run->ending = how;
    longjmp(run->exit_jump, 1);
}

/* Calls the copy's main; exit() and friends come back through the longjmp.
 * Like a process, exit() does not unwind main's frames. */
static int run_main(struct rank_run *const run)
{
    run->phase = RANK_RUNNING;
    if (setjmp(run->exit_jump) != 0)
        return run->exit_status;
    int status = run->copy.main(run->argc, run->argv, environ);
    run->ending = RANK_RETURNED;
    return status & 0xff;
}

/* ---- unloading on a deep enough stack --------------------------------- */

/* dlclose keeps arrays with an entry per loaded object on the stack (glibc
 * 2.36: about 18 bytes each, in _dl_close_worker and _dl_sort_maps): with
 * 4096 copies loaded that is 74 KiB, more than a small rank stack has left.
 * The rest is for the copy's atexit handlers and destructors, and for the
 * libraries (counted generously). */
static size_t unload_stack_need(void)
{
    return 64 * 1024 + 32 * (program_image_live_copies() + 512);
}

static size_t stack_left(void)
{
    pthread_attr_t attr;
    void *low;
    size_t size;
    char here;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return SIZE_MAX;
    int rc = pthread_attr_getstack(&attr, &low, &size);
    pthread_attr_destroy(&attr);
    return rc == 0 ? (size_t)((uintptr_t)&here - (uintptr_t)low) : SIZE_MAX;
}

/* One spare stack for all ranks: dlclose holds the loader's lock while it
 * runs a copy's handlers, so unloads are one at a time anyway. */
static pthread_mutex_t spare_stack_lock = PTHREAD_MUTEX_INITIALIZER;
static char *spare_stack;
static size_t spare_stack_size;
static struct program_copy *copy_to_unload;

static void unload_on_spare_stack(void) { program_image_unload_copy(copy_to_unload); }

static int ensure_spare_stack(size_t need)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = (need + page - 1) / page * page + page; /* + a guard page */
    if (spare_stack_size >= size)
        return 0;
    if (spare_stack != NULL)
        munmap(spare_stack, spare_stack_size);
    spare_stack_size = 0;
    spare_stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (spare_stack == MAP_FAILED || mprotect(spare_stack, page, PROT_NONE) != 0) {
        spare_stack = NULL;
        return -1;
    }
    spare_stack_size = size;
    return 0;
}

/* Unloads c in the calling thread (its handlers must run in the rank's
 * thread), on the spare stack if this thread's is too short. */
static void unload_copy(struct program_copy *c)
{
    size_t need = unload_stack_need();
    ucontext_t back, there;
    if (stack_left() >= need) {
        program_image_unload_copy(c);
        return;
    }
    pthread_mutex_lock(&spare_stack_lock);
    if (ensure_spare_stack(need) != 0 || getcontext(&there) != 0) {
        pthread_mutex_unlock(&spare_stack_lock);
        program_image_unload_copy(c); /* may overflow: nothing better to do */
        return;
    }
    there.uc_stack.ss_sp = spare_stack;
    there.uc_stack.ss_size = spare_stack_size;
    there.uc_link = &back;
    copy_to_unload = c;
    makecontext(&there, unload_on_spare_stack, 0);
    swapcontext(&back, &there);
    pthread_mutex_unlock(&spare_stack_lock);
}

/* After main: like the end of a process, run the rank's atexit handlers
 * and destructors, then flush stdio.  Normally that is dlclose, which also
 * frees the copy.  If threads the rank created still run (an OpenMP pool
 * idles on), they may still use the copy, and a process's exit would have
 * killed them, which a rank cannot do: run the handlers and destructors
 * without unmapping.  _exit and abort run none: the copy is left as is. */
static void end_rank(struct rank_run *run, int threads_left)
{
    run->phase = RANK_UNLOADING;
    if (run->ending == RANK_RETURNED && threads_left == 0) {
        unload_copy(&run->copy);
        fflush(NULL);
    } else if (run->ending == RANK_RETURNED) {
        program_image_finish_copy(&run->copy);
        fflush(NULL);
    } else {
        atomic_fetch_add(&copies_left_loaded, 1);
    }
    output_rank_end(run->rank);
}

static int run_one_rank(void *arg)
{
    const struct node_program *program = arg;
    char err[2048];
    struct rank_run *run = rank_run_create(program);
    if (run == NULL)
        abort_job(1, "rank %d: out of memory before loading the program",
                  strand_current_rank() ? strand_rank_world_number(strand_current_rank()) : -1);
    privatize_current_run = run;
    if (program_image_load_copy(program->image, &run->copy, err, sizeof err) != 0)
        abort_job(1, "rank %d: cannot load its copy of the program: %s", world_number(run), err);
    int status = run_main(run);
    int threads_left = live_threads(run);
    end_rank(run, threads_left);
    privatize_current_run = NULL;
    if (threads_left == 0)
        rank_run_free(run);
    return status;
}

/* ---- the node process -------------------------------------------------- */

static int find_first_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(struct dl_phdr_info *)data = *info;
    return 1; /* the first object dl_iterate_phdr reports is the program */
}

/* The kernel-loaded instance never ran its constructors (ld.so leaves those
 * of the main program to its _start, which is not ours): its destructors,
 * run at process exit by rtld_fini, must not run either. */
static void disarm_node_instance(const struct program_image *image)
{
    struct dl_phdr_info program;
    char err[512];
    memset(&program, 0, sizeof program);
    dl_iterate_phdr(find_first_object, &program);
    if (program.dlpi_phdr == NULL)
        return;
    if (program_image_disarm_destructors(image, program.dlpi_addr, err, sizeof err) != 0)
        fprintf(stderr, "Strand MPI: warning: %s\n", err);
}

void strand_program_start(int argc, char **argv, void (*rtld_fini)(void))
{
    static struct node_program program;
    char err[2048];
    /* what glibc's __libc_start_main would do: the loader's finalizer runs
     * the destructors of all libraries at exit */
    if (rtld_fini != NULL)
        atexit(rtld_fini);
    program.argc = argc;
    program.argv = argv;
    if (program_image_open("/proc/self/exe", &program.image, err, sizeof err) != 0) {
        fprintf(stderr, "Strand MPI: %s\n", err);
        strand_real_exit(1);
    }
    disarm_node_instance(program.image);
    output_setup_from_environment();
    int status = strand_node_run(run_one_rank, &program);
    output_finish();
    if (atomic_load(&copies_left_loaded) > 0) {
        fflush(NULL);
        privatize_real_quick_exit(status);
    }
    strand_real_exit(status);
}
