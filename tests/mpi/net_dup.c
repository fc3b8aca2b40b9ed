/*
 * net_dup: MPI_Comm_dup of a communicator whose members live in several
 * node processes (run with mpiexec --nodes K): the node processes agree on
 * the new context id, so
 *   - a message sent on the duplicate is received on the duplicate, from
 *     local and remote senders alike (MPI_ANY_SOURCE), and never by a
 *     receive on the parent with the same source and tag (isolation);
 *   - collectives work on the duplicate (allreduce, bcast);
 *   - 100 dup/free cycles (more than the 32 dups in flight a communicator
 *     keeps) and a dup of a dup work;
 *   - MPI_Comm_split (odd and even ranks, keys reversing the order) and
 *     MPI_Comm_create (a group of the first half) of the duplicate: sizes,
 *     ranks, a ring and an allreduce on the results;
 *   - a window over the duplicate (which spans node processes under
 *     mpiexec --nodes K): a put to the right neighbour under fences.
 * Minimum ranks: 2.
 */
#include "testutil.h"

static int ring_on(MPI_Comm comm, int rank, int size, int tag)
{
    int errs = 0, got = -1;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, right, tag, &got, 1, MPI_INT, MPI_ANY_SOURCE, tag, comm,
                          MPI_STATUS_IGNORE));
    CHECK(got == left, "ring on a duplicate: got %d, expected %d", got, left);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, dup2;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));

    /* Isolation: the same (source, tag) on the parent and on the dup. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int on_world = -1, on_dup = -1, a = 1000 + rank, b = 2000 + rank;
    MPI_Request r[4];
    CHECK_RC(MPI_Irecv(&on_dup, 1, MPI_INT, left, 7, dup, &r[0]));
    CHECK_RC(MPI_Irecv(&on_world, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &r[1]));
    CHECK_RC(MPI_Isend(&a, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &r[2]));
    CHECK_RC(MPI_Isend(&b, 1, MPI_INT, right, 7, dup, &r[3]));
    CHECK_RC(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
    CHECK(on_world == 1000 + left, "parent received %d, expected %d", on_world, 1000 + left);
    CHECK(on_dup == 2000 + left, "duplicate received %d, expected %d", on_dup, 2000 + left);

    int sum = 0;
    CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == size * (size - 1) / 2, "allreduce on the duplicate: %d", sum);

    CHECK_RC(MPI_Comm_dup(dup, &dup2));
    errs += ring_on(dup2, rank, size, 3);
    int root_value = rank == size - 1 ? 77 : 0;
    CHECK_RC(MPI_Bcast(&root_value, 1, MPI_INT, size - 1, dup2));
    CHECK(root_value == 77, "bcast on a dup of a dup: %d", root_value);
    CHECK_RC(MPI_Comm_free(&dup2));

    for (int i = 0; i < 100; i++) {
        MPI_Comm d;
        CHECK_RC(MPI_Comm_dup(dup, &d));
        if (i % 10 == 0)
            errs += ring_on(d, rank, size, i);
        CHECK_RC(MPI_Comm_free(&d));
    }

    MPI_Comm parity;
    CHECK_RC(MPI_Comm_split(dup, rank % 2, size - rank, &parity));
    int psize = -1, prank = -1, nsame = (size + 1 - rank % 2) / 2;
    MPI_Comm_size(parity, &psize);
    MPI_Comm_rank(parity, &prank);
    CHECK(psize == nsame, "split: size %d, expected %d", psize, nsame);
    CHECK(prank == nsame - 1 - rank / 2, "split: rank %d, expected %d (keys reverse the order)", prank,
          nsame - 1 - rank / 2);
    if (psize > 1)
        errs += ring_on(parity, prank, psize, 11);
    int psum = 0;
    CHECK_RC(MPI_Allreduce(&rank, &psum, 1, MPI_INT, MPI_SUM, parity));
    int want = 0;
    for (int r = rank % 2; r < size; r += 2)
        want += r;
    CHECK(psum == want, "allreduce on a split: %d, expected %d", psum, want);
    CHECK_RC(MPI_Comm_free(&parity));

    MPI_Group world_group, first_half;
    int range[1][3] = { { 0, (size - 1) / 2, 1 } };
    MPI_Comm_group(dup, &world_group);
    MPI_Group_range_incl(world_group, 1, range, &first_half);
    MPI_Comm created;
    CHECK_RC(MPI_Comm_create(dup, first_half, &created));
    if (rank <= (size - 1) / 2) {
        int csize = -1;
        MPI_Comm_size(created, &csize);
        CHECK(csize == (size - 1) / 2 + 1, "create: size %d", csize);
        int csum = 0;
        CHECK_RC(MPI_Allreduce(&rank, &csum, 1, MPI_INT, MPI_SUM, created));
        CHECK(csum == csize * (csize - 1) / 2, "allreduce on a created communicator: %d", csum);
        CHECK_RC(MPI_Comm_free(&created));
    } else {
        CHECK(created == MPI_COMM_NULL, "create gave a communicator to a non-member");
    }
    MPI_Group_free(&first_half);
    MPI_Group_free(&world_group);

    {
        MPI_Win win = MPI_WIN_NULL;
        int cell = -1, right = (rank + 1) % size;
        CHECK_RC(MPI_Win_create(&cell, sizeof cell, sizeof cell, MPI_INFO_NULL, dup, &win));
        CHECK_RC(MPI_Win_fence(0, win));
        CHECK_RC(MPI_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_fence(0, win));
        CHECK(cell == (rank + size - 1) % size, "window over a duplicate: got %d", cell);
        CHECK_RC(MPI_Win_free(&win));
    }
    CHECK_RC(MPI_Comm_free(&dup));
    return tu_finish(errs);
}
