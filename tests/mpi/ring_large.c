/*
 * ring_large: a token ring meant for large rank counts (the testlist runs
 * it at 1024 ranks).
 *   - An integer token goes around all ranks LAPS times; every rank checks
 *     the value it receives (lap * size + rank) and passes it on plus one;
 *     rank 0 checks the final value.
 *   - Each rank sends 1 KiB to its right-hand neighbour and receives 1 KiB
 *     from its left-hand one (MPI_Irecv, MPI_Isend, MPI_Waitall), checking
 *     data, source, tag and count.
 *   - The same 1 KiB exchange with MPI_Sendrecv_replace in the other
 *     direction.
 *   - Message-based barriers (tu_barrier) between the phases.
 * Per rank: a few KiB of memory and LAPS + 3 + 2 log2(size) messages.
 *
 * Minimum ranks: 2.
 */
#include "testutil.h"

#define LAPS 10
#define NBYTES 1024
#define TAG_TOKEN 1
#define TAG_DATA 2

int main(int argc, char **argv)
{
    int errs = 0, rank, size, right, left, lap, token;
    unsigned char sbuf[NBYTES], rbuf[NBYTES + 16];
    MPI_Request reqs[2];
    MPI_Status sts[2], st;

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    /* neighbour exchange first: everybody is busy at once */
    tu_fill(sbuf, NBYTES, (unsigned)rank);
    tu_guard(rbuf, sizeof rbuf);
    CHECK_RC(MPI_Irecv(rbuf, NBYTES + 16, MPI_BYTE, left, TAG_DATA,
                       MPI_COMM_WORLD, &reqs[0]));
    CHECK_RC(MPI_Isend(sbuf, NBYTES, MPI_BYTE, right, TAG_DATA,
                       MPI_COMM_WORLD, &reqs[1]));
    CHECK_RC(MPI_Waitall(2, reqs, sts));
    errs += tu_check_status(&sts[0], left, TAG_DATA, MPI_BYTE, NBYTES,
                            "1 KiB from the left");
    errs += tu_check_data(rbuf, NBYTES, sizeof rbuf, (unsigned)left,
                          "1 KiB from the left");

    tu_barrier();

    /* token ring */
    for (lap = 0; lap < LAPS; lap++) {
        if (rank == 0) {
            token = lap * size + 1;
            CHECK_RC(MPI_Send(&token, 1, MPI_INT, right, TAG_TOKEN,
                              MPI_COMM_WORLD));
            CHECK_RC(MPI_Recv(&token, 1, MPI_INT, left, TAG_TOKEN,
                              MPI_COMM_WORLD, &st));
            CHECK(token == (lap + 1) * size,
                  "lap %d: token back at rank 0 is %d, expected %d", lap,
                  token, (lap + 1) * size);
        } else {
            CHECK_RC(MPI_Recv(&token, 1, MPI_INT, left, TAG_TOKEN,
                              MPI_COMM_WORLD, &st));
            CHECK(token == lap * size + rank,
                  "lap %d: token %d, expected %d", lap, token,
                  lap * size + rank);
            token++;
            CHECK_RC(MPI_Send(&token, 1, MPI_INT, right, TAG_TOKEN,
                              MPI_COMM_WORLD));
        }
    }

    tu_barrier();

    /* the other way round, in place */
    tu_fill(rbuf, NBYTES, (unsigned)rank + 5000u);
    CHECK_RC(MPI_Sendrecv_replace(rbuf, NBYTES, MPI_BYTE, left, TAG_DATA,
                                  right, TAG_DATA, MPI_COMM_WORLD, &st));
    errs += tu_check_status(&st, right, TAG_DATA, MPI_BYTE, NBYTES,
                            "1 KiB from the right");
    errs += tu_check_data(rbuf, NBYTES, NBYTES, (unsigned)right + 5000u,
                          "1 KiB from the right");

    return tu_finish(errs);
}
