/*
 * status_count: MPI_Get_count, MPI_Get_elements and MPI_Request_get_status.
 *   - Get_count / Get_elements on predefined types, including zero-length
 *     messages, MPI_C_DOUBLE_COMPLEX and the pair type MPI_2INT (count 3
 *     pairs = 6 basic elements).
 *   - 5 bytes sent as MPI_BYTE and received into an MPI_INT buffer: the
 *     byte count is 5, and Get_count / Get_elements with MPI_INT give
 *     MPI_UNDEFINED because 5 is not a multiple of sizeof(int).
 *   - MPI_Request_get_status reports completion without freeing the
 *     request (it may be called again, and MPI_Wait then returns the same
 *     status and frees it); on MPI_REQUEST_NULL it gives flag = true and an
 *     empty status; it works on send requests too.
 *   - The status of a blocking receive from MPI_PROC_NULL.
 *
 * Ranks pair up as (2k, 2k+1): the even rank sends, the odd rank checks.
 * With an odd rank count the last rank only does the local parts.
 * Minimum ranks: 1 (the pair parts need 2).
 */
#include "testutil.h"
#include <complex.h>

#define TAG_GO 99

static int count_of(MPI_Status *st, MPI_Datatype t)
{
    int c = -12345;
    MPI_Get_count(st, t, &c);
    return c;
}

static int elements_of(MPI_Status *st, MPI_Datatype t)
{
    int c = -12345;
    MPI_Get_elements(st, t, &c);
    return c;
}

static int sender(int peer)
{
    int errs = 0, i;
    unsigned char bytes[5] = {1, 2, 3, 4, 5};
    double d[12];
    int pairs[6];
    double _Complex z[3];
    long long ll[4] = {1, 2, 3, 4};
    MPI_Request req;

    for (i = 0; i < 12; i++)
        d[i] = i * 1.5;
    for (i = 0; i < 6; i++)
        pairs[i] = 100 + i;
    for (i = 0; i < 3; i++)
        z[i] = i + 2.0 * I * i;

    CHECK_RC(MPI_Send(bytes, 5, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(d, 12, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(NULL, 0, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(pairs, 3, MPI_2INT, peer, 4, MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(z, 3, MPI_C_DOUBLE_COMPLEX, peer, 5, MPI_COMM_WORLD));

    /* for Request_get_status: send after the receiver says go */
    CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Isend(ll, 4, MPI_LONG_LONG, peer, 6, MPI_COMM_WORLD, &req));
    {
        int flag = 0;
        MPI_Status st;
        while (!flag) {
            CHECK_RC(MPI_Request_get_status(req, &flag, &st));
            if (!flag)
                tu_yield();
        }
        CHECK(req != MPI_REQUEST_NULL, "Request_get_status freed a send "
              "request");
        CHECK_RC(MPI_Wait(&req, &st));
        CHECK(req == MPI_REQUEST_NULL, "Wait did not free a send request");
    }
    return errs;
}

static int receiver(int peer)
{
    int errs = 0, i, ibuf[8];
    double d[20];
    int pairs[10];
    double _Complex z[4];
    MPI_Status st;

    /* 5 bytes into an int buffer */
    CHECK_RC(MPI_Recv(ibuf, 8, MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
    CHECK_INT("Get_count(MPI_BYTE) of 5 bytes", 5, count_of(&st, MPI_BYTE));
    CHECK_INT("Get_count(MPI_INT) of 5 bytes", MPI_UNDEFINED,
              count_of(&st, MPI_INT));
    CHECK_INT("Get_elements(MPI_INT) of 5 bytes", MPI_UNDEFINED,
              elements_of(&st, MPI_INT));
    CHECK(memcmp(ibuf, "\1\2\3\4\5", 5) == 0, "5 bytes: wrong data");

    CHECK_RC(MPI_Recv(d, 20, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &st));
    CHECK_INT("Get_count(MPI_DOUBLE) of 12 doubles", 12,
              count_of(&st, MPI_DOUBLE));
    CHECK_INT("Get_elements(MPI_DOUBLE) of 12 doubles", 12,
              elements_of(&st, MPI_DOUBLE));
    for (i = 0; i < 12; i++)
        CHECK(d[i] == i * 1.5, "double %d: got %g", i, d[i]);

    CHECK_RC(MPI_Recv(d, 20, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &st));
    CHECK_INT("Get_count of an empty message", 0, count_of(&st, MPI_DOUBLE));
    CHECK_INT("Get_elements of an empty message", 0,
              elements_of(&st, MPI_DOUBLE));

    CHECK_RC(MPI_Recv(pairs, 5, MPI_2INT, peer, 4, MPI_COMM_WORLD, &st));
    CHECK_INT("Get_count(MPI_2INT) of 3 pairs", 3, count_of(&st, MPI_2INT));
    CHECK_INT("Get_elements(MPI_2INT) of 3 pairs", 6,
              elements_of(&st, MPI_2INT));
    for (i = 0; i < 6; i++)
        CHECK(pairs[i] == 100 + i, "pair element %d: got %d", i, pairs[i]);

    CHECK_RC(MPI_Recv(z, 4, MPI_C_DOUBLE_COMPLEX, peer, 5, MPI_COMM_WORLD,
                      &st));
    CHECK_INT("Get_count(MPI_C_DOUBLE_COMPLEX)", 3,
              count_of(&st, MPI_C_DOUBLE_COMPLEX));
    CHECK_INT("Get_elements(MPI_C_DOUBLE_COMPLEX)", 3,
              elements_of(&st, MPI_C_DOUBLE_COMPLEX));
    for (i = 0; i < 3; i++)
        CHECK(creal(z[i]) == i && cimag(z[i]) == 2.0 * i,
              "complex %d: got %g%+gi", i, creal(z[i]), cimag(z[i]));

    /* Request_get_status does not free the request */
    {
        long long ll[4] = {0, 0, 0, 0};
        MPI_Request req;
        MPI_Status st1, st2;
        int flag = -1;
        CHECK_RC(MPI_Irecv(ll, 4, MPI_LONG_LONG, MPI_ANY_SOURCE, 6,
                           MPI_COMM_WORLD, &req));
        CHECK_RC(MPI_Request_get_status(req, &flag, &st1));
        CHECK_INT("Request_get_status before the send: flag", 0, flag);
        CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD));
        flag = 0;
        while (!flag) {
            CHECK_RC(MPI_Request_get_status(req, &flag, &st1));
            if (!flag)
                tu_yield();
        }
        CHECK(req != MPI_REQUEST_NULL, "Request_get_status freed the "
              "request");
        errs += tu_check_status(&st1, peer, 6, MPI_LONG_LONG, 4,
                                "Request_get_status");
        flag = 0;
        CHECK_RC(MPI_Request_get_status(req, &flag, &st2));
        CHECK(flag, "second Request_get_status: flag 0");
        errs += tu_check_status(&st2, peer, 6, MPI_LONG_LONG, 4,
                                "second Request_get_status");
        CHECK_RC(MPI_Wait(&req, &st2));
        CHECK(req == MPI_REQUEST_NULL, "Wait did not free the request");
        errs += tu_check_status(&st2, peer, 6, MPI_LONG_LONG, 4,
                                "Wait after Request_get_status");
        CHECK(ll[0] == 1 && ll[3] == 4, "long long data {%lld, .., %lld}",
              ll[0], ll[3]);
    }
    return errs;
}

static int local_parts(void)
{
    int errs = 0, flag = 0, buf[3] = {7, 8, 9};
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;

    CHECK_RC(MPI_Request_get_status(req, &flag, &st));
    CHECK(flag, "Request_get_status(MPI_REQUEST_NULL): flag 0");
    errs += tu_check_empty_status(&st, "Request_get_status(REQUEST_NULL)");

    CHECK_RC(MPI_Recv(buf, 3, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD,
                      &st));
    errs += tu_check_procnull_status(&st, "Recv from MPI_PROC_NULL");
    CHECK_INT("Get_elements after Recv from MPI_PROC_NULL", 0,
              elements_of(&st, MPI_INT));
    CHECK(buf[0] == 7 && buf[2] == 9, "Recv from MPI_PROC_NULL changed the "
          "buffer");
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, peer;

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();
    peer = rank ^ 1;
    errs += local_parts();
    if (peer < size)
        errs += (rank & 1) ? receiver(peer) : sender(peer);
    return tu_finish(errs);
}
