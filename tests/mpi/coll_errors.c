/* Bad arguments to collectives return the right error class under
 * MPI_ERRORS_RETURN, detected before any rank synchronises, and leave
 * the library usable. */
#include <stdlib.h>
#include "coll_util.h"

static int err_class(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

#define EXPECT(errs, call, cls)                                                   \
    do {                                                                          \
        int c_ = err_class(call);                                                 \
        CHECK(errs, c_ == (cls), "%s gave class %d, expected %s (%d)", #call, c_, #cls, cls); \
    } while (0)

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int buf[8] = { 0 }, out[8] = { 0 }, counts[1] = { 1 }, displs[1] = { 0 }, neg[1] = { -1 };
    double d[2] = { 1, 2 }, dout[2];
    MPI_Comm world = MPI_COMM_WORLD, self = MPI_COMM_SELF;

    EXPECT(&errs, MPI_Bcast(buf, 1, MPI_INT, size, world), MPI_ERR_ROOT);
    EXPECT(&errs, MPI_Bcast(buf, 1, MPI_INT, -4, world), MPI_ERR_ROOT);
    EXPECT(&errs, MPI_Bcast(buf, 1, MPI_INT, MPI_ROOT, world), MPI_ERR_ROOT);
    EXPECT(&errs, MPI_Bcast(buf, -1, MPI_INT, 0, world), MPI_ERR_COUNT);
    EXPECT(&errs, MPI_Bcast(NULL, 2, MPI_INT, 0, world), MPI_ERR_BUFFER);
    EXPECT(&errs, MPI_Bcast(buf, 1, MPI_DATATYPE_NULL, 0, world), MPI_ERR_TYPE);
    EXPECT(&errs, MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, world), MPI_ERR_BUFFER);
    EXPECT(&errs, MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(&errs, MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(&errs, MPI_Gather(buf, 1, MPI_INT, out, 1, MPI_INT, size + 3, world), MPI_ERR_ROOT);
    EXPECT(&errs, MPI_Scatter(buf, 1, MPI_INT, out, -2, MPI_INT, 0, world), MPI_ERR_COUNT);

    /* Operations not defined for the type (MPI-2.2 §5.9.2). */
    EXPECT(&errs, MPI_Allreduce(d, dout, 2, MPI_DOUBLE, MPI_BAND, world), MPI_ERR_OP);
    EXPECT(&errs, MPI_Allreduce(d, dout, 2, MPI_DOUBLE, MPI_LXOR, world), MPI_ERR_OP);
    EXPECT(&errs, MPI_Allreduce(d, dout, 1, MPI_DOUBLE_INT, MPI_SUM, world), MPI_ERR_OP);
    EXPECT(&errs, MPI_Allreduce(buf, out, 2, MPI_INT, MPI_MAXLOC, world), MPI_ERR_OP);
    EXPECT(&errs, MPI_Allreduce(buf, out, 2, MPI_INT, MPI_REPLACE, world), MPI_ERR_OP);
    EXPECT(&errs, MPI_Allreduce(buf, out, 2, MPI_INT, MPI_OP_NULL, world), MPI_ERR_OP);
    EXPECT(&errs, MPI_Allreduce(d, dout, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, world), MPI_ERR_OP);
    EXPECT(&errs, MPI_Allreduce(buf, out, 2, MPI_BYTE, MPI_SUM, world), MPI_ERR_OP);
    EXPECT(&errs, MPI_Allreduce(buf, out, 2, MPI_LOGICAL, MPI_BAND, world), MPI_ERR_OP);
    EXPECT(&errs, MPI_Reduce(buf, out, 2, MPI_WCHAR, MPI_SUM, 0, world), MPI_ERR_OP);
    EXPECT(&errs, MPI_Reduce(buf, out, 2, MPI_INT, MPI_SUM, size, world), MPI_ERR_ROOT);
    EXPECT(&errs, MPI_Scan(buf, out, -1, MPI_INT, MPI_SUM, world), MPI_ERR_COUNT);
    EXPECT(&errs, MPI_Exscan(buf, out, 2, MPI_PACKED, MPI_SUM, world), MPI_ERR_OP);
    EXPECT(&errs, MPI_Reduce_scatter(buf, out, NULL, MPI_INT, MPI_SUM, world), MPI_ERR_ARG);
    EXPECT(&errs, MPI_Reduce_scatter_block(buf, out, -1, MPI_INT, MPI_SUM, world), MPI_ERR_COUNT);

    /* MPI_IN_PLACE where MPI-2.2 does not allow it. */
    EXPECT(&errs, MPI_Allreduce(buf, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, world), MPI_ERR_BUFFER);
    EXPECT(&errs, MPI_Allgather(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, world), MPI_ERR_BUFFER);
    EXPECT(&errs, MPI_Alltoall(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, world), MPI_ERR_BUFFER);
    if (size > 1) {
        /* Each rank names another as root, so every rank is a non-root. */
        int other = (rank + 1) % size;
        EXPECT(&errs, MPI_Reduce(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM, other, world), MPI_ERR_BUFFER);
        EXPECT(&errs, MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, out, 1, MPI_INT, other, world), MPI_ERR_BUFFER);
        EXPECT(&errs, MPI_Scatter(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, other, world), MPI_ERR_BUFFER);
    }

    /* v variants. */
    EXPECT(&errs, MPI_Gatherv(buf, 1, MPI_INT, out, NULL, displs, MPI_INT, 0, self), MPI_ERR_ARG);
    EXPECT(&errs, MPI_Scatterv(buf, neg, displs, MPI_INT, out, 1, MPI_INT, 0, self), MPI_ERR_COUNT);
    EXPECT(&errs, MPI_Alltoallv(buf, counts, displs, MPI_INT, out, neg, displs, MPI_INT, self), MPI_ERR_COUNT);
    MPI_Datatype nulltype[1] = { MPI_DATATYPE_NULL }, inttype[1] = { MPI_INT };
    EXPECT(&errs, MPI_Alltoallw(buf, counts, displs, nulltype, out, counts, displs, inttype, self), MPI_ERR_TYPE);

    /* Op objects and Reduce_local (errors go to MPI_COMM_WORLD's handler). */
    MPI_Op sum = MPI_SUM, none;
    EXPECT(&errs, MPI_Op_free(&sum), MPI_ERR_OP);
    EXPECT(&errs, MPI_Op_create(NULL, 1, &none), MPI_ERR_ARG);
    EXPECT(&errs, MPI_Reduce_local(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    EXPECT(&errs, MPI_Reduce_local(d, dout, 1, MPI_DOUBLE, MPI_BOR), MPI_ERR_OP);
    EXPECT(&errs, MPI_Reduce_local(buf, out, -3, MPI_INT, MPI_SUM), MPI_ERR_COUNT);

    /* Still usable. */
    int one = 1, total = 0;
    EXPECT(&errs, MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, world), MPI_SUCCESS);
    CHECK(&errs, total == size, "allreduce after errors gave %d", total);
    return coll_finish(errs);
}
