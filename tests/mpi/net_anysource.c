/*
 * net_anysource: MPI_ANY_SOURCE receives mixing senders in the receiver's
 * node process and in other node processes (run with mpiexec --nodes K).
 *   - Every rank but 0 sends rank 0 a sequence of messages: small (eager),
 *     large (rendezvous: pulled over the network when remote) and
 *     synchronous (MPI_Ssend), each carrying (source, sequence number).
 *   - Rank 0 receives them all with MPI_ANY_SOURCE, some
 *     after MPI_Probe(MPI_ANY_SOURCE), and checks status, data and the
 *     per-source order (MPI's non-overtaking rule).
 * Minimum ranks: 2 (3 or more over 2 node processes mixes local and
 * remote senders).
 */
#include "testutil.h"

enum { MSGS = 30, SMALL = 64, LARGE = 256 * 1024, TAG_DATA = 5 };

static int message_bytes(int seq)
{
    return seq % 3 == 1 ? LARGE : SMALL;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = (unsigned char *)tu_malloc(LARGE + 64);
    if (rank != 0) {
        for (int seq = 0; seq < MSGS; seq++) {
            int n = message_bytes(seq);
            tu_fill(buf, (size_t)n, (unsigned)(rank * 1000 + seq));
            int header[2] = { rank, seq };
            memcpy(buf, header, sizeof header);
            if (seq % 3 == 2)
                CHECK_RC(MPI_Ssend(buf, n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD));
            else
                CHECK_RC(MPI_Send(buf, n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD));
        }
    } else {
        int *next = (int *)calloc((size_t)size, sizeof *next);
        for (int got = 0; got < MSGS * (size - 1); got++) {
            MPI_Status st, pst;
            if (got % 4 == 0) {
                CHECK_RC(MPI_Probe(MPI_ANY_SOURCE, TAG_DATA, MPI_COMM_WORLD, &pst));
                tu_guard(buf, LARGE + 64);
                CHECK_RC(MPI_Recv(buf, LARGE + 64, MPI_BYTE, pst.MPI_SOURCE, pst.MPI_TAG, MPI_COMM_WORLD, &st));
            } else {
                tu_guard(buf, LARGE + 64);
                CHECK_RC(MPI_Recv(buf, LARGE + 64, MPI_BYTE, MPI_ANY_SOURCE, TAG_DATA, MPI_COMM_WORLD, &st));
            }
            int header[2];
            memcpy(header, buf, sizeof header);
            int src = st.MPI_SOURCE, seq = header[1];
            if (src < 1 || src >= size || header[0] != src) {
                errs += TU_FAIL("message %d: status source %d, header source %d", got, src, header[0]);
                continue;
            }
            CHECK(seq == next[src], "from rank %d: sequence %d arrived, expected %d (overtaken)", src, seq,
                  next[src]);
            next[src] = seq + 1;
            char what[64];
            snprintf(what, sizeof what, "message %d from rank %d", seq, src);
            errs += tu_check_status(&st, src, TAG_DATA, MPI_BYTE, message_bytes(seq), what);
            /* the header replaced the first bytes of the pattern */
            unsigned char expect[16];
            tu_fill(expect, sizeof expect, (unsigned)(src * 1000 + seq));
            memcpy(buf, expect, sizeof header);
            errs += tu_check_data(buf, (size_t)message_bytes(seq), (size_t)LARGE + 64,
                                  (unsigned)(src * 1000 + seq), what);
        }
        free(next);
    }
    free(buf);
    return tu_finish(errs);
}
