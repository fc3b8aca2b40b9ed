/*
 * many_to_one: every rank sends NMSG messages to rank 0, which receives
 * them all with MPI_ANY_SOURCE.
 *   - Each message carries (sender, sequence number, checksum); rank 0
 *     checks status.MPI_SOURCE against the sender field, that each sender's
 *     messages arrive in order (non-overtaking), the counts (every 10th
 *     message is 1 KiB, the rest are small), and the totals per sender.
 *   - The first half is received with blocking MPI_Recv, the second half
 *     with batches of MPI_Irecv completed by MPI_Waitany (posted receives
 *     match in the order they were posted, so sequence numbers are still
 *     checked in posting order).
 *   - Then rank 0 answers every rank with one message (the number of
 *     messages it got from it), which each rank checks.
 *
 * Minimum ranks: 2 (with 1 rank there is nothing to do).
 */
#include "testutil.h"

#define NMSG 50
#define BIG 256 /* ints: 1 KiB */
#define SMALL 4
#define TAG_MSG 7
#define TAG_ACK 8
#define BATCH 16

static int msg_len(int seq)
{
    return seq % 10 == 9 ? BIG : SMALL;
}

static void make_msg(int *m, int rank, int seq)
{
    int i, n = msg_len(seq);
    m[0] = rank;
    m[1] = seq;
    for (i = 2; i < n; i++)
        m[i] = rank * 7 + seq * 3 + i;
}

/* Check one message; next[] holds the next expected sequence number. */
static int take(const int *m, MPI_Status *st, int *next, int size)
{
    int errs = 0, src = st->MPI_SOURCE, cnt = -1, i;
    if (src < 1 || src >= size || m[0] != src)
        return TU_FAIL("message from source %d says it is from %d", src,
                       m[0]);
    if (m[1] != next[src])
        errs += TU_FAIL("from rank %d: expected message %d, got %d", src,
                        next[src], m[1]);
    MPI_Get_count(st, MPI_INT, &cnt);
    if (cnt != msg_len(m[1]))
        errs += TU_FAIL("from rank %d message %d: count %d, expected %d", src,
                        m[1], cnt, msg_len(m[1]));
    else
        for (i = 2; i < cnt; i++)
            if (m[i] != src * 7 + m[1] * 3 + i) {
                errs += TU_FAIL("from rank %d message %d: element %d wrong",
                                src, m[1], i);
                break;
            }
    next[src] = m[1] + 1;
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, k, r;

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();

    if (rank != 0) {
        int m[BIG], ack = -1;
        for (k = 0; k < NMSG; k++) {
            make_msg(m, rank, k);
            CHECK_RC(MPI_Send(m, msg_len(k), MPI_INT, 0, TAG_MSG,
                              MPI_COMM_WORLD));
        }
        CHECK_RC(MPI_Recv(&ack, 1, MPI_INT, 0, TAG_ACK, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        CHECK_INT("messages rank 0 says it got from us", NMSG, ack);
    } else if (size > 1) {
        int total = (size - 1) * NMSG, got = 0;
        int *next = (int *)calloc((size_t)size, sizeof(int));
        int *m = (int *)tu_malloc(sizeof(int) * BIG);
        int *bufs = (int *)tu_malloc(sizeof(int) * BIG * BATCH);
        MPI_Status st;
        if (!next)
            TU_ABORT("out of memory");
        for (; got < total / 2; got++) {
            CHECK_RC(MPI_Recv(m, BIG, MPI_INT, MPI_ANY_SOURCE, TAG_MSG,
                              MPI_COMM_WORLD, &st));
            errs += take(m, &st, next, size);
        }
        while (got < total) {
            int nb = total - got < BATCH ? total - got : BATCH, j, idx;
            MPI_Request reqs[BATCH];
            MPI_Status sts[BATCH];
            for (j = 0; j < nb; j++)
                CHECK_RC(MPI_Irecv(bufs + j * BIG, BIG, MPI_INT,
                                   MPI_ANY_SOURCE, TAG_MSG, MPI_COMM_WORLD,
                                   &reqs[j]));
            for (j = 0; j < nb; j++) {
                CHECK_RC(MPI_Waitany(nb, reqs, &idx, &st));
                if (idx < 0 || idx >= nb) {
                    errs += TU_FAIL("Waitany index %d", idx);
                    TU_ABORT("cannot go on");
                }
                sts[idx] = st;
            }
            /* check in posting order */
            for (j = 0; j < nb; j++)
                errs += take(bufs + j * BIG, &sts[j], next, size);
            got += nb;
        }
        for (r = 1; r < size; r++) {
            CHECK(next[r] == NMSG, "got %d messages from rank %d, expected "
                  "%d", next[r], r, NMSG);
            CHECK_RC(MPI_Send(&next[r], 1, MPI_INT, r, TAG_ACK,
                              MPI_COMM_WORLD));
        }
        free(next);
        free(m);
        free(bufs);
    }
    return tu_finish(errs);
}
