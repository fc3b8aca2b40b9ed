/*
 * mpmd.h - the check shared by tests/mpi/mpmd and tests/mpi/mpmd_peer, two
 * programs launched as one job (MPI-2.2 §8.8):
 *
 *     mpiexec -n 2 tests/mpi/mpmd LAYOUT MODE : -n 3 tests/mpi/mpmd_peer LAYOUT MODE "a b" ""
 *
 * LAYOUT names the programs of the world ranks in order, with counts
 * ("mpmd:2,mpmd_peer:3"); MODE is "index" (MPI_APPNUM is the app's place
 * on the command line) or "zero" (srun --multi-prog: Slurm gives every
 * task app number 0). Every rank checks that it is the program the layout
 * gives its rank, its MPI_APPNUM, and its own arguments (mpmd_peer gets
 * "a b" and an empty string, exactly); then all ranks exchange what they
 * are (MPI_Allgather), so each checks the whole job, and a ring of
 * messages crosses every program boundary.
 */
#ifndef STRAND_MPMD_H
#define STRAND_MPMD_H

#include "testutil.h"

enum { MPMD_MAX_APPS = 8 };

struct mpmd_layout {
    int napps;
    char names[MPMD_MAX_APPS][32];
    int counts[MPMD_MAX_APPS];
};

static inline int mpmd_parse(const char *text, struct mpmd_layout *l)
{
    l->napps = 0;
    while (*text != '\0' && l->napps < MPMD_MAX_APPS) {
        int used = 0;
        if (sscanf(text, "%31[^:]:%d%n", l->names[l->napps], &l->counts[l->napps], &used) != 2)
            return -1;
        l->napps++;
        text += used;
        if (*text == ',')
            text++;
    }
    return *text == '\0' ? 0 : -1;
}

/* The app of world rank r, or -1. */
static inline int mpmd_app_of(const struct mpmd_layout *l, int r)
{
    for (int k = 0, first = 0; k < l->napps; first += l->counts[k++])
        if (r >= first && r < first + l->counts[k])
            return k;
    return -1;
}

/* `me`: this program's name in the layout; `extra`: the arguments it must
 * have been given after LAYOUT and MODE (NULL-terminated). */
static inline int mpmd_check(const char *me, int argc, char **argv, const char *const *extra)
{
    int errs = 0, rank, size, flag = 0, *appnum = NULL;
    struct mpmd_layout l;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || mpmd_parse(argv[1], &l) != 0) {
        printf("usage: %s LAYOUT index|zero ...\n", me);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int mine = mpmd_app_of(&l, rank);
    CHECK(mine >= 0 && strcmp(l.names[mine], me) == 0, "rank %d runs %s, the layout says %s", rank, me,
          mine >= 0 ? l.names[mine] : "nothing");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    int want = strcmp(argv[2], "zero") == 0 ? 0 : mine;
    CHECK(flag && *appnum == want, "rank %d: MPI_APPNUM %d (flag %d), expected %d", rank, flag ? *appnum : -1,
          flag, want);
    int nextra = 0;
    while (extra[nextra] != NULL)
        nextra++;
    CHECK_INT("argc", 3 + nextra, argc);
    for (int i = 0; i < nextra && 3 + i < argc; i++)
        CHECK(strcmp(argv[3 + i], extra[i]) == 0, "argv[%d] is '%s', expected '%s'", 3 + i, argv[3 + i],
              extra[i]);
    /* What every rank is: the whole job agrees with the layout. */
    int *apps = malloc((size_t)size * sizeof *apps);
    CHECK_RC(MPI_Allgather(&mine, 1, MPI_INT, apps, 1, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        CHECK(apps[r] == mpmd_app_of(&l, r), "rank %d says rank %d is app %d, expected %d", rank, r, apps[r],
              mpmd_app_of(&l, r));
    free(apps);
    /* A ring: each rank sends its app to the next, across programs. */
    int got = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
    CHECK_RC(MPI_Sendrecv(&mine, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    CHECK_INT("app of the left neighbour", mpmd_app_of(&l, left), got);
    return errs;
}

#endif
