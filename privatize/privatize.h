/* privatize/: what the rest of libmpi sees of the per-rank program loader,
 * and what the loader needs from src/core.  DESIGN §4. */
#ifndef STRAND_PRIVATIZE_H
#define STRAND_PRIVATIZE_H

#include "image.h"

#include <pthread.h>
#include <stddef.h>

/* Symbols a program must reach in libmpi even if libmpi is built with
 * -fvisibility=hidden: the entry point and the libc overrides. */
#define PRIVATIZE_EXPORT __attribute__((visibility("default")))
/* For the rest of libmpi only: never bound to a program's symbol of the
 * same name (a program exports all its globals, DESIGN §4 trap 2). */
#define PRIVATIZE_INTERNAL_API __attribute__((visibility("hidden")))

/* ---- provided by src/core --------------------------------------------- */
struct rank;
struct rank *strand_current_rank(void);          /* calling thread's rank, NULL outside ranks */
int strand_rank_world_number(struct rank *r);    /* rank in MPI_COMM_WORLD */
/* The launched world's ranks this node runs: ranks[count], ascending, not
 * always consecutive (srun -m cyclic); the runtime's, for the process's life. */
void strand_node_launched_ranks(const int **ranks, int *count);
void strand_thread_adopt_rank(struct rank *r);   /* calling thread acts for rank r */
int strand_rank_is_main_thread(struct rank *r);  /* 1 if the caller is r's program thread */
/* Runs rank_main(arg) once in each of the node's rank threads, waits for
 * all, returns the highest status. */
int strand_node_run(int (*rank_main)(void *arg), void *arg);
void strand_node_start_on_one_cpu(void);         /* before strand_node_run: see core.h */
void strand_rank_loaded(void);                   /* the calling rank's copy is loaded */
_Noreturn void strand_job_abort(int status, const char *message); /* ends the whole job */

/* ---- provided by privatize/ ------------------------------------------- */

/* Called by the entry stub (_strand_start, privatize/entry.c) of a program
 * linked by mpicc: loads one private copy of the program per rank, runs its
 * main in each rank thread, and exits the process with the highest status. */
PRIVATIZE_EXPORT _Noreturn void strand_program_start(int argc, char **argv,
                                                     void (*rtld_fini)(void));

/* Programs started by MPI_Comm_spawn (src/dpm): privatize_program_open
 * reads the program at `path` (a Strand program: built with mpicc) for
 * `nranks` ranks, whose argv is `argv0` then `args` (NULL-terminated; NULL
 * for none), copied, and whose current directory is `wdir` (NULL: the
 * process's; each rank thread then has its own, unshare(CLONE_FS)). On
 * failure returns NULL with the reason in err.
 * privatize_spawned_rank_main(program) is each rank thread's rank_main
 * (world_start_ranks): it loads a private copy, runs main, unloads the
 * copy; the last rank frees the program. privatize_program_release drops
 * the share of `nranks` ranks that will never run. */
struct node_program;
PRIVATIZE_INTERNAL_API struct node_program *privatize_program_open(const char *path, const char *argv0,
                                                                   char *const *args, int nranks,
                                                                   const char *wdir, char *err, size_t errlen);
PRIVATIZE_INTERNAL_API int privatize_spawned_rank_main(void *program);
PRIVATIZE_INTERNAL_API void privatize_program_release(struct node_program *program, int nranks);

/* libc's pthread_create, for threads the runtime starts for itself (progress
 * threads, ...): the exported pthread_create would make a thread started
 * from a rank adopt that rank and count as one of the rank's threads. */
PRIVATIZE_INTERNAL_API int strand_real_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                               void *(*start)(void *), void *arg);

/* libc's exit, whatever the calling thread. */
PRIVATIZE_INTERNAL_API _Noreturn void strand_real_exit(int status);

/* privatize_map_count_note (image.h): a sentence about vm.max_map_count when
 * the process is near it, for ENOMEM from pthread_create or mmap. */

#endif
