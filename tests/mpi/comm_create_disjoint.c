/* MPI_Comm_create with disjoint subgroups (MPI-2.2 §6.4.2): each rank
 * passes the group of its own half (even ranks, odd ranks), in reversed
 * order, and gets a communicator of exactly that group, ranked in group
 * order. Ranks in no group (the last one when the size is odd and the
 * groups exclude it) get MPI_COMM_NULL. Minimum 1 rank. */
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"

static int build_parity_group(MPI_Group world, int size, int parity, int exclude_last, MPI_Group *out)
{
    int *ranks = tu_malloc((size_t)size * sizeof *ranks);
    int n = 0;
    for (int r = size - 1; r >= 0; r--)   /* reversed: new rank order differs from world's */
        if (r % 2 == parity && !(exclude_last && r == size - 1))
            ranks[n++] = r;
    MPI_Group_incl(world, n, ranks, out);
    free(ranks);
    return n;
}

int main(int argc, char **argv)
{
    int errs = 0;
    MPI_Init(&argc, &argv);
    int rank = tu_rank(), size = tu_size();
    int exclude_last = size % 2 == 1 && size > 1;
    MPI_Group world, mine;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int n = build_parity_group(world, size, rank % 2, exclude_last, &mine);
    MPI_Comm sub;
    int rc = MPI_Comm_create(MPI_COMM_WORLD, mine, &sub);
    if (rc != MPI_SUCCESS)
        errs += TU_FAIL("MPI_Comm_create returned %d", rc);
    if (exclude_last && rank == size - 1) {
        if (sub != MPI_COMM_NULL)
            errs += TU_FAIL("rank %d is in no group but got a communicator", rank);
    } else if (sub == MPI_COMM_NULL) {
        errs += TU_FAIL("rank %d got MPI_COMM_NULL", rank);
    } else {
        int sub_size, sub_rank, group_rank;
        MPI_Comm_size(sub, &sub_size);
        MPI_Comm_rank(sub, &sub_rank);
        MPI_Group_rank(mine, &group_rank);
        if (sub_size != n || sub_rank != group_rank)
            errs += TU_FAIL("rank %d: size %d rank %d, expected %d and %d", rank, sub_size, sub_rank, n,
                            group_rank);
        /* The two communicators are separate: a token passed around each
         * ring sums the world ranks of that group only. */
        int expect = 0;
        for (int r = rank % 2; r < size; r += 2)
            if (!(exclude_last && r == size - 1))
                expect += r;
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub);
        if (sum != expect)
            errs += TU_FAIL("rank %d: sum of the group's world ranks %d, expected %d", rank, sum, expect);
        MPI_Comm_free(&sub);
    }
    MPI_Group_free(&mine);
    MPI_Group_free(&world);
    return tu_finish(errs);
}
