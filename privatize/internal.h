/* Shared between the files of privatize/ only. */
#ifndef STRAND_PRIVATIZE_INTERNAL_H
#define STRAND_PRIVATIZE_INTERNAL_H

#include "image.h"
#include "privatize.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>

#define PRIVATIZE_INTERNAL __attribute__((visibility("hidden")))

enum rank_phase {
    RANK_LOADING,   /* constructors of the copy are running */
    RANK_RUNNING,   /* main is running */
    RANK_FINISHING, /* atexit handlers and destructors are running */
};

enum rank_ending {
    RANK_RETURNED,        /* return from main, or exit(): unload the copy */
    RANK_ENDED_QUICKLY,   /* _exit, _Exit, abort: its handlers must not run */
};

/* One rank's run of its copy of the program.  Shared by the rank's program
 * thread and the threads it creates; lives as long as any of them does. */
struct rank_run {
    struct rank *rank;
    pthread_t program_thread;
    enum rank_phase phase;
    jmp_buf exit_jump; /* exit() in the program thread returns here */
    int exit_status;
    enum rank_ending ending;
    struct program_copy copy;
    int argc;
    char **argv; /* the rank's own copy: getopt and MPI_Init may permute it */
    pthread_mutex_t threads_lock;
    pthread_cond_t threads_gone;
    int live_threads; /* threads the rank created that have not ended */
};

/* The run the calling thread works for; NULL outside privatized ranks. */
extern __thread struct rank_run *privatize_current_run PRIVATIZE_INTERNAL;

/* start.c */
/* In a child a rank created with fork(): libc's exit/_exit/abort apply. */
extern bool privatize_forked_child PRIVATIZE_INTERNAL;
PRIVATIZE_INTERNAL _Noreturn void privatize_forked_child_exit(int status);
PRIVATIZE_INTERNAL _Noreturn void rank_run_end(struct rank_run *run, int status,
                                               enum rank_ending how);
PRIVATIZE_INTERNAL void rank_run_thread_started(struct rank_run *run);
PRIVATIZE_INTERNAL void rank_run_thread_ended(struct rank_run *run);
PRIVATIZE_INTERNAL void rank_run_wait_for_threads(struct rank_run *run);
PRIVATIZE_INTERNAL int rank_run_is_program_thread(const struct rank_run *run);

/* output.c: per-rank, line-atomic, prefixed stdout and stderr */
PRIVATIZE_INTERNAL void output_setup_from_environment(void);
PRIVATIZE_INTERNAL void output_rank_end(struct rank *rank);
PRIVATIZE_INTERNAL void output_finish(void);

/* overrides.c: libc's own _exit (strand_real_exit is libc's exit) */
PRIVATIZE_INTERNAL _Noreturn void privatize_real_quick_exit(int status);

#endif
