/*
 * small_recv: tiny messages (0-16 bytes) into a blocking MPI_Recv that is
 * already posted when the message is sent.  Strand then leaves the data in
 * the receive request, next to its completion word, and MPI_Recv copies it
 * out; this checks that path against every way a receive can be described:
 *   - 0..16 bytes of MPI_BYTE: exact data, MPI_Get_count, nothing written
 *     past the message in a larger buffer;
 *   - MPI_INT x3, MPI_DOUBLE x2 (16 bytes);
 *   - a strided (vector) receive type and a strided send type: the holes of
 *     the receive buffer stay untouched;
 *   - MPI_ANY_SOURCE, MPI_ANY_TAG: status source and tag;
 *   - a message longer than a tiny buffer: MPI_ERR_TRUNCATE, guard intact;
 *   - MPI_Sendrecv and MPI_Sendrecv_replace of 8 bytes between the pair.
 * The sender waits a little before every send so that the receive is
 * usually posted first; the values must be right either way.
 * Ranks pair up as (2k, 2k+1); with an odd rank count the last rank idles.
 */
#include "testutil.h"

#define ROUNDS 3
#define CAPACITY 32

static void sender_pause(void)
{
    tu_sleep_ms(1);
}

static int send_all(int peer, int round)
{
    int errs = 0, n;
    unsigned char bytes[16];
    int ints[3] = { 7 + round, -8, 9 };
    double doubles[2] = { 1.5 + round, -2.25 };
    int strided[6] = { 10, -1, 11, -1, 12, -1 };
    MPI_Datatype every_other;

    for (n = 0; n <= 16; n++) {
        tu_fill(bytes, (size_t)n, (unsigned)(n + 100 * round));
        sender_pause();
        CHECK_RC(MPI_Send(bytes, n, MPI_BYTE, peer, n, MPI_COMM_WORLD));
    }
    sender_pause();
    CHECK_RC(MPI_Send(ints, 3, MPI_INT, peer, 20, MPI_COMM_WORLD));
    sender_pause();
    CHECK_RC(MPI_Send(doubles, 2, MPI_DOUBLE, peer, 21, MPI_COMM_WORLD));
    sender_pause();
    CHECK_RC(MPI_Send(ints, 3, MPI_INT, peer, 22, MPI_COMM_WORLD));
    CHECK_RC(MPI_Type_vector(3, 1, 2, MPI_INT, &every_other));
    CHECK_RC(MPI_Type_commit(&every_other));
    sender_pause();
    CHECK_RC(MPI_Send(strided, 1, every_other, peer, 23, MPI_COMM_WORLD));
    CHECK_RC(MPI_Type_free(&every_other));
    sender_pause();
    CHECK_RC(MPI_Send(ints, 2, MPI_INT, peer, 24 + round, MPI_COMM_WORLD));
    sender_pause();
    CHECK_RC(MPI_Send(ints, 1, MPI_INT, peer, 27 + round, MPI_COMM_WORLD));
    sender_pause();
    CHECK_RC(MPI_Send(ints, 3, MPI_INT, peer, 30, MPI_COMM_WORLD));
    return errs;
}

static int receive_bytes(int peer, int round)
{
    int errs = 0, n;
    unsigned char buf[CAPACITY];
    MPI_Status st;
    char what[64];
    for (n = 0; n <= 16; n++) {
        tu_guard(buf, sizeof buf);
        CHECK_RC(MPI_Recv(buf, CAPACITY, MPI_BYTE, peer, n, MPI_COMM_WORLD, &st));
        snprintf(what, sizeof what, "round %d, %d bytes", round, n);
        errs += tu_check_data(buf, (size_t)n, sizeof buf, (unsigned)(n + 100 * round), what);
        errs += tu_check_status(&st, peer, n, MPI_BYTE, n, what);
    }
    return errs;
}

static int receive_typed(int peer, int round)
{
    int errs = 0, i;
    int ints[4] = { 0, 0, 0, -77 };
    double doubles[2] = { 0, 0 };
    int holes[6] = { -5, -5, -5, -5, -5, -5 };
    MPI_Datatype every_other;
    MPI_Status st;

    CHECK_RC(MPI_Recv(ints, 3, MPI_INT, peer, 20, MPI_COMM_WORLD, &st));
    CHECK(ints[0] == 7 + round && ints[1] == -8 && ints[2] == 9 && ints[3] == -77,
          "MPI_INT x3: got %d %d %d %d", ints[0], ints[1], ints[2], ints[3]);
    CHECK_RC(MPI_Recv(doubles, 2, MPI_DOUBLE, peer, 21, MPI_COMM_WORLD, &st));
    CHECK(doubles[0] == 1.5 + round && doubles[1] == -2.25, "MPI_DOUBLE x2: got %g %g",
          doubles[0], doubles[1]);
    errs += tu_check_status(&st, peer, 21, MPI_DOUBLE, 2, "MPI_DOUBLE x2");

    /* contiguous send, strided receive */
    CHECK_RC(MPI_Type_vector(3, 1, 2, MPI_INT, &every_other));
    CHECK_RC(MPI_Type_commit(&every_other));
    CHECK_RC(MPI_Recv(holes, 1, every_other, peer, 22, MPI_COMM_WORLD, &st));
    CHECK(holes[0] == 7 + round && holes[2] == -8 && holes[4] == 9,
          "strided receive: got %d %d %d", holes[0], holes[2], holes[4]);
    CHECK(holes[1] == -5 && holes[3] == -5 && holes[5] == -5,
          "strided receive wrote into its holes: %d %d %d", holes[1], holes[3], holes[5]);
    CHECK_RC(MPI_Type_free(&every_other));

    /* strided send, contiguous receive */
    for (i = 0; i < 4; i++)
        ints[i] = -1;
    CHECK_RC(MPI_Recv(ints, 4, MPI_INT, peer, 23, MPI_COMM_WORLD, &st));
    CHECK(ints[0] == 10 && ints[1] == 11 && ints[2] == 12 && ints[3] == -1,
          "strided send: got %d %d %d %d", ints[0], ints[1], ints[2], ints[3]);
    errs += tu_check_status(&st, peer, 23, MPI_INT, 3, "strided send");

    /* wildcards (not both at once: an idle rank's result message may arrive) */
    CHECK_RC(MPI_Recv(ints, 4, MPI_INT, MPI_ANY_SOURCE, 24 + round, MPI_COMM_WORLD, &st));
    errs += tu_check_status(&st, peer, 24 + round, MPI_INT, 2, "MPI_ANY_SOURCE");
    CHECK(ints[0] == 7 + round && ints[1] == -8, "MPI_ANY_SOURCE receive: got %d %d", ints[0], ints[1]);
    ints[0] = 0;
    CHECK_RC(MPI_Recv(ints, 4, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    errs += tu_check_status(&st, peer, 27 + round, MPI_INT, 1, "MPI_ANY_TAG");
    CHECK(ints[0] == 7 + round, "MPI_ANY_TAG receive: got %d", ints[0]);
    return errs;
}

static int receive_truncated(int peer)
{
    int errs = 0, rc;
    int buf[3] = { -3, -3, -3 };
    MPI_Status st;
    rc = MPI_Recv(buf, 2, MPI_INT, peer, 30, MPI_COMM_WORLD, &st);
    CHECK(tu_class(rc) == MPI_ERR_TRUNCATE, "12 bytes into 8: error class %d, expected %d",
          tu_class(rc), MPI_ERR_TRUNCATE);
    CHECK(buf[2] == -3, "12 bytes into 8 wrote past the buffer (%d)", buf[2]);
    return errs;
}

static int exchange(int peer, int rank)
{
    int errs = 0, i;
    for (i = 0; i < 100; i++) {
        long long mine = 1000LL * rank + i, theirs = -1, swapped = mine;
        MPI_Status st;
        CHECK_RC(MPI_Sendrecv(&mine, 1, MPI_LONG_LONG, peer, 40, &theirs, 1, MPI_LONG_LONG, peer, 40,
                              MPI_COMM_WORLD, &st));
        CHECK(theirs == 1000LL * peer + i, "MPI_Sendrecv %d: got %lld", i, theirs);
        errs += tu_check_status(&st, peer, 40, MPI_LONG_LONG, 1, "MPI_Sendrecv");
        CHECK_RC(MPI_Sendrecv_replace(&swapped, 1, MPI_LONG_LONG, peer, 41, peer, 41, MPI_COMM_WORLD,
                                      MPI_STATUS_IGNORE));
        CHECK(swapped == 1000LL * peer + i, "MPI_Sendrecv_replace %d: got %lld", i, swapped);
        if (errs > 0)
            break;
    }
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, round;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rank = tu_rank();
    size = tu_size();
    if (rank < size - size % 2) {
        int peer = rank ^ 1;
        for (round = 0; round < ROUNDS; round++) {
            /* alternate who sends, so both directions take the path */
            if ((rank & 1) == (round & 1)) {
                errs += send_all(peer, round);
            } else {
                errs += receive_bytes(peer, round);
                errs += receive_typed(peer, round);
                errs += receive_truncated(peer);
            }
        }
        errs += exchange(peer, rank);
    }
    return tu_finish(errs);
}
