/*
 * sendrecv: MPI_Sendrecv and MPI_Sendrecv_replace.
 *   - In a ring (send right, receive left) at any rank count, for several
 *     types and sizes (up to 256 KiB with 8 ranks or fewer, up to 4 KiB
 *     otherwise); the receive uses MPI_ANY_TAG and the tag tells who sent.
 *   - The opposite direction with MPI_ANY_SOURCE.
 *   - A chain with MPI_PROC_NULL neighbours at the ends: the status of a
 *     receive from MPI_PROC_NULL has source MPI_PROC_NULL, tag MPI_ANY_TAG,
 *     count 0, and the buffer is untouched.
 *   - Receive counts larger than the message; Sendrecv with oneself.
 *
 * Minimum ranks: 1.
 */
#include "testutil.h"

struct type_info {
    MPI_Datatype type;
    const char *name;
    size_t size;
};

static int ring(int rank, int size, const struct type_info *ti, int count,
                int replace)
{
    int errs = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    size_t nbytes = (size_t)count * ti->size;
    size_t cap = nbytes + 2 * ti->size;
    unsigned char *sbuf = (unsigned char *)tu_malloc(cap);
    unsigned char *rbuf = (unsigned char *)tu_malloc(cap);
    unsigned seed_me = (unsigned)(rank * 131 + count), seed_left;
    char what[96];
    MPI_Status st;

    seed_left = (unsigned)(left * 131 + count);
    snprintf(what, sizeof what, "%s ring, %d x %s",
             replace ? "Sendrecv_replace" : "Sendrecv", count, ti->name);
    if (replace) {
        tu_guard(rbuf, cap);
        tu_fill(rbuf, nbytes, seed_me);
        CHECK_RC(MPI_Sendrecv_replace(rbuf, count, ti->type, right,
                                      100 + rank % 1000, left, MPI_ANY_TAG,
                                      MPI_COMM_WORLD, &st));
    } else {
        tu_fill(sbuf, nbytes, seed_me);
        tu_guard(rbuf, cap);
        CHECK_RC(MPI_Sendrecv(sbuf, count, ti->type, right, 100 + rank % 1000,
                              rbuf, count + 2, ti->type, left, MPI_ANY_TAG,
                              MPI_COMM_WORLD, &st));
        errs += tu_check_data(sbuf, nbytes, nbytes, seed_me,
                              "Sendrecv send buffer afterwards");
    }
    errs += tu_check_status(&st, left, 100 + left % 1000, ti->type, count,
                            what);
    errs += tu_check_data(rbuf, nbytes, cap, seed_left, what);

    /* and the other way, receiving with MPI_ANY_SOURCE */
    tu_fill(sbuf, nbytes, seed_me + 7);
    tu_guard(rbuf, cap);
    CHECK_RC(MPI_Sendrecv(sbuf, count, ti->type, left, 7, rbuf, count + 2,
                          ti->type, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st));
    errs += tu_check_status(&st, right, 7, ti->type, count,
                            "Sendrecv leftwards, ANY_SOURCE");
    errs += tu_check_data(rbuf, nbytes, cap,
                          (unsigned)(right * 131 + count) + 7,
                          "Sendrecv leftwards, ANY_SOURCE");
    free(sbuf);
    free(rbuf);
    return errs;
}

/* A line 0 - 1 - ... - n-1 with MPI_PROC_NULL beyond the ends. */
static int chain(int rank, int size)
{
    int errs = 0, i;
    int right = rank == size - 1 ? MPI_PROC_NULL : rank + 1;
    int left = rank == 0 ? MPI_PROC_NULL : rank - 1;
    double s[10], r[12];
    MPI_Status st;

    for (i = 0; i < 10; i++)
        s[i] = rank + 0.25 * i;
    for (i = 0; i < 12; i++)
        r[i] = -1.0;
    CHECK_RC(MPI_Sendrecv(s, 10, MPI_DOUBLE, right, 3, r, 12, MPI_DOUBLE,
                          left, 3, MPI_COMM_WORLD, &st));
    if (left == MPI_PROC_NULL) {
        errs += tu_check_procnull_status(&st, "Sendrecv from MPI_PROC_NULL");
        for (i = 0; i < 12; i++)
            CHECK(r[i] == -1.0, "receive from MPI_PROC_NULL changed element "
                  "%d to %g", i, r[i]);
    } else {
        errs += tu_check_status(&st, left, 3, MPI_DOUBLE, 10, "chain");
        for (i = 0; i < 10; i++)
            CHECK(r[i] == left + 0.25 * i, "chain element %d: expected %g, "
                  "got %g", i, left + 0.25 * i, r[i]);
        CHECK(r[10] == -1.0 && r[11] == -1.0, "chain: wrote past message");
    }

    /* Sendrecv_replace along the chain the other way */
    for (i = 0; i < 10; i++)
        r[i] = 1000.0 * rank + i;
    CHECK_RC(MPI_Sendrecv_replace(r, 10, MPI_DOUBLE, left, 4, right, 4,
                                  MPI_COMM_WORLD, &st));
    if (right == MPI_PROC_NULL) {
        errs += tu_check_procnull_status(&st, "Sendrecv_replace from "
                                         "MPI_PROC_NULL");
        for (i = 0; i < 10; i++)
            CHECK(r[i] == 1000.0 * rank + i, "Sendrecv_replace from "
                  "MPI_PROC_NULL changed element %d to %g", i, r[i]);
    } else {
        errs += tu_check_status(&st, right, 4, MPI_DOUBLE, 10,
                                "Sendrecv_replace chain");
        for (i = 0; i < 10; i++)
            CHECK(r[i] == 1000.0 * right + i, "Sendrecv_replace element %d: "
                  "expected %g, got %g", i, 1000.0 * right + i, r[i]);
    }

    /* both neighbours MPI_PROC_NULL */
    CHECK_RC(MPI_Sendrecv(s, 10, MPI_DOUBLE, MPI_PROC_NULL, 5, r, 10,
                          MPI_DOUBLE, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    errs += tu_check_procnull_status(&st, "Sendrecv PROC_NULL both ways");
    return errs;
}

/* Receive counts larger than the message; Sendrecv with oneself. */
static int mixed(int rank, int size)
{
    int errs = 0, i, right = (rank + 1) % size, left = (rank + size - 1) % size;
    int si[5], ri[20];
    short ss[6], rs[20];
    long long self_s[3] = {1LL << 40, -5, 7}, self_r[3] = {0, 0, 0};
    MPI_Status st;

    for (i = 0; i < 5; i++)
        si[i] = rank * 10 + i;
    for (i = 0; i < 6; i++)
        ss[i] = (short)(rank % 1000 * 30 + i);
    for (i = 0; i < 20; i++) {
        ri[i] = -1;
        rs[i] = -1;
    }
    /* 5 ints to the right, room for 20 from the left */
    CHECK_RC(MPI_Sendrecv(si, 5, MPI_INT, right, 8, ri, 20, MPI_INT, left, 8,
                          MPI_COMM_WORLD, &st));
    errs += tu_check_status(&st, left, 8, MPI_INT, 5, "5 of 20 ints");
    for (i = 0; i < 5; i++)
        CHECK(ri[i] == left * 10 + i, "5 of 20 ints: element %d: expected "
              "%d, got %d", i, left * 10 + i, ri[i]);
    CHECK(ri[5] == -1 && ri[19] == -1, "5 of 20 ints: wrote past message");
    /* 6 shorts to the left, room for 20 from the right */
    CHECK_RC(MPI_Sendrecv(ss, 6, MPI_SHORT, left, 9, rs, 20, MPI_SHORT,
                          right, 9, MPI_COMM_WORLD, &st));
    errs += tu_check_status(&st, right, 9, MPI_SHORT, 6, "6 of 20 shorts");
    for (i = 0; i < 6; i++)
        CHECK(rs[i] == (short)(right % 1000 * 30 + i), "6 of 20 shorts: "
              "element %d: got %d", i, rs[i]);
    CHECK(rs[6] == -1, "6 of 20 shorts: wrote past message");

    CHECK_RC(MPI_Sendrecv(self_s, 3, MPI_LONG_LONG, rank, 10, self_r, 3,
                          MPI_LONG_LONG, rank, 10, MPI_COMM_WORLD, &st));
    errs += tu_check_status(&st, rank, 10, MPI_LONG_LONG, 3,
                            "Sendrecv with oneself");
    CHECK(self_r[0] == self_s[0] && self_r[1] == -5 && self_r[2] == 7,
          "Sendrecv with oneself: data {%lld, %lld, %lld}", self_r[0],
          self_r[1], self_r[2]);
    return errs;
}

int main(int argc, char **argv)
{
    const struct type_info types[] = {
        {MPI_INT, "MPI_INT", sizeof(int)},
        {MPI_DOUBLE, "MPI_DOUBLE", sizeof(double)},
        {MPI_CHAR, "MPI_CHAR", 1},
        {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(unsigned short)},
    };
    const int counts[] = {0, 1, 17, 1000, 65536};
    int errs = 0, rank, size, t, c, ncounts;

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();
    ncounts = size <= 8 ? 5 : 4;
    for (t = 0; t < (int)(sizeof types / sizeof types[0]); t++)
        for (c = 0; c < ncounts; c++) {
            errs += ring(rank, size, &types[t], counts[c], 0);
            errs += ring(rank, size, &types[t], counts[c], 1);
        }
    errs += chain(rank, size);
    errs += mixed(rank, size);
    return tu_finish(errs);
}
