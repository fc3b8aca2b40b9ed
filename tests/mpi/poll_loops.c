/*
 * poll_loops: requests completed by a program's own polling loop, with no
 * yield of its own between the calls, as hypre's DataExchangeList (AMG)
 * does.  Each round is a ring exchange (send to the right, receive from the
 * left) completed by spinning on one kind of call:
 *   - MPI_Testall on the send and the receive;
 *   - MPI_Iprobe(MPI_ANY_SOURCE, tag) until the message is there, MPI_Recv
 *     of it (the source must be the left neighbour), then MPI_Test on the send;
 *   - MPI_Testany until both requests are done (index and flag checked);
 *   - MPI_Testsome until both requests are done (indices checked);
 *   - MPI_Request_get_status on the receive (the request stays active,
 *     MPI_Wait then frees it), MPI_Test on the send.
 * The received values are checked every round.
 *
 * The time limit in the testlist is the other check: with more ranks than
 * cores the neighbour a poller waits for is usually not running, and an
 * MPI that lets the poller keep its core spins out a whole time slice per
 * hop (64 ranks on 2 cores: ~0.4 s a round before the test calls yielded).
 *
 * Minimum ranks: 1 (a rank is its own neighbour).
 */
#include "testutil.h"

#define ROUNDS 200
#define TAG 5

enum poller { BY_TESTALL, BY_IPROBE, BY_TESTANY, BY_TESTSOME, BY_GET_STATUS, POLLERS };

static const char *poller_name[POLLERS] = { "MPI_Testall", "MPI_Iprobe", "MPI_Testany", "MPI_Testsome",
                                            "MPI_Request_get_status" };

struct ring {
    int rank, left, right;
};

static int value(int from, enum poller p, int round)
{
    return from * 100000 + (int)p * 1000 + round;
}

static int poll_testall(MPI_Request req[2])
{
    int errs = 0, flag = 0;
    MPI_Status st[2];
    while (!flag)
        CHECK_RC(MPI_Testall(2, req, &flag, st));
    return errs;
}

/* The receive is not posted: probe for it, then receive what was found. */
static int poll_iprobe(const struct ring *g, MPI_Request *send, int *in)
{
    int errs = 0, flag = 0;
    MPI_Status st;
    while (!flag)
        CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK_INT("MPI_Iprobe source", g->left, st.MPI_SOURCE);
    CHECK_RC(MPI_Recv(in, 1, MPI_INT, st.MPI_SOURCE, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (flag = 0; !flag;)
        CHECK_RC(MPI_Test(send, &flag, MPI_STATUS_IGNORE));
    return errs;
}

static int poll_testany(MPI_Request req[2])
{
    int errs = 0, done = 0;
    while (done < 2) {
        int index = -2, flag = 0;
        CHECK_RC(MPI_Testany(2, req, &index, &flag, MPI_STATUS_IGNORE));
        if (!flag) {
            CHECK_INT("MPI_Testany index without completion", MPI_UNDEFINED, index);
            continue;
        }
        CHECK(index == 0 || index == 1, "MPI_Testany index %d", index);
        done++;
    }
    return errs;
}

static int poll_testsome(MPI_Request req[2])
{
    int errs = 0, done = 0;
    while (done < 2) {
        int outcount = -1, indices[2];
        MPI_Status st[2];
        CHECK_RC(MPI_Testsome(2, req, &outcount, indices, st));
        CHECK(outcount >= 0 && outcount <= 2 - done, "MPI_Testsome outcount %d with %d done", outcount, done);
        if (outcount < 0)
            break;
        for (int i = 0; i < outcount; i++)
            CHECK(indices[i] == 0 || indices[i] == 1, "MPI_Testsome index %d", indices[i]);
        done += outcount;
    }
    return errs;
}

static int poll_get_status(MPI_Request req[2])
{
    int errs = 0, flag = 0;
    while (!flag)
        CHECK_RC(MPI_Request_get_status(req[1], &flag, MPI_STATUS_IGNORE));
    CHECK(req[1] != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    CHECK_RC(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    for (flag = 0; !flag;)
        CHECK_RC(MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE));
    return errs;
}

static int one_round(const struct ring *g, enum poller p, int round)
{
    int errs = 0, out = value(g->rank, p, round), in = -1;
    MPI_Request req[2];
    CHECK_RC(MPI_Isend(&out, 1, MPI_INT, g->right, TAG, MPI_COMM_WORLD, &req[0]));
    if (p == BY_IPROBE) {
        errs += poll_iprobe(g, &req[0], &in);
    } else {
        CHECK_RC(MPI_Irecv(&in, 1, MPI_INT, g->left, TAG, MPI_COMM_WORLD, &req[1]));
        switch (p) {
        case BY_TESTALL: errs += poll_testall(req); break;
        case BY_TESTANY: errs += poll_testany(req); break;
        case BY_TESTSOME: errs += poll_testsome(req); break;
        default: errs += poll_get_status(req); break;
        }
    }
    if (in != value(g->left, p, round))
        errs += TU_FAIL("%s round %d: expected %d from rank %d, got %d", poller_name[p], round,
                        value(g->left, p, round), g->left, in);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, size;
    struct ring g;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g.left = (g.rank + size - 1) % size;
    g.right = (g.rank + 1) % size;
    for (int p = 0; p < POLLERS; p++)
        for (int round = 0; round < ROUNDS; round++)
            errs += one_round(&g, (enum poller)p, round);
    return tu_finish(errs);
}
