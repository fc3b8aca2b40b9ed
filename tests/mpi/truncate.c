/*
 * truncate: a message longer than the receive buffer, under
 * MPI_ERRORS_RETURN.
 *   - MPI_Recv returns an error of class MPI_ERR_TRUNCATE (small message
 *     and large: 1 MiB between ranks 0-3, 64 KiB elsewhere), and nothing is
 *     written past the end of the receive buffer.
 *   - MPI_Irecv + MPI_Wait: the same error class from MPI_Wait.
 *   - MPI_Waitall over one good and one truncated receive returns
 *     MPI_ERR_IN_STATUS; status.MPI_ERROR is MPI_SUCCESS for the good one
 *     and of class MPI_ERR_TRUNCATE for the other, whose source and tag
 *     are still filled in.
 *   - MPI_Sendrecv with a truncated receive part.
 *   - The sends of truncated messages succeed, and afterwards normal
 *     traffic works and carries the right data.
 *   - MPI_Error_string gives a non-empty message for the error.
 *
 * Ranks pair up as (2k, 2k+1), both directions; with an odd rank count the
 * last rank idles.  Minimum ranks: 2.
 */
#include "testutil.h"

#define GUARD 64

static int expect_truncate(int rc, const char *what)
{
    int errs = 0;
    if (rc == MPI_SUCCESS)
        return TU_FAIL("%s: returned MPI_SUCCESS, expected MPI_ERR_TRUNCATE",
                       what);
    if (tu_class(rc) != MPI_ERR_TRUNCATE)
        errs += TU_FAIL("%s: error class %d, expected MPI_ERR_TRUNCATE (%d)",
                        what, tu_class(rc), MPI_ERR_TRUNCATE);
    {
        char s[MPI_MAX_ERROR_STRING];
        int len = -1;
        s[0] = '\0';
        MPI_Error_string(rc, s, &len);
        CHECK(len > 0 && (int)strlen(s) == len,
              "%s: MPI_Error_string gave length %d for \"%s\"", what, len, s);
    }
    return errs;
}

static int run(int sender, int peer, int big)
{
    int errs = 0, rc;
    int nlarge = big ? (1 << 20) : 65536; /* bytes */
    unsigned char *buf = (unsigned char *)tu_malloc((size_t)nlarge + GUARD);
    MPI_Status st;

    if (sender) {
        int v[10], i;
        MPI_Request reqs[2];
        for (i = 0; i < 10; i++)
            v[i] = i + 1;
        tu_fill(buf, (size_t)nlarge, 3);
        /* 1: small, 2: large, 3: Irecv+Wait, 4+5: Waitall, 6: Sendrecv */
        CHECK_RC(MPI_Send(v, 10, MPI_INT, peer, 1, MPI_COMM_WORLD));
        CHECK_RC(MPI_Send(buf, nlarge, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
        CHECK_RC(MPI_Send(v, 10, MPI_INT, peer, 3, MPI_COMM_WORLD));
        CHECK_RC(MPI_Isend(v, 3, MPI_INT, peer, 4, MPI_COMM_WORLD,
                           &reqs[0]));
        CHECK_RC(MPI_Isend(buf, nlarge, MPI_BYTE, peer, 5, MPI_COMM_WORLD,
                           &reqs[1]));
        CHECK_RC(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
        CHECK_RC(MPI_Sendrecv(v, 10, MPI_INT, peer, 6, NULL, 0, MPI_INT, peer,
                              6, MPI_COMM_WORLD, &st));
        /* normal traffic afterwards */
        CHECK_RC(MPI_Send(buf, nlarge, MPI_BYTE, peer, 7, MPI_COMM_WORLD));
        CHECK_RC(MPI_Send(v, 10, MPI_INT, peer, 8, MPI_COMM_WORLD));
        free(buf);
        return errs;
    }

    /* 1: 10 ints into room for 4 */
    {
        int r[4 + GUARD / 4], i;
        for (i = 0; i < 4 + GUARD / 4; i++)
            r[i] = -1;
        rc = MPI_Recv(r, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &st);
        errs += expect_truncate(rc, "MPI_Recv of 10 ints into 4");
        for (i = 4; i < 4 + GUARD / 4; i++)
            if (r[i] != -1) {
                errs += TU_FAIL("truncated MPI_Recv wrote past the buffer "
                                "(int %d)", i);
                break;
            }
    }
    /* 2: large message into half its size */
    tu_guard(buf, (size_t)nlarge + GUARD);
    rc = MPI_Recv(buf, nlarge / 2, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st);
    errs += expect_truncate(rc, "MPI_Recv of a large message into half");
    {
        int i;
        for (i = nlarge / 2; i < nlarge / 2 + GUARD; i++)
            if (buf[i] != TU_GUARD_BYTE) {
                errs += TU_FAIL("large truncated MPI_Recv wrote past the "
                                "buffer (byte %d)", i);
                break;
            }
    }
    /* 3: Irecv + Wait */
    {
        int r[2];
        MPI_Request req;
        CHECK_RC(MPI_Irecv(r, 2, MPI_INT, peer, 3, MPI_COMM_WORLD, &req));
        rc = MPI_Wait(&req, &st);
        errs += expect_truncate(rc, "MPI_Wait on a truncated MPI_Irecv");
        CHECK(req == MPI_REQUEST_NULL, "MPI_Wait with an error did not free "
              "the request");
    }
    /* 4 + 5: Waitall, the first fine, the second truncated */
    {
        int r[3] = {0, 0, 0};
        MPI_Request reqs[2];
        MPI_Status sts[2];
        sts[0].MPI_ERROR = sts[1].MPI_ERROR = -1;
        CHECK_RC(MPI_Irecv(r, 3, MPI_INT, peer, 4, MPI_COMM_WORLD, &reqs[0]));
        CHECK_RC(MPI_Irecv(buf, 100, MPI_BYTE, peer, 5, MPI_COMM_WORLD,
                           &reqs[1]));
        rc = MPI_Waitall(2, reqs, sts);
        if (tu_class(rc) != MPI_ERR_IN_STATUS)
            errs += TU_FAIL("MPI_Waitall with a truncated receive: class %d, "
                            "expected MPI_ERR_IN_STATUS (%d)",
                            tu_class(rc), MPI_ERR_IN_STATUS);
        CHECK(sts[0].MPI_ERROR == MPI_SUCCESS,
              "Waitall: status[0].MPI_ERROR = %d for a good receive",
              sts[0].MPI_ERROR);
        CHECK(sts[0].MPI_SOURCE == peer && sts[0].MPI_TAG == 4,
              "Waitall: status[0] source/tag %d/%d", sts[0].MPI_SOURCE,
              sts[0].MPI_TAG);
        CHECK(r[0] == 1 && r[1] == 2 && r[2] == 3,
              "Waitall: good receive got {%d, %d, %d}", r[0], r[1], r[2]);
        errs += expect_truncate(sts[1].MPI_ERROR, "Waitall status[1]");
        CHECK(sts[1].MPI_SOURCE == peer && sts[1].MPI_TAG == 5,
              "Waitall: status[1] source/tag %d/%d", sts[1].MPI_SOURCE,
              sts[1].MPI_TAG);
        CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL,
              "Waitall with an error did not free the requests");
    }
    /* 6: Sendrecv whose receive part is too small */
    {
        int r[5];
        rc = MPI_Sendrecv(NULL, 0, MPI_INT, peer, 6, r, 5, MPI_INT, peer, 6,
                          MPI_COMM_WORLD, &st);
        errs += expect_truncate(rc, "MPI_Sendrecv receiving 10 ints into 5");
    }
    /* 7 + 8: everything normal again */
    tu_guard(buf, (size_t)nlarge + GUARD);
    CHECK_RC(MPI_Recv(buf, nlarge + GUARD, MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                      &st));
    errs += tu_check_status(&st, peer, 7, MPI_BYTE, nlarge,
                            "large receive after the errors");
    errs += tu_check_data(buf, (size_t)nlarge, (size_t)nlarge + GUARD, 3,
                          "large receive after the errors");
    {
        int r[10], i;
        CHECK_RC(MPI_Recv(r, 10, MPI_INT, peer, 8, MPI_COMM_WORLD, &st));
        errs += tu_check_status(&st, peer, 8, MPI_INT, 10,
                                "receive after the errors");
        for (i = 0; i < 10; i++)
            CHECK(r[i] == i + 1, "receive after the errors: element %d = %d",
                  i, r[i]);
    }
    free(buf);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, peer, dir;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rank = tu_rank();
    size = tu_size();
    peer = rank ^ 1;
    if (peer < size)
        for (dir = 0; dir < 2; dir++)
            errs += run((rank & 1) == dir, peer, tu_big_ok(rank, peer));
    return tu_finish(errs);
}
