/*
 * bad_input: invalid arguments under MPI_ERRORS_RETURN give the right error
 * CLASS (MPI_Error_class of the return code), a non-empty error string,
 * and leave the library working.
 *   MPI_ERR_RANK:    destination = size, destination / source -5
 *   MPI_ERR_COUNT:   negative count
 *   MPI_ERR_TAG:     tag -7, tag = MPI_TAG_UB + 1 (from MPI_Comm_get_attr),
 *                    MPI_ANY_TAG on a send
 *   MPI_ERR_TYPE:    MPI_DATATYPE_NULL
 *   MPI_ERR_COMM:    MPI_COMM_NULL (reported through MPI_COMM_WORLD's
 *                    error handler)
 *   MPI_ERR_BUFFER:  NULL buffer with count > 0 of MPI_INT
 *   MPI_ERR_REQUEST: MPI_Start on MPI_REQUEST_NULL
 * for MPI_Send, MPI_Isend, MPI_Recv, MPI_Irecv and MPI_Sendrecv.  The valid
 * arguments in those calls point at the right-hand neighbour, and
 * afterwards a ring exchange received with MPI_ANY_TAG checks that none of
 * the failed calls sent anything and that normal traffic still works.
 * MPI_Wait on MPI_REQUEST_NULL is not an error.  The tag upper bound is at
 * least 32767.
 *
 * Minimum ranks: 1.
 */
#include "testutil.h"

#define GOOD_TAG 3

static int expect_class(int rc, int cls, const char *what)
{
    int errs = 0, len = -1;
    char s[MPI_MAX_ERROR_STRING];
    if (rc == MPI_SUCCESS)
        return TU_FAIL("%s: returned MPI_SUCCESS, expected error class %d",
                       what, cls);
    if (tu_class(rc) != cls)
        errs += TU_FAIL("%s: error class %d, expected %d", what, tu_class(rc),
                        cls);
    s[0] = '\0';
    MPI_Error_string(rc, s, &len);
    CHECK(len > 0 && (int)strlen(s) == len,
          "%s: MPI_Error_string gave length %d (\"%s\")", what, len, s);
    return errs;
}

/* A value that is neither a valid rank nor one of the special ranks. */
static int bad_negative_rank(void)
{
    int r = -5;
    while (r == MPI_ANY_SOURCE || r == MPI_PROC_NULL || r == MPI_ROOT)
        r--;
    return r;
}

/* Same for tags. */
static int bad_negative_tag(void)
{
    int t = -7;
    while (t == MPI_ANY_TAG)
        t--;
    return t;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, right, left, rc, flag = 0, tag_ub = 0;
    int *ub_ptr = NULL;
    int buf[4] = {1, 2, 3, 4}, rbuf[4];
    int badrank, badtag;
    MPI_Request req;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rank = tu_rank();
    size = tu_size();
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    badrank = bad_negative_rank();
    badtag = bad_negative_tag();

    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub_ptr, &flag));
    CHECK(flag && ub_ptr, "MPI_TAG_UB attribute not set");
    if (flag && ub_ptr)
        tag_ub = *ub_ptr;
    CHECK(tag_ub >= 32767, "MPI_TAG_UB is %d, less than 32767", tag_ub);

    /* MPI_ERR_RANK */
    rc = MPI_Send(buf, 4, MPI_INT, size, GOOD_TAG, MPI_COMM_WORLD);
    errs += expect_class(rc, MPI_ERR_RANK, "MPI_Send to rank = size");
    rc = MPI_Send(buf, 4, MPI_INT, badrank, GOOD_TAG, MPI_COMM_WORLD);
    errs += expect_class(rc, MPI_ERR_RANK, "MPI_Send to rank -5");
    rc = MPI_Isend(buf, 4, MPI_INT, size + 3, GOOD_TAG, MPI_COMM_WORLD, &req);
    errs += expect_class(rc, MPI_ERR_RANK, "MPI_Isend to rank = size + 3");
    rc = MPI_Recv(rbuf, 4, MPI_INT, size, GOOD_TAG, MPI_COMM_WORLD, &st);
    errs += expect_class(rc, MPI_ERR_RANK, "MPI_Recv from rank = size");
    rc = MPI_Irecv(rbuf, 4, MPI_INT, badrank, GOOD_TAG, MPI_COMM_WORLD, &req);
    errs += expect_class(rc, MPI_ERR_RANK, "MPI_Irecv from rank -5");
    rc = MPI_Sendrecv(buf, 4, MPI_INT, right, GOOD_TAG, rbuf, 4, MPI_INT,
                      size, GOOD_TAG, MPI_COMM_WORLD, &st);
    errs += expect_class(rc, MPI_ERR_RANK, "MPI_Sendrecv from rank = size");

    /* MPI_ERR_COUNT */
    rc = MPI_Send(buf, -1, MPI_INT, right, GOOD_TAG, MPI_COMM_WORLD);
    errs += expect_class(rc, MPI_ERR_COUNT, "MPI_Send with count -1");
    rc = MPI_Isend(buf, -4, MPI_INT, right, GOOD_TAG, MPI_COMM_WORLD, &req);
    errs += expect_class(rc, MPI_ERR_COUNT, "MPI_Isend with count -4");
    rc = MPI_Recv(rbuf, -1, MPI_INT, left, GOOD_TAG, MPI_COMM_WORLD, &st);
    errs += expect_class(rc, MPI_ERR_COUNT, "MPI_Recv with count -1");

    /* MPI_ERR_TAG */
    rc = MPI_Send(buf, 4, MPI_INT, right, badtag, MPI_COMM_WORLD);
    errs += expect_class(rc, MPI_ERR_TAG, "MPI_Send with tag -7");
    if (tag_ub > 0 && tag_ub < 0x7fffffff) {
        rc = MPI_Send(buf, 4, MPI_INT, right, tag_ub + 1, MPI_COMM_WORLD);
        errs += expect_class(rc, MPI_ERR_TAG, "MPI_Send with tag MPI_TAG_UB "
                             "+ 1");
        rc = MPI_Irecv(rbuf, 4, MPI_INT, left, tag_ub + 1, MPI_COMM_WORLD,
                       &req);
        errs += expect_class(rc, MPI_ERR_TAG, "MPI_Irecv with tag MPI_TAG_UB "
                             "+ 1");
    }
    rc = MPI_Send(buf, 4, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD);
    errs += expect_class(rc, MPI_ERR_TAG, "MPI_Send with MPI_ANY_TAG");
    rc = MPI_Isend(buf, 4, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    errs += expect_class(rc, MPI_ERR_TAG, "MPI_Isend with MPI_ANY_TAG");
    rc = MPI_Recv(rbuf, 4, MPI_INT, left, badtag, MPI_COMM_WORLD, &st);
    errs += expect_class(rc, MPI_ERR_TAG, "MPI_Recv with tag -7");

    /* MPI_ERR_TYPE */
    rc = MPI_Send(buf, 4, MPI_DATATYPE_NULL, right, GOOD_TAG,
                  MPI_COMM_WORLD);
    errs += expect_class(rc, MPI_ERR_TYPE, "MPI_Send with MPI_DATATYPE_NULL");
    rc = MPI_Irecv(rbuf, 4, MPI_DATATYPE_NULL, left, GOOD_TAG,
                   MPI_COMM_WORLD, &req);
    errs += expect_class(rc, MPI_ERR_TYPE, "MPI_Irecv with "
                         "MPI_DATATYPE_NULL");

    /* MPI_ERR_COMM (raised on MPI_COMM_WORLD's handler: ERRORS_RETURN) */
    rc = MPI_Send(buf, 4, MPI_INT, right, GOOD_TAG, MPI_COMM_NULL);
    errs += expect_class(rc, MPI_ERR_COMM, "MPI_Send on MPI_COMM_NULL");
    rc = MPI_Recv(rbuf, 4, MPI_INT, left, GOOD_TAG, MPI_COMM_NULL, &st);
    errs += expect_class(rc, MPI_ERR_COMM, "MPI_Recv on MPI_COMM_NULL");

    /* MPI_ERR_BUFFER */
    rc = MPI_Send(NULL, 4, MPI_INT, right, GOOD_TAG, MPI_COMM_WORLD);
    errs += expect_class(rc, MPI_ERR_BUFFER, "MPI_Send of 4 ints from NULL");
    rc = MPI_Recv(NULL, 4, MPI_INT, left, GOOD_TAG, MPI_COMM_WORLD, &st);
    errs += expect_class(rc, MPI_ERR_BUFFER, "MPI_Recv of 4 ints into NULL");

    /* MPI_ERR_REQUEST */
    req = MPI_REQUEST_NULL;
    rc = MPI_Start(&req);
    errs += expect_class(rc, MPI_ERR_REQUEST, "MPI_Start(MPI_REQUEST_NULL)");

    /* Not errors: MPI_Wait on MPI_REQUEST_NULL, sends to MPI_PROC_NULL
     * (count 0, also from a NULL buffer). */
    req = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK_RC(MPI_Send(buf, 0, MPI_INT, MPI_PROC_NULL, GOOD_TAG,
                      MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));

    /* Normal traffic: none of the failed calls may have sent anything, so
     * the first message from the left has the good tag and data. */
    {
        int out[4], in[4] = {0, 0, 0, 0}, i;
        MPI_Request reqs[2];
        MPI_Status sts[2];
        for (i = 0; i < 4; i++)
            out[i] = rank * 100 + i;
        CHECK_RC(MPI_Irecv(in, 4, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD,
                           &reqs[0]));
        CHECK_RC(MPI_Isend(out, 4, MPI_INT, right, GOOD_TAG + 1,
                           MPI_COMM_WORLD, &reqs[1]));
        CHECK_RC(MPI_Waitall(2, reqs, sts));
        errs += tu_check_status(&sts[0], left, GOOD_TAG + 1, MPI_INT, 4,
                                "ring exchange after the errors");
        for (i = 0; i < 4; i++)
            CHECK(in[i] == left * 100 + i, "ring exchange after the errors: "
                  "element %d: expected %d, got %d", i, left * 100 + i,
                  in[i]);
    }
    return tu_finish(errs);
}
