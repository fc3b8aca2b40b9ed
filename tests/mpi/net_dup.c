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
 *   - MPI_Comm_split of a communicator spanning node processes fails
 *     cleanly with MPI_ERR_UNSUPPORTED_OPERATION when run over several node
 *     processes (it is not supported yet, doc/limits.md).
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

    if (argc > 1 && strcmp(argv[1], "split-unsupported") == 0) {
        MPI_Comm half = MPI_COMM_NULL;
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
        int rc = MPI_Comm_split(dup, rank % 2, rank, &half);
        CHECK(tu_class(rc) == MPI_ERR_UNSUPPORTED_OPERATION,
              "split across node processes: class %d, expected MPI_ERR_UNSUPPORTED_OPERATION", tu_class(rc));
        CHECK(half == MPI_COMM_NULL, "failed split returned a communicator");
    }
    CHECK_RC(MPI_Comm_free(&dup));
    return tu_finish(errs);
}
