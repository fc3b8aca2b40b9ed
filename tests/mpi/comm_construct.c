/* MPI_Comm_dup, _split, _create, _free, _compare, names, and messages on
 * the new communicators staying apart from the old ones. */
#include <stdlib.h>
#include <string.h>
#include "comm_check.h"

static int check_ring(MPI_Comm comm, int tag)
{
    int errs = 0, rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int out = rank * 1000 + tag, in = -1;
    MPI_Status st;
    MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, tag, &in, 1, MPI_INT, (rank + size - 1) % size, tag, comm,
                 &st);
    int from = (rank + size - 1) % size;
    CHECK(errs, in == from * 1000 + tag, "ring got %d from %d", in, from);
    CHECK(errs, st.MPI_SOURCE == from, "source %d", st.MPI_SOURCE);
    return errs;
}

static int test_dup(int wrank, int wsize)
{
    int errs = 0, result, rank, size;
    MPI_Comm dup;
    CHECK(errs, MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS, "dup");
    MPI_Comm_rank(dup, &rank);
    MPI_Comm_size(dup, &size);
    CHECK(errs, rank == wrank && size == wsize, "dup rank %d size %d", rank, size);
    MPI_Comm_compare(dup, MPI_COMM_WORLD, &result);
    CHECK(errs, result == MPI_CONGRUENT, "compare dup/world %d", result);
    MPI_Comm_compare(dup, dup, &result);
    CHECK(errs, result == MPI_IDENT, "compare dup/dup %d", result);
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &result);
    CHECK(errs, result == MPI_IDENT, "compare world/world %d", result);
    MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &result);
    CHECK(errs, result == (wsize == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare self/world %d", result);

    /* A message on dup is not received on world (context ids differ). */
    if (wsize > 1) {
        if (wrank == 0) {
            int v = 11, w = 22;
            MPI_Send(&v, 1, MPI_INT, 1, 5, dup);
            MPI_Send(&w, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
        } else if (wrank == 1) {
            int got = 0;
            MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(errs, got == 22, "world received %d (want the world message 22)", got);
            MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, MPI_STATUS_IGNORE);
            CHECK(errs, got == 11, "dup received %d", got);
        }
    }
    errs += check_ring(dup, 3);

    /* dup of a dup, then names */
    MPI_Comm dup2;
    MPI_Comm_dup(dup, &dup2);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(dup2, name, &len);
    CHECK(errs, len == 0 && name[0] == '\0', "new comm has name '%s'", name);
    MPI_Comm_set_name(dup2, "second dup");
    MPI_Comm_get_name(dup2, name, &len);
    CHECK(errs, strcmp(name, "second dup") == 0 && len == 10, "name '%s' len %d", name, len);
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    CHECK(errs, strcmp(name, "MPI_COMM_WORLD") == 0, "world name '%s'", name);
    MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
    CHECK(errs, strcmp(name, "MPI_COMM_SELF") == 0, "self name '%s'", name);
    errs += check_ring(dup2, 4);
    MPI_Comm_free(&dup2);
    CHECK(errs, dup2 == MPI_COMM_NULL, "free sets MPI_COMM_NULL");
    MPI_Comm_free(&dup);

    /* A receive still pending when every member has freed its
     * communicator must not match messages of a communicator created later
     * (which could reuse a recycled context id). */
    if (wsize > 1) {
        MPI_Comm pd, other, barrier;
        MPI_Comm_dup(MPI_COMM_WORLD, &pd);
        int got = -1, flag = 0;
        MPI_Request req = MPI_REQUEST_NULL;
        if (wrank == 1)
            MPI_Irecv(&got, 1, MPI_INT, 0, 21, pd, &req);
        MPI_Comm_free(&pd);
        MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &barrier);    /* all have freed pd */
        MPI_Comm_free(&barrier);
        MPI_Comm_dup(MPI_COMM_WORLD, &other);
        if (wrank == 0) {
            int v = 98;
            MPI_Send(&v, 1, MPI_INT, 1, 21, other);
        } else if (wrank == 1) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, 0, 21, other, MPI_STATUS_IGNORE);
            CHECK(errs, v == 98 && got == -1, "message for the new comm went to the freed one (%d, %d)", v, got);
            MPI_Status st;
            MPI_Cancel(&req);
            MPI_Wait(&req, &st);
            MPI_Test_cancelled(&st, &flag);
            CHECK(errs, flag, "pending receive on a freed communicator could not be cancelled");
        }
        MPI_Comm_free(&other);
    }

    /* MPI_COMM_SELF dup */
    MPI_Comm selfdup;
    MPI_Comm_dup(MPI_COMM_SELF, &selfdup);
    MPI_Comm_size(selfdup, &size);
    MPI_Comm_rank(selfdup, &rank);
    CHECK(errs, size == 1 && rank == 0, "self dup size %d rank %d", size, rank);
    MPI_Comm_free(&selfdup);
    return errs;
}

static int test_split(int wrank, int wsize)
{
    int errs = 0, rank, size;
    /* Three colors, keys reversing the order. */
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 3, wsize - wrank, &split);
    MPI_Comm_rank(split, &rank);
    MPI_Comm_size(split, &size);
    int want_size = (wsize - wrank % 3 + 2) / 3;
    CHECK(errs, size == want_size, "split size %d want %d", size, want_size);
    /* Members of my color in decreasing world rank order. */
    int last = wrank % 3 + 3 * (want_size - 1);
    CHECK(errs, rank == (last - wrank) / 3, "split rank %d (world %d)", rank, wrank);
    MPI_Group g, wg;
    MPI_Comm_group(split, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int r0 = 0, w0 = -1;
    MPI_Group_translate_ranks(g, 1, &r0, wg, &w0);
    CHECK(errs, w0 == last, "rank 0 of split is world %d want %d", w0, last);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    errs += check_ring(split, 6);
    MPI_Comm_free(&split);

    /* Equal keys: parent order; MPI_UNDEFINED: no communicator. */
    MPI_Comm half;
    int color = wrank < wsize / 2 ? MPI_UNDEFINED : 1;
    MPI_Comm_split(MPI_COMM_WORLD, color, 0, &half);
    if (color == MPI_UNDEFINED) {
        CHECK(errs, half == MPI_COMM_NULL, "undefined color gives a communicator");
    } else {
        MPI_Comm_rank(half, &rank);
        CHECK(errs, rank == wrank - wsize / 2, "half rank %d", rank);
        MPI_Comm_free(&half);
    }

    /* Splitting a split, many times in a row (the slot is reused). */
    MPI_Comm a;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &a);
    for (int i = 0; i < 50; i++) {
        MPI_Comm b;
        MPI_Comm_split(a, i % 3 == 0 ? 0 : (wrank / 2) % 2, -wrank, &b);
        MPI_Comm_size(b, &size);
        CHECK(errs, size >= 1, "size %d", size);
        MPI_Comm_free(&b);
    }
    MPI_Comm_free(&a);
    return errs;
}

static int test_create(int wrank, int wsize)
{
    int errs = 0, rank, size, result;
    MPI_Group wg, even, rev;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int range[1][3] = { { 0, wsize - 1, 2 } };
    MPI_Group_range_incl(wg, 1, range, &even);
    MPI_Comm ec;
    MPI_Comm_create(MPI_COMM_WORLD, even, &ec);
    if (wrank % 2 == 0) {
        MPI_Comm_rank(ec, &rank);
        MPI_Comm_size(ec, &size);
        CHECK(errs, rank == wrank / 2 && size == (wsize + 1) / 2, "even comm rank %d size %d", rank, size);
        errs += check_ring(ec, 8);
        MPI_Comm_free(&ec);
    } else {
        CHECK(errs, ec == MPI_COMM_NULL, "odd rank got a communicator");
    }
    /* The whole group reversed: same members, other order -> SIMILAR. */
    int *ranks = malloc(sizeof(int) * wsize);
    for (int i = 0; i < wsize; i++)
        ranks[i] = wsize - 1 - i;
    MPI_Group_incl(wg, wsize, ranks, &rev);
    free(ranks);
    MPI_Comm rc;
    MPI_Comm_create(MPI_COMM_WORLD, rev, &rc);
    MPI_Comm_rank(rc, &rank);
    CHECK(errs, rank == wsize - 1 - wrank, "reversed rank %d", rank);
    MPI_Comm_compare(rc, MPI_COMM_WORLD, &result);
    CHECK(errs, result == (wsize == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare reversed/world %d", result);
    errs += check_ring(rc, 9);
    /* A create from a created communicator, with the empty group. */
    MPI_Comm none;
    MPI_Comm_create(rc, MPI_GROUP_EMPTY, &none);
    CHECK(errs, none == MPI_COMM_NULL, "empty group gives a communicator");
    MPI_Comm_free(&rc);
    MPI_Group_free(&rev);
    MPI_Group_free(&even);
    MPI_Group_free(&wg);
    return errs;
}

static int test_bad_input(int wrank, int wsize)
{
    int errs = 0, size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm stale = dup;
    MPI_Comm_free(&dup);
    CHECK(errs, check_class(MPI_Comm_size(stale, &size)) == MPI_ERR_COMM, "freed comm accepted");
    CHECK(errs, check_class(MPI_Comm_size(MPI_COMM_NULL, &size)) == MPI_ERR_COMM, "null comm accepted");
    MPI_Comm c = MPI_COMM_WORLD;
    CHECK(errs, check_class(MPI_Comm_free(&c)) == MPI_ERR_COMM, "freeing MPI_COMM_WORLD");
    CHECK(errs, check_class(MPI_Comm_remote_size(MPI_COMM_WORLD, &size)) == MPI_ERR_COMM,
          "remote size of an intracommunicator");
    MPI_Comm out = MPI_COMM_WORLD;
    /* Every member passes a bad color: all fail, none hangs. */
    CHECK(errs, check_class(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &out)) == MPI_ERR_ARG, "negative color");
    CHECK(errs, out == MPI_COMM_NULL, "failed split left a communicator");
    /* Only rank 0 passes a bad group: everyone fails. */
    MPI_Group wg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int rc = MPI_Comm_create(MPI_COMM_WORLD, wrank == 0 ? MPI_GROUP_NULL : wg, &out);
    CHECK(errs, check_class(rc) == (wrank == 0 ? MPI_ERR_GROUP : MPI_ERR_GROUP), "bad group class %d", rc);
    MPI_Group_free(&wg);
    /* A group that is not a subgroup of the communicator. */
    if (wsize > 1) {
        MPI_Comm half, other;
        MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2, wrank, &half);
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        rc = MPI_Comm_create(half, wg, &other);
        CHECK(errs, check_class(rc) == MPI_ERR_GROUP, "non-subgroup gives %d", rc);
        MPI_Group_free(&wg);
        MPI_Comm_free(&half);
    }
    int len;
    char name[MPI_MAX_OBJECT_NAME];
    CHECK(errs, check_class(MPI_Comm_get_name(stale, name, &len)) == MPI_ERR_COMM, "name of freed comm");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return errs;
}

int main(int argc, char **argv)
{
    int wrank, wsize, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    errs += test_dup(wrank, wsize);
    errs += test_split(wrank, wsize);
    errs += test_create(wrank, wsize);
    errs += test_bad_input(wrank, wsize);
    return check_finish(errs);
}
