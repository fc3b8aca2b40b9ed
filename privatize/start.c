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

#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/core/apps.h"

__thread struct rank_run *privatize_current_run;

/* What a rank runs: the node's program with the process's arguments, or
 * a program started by MPI_Comm_spawn with its own arguments. */
struct node_program {
    struct program_image *image;
    int argc;
    char **argv;
    int spawned;            /* copies are unloaded at the rank's end */
    char *wdir;             /* spawned: the ranks' working directory, or NULL */
    atomic_int users;       /* spawned: ranks that have not ended; the last frees it */
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

/* ---- fork() ------------------------------------------------------------ */

/* A rank's fork() child is an ordinary process (DESIGN §4 trap 9): its
 * _exit and abort are libc's, and its exit() ends it as a process's child
 * would end: the atexit handlers and destructors of its program (its rank's
 * copy, not every rank's), stdio flushed, then its status to its parent.
 *
 * The child has only the forking thread; a lock another rank held at the
 * fork stays held in it for ever.  So a fork waits until no rank is loading
 * or finishing a copy (libc's atexit list lock), and the child's standard
 * streams stop locking (glibc does not take stream locks across fork, and
 * cannot be made to: fflush(NULL) takes them after the stream list lock,
 * which fork takes after its prepare handlers). */
static pthread_mutex_t copies_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
bool privatize_forked_child;

static void fork_prepare(void)
{
    pthread_mutex_lock(&copies_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&copies_lock);
}

static void fork_child(void)
{
    __fsetlocking(stdin, FSETLOCKING_BYCALLER);
    __fsetlocking(stdout, FSETLOCKING_BYCALLER);
    __fsetlocking(stderr, FSETLOCKING_BYCALLER);
    /* (a recursive mutex knows its owner by thread id, which the child's
     * thread does not share: start afresh) */
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    copies_lock = fresh;
    privatize_forked_child = true;
}

_Noreturn void privatize_forked_child_exit(int status)
{
    struct rank_run *run = privatize_current_run;
    if (run != NULL && run->phase == RANK_RUNNING)
        program_image_finish_copy(&run->copy);
    fflush(NULL);
    privatize_real_quick_exit(status);
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

/* After main: like the end of a process, run the rank's atexit handlers
 * and destructors, then flush stdio.  The copy stays mapped until the node
 * process exits: dlclose costs time linear in the number of loaded copies
 * and holds the loader's lock that ranks still loading need, so unloading
 * 4096 copies one by one took longer than loading them; the process's exit
 * frees them all at once.  Threads the rank created that still run (an
 * OpenMP pool idles on) may go on using the copy, as they would in a process
 * until its exit.  _exit and abort run none of the handlers: the copy is
 * left as is. */
static void end_rank(struct rank_run *run, int unload)
{
    run->phase = RANK_FINISHING;
    if (run->ending == RANK_RETURNED && unload) {
        /* a spawned rank: nothing can still run in its copy, whose memory
         * must go for spawn/end cycles not to grow the process */
        pthread_mutex_lock(&copies_lock);
        program_image_unload_copy(&run->copy);
        pthread_mutex_unlock(&copies_lock);
        fflush(NULL);
    } else if (run->ending == RANK_RETURNED) {
        pthread_mutex_lock(&copies_lock);
        program_image_finish_copy(&run->copy);
        pthread_mutex_unlock(&copies_lock);
        fflush(NULL);
    } else {
        atomic_fetch_add(&copies_left_loaded, 1);
    }
    output_rank_end(run->rank);
}

/* ---- the programs of an MPMD launch (src/core/apps.h) ----------------- */

static struct node_program *program_open(const char *path, int argc, char *const *argv, const char *wdir,
                                         char *err, size_t errlen);

/* Each app other than the node's own program is read once, by the first
 * of its ranks, and kept until the process exits (like the node's own). */
static struct {
    pthread_mutex_t lock;
    struct node_program **programs;     /* by app index */
    int count;
} app_programs = { PTHREAD_MUTEX_INITIALIZER, NULL, 0 };

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether app `a` is what this process runs: the same file, the same argv. */
static int app_is_node_program(const struct app *a, const struct node_program *own)
{
    if (a->argc != own->argc || !same_file(a->path, "/proc/self/exe"))
        return 0;
    for (int i = 0; i < a->argc; i++)
        if (strcmp(a->argv[i], own->argv[i]) != 0)
            return 0;
    return 1;
}

static const struct node_program *app_program(const struct app *a, char *err, size_t errlen)
{
    int k = apps_index(a);
    pthread_mutex_lock(&app_programs.lock);
    if (k >= app_programs.count) {
        struct node_program **grown = realloc(app_programs.programs, (size_t)(k + 1) * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&app_programs.lock);
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        memset(grown + app_programs.count, 0, (size_t)(k + 1 - app_programs.count) * sizeof *grown);
        app_programs.programs = grown;
        app_programs.count = k + 1;
    }
    if (app_programs.programs[k] == NULL)
        app_programs.programs[k] = program_open(a->path, a->argc, a->argv, NULL, err, errlen);
    struct node_program *p = app_programs.programs[k];
    pthread_mutex_unlock(&app_programs.lock);
    return p;
}

/* The program of world rank `r`: its app's (an MPMD job), else the node's
 * own.  A program that cannot be read ends the job. */
static const struct node_program *program_of_rank(int r, const struct node_program *own)
{
    const struct app *a = apps_of_rank(r);
    if (a == NULL || app_is_node_program(a, own))
        return own;
    char err[2048];
    const struct node_program *p = app_program(a, err, sizeof err);
    if (p == NULL)
        abort_job(1, "rank %d: cannot read its program %s: %s", r, a->path, err);
    return p;
}

/* What a launched rank runs.  Every program of this node's ranks is read
 * before any rank runs main (the first rank to get here reads them, the
 * others find them cached): a program that cannot be read ends the job
 * before a rank of another program has done anything. */
static const struct node_program *launched_program(const struct node_program *own)
{
    const int *ranks;
    int count;
    strand_node_launched_ranks(&ranks, &count);
    for (int i = 0; i < count; i++)
        program_of_rank(ranks[i], own);
    return program_of_rank(strand_rank_world_number(strand_current_rank()), own);
}

static int run_one_rank(void *arg)
{
    const struct node_program *program = arg;
    if (!program->spawned)
        program = launched_program(program);
    char err[2048];
    struct rank_run *run = rank_run_create(program);
    if (run == NULL)
        abort_job(1, "rank %d: out of memory before loading the program",
                  strand_current_rank() ? strand_rank_world_number(strand_current_rank()) : -1);
    privatize_current_run = run;
    pthread_mutex_lock(&copies_lock);
    int loaded = program_image_load_copy(program->image, &run->copy, err, sizeof err);
    pthread_mutex_unlock(&copies_lock);
    if (loaded != 0)
        abort_job(1, "rank %d: cannot load its copy of the program: %s", world_number(run), err);
    if (!program->spawned)
        strand_rank_loaded();
    int status = run_main(run);
    int threads_left = live_threads(run);
    end_rank(run, program->spawned && threads_left == 0);
    privatize_current_run = NULL;
    if (threads_left == 0)
        rank_run_free(run);
    return status;
}

/* ---- programs started by MPI_Comm_spawn -------------------------------- */

static void spawned_program_free(struct node_program *p)
{
    program_image_close(p->image);
    free(p->wdir);
    free(p->argv);
    free(p);
}

/* A program read from `path` whose ranks see argv[0..argc) (copied). */
static struct node_program *program_open(const char *path, int argc, char *const *argv, const char *wdir,
                                         char *err, size_t errlen)
{
    struct node_program *p = calloc(1, sizeof *p);
    if (p == NULL || (p->argv = copy_arguments(argc, (char **)argv)) == NULL ||
        (wdir != NULL && (p->wdir = strdup(wdir)) == NULL)) {
        if (p != NULL)
            free(p->argv);
        free(p);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->argc = argc;
    if (program_image_open(path, &p->image, err, errlen) != 0) {
        free(p->wdir);
        free(p->argv);
        free(p);
        return NULL;
    }
    return p;
}

struct node_program *privatize_program_open(const char *path, const char *argv0, char *const *args,
                                            int nranks, const char *wdir, char *err, size_t errlen)
{
    int argc = 1;
    while (args != NULL && args[argc - 1] != NULL)
        argc++;
    char **argv = malloc(((size_t)argc + 1) * sizeof *argv);
    if (argv == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    argv[0] = (char *)argv0;
    for (int i = 1; i < argc; i++)
        argv[i] = args[i - 1];
    argv[argc] = NULL;
    struct node_program *p = program_open(path, argc, argv, wdir, err, errlen);
    free(argv);
    if (p != NULL) {
        p->spawned = 1;
        atomic_store(&p->users, nranks);
    }
    return p;
}

/* The rank thread (and the threads it will create) gets a current
 * directory of its own: Linux keeps it per thread once CLONE_FS is
 * unshared, so a child's chdir does not move its parents. */
static void enter_working_directory(const char *wdir)
{
    if (unshare(CLONE_FS) != 0 || chdir(wdir) != 0)
        abort_job(1, "a spawned rank cannot enter its working directory %s: %s", wdir, strerror(errno));
}

void privatize_program_release(struct node_program *p, int nranks)
{
    if (atomic_fetch_sub(&p->users, nranks) == nranks)
        spawned_program_free(p);
}

int privatize_spawned_rank_main(void *arg)
{
    struct node_program *p = arg;
    if (p->wdir != NULL)
        enter_working_directory(p->wdir);
    int status = run_one_rank(p);
    privatize_program_release(p, 1);
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
 * run at process exit by rtld_fini, must not run either.  And it was linked
 * as a shared object, without the DT_DEBUG entry debuggers look for in the
 * main program: give it one, so that gdb sees the libraries and the copies
 * (mpicc, pkg-config and CMake links alike). */
static void prepare_node_instance(const struct program_image *image)
{
    struct dl_phdr_info program;
    char err[512];
    memset(&program, 0, sizeof program);
    dl_iterate_phdr(find_first_object, &program);
    if (program.dlpi_phdr == NULL)
        return;
    if (program_image_disarm_destructors(image, program.dlpi_addr, err, sizeof err) != 0 ||
        program_image_show_debuggers_the_objects(image, program.dlpi_addr, &_r_debug, err,
                                                 sizeof err) != 0)
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
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    program.argc = argc;
    program.argv = argv;
    if (program_image_open("/proc/self/exe", &program.image, err, sizeof err) != 0) {
        fprintf(stderr, "Strand MPI: %s\n", err);
        strand_real_exit(1);
    }
    prepare_node_instance(program.image);
    output_setup_from_environment();
    strand_node_start_on_one_cpu();
    int status = strand_node_run(run_one_rank, &program);
    output_finish();
    if (atomic_load(&copies_left_loaded) > 0) {
        fflush(NULL);
        privatize_real_quick_exit(status);
    }
    strand_real_exit(status);
}
