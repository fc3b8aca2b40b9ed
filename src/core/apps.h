/* The application contexts of a launched job (MPI-2.2 §8.8, MPMD):
 * `mpiexec -n 2 ./a : -n 3 ./b x` or `srun --multi-prog` runs different
 * programs, each with its own arguments, as one MPI_COMM_WORLD. World
 * ranks [first_rank, first_rank + nranks) run app k; MPI_APPNUM is its
 * `appnum`.
 *
 * The launcher describes the apps in the environment of every node
 * process (absent: one app, the program the process runs):
 *
 *     STRAND_APPS=K
 *     STRAND_APP_<k>=FIRST NRANKS APPNUM PATH ARGV0 ARGV1 ...   (k = 0..K-1)
 *
 * Words are separated by one space; each is percent-encoded (apps_encode):
 * a byte outside [A-Za-z0-9/._,+=:@-] is %XX, an empty word is "%%". PATH
 * is the program file to load (a name with a '/'), ARGV0 what its main
 * sees as argv[0]. A node process only needs the apps of its own ranks.
 *
 * This file depends on libc only: mpiexec (launcher/) links it too.
 *
 * Threads: apps_read runs once on the node's main thread before any rank
 * exists; the table is immutable afterwards, and apps_of_rank may be
 * called from any thread. */
#ifndef STRAND_CORE_APPS_H
#define STRAND_CORE_APPS_H

#include <stddef.h>

struct app {
    int first_rank, nranks;         /* its world ranks */
    int appnum;                     /* MPI_APPNUM of its ranks */
    char *path;                     /* the program file */
    char **argv;                    /* NULL-terminated; argv[0] as main sees it */
    int argc;
};

/* Appends `word` percent-encoded to out[len] at *used, which it advances.
 * Returns 0, or -1 when it does not fit (then nothing is appended). out
 * stays NUL-terminated either way. */
int apps_encode(const char *word, char *out, size_t len, size_t *used);

/* Parses one STRAND_APP_<k> value into *app (allocated; apps_free_one
 * releases it). Returns 0, or -1 with the reason in why[why_len]. */
int apps_parse(const char *value, struct app *app, char *why, size_t why_len);
void apps_free_one(struct app *app);

/* Node main thread, once: reads STRAND_APPS (and every STRAND_APP_<k>).
 * Returns the number of apps (0 when the variable is not set), or -1 with
 * the reason in why[why_len] (the caller ends the job). `nranks` is the
 * world size the apps must cover without overlapping. */
int apps_read(int nranks, char *why, size_t why_len);

/* The app of a world rank of the launched job; NULL for a job of one
 * program (no STRAND_APPS) or a rank no app covers. */
const struct app *apps_of_rank(int world_rank);

/* Its index among the apps (0..K-1): the same for every rank of one app. */
int apps_index(const struct app *app);

#endif
