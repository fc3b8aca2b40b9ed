/* Inter-communicators: MPI_Intercomm_create between the even and odd
 * ranks, queries, point-to-point across, MPI_Intercomm_merge, dup, split and
 * create on the intercommunicator, and errors. Needs 2 or more ranks. */
#include <stdlib.h>
#include "comm_check.h"

static int check_exchange(MPI_Comm inter, int tag)
{
    int errs = 0, rank, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rsize);
    /* Each rank sends to remote rank (rank % rsize) and receives from every
     * remote rank that targets it. */
    int dest = rank % rsize, out = 1000 * tag + rank;
    MPI_Request req;
    MPI_Isend(&out, 1, MPI_INT, dest, tag, inter, &req);
    int lsize;
    MPI_Comm_size(inter, &lsize);
    for (int r = 0; r < rsize; r++) {
        if (r % lsize != rank)
            continue;
        int in = -1;
        MPI_Status st;
        MPI_Recv(&in, 1, MPI_INT, r, tag, inter, &st);
        CHECK(errs, in == 1000 * tag + r && st.MPI_SOURCE == r, "got %d from %d (want %d)", in, st.MPI_SOURCE,
              1000 * tag + r);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, wrank, wsize, flag, n, result;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) {
        printf("needs 2 ranks\n");
        return check_finish(1);
    }
    int color = wrank % 2;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &local);
    /* Leaders: world 0 (evens) and world 1 (odds). */
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 77, &inter);
    int lsize, lrank, rsize;
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_remote_size(inter, &rsize);
    int nevens = (wsize + 1) / 2, nodds = wsize / 2;
    CHECK(errs, lsize == (color ? nodds : nevens) && rsize == (color ? nevens : nodds), "sizes %d/%d", lsize, rsize);
    CHECK(errs, lrank == wrank / 2, "local rank %d", lrank);
    MPI_Comm_test_inter(inter, &flag);
    CHECK(errs, flag, "test_inter is false");
    MPI_Comm_test_inter(local, &flag);
    CHECK(errs, !flag, "test_inter of an intracomm is true");

    MPI_Group rg, lg, wg;
    MPI_Comm_remote_group(inter, &rg);
    MPI_Comm_group(inter, &lg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_size(rg, &n);
    CHECK(errs, n == rsize, "remote group size %d", n);
    for (int i = 0; i < rsize; i++) {
        int w;
        MPI_Group_translate_ranks(rg, 1, &i, wg, &w);
        CHECK(errs, w == 2 * i + !color, "remote %d is world %d", i, w);
    }
    MPI_Group_rank(lg, &n);
    CHECK(errs, n == lrank, "rank in local group %d", n);
    MPI_Group_free(&rg);
    MPI_Group_free(&lg);

    errs += check_exchange(inter, 1);

    /* dup keeps both groups and gets a separate context */
    MPI_Comm idup;
    MPI_Comm_dup(inter, &idup);
    MPI_Comm_compare(inter, idup, &result);
    CHECK(errs, result == MPI_CONGRUENT, "compare inter/dup %d", result);
    MPI_Comm_test_inter(idup, &flag);
    CHECK(errs, flag, "dup of an intercomm is not inter");
    errs += check_exchange(idup, 2);
    MPI_Comm_free(&idup);

    /* merge: odds pass high = 1, so evens come first */
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, color, &merged);
    MPI_Comm_size(merged, &n);
    CHECK(errs, n == wsize, "merged size %d", n);
    MPI_Comm_rank(merged, &n);
    CHECK(errs, n == (color ? nevens + wrank / 2 : wrank / 2), "merged rank %d", n);
    MPI_Comm_test_inter(merged, &flag);
    CHECK(errs, !flag, "merge gave an intercomm");
    MPI_Comm_free(&merged);
    /* both pass high = 0: side order is the implementation's, but ranks
     * of a group stay consecutive and in order */
    MPI_Intercomm_merge(inter, 0, &merged);
    MPI_Comm_rank(merged, &n);
    CHECK(errs, n == lrank || n == rsize + lrank, "merged(0,0) rank %d", n);
    MPI_Comm_free(&merged);

    /* split: color by local rank parity; keys reverse */
    MPI_Comm isplit;
    MPI_Comm_split(inter, lrank % 2, -lrank, &isplit);
    int want_local = (lsize - lrank % 2 + 1) / 2, want_remote = (rsize - lrank % 2 + 1) / 2;
    if (want_remote == 0) {
        CHECK(errs, isplit == MPI_COMM_NULL, "split with an empty remote side gave a communicator");
    } else {
        MPI_Comm_size(isplit, &n);
        CHECK(errs, n == want_local, "split local size %d want %d", n, want_local);
        MPI_Comm_remote_size(isplit, &n);
        CHECK(errs, n == want_remote, "split remote size %d want %d", n, want_remote);
        MPI_Comm_rank(isplit, &n);
        CHECK(errs, n == want_local - 1 - lrank / 2, "split rank %d", n);
        errs += check_exchange(isplit, 3);
        MPI_Comm_free(&isplit);
    }

    /* create on an intercomm: local rank 0 of each side only */
    MPI_Group first;
    MPI_Comm_group(inter, &lg);
    int zero = 0;
    MPI_Group_incl(lg, 1, &zero, &first);
    MPI_Comm icreate;
    MPI_Comm_create(inter, first, &icreate);
    if (lrank == 0) {
        MPI_Comm_remote_size(icreate, &n);
        CHECK(errs, n == 1, "created intercomm remote size %d", n);
        errs += check_exchange(icreate, 4);
        MPI_Comm_free(&icreate);
    } else {
        CHECK(errs, icreate == MPI_COMM_NULL, "non-member got a communicator");
    }
    MPI_Group_free(&first);
    MPI_Group_free(&lg);

    /* errors: intercomm where an intracomm is required, and vice versa */
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int dims[1] = { 1 }, periods[1] = { 0 };
    MPI_Comm cart;
    CHECK(errs, check_class(MPI_Cart_create(inter, 1, dims, periods, 0, &cart)) == MPI_ERR_COMM,
          "Cart_create on an intercomm");
    CHECK(errs, check_class(MPI_Intercomm_merge(local, 0, &merged)) == MPI_ERR_COMM, "merge of an intracomm");
    CHECK(errs, check_class(MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, 0, 5, &merged)) == MPI_ERR_COMM,
          "intercomm as local_comm");
    CHECK(errs, check_class(MPI_Send(&n, 1, MPI_INT, rsize, 0, inter)) == MPI_ERR_RANK,
          "send past the remote group");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    MPI_Group_free(&wg);
    return check_finish(errs);
}
