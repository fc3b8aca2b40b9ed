/* Communicators built at the same moment over different parents must get
 * distinct contexts (MPI-2.2 §6.4: a new communicator is a new
 * communication context). The world is cut into two interleaved halves
 * (ranks 0,1 | 2,3 | 4,5 ... alternate), so that over several node
 * processes each half has members in each of them; both halves then run
 * the same sequence of dups, splits, creates, intercommunicator creates
 * and merges at once, and every result is checked: size, rank, members in
 * order, a reduction and a message ring inside it. With
 * MPI_THREAD_MULTIPLE, NTHREADS threads of every rank then do the same on
 * their own duplicate of MPI_COMM_WORLD concurrently.
 *
 * Argument: iterations (default 20). Minimum 1 rank. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"

enum { NTHREADS = 4, TAG_RING = 7, TAG_INTER = 8 };

/* World ranks of `comm`'s members in rank order, at every member. */
static void world_ranks_of(MPI_Comm comm, int *out)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Allgather(&me, 1, MPI_INT, out, 1, MPI_INT, comm);
}

/* Checks that `comm` has exactly `expect` (world ranks, in rank order)
 * as members and that a reduction and a ring message stay inside it. */
static int check_comm(MPI_Comm comm, const int *expect, int n, const char *what)
{
    int errs = 0, size, rank, me;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (size != n)
        return TU_FAIL("%s: size %d, expected %d", what, size, n);
    if (expect[rank] != me)
        errs += TU_FAIL("%s: world rank %d has rank %d, which belongs to world rank %d", what, me, rank,
                        expect[rank]);
    int *members = tu_malloc((size_t)n * sizeof *members);
    world_ranks_of(comm, members);
    int sum = 0, expect_sum = 0;
    for (int i = 0; i < n; i++) {
        expect_sum += expect[i];
        if (members[i] != expect[i])
            errs += TU_FAIL("%s: member %d is world rank %d, expected %d", what, i, members[i], expect[i]);
    }
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (sum != expect_sum)
        errs += TU_FAIL("%s: sum of world ranks %d, expected %d", what, sum, expect_sum);
    int from = -1;
    MPI_Sendrecv(&me, 1, MPI_INT, (rank + 1) % n, TAG_RING, &from, 1, MPI_INT, (rank + n - 1) % n, TAG_RING,
                 comm, MPI_STATUS_IGNORE);
    if (from != expect[(rank + n - 1) % n])
        errs += TU_FAIL("%s: ring message from world rank %d, expected %d", what, from,
                        expect[(rank + n - 1) % n]);
    free(members);
    return errs;
}

/* One round of constructors over `parent`, each result checked. */
static int construct_round(MPI_Comm parent, int round)
{
    int errs = 0, size, rank;
    MPI_Comm_size(parent, &size);
    MPI_Comm_rank(parent, &rank);
    int *members = tu_malloc((size_t)size * sizeof *members);
    int *expect = tu_malloc((size_t)size * sizeof *expect);
    world_ranks_of(parent, members);

    MPI_Comm dup;
    MPI_Comm_dup(parent, &dup);
    errs += check_comm(dup, members, size, "dup");

    /* Split by parity of the rank, reversed order (key = -rank). */
    MPI_Comm split;
    int parity = (rank + round) % 2, n = 0;
    MPI_Comm_split(dup, parity, -rank, &split);
    for (int r = size - 1; r >= 0; r--)
        if ((r + round) % 2 == parity)
            expect[n++] = members[r];
    errs += check_comm(split, expect, n, "split");

    /* Create over the whole group, from the dup. */
    MPI_Group group;
    MPI_Comm created;
    MPI_Comm_group(parent, &group);
    MPI_Comm_create(dup, group, &created);
    MPI_Group_free(&group);
    if (created == MPI_COMM_NULL)
        errs += TU_FAIL("create over the whole group gave MPI_COMM_NULL");
    else
        errs += check_comm(created, members, size, "create");

    /* The two parities joined by an intercommunicator, then merged with
     * parity 1 first. */
    if (size >= 2) {
        MPI_Comm inter, merged;
        int other_leader = size - 1;    /* the other parity's rank 0 in split: its highest rank */
        while ((other_leader + round) % 2 == parity)
            other_leader--;
        MPI_Intercomm_create(split, 0, dup, other_leader, TAG_INTER, &inter);
        int remote_size;
        MPI_Comm_remote_size(inter, &remote_size);
        if (remote_size != size - n)
            errs += TU_FAIL("intercomm: remote size %d, expected %d", remote_size, size - n);
        MPI_Intercomm_merge(inter, parity == 0, &merged);
        int m = 0;
        for (int want = 1; want >= 0; want--)
            for (int r = size - 1; r >= 0; r--)
                if ((r + round) % 2 == want)
                    expect[m++] = members[r];
        errs += check_comm(merged, expect, size, "merge");
        MPI_Comm_free(&merged);
        MPI_Comm_free(&inter);
    }
    if (created != MPI_COMM_NULL)
        MPI_Comm_free(&created);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    free(members);
    free(expect);
    return errs;
}

struct worker {
    MPI_Comm comm;
    int iterations;
    int errs;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < w->iterations; i++)
        w->errs += construct_round(w->comm, i);
    return NULL;
}

/* NTHREADS threads per rank, each on its own dup of MPI_COMM_WORLD. */
static int threads_round(int iterations)
{
    int errs = 0;
    struct worker w[NTHREADS];
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        w[t] = (struct worker){ .iterations = iterations };
        MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm);
    }
    for (int t = 0; t < NTHREADS; t++)
        if (pthread_create(&th[t], NULL, worker_main, &w[t]) != 0)
            TU_ABORT("pthread_create failed");
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        errs += w[t].errs;
        MPI_Comm_free(&w[t].comm);
    }
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int iterations = argc > 1 ? atoi(argv[1]) : 20;
    int rank = tu_rank();
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, (rank / 2) % 2, rank, &half);
    for (int i = 0; i < iterations; i++)
        errs += construct_round(half, i);
    MPI_Comm_free(&half);
    if (provided == MPI_THREAD_MULTIPLE)
        errs += threads_round(iterations / 4 + 1);
    else if (rank == 0)
        printf("MPI_THREAD_MULTIPLE not provided: thread part skipped\n");
    return tu_finish(errs);
}
