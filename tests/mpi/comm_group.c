/* Groups: every MPI_Group_* call, MPI_GROUP_EMPTY, and bad input. */
#include <stdlib.h>
#include "comm_check.h"

static int group_ranks_are(MPI_Group g, MPI_Group world, int n, const int *want)
{
    int errs = 0, size;
    MPI_Group_size(g, &size);
    CHECK(errs, size == n, "size %d want %d", size, n);
    for (int i = 0; i < n && i < size; i++) {
        int w = -1;
        MPI_Group_translate_ranks(g, 1, &i, world, &w);
        CHECK(errs, w == want[i], "member %d is world %d, want %d", i, w, want[i]);
    }
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, n, result;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *want = malloc(sizeof(int) * (size + 1)), *ranks = malloc(sizeof(int) * (size + 1));

    MPI_Group world, evens, odds, lowhalf, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(world, &n);
    CHECK(errs, n == size, "world group size %d", n);
    MPI_Group_rank(world, &n);
    CHECK(errs, n == rank, "world group rank %d", n);

    /* incl / excl / ranges */
    int ne = 0;
    for (int i = 0; i < size; i += 2)
        ranks[ne] = i, want[ne++] = i;
    MPI_Group_incl(world, ne, ranks, &evens);
    errs += group_ranks_are(evens, world, ne, want);
    MPI_Group_rank(evens, &n);
    CHECK(errs, n == (rank % 2 == 0 ? rank / 2 : MPI_UNDEFINED), "rank in evens %d", n);
    MPI_Group_excl(world, ne, ranks, &odds);
    int no = 0;
    for (int i = 1; i < size; i += 2)
        want[no++] = i;
    errs += group_ranks_are(odds, world, no, want);
    int range[1][3] = { { 0, size - 1, 2 } };
    MPI_Group_range_incl(world, 1, range, &g);
    MPI_Group_compare(g, evens, &result);
    CHECK(errs, result == MPI_IDENT, "range_incl vs incl: %d", result);
    MPI_Group_free(&g);
    MPI_Group_range_excl(world, 1, range, &g);
    MPI_Group_compare(g, odds, &result);
    CHECK(errs, result == MPI_IDENT, "range_excl vs excl: %d", result);
    MPI_Group_free(&g);
    /* A descending range: size-1, size-3, ... */
    int down[1][3] = { { size - 1, 0, -2 } };
    MPI_Group_range_incl(world, 1, down, &g);
    int nd = 0;
    for (int i = size - 1; i >= 0; i -= 2)
        want[nd++] = i;
    errs += group_ranks_are(g, world, nd, want);
    MPI_Group_free(&g);

    /* set operations */
    int half = size / 2;
    for (int i = 0; i < half; i++)
        ranks[i] = i;
    MPI_Group_incl(world, half, ranks, &lowhalf);
    MPI_Group_union(odds, evens, &g);
    MPI_Group_compare(g, world, &result);
    CHECK(errs, result == (size > 1 ? MPI_SIMILAR : MPI_IDENT), "odds+evens vs world: %d", result);
    no = 0;
    for (int i = 1; i < size; i += 2)
        want[no++] = i;
    for (int i = 0; i < size; i += 2)
        want[no++] = i;
    errs += group_ranks_are(g, world, size, want);
    MPI_Group_free(&g);
    MPI_Group_intersection(evens, lowhalf, &g);
    n = 0;
    for (int i = 0; i < half; i += 2)
        want[n++] = i;
    errs += group_ranks_are(g, world, n, want);
    MPI_Group_free(&g);
    MPI_Group_difference(lowhalf, evens, &g);
    n = 0;
    for (int i = 1; i < half; i += 2)
        want[n++] = i;
    errs += group_ranks_are(g, world, n, want);
    MPI_Group_free(&g);
    MPI_Group_intersection(evens, odds, &g);
    CHECK(errs, g == MPI_GROUP_EMPTY, "disjoint intersection is not MPI_GROUP_EMPTY");
    MPI_Group_free(&g);
    MPI_Group_difference(world, world, &g);
    MPI_Group_size(g, &n);
    CHECK(errs, n == 0, "world - world has %d members", n);
    MPI_Group_compare(g, MPI_GROUP_EMPTY, &result);
    CHECK(errs, result == MPI_IDENT, "empty vs MPI_GROUP_EMPTY: %d", result);
    MPI_Group_free(&g);
    MPI_Group_rank(MPI_GROUP_EMPTY, &n);
    CHECK(errs, n == MPI_UNDEFINED, "rank in MPI_GROUP_EMPTY %d", n);
    if (size > 1) {
        MPI_Group_compare(evens, odds, &result);
        CHECK(errs, result == MPI_UNEQUAL, "evens vs odds: %d", result);
    }

    /* translate: all of world into evens, with MPI_PROC_NULL */
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    ranks[size] = MPI_PROC_NULL;
    MPI_Group_translate_ranks(world, size + 1, ranks, evens, want);
    for (int i = 0; i < size; i++)
        CHECK(errs, want[i] == (i % 2 == 0 ? i / 2 : MPI_UNDEFINED), "world %d -> evens %d", i, want[i]);
    CHECK(errs, want[size] == MPI_PROC_NULL, "PROC_NULL -> %d", want[size]);

    /* MPI_Comm_group of a split matches the split's members. */
    MPI_Comm sc;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sc);
    MPI_Comm_group(sc, &g);
    MPI_Group_compare(g, rank % 2 ? odds : evens, &result);
    CHECK(errs, result == MPI_IDENT, "split group vs incl: %d", result);
    MPI_Group_free(&g);
    MPI_Comm_free(&sc);

    /* bad input */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Group stale = evens;
    ranks[0] = size;
    CHECK(errs, check_class(MPI_Group_incl(world, 1, ranks, &g)) == MPI_ERR_RANK, "rank out of range");
    ranks[0] = 0, ranks[1] = 0;
    if (size > 1)
        CHECK(errs, check_class(MPI_Group_incl(world, 2, ranks, &g)) == MPI_ERR_RANK, "repeated rank");
    ranks[0] = -1;
    CHECK(errs, check_class(MPI_Group_excl(world, 1, ranks, &g)) == MPI_ERR_RANK, "negative rank");
    int zero_stride[1][3] = { { 0, 0, 0 } };
    CHECK(errs, check_class(MPI_Group_range_incl(world, 1, zero_stride, &g)) == MPI_ERR_ARG, "stride 0");
    CHECK(errs, check_class(MPI_Group_size(MPI_GROUP_NULL, &n)) == MPI_ERR_GROUP, "null group");
    ranks[0] = size + 3;
    CHECK(errs, check_class(MPI_Group_translate_ranks(world, 1, ranks, evens, want)) == MPI_ERR_RANK,
          "translate of a rank outside group1");
    MPI_Group_free(&evens);
    CHECK(errs, check_class(MPI_Group_size(stale, &n)) == MPI_ERR_GROUP, "freed group accepted");
    CHECK(errs, check_class(MPI_Group_free(&stale)) == MPI_ERR_GROUP, "double free accepted");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_Group_free(&odds);
    MPI_Group_free(&lowhalf);
    MPI_Group_free(&world);
    free(want);
    free(ranks);
    return check_finish(errs);
}
