/*
 * nonblocking: MPI_Isend / Ibsend / Issend / Irsend / Irecv completed with
 * MPI_Wait, MPI_Test (polling), MPI_Waitany, MPI_Testany, MPI_Waitall,
 * MPI_Testall, MPI_Waitsome and MPI_Testsome, over request arrays that
 * contain MPI_REQUEST_NULL entries, with and without MPI_STATUS(ES)_IGNORE.
 * Checked: data, MPI_SOURCE, MPI_TAG, MPI_Get_count, returned indices and
 * outcounts, requests set to MPI_REQUEST_NULL once complete (and left alone
 * while not complete), empty statuses for null entries, MPI_UNDEFINED when
 * no active request is left, that a test before the message was sent says
 * "not complete", and that an MPI_Issend does not complete before the
 * receiver has posted its receive.
 *
 * Ranks pair up as (2k, 2k+1) and run every section twice with the roles
 * swapped; with an odd rank count the last rank idles.  Minimum ranks: 2.
 */
#include "testutil.h"

#define TAG_GO 900

/* Each message carries LEN ints: its tag, then tag*100 + i. */
#define LEN 40

static void make_msg(int *buf, int tag)
{
    int i;
    buf[0] = tag;
    for (i = 1; i < LEN; i++)
        buf[i] = tag * 100 + i;
}

static int check_msg(const int *buf, int tag, const char *what)
{
    int i;
    if (buf[0] != tag)
        return TU_FAIL("%s: message header expected %d, got %d", what, tag,
                       buf[0]);
    for (i = 1; i < LEN; i++)
        if (buf[i] != tag * 100 + i)
            return TU_FAIL("%s: element %d expected %d, got %d", what, i,
                           tag * 100 + i, buf[i]);
    return 0;
}

static void send_go(int peer)
{
    MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD);
}

static void wait_go(int peer)
{
    MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
}

static void send_msg(int peer, int tag)
{
    int buf[LEN];
    make_msg(buf, tag);
    MPI_Send(buf, LEN, MPI_INT, peer, tag, MPI_COMM_WORLD);
}

/* A: both sides Isend and Irecv at once, completed with MPI_Wait. */
static int sec_wait(int peer, int big)
{
    int errs = 0;
    int n = big ? (1 << 18) + 5 : 5000; /* doubles: 2 MiB or 40 KB */
    double *s = (double *)tu_malloc(sizeof(double) * n);
    double *r = (double *)tu_malloc(sizeof(double) * (n + 8));
    MPI_Request rr, sr;
    MPI_Status st;

    tu_fill(s, sizeof(double) * n, 100u + (unsigned)tu_rank());
    tu_guard(r, sizeof(double) * (n + 8));
    CHECK_RC(MPI_Irecv(r, n + 8, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &rr));
    CHECK_RC(MPI_Isend(s, n, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &sr));
    CHECK_RC(MPI_Wait(&rr, &st));
    CHECK(rr == MPI_REQUEST_NULL, "Wait did not free the receive request");
    errs += tu_check_status(&st, peer, 1, MPI_DOUBLE, n, "Isend/Irecv/Wait");
    errs += tu_check_data(r, sizeof(double) * n, sizeof(double) * (n + 8),
                          100u + (unsigned)peer, "Isend/Irecv/Wait");
    CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    CHECK(sr == MPI_REQUEST_NULL, "Wait did not free the send request");

    /* Wait and Test on MPI_REQUEST_NULL return at once with an empty
     * status. */
    CHECK_RC(MPI_Wait(&sr, &st));
    errs += tu_check_empty_status(&st, "Wait(MPI_REQUEST_NULL)");
    {
        int flag = 0;
        CHECK_RC(MPI_Test(&sr, &flag, &st));
        CHECK(flag, "Test(MPI_REQUEST_NULL) gave flag 0");
        errs += tu_check_empty_status(&st, "Test(MPI_REQUEST_NULL)");
    }
    free(s);
    free(r);
    return errs;
}

/* B: MPI_Test polling on a receive the sender only sends after a "go". */
static int sec_test(int sender, int peer)
{
    int errs = 0, buf[LEN], flag = 0;
    MPI_Request req;
    MPI_Status st;

    if (sender) {
        wait_go(peer);
        tu_sleep_ms(2);
        send_msg(peer, 2);
        return 0;
    }
    CHECK_RC(MPI_Irecv(buf, LEN, MPI_INT, peer, 2, MPI_COMM_WORLD, &req));
    CHECK_RC(MPI_Test(&req, &flag, &st));
    CHECK(!flag, "Test completed a receive whose message was not yet sent");
    CHECK(req != MPI_REQUEST_NULL, "Test freed an incomplete request");
    send_go(peer);
    while (!flag) {
        CHECK_RC(MPI_Test(&req, &flag, &st));
        if (!flag)
            tu_yield();
    }
    CHECK(req == MPI_REQUEST_NULL, "Test did not free a completed request");
    errs += tu_check_status(&st, peer, 2, MPI_INT, LEN, "Test polling");
    errs += check_msg(buf, 2, "Test polling");
    return errs;
}

/* C: MPI_Waitany over [NULL, r10, NULL, r11, r12, NULL]. */
static int sec_waitany(int sender, int peer)
{
    int errs = 0, bufs[6][LEN], k, idx, seen[6] = {0};
    const int tags[6] = {-1, 10, -1, 11, 12, -1};
    MPI_Request reqs[6];
    MPI_Status st;

    if (sender) {
        wait_go(peer);
        send_msg(peer, 12);
        send_msg(peer, 10);
        send_msg(peer, 11);
        return 0;
    }
    for (k = 0; k < 6; k++) {
        reqs[k] = MPI_REQUEST_NULL;
        if (tags[k] >= 0)
            CHECK_RC(MPI_Irecv(bufs[k], LEN, MPI_INT, peer, tags[k],
                               MPI_COMM_WORLD, &reqs[k]));
    }
    send_go(peer);
    for (k = 0; k < 3; k++) {
        idx = -1;
        CHECK_RC(MPI_Waitany(6, reqs, &idx, &st));
        if (idx < 0 || idx >= 6 || tags[idx] < 0 || seen[idx]) {
            errs += TU_FAIL("Waitany returned bad index %d", idx);
            continue;
        }
        seen[idx] = 1;
        CHECK(reqs[idx] == MPI_REQUEST_NULL,
              "Waitany did not free request %d", idx);
        errs += tu_check_status(&st, peer, tags[idx], MPI_INT, LEN,
                                "Waitany");
        errs += check_msg(bufs[idx], tags[idx], "Waitany");
    }
    idx = -1;
    CHECK_RC(MPI_Waitany(6, reqs, &idx, &st));
    CHECK_INT("Waitany with no active request: index", MPI_UNDEFINED, idx);
    errs += tu_check_empty_status(&st, "Waitany with no active request");
    CHECK_RC(MPI_Waitany(0, reqs, &idx, MPI_STATUS_IGNORE));
    CHECK_INT("Waitany with count 0: index", MPI_UNDEFINED, idx);
    return errs;
}

/* D: the four nonblocking send modes, received with MPI_Testany; the
 * sender completes them with Waitall(MPI_STATUSES_IGNORE) over an array
 * with a null entry. */
static int sec_testany(int sender, int peer, int big)
{
    int errs = 0, k, idx, flag, done = 0, seen[5] = {0};
    int bufs[5][LEN];
    int nbig = big ? (1 << 20) + 3 : 65536 + 3; /* chars */
    char *bigbuf = (char *)tu_malloc((size_t)nbig + 16);
    MPI_Request reqs[6];
    MPI_Status st;

    if (sender) {
        int bsize = LEN * (int)sizeof(int) + MPI_BSEND_OVERHEAD, dsize;
        void *bb = tu_malloc((size_t)bsize), *db;
        for (k = 0; k < 4; k++)
            make_msg(bufs[k], 20 + k);
        tu_fill(bigbuf, (size_t)nbig, 24);
        CHECK_RC(MPI_Buffer_attach(bb, bsize));
        wait_go(peer); /* receives are posted: Irsend is legal */
        reqs[1] = MPI_REQUEST_NULL;
        CHECK_RC(MPI_Isend(bufs[0], LEN, MPI_INT, peer, 20, MPI_COMM_WORLD,
                           &reqs[0]));
        CHECK_RC(MPI_Ibsend(bufs[1], LEN, MPI_INT, peer, 21, MPI_COMM_WORLD,
                            &reqs[2]));
        CHECK_RC(MPI_Issend(bufs[2], LEN, MPI_INT, peer, 22, MPI_COMM_WORLD,
                            &reqs[3]));
        CHECK_RC(MPI_Irsend(bufs[3], LEN, MPI_INT, peer, 23, MPI_COMM_WORLD,
                            &reqs[4]));
        CHECK_RC(MPI_Isend(bigbuf, nbig, MPI_CHAR, peer, 24, MPI_COMM_WORLD,
                           &reqs[5]));
        CHECK_RC(MPI_Waitall(6, reqs, MPI_STATUSES_IGNORE));
        for (k = 0; k < 6; k++)
            CHECK(reqs[k] == MPI_REQUEST_NULL,
                  "sender Waitall left request %d", k);
        CHECK_RC(MPI_Buffer_detach(&db, &dsize));
        free(bb);
        free(bigbuf);
        return errs;
    }
    for (k = 0; k < 4; k++)
        CHECK_RC(MPI_Irecv(bufs[k], LEN, MPI_INT, peer, 20 + k,
                           MPI_COMM_WORLD, &reqs[k]));
    tu_guard(bigbuf, (size_t)nbig + 16);
    CHECK_RC(MPI_Irecv(bigbuf, nbig + 16, MPI_CHAR, peer, 24, MPI_COMM_WORLD,
                       &reqs[4]));
    reqs[5] = MPI_REQUEST_NULL;
    send_go(peer);
    while (done < 5) {
        flag = 0;
        idx = -1;
        CHECK_RC(MPI_Testany(6, reqs, &idx, &flag, &st));
        if (!flag) {
            tu_yield();
            continue;
        }
        if (idx < 0 || idx > 4 || seen[idx]) {
            errs += TU_FAIL("Testany returned flag 1 and bad index %d", idx);
            break;
        }
        seen[idx] = 1;
        done++;
        CHECK(reqs[idx] == MPI_REQUEST_NULL,
              "Testany did not free request %d", idx);
        if (idx < 4) {
            errs += tu_check_status(&st, peer, 20 + idx, MPI_INT, LEN,
                                    "Testany");
            errs += check_msg(bufs[idx], 20 + idx, "Testany");
        } else {
            errs += tu_check_status(&st, peer, 24, MPI_CHAR, nbig,
                                    "Testany (large)");
            errs += tu_check_data(bigbuf, (size_t)nbig, (size_t)nbig + 16, 24,
                                  "Testany (large)");
        }
    }
    flag = 0;
    idx = -1;
    CHECK_RC(MPI_Testany(6, reqs, &idx, &flag, &st));
    CHECK(flag, "Testany with no active request gave flag 0");
    CHECK_INT("Testany with no active request: index", MPI_UNDEFINED, idx);
    errs += tu_check_empty_status(&st, "Testany with no active request");
    free(bigbuf);
    return errs;
}

/* E: MPI_Waitall with statuses, null entries get empty statuses. */
static int sec_waitall(int sender, int peer)
{
    int errs = 0, buf[LEN], k;
    MPI_Request reqs[4];
    MPI_Status sts[4];

    if (sender) {
        wait_go(peer);
        send_msg(peer, 30);
        CHECK_RC(MPI_Send(NULL, 0, MPI_INT, peer, 31, MPI_COMM_WORLD));
        return errs;
    }
    reqs[1] = reqs[3] = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Irecv(buf, LEN, MPI_INT, peer, 30, MPI_COMM_WORLD,
                       &reqs[0]));
    CHECK_RC(MPI_Irecv(NULL, 0, MPI_INT, peer, 31, MPI_COMM_WORLD,
                       &reqs[2]));
    send_go(peer);
    for (k = 0; k < 4; k++)
        sts[k].MPI_SOURCE = sts[k].MPI_TAG = -999;
    CHECK_RC(MPI_Waitall(4, reqs, sts));
    for (k = 0; k < 4; k++)
        CHECK(reqs[k] == MPI_REQUEST_NULL, "Waitall left request %d", k);
    errs += tu_check_status(&sts[0], peer, 30, MPI_INT, LEN, "Waitall [0]");
    errs += check_msg(buf, 30, "Waitall [0]");
    errs += tu_check_empty_status(&sts[1], "Waitall null entry [1]");
    errs += tu_check_status(&sts[2], peer, 31, MPI_INT, 0, "Waitall [2]");
    errs += tu_check_empty_status(&sts[3], "Waitall null entry [3]");
    CHECK_RC(MPI_Waitall(0, reqs, MPI_STATUSES_IGNORE));
    return errs;
}

/* F: MPI_Testall is false (and frees nothing) until every request is
 * complete. */
static int sec_testall(int sender, int peer)
{
    int errs = 0, bufs[3][LEN], k, flag;
    MPI_Request reqs[4];
    MPI_Status sts[4];

    if (sender) {
        send_msg(peer, 40);
        send_msg(peer, 41);
        wait_go(peer);
        send_msg(peer, 42);
        return 0;
    }
    for (k = 0; k < 3; k++)
        CHECK_RC(MPI_Irecv(bufs[k], LEN, MPI_INT, peer, 40 + k,
                           MPI_COMM_WORLD, &reqs[k]));
    reqs[3] = MPI_REQUEST_NULL;
    /* Wait until the first two have arrived, without completing them. */
    for (k = 0; k < 2; k++) {
        flag = 0;
        while (!flag) {
            CHECK_RC(MPI_Request_get_status(reqs[k], &flag,
                                            MPI_STATUS_IGNORE));
            if (!flag)
                tu_yield();
        }
    }
    flag = -1;
    CHECK_RC(MPI_Testall(4, reqs, &flag, sts));
    CHECK_INT("Testall with one message not yet sent: flag", 0, flag);
    for (k = 0; k < 3; k++)
        CHECK(reqs[k] != MPI_REQUEST_NULL,
              "Testall returned false but freed request %d", k);
    send_go(peer);
    flag = 0;
    while (!flag) {
        CHECK_RC(MPI_Testall(4, reqs, &flag, sts));
        if (!flag)
            tu_yield();
    }
    for (k = 0; k < 4; k++)
        CHECK(reqs[k] == MPI_REQUEST_NULL, "Testall left request %d", k);
    for (k = 0; k < 3; k++) {
        errs += tu_check_status(&sts[k], peer, 40 + k, MPI_INT, LEN,
                                "Testall");
        errs += check_msg(bufs[k], 40 + k, "Testall");
    }
    errs += tu_check_empty_status(&sts[3], "Testall null entry");
    flag = 0;
    CHECK_RC(MPI_Testall(4, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag, "Testall on null requests gave flag 0");
    return errs;
}

/* G: MPI_Waitsome then MPI_Testsome over [r50, NULL, r51, r52, NULL, r53]. */
static int sec_some(int sender, int peer)
{
    int errs = 0, bufs[6][LEN], k, outcount, done = 0, seen[6] = {0};
    int idx[6];
    const int tags[6] = {50, -1, 51, 52, -1, 53};
    MPI_Request reqs[6];
    MPI_Status sts[6];

    if (sender) {
        wait_go(peer);
        send_msg(peer, 51);
        send_msg(peer, 53);
        wait_go(peer);
        send_msg(peer, 52);
        send_msg(peer, 50);
        return 0;
    }
    for (k = 0; k < 6; k++) {
        reqs[k] = MPI_REQUEST_NULL;
        if (tags[k] >= 0)
            CHECK_RC(MPI_Irecv(bufs[k], LEN, MPI_INT, peer, tags[k],
                               MPI_COMM_WORLD, &reqs[k]));
    }
    send_go(peer);
    /* Waitsome: only tags 51 and 53 (indices 2 and 5) can complete. */
    while (done < 2) {
        outcount = -1;
        CHECK_RC(MPI_Waitsome(6, reqs, &outcount, idx, sts));
        if (outcount < 1 || outcount > 2 - done) {
            errs += TU_FAIL("Waitsome outcount %d with %d messages pending",
                            outcount, 2 - done);
            return errs;
        }
        for (k = 0; k < outcount; k++) {
            int i = idx[k];
            if (i != 2 && i != 5) {
                errs += TU_FAIL("Waitsome returned index %d (only 2 and 5 "
                                "were sent)", i);
                return errs;
            }
            if (seen[i]++)
                errs += TU_FAIL("Waitsome returned index %d twice", i);
            CHECK(reqs[i] == MPI_REQUEST_NULL,
                  "Waitsome did not free request %d", i);
            errs += tu_check_status(&sts[k], peer, tags[i], MPI_INT, LEN,
                                    "Waitsome");
            errs += check_msg(bufs[i], tags[i], "Waitsome");
        }
        done += outcount;
    }
    /* Nothing else was sent: Testsome finds nothing, frees nothing. */
    outcount = -1;
    CHECK_RC(MPI_Testsome(6, reqs, &outcount, idx, sts));
    CHECK_INT("Testsome with nothing arrived: outcount", 0, outcount);
    CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[3] != MPI_REQUEST_NULL,
          "Testsome freed a pending request");
    send_go(peer);
    while (done < 4) {
        outcount = -1;
        CHECK_RC(MPI_Testsome(6, reqs, &outcount, idx, MPI_STATUSES_IGNORE));
        if (outcount < 0 || outcount > 4 - done) {
            errs += TU_FAIL("Testsome outcount %d with %d messages pending",
                            outcount, 4 - done);
            return errs;
        }
        for (k = 0; k < outcount; k++) {
            int i = idx[k];
            if (i != 0 && i != 3) {
                errs += TU_FAIL("Testsome returned index %d", i);
                return errs;
            }
            if (seen[i]++)
                errs += TU_FAIL("Testsome returned index %d twice", i);
            CHECK(reqs[i] == MPI_REQUEST_NULL,
                  "Testsome did not free request %d", i);
            errs += check_msg(bufs[i], tags[i], "Testsome");
        }
        if (outcount == 0)
            tu_yield();
        done += outcount;
    }
    outcount = -1;
    CHECK_RC(MPI_Waitsome(6, reqs, &outcount, idx, sts));
    CHECK_INT("Waitsome with no active request: outcount", MPI_UNDEFINED,
              outcount);
    outcount = -1;
    CHECK_RC(MPI_Testsome(6, reqs, &outcount, idx, sts));
    CHECK_INT("Testsome with no active request: outcount", MPI_UNDEFINED,
              outcount);
    return errs;
}

/* H: MPI_Issend cannot complete before the matching receive is posted;
 * the receive uses MPI_ANY_SOURCE with a specific tag. */
static int sec_issend(int sender, int peer)
{
    int errs = 0, buf[LEN], flag, k;
    MPI_Request req;
    MPI_Status st;

    if (sender) {
        make_msg(buf, 60);
        CHECK_RC(MPI_Issend(buf, LEN, MPI_INT, peer, 60, MPI_COMM_WORLD,
                            &req));
        for (k = 0; k < 5; k++) {
            flag = -1;
            CHECK_RC(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
            if (flag) {
                errs += TU_FAIL("Issend completed before the receiver posted "
                                "its receive");
                break;
            }
            tu_sleep_ms(1);
        }
        send_go(peer);
        if (!flag)
            CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
        return errs;
    }
    wait_go(peer);
    CHECK_RC(MPI_Recv(buf, LEN, MPI_INT, MPI_ANY_SOURCE, 60, MPI_COMM_WORLD,
                      &st));
    errs += tu_check_status(&st, peer, 60, MPI_INT, LEN, "Issend receive");
    errs += check_msg(buf, 60, "Issend receive");
    return errs;
}

/* I: nonblocking operations with MPI_PROC_NULL complete at once. */
static int sec_procnull(void)
{
    int errs = 0, buf[LEN], flag = 0;
    MPI_Request reqs[2];
    MPI_Status sts[2];
    make_msg(buf, 70);
    CHECK_RC(MPI_Isend(buf, LEN, MPI_INT, MPI_PROC_NULL, 70, MPI_COMM_WORLD,
                       &reqs[0]));
    CHECK_RC(MPI_Irecv(buf, LEN, MPI_INT, MPI_PROC_NULL, 70, MPI_COMM_WORLD,
                       &reqs[1]));
    CHECK_RC(MPI_Waitall(2, reqs, sts));
    if (!TU_MPICH_PROCNULL_BUG)
        errs += tu_check_procnull_status(&sts[1], "Irecv from MPI_PROC_NULL "
                                         "completed by Waitall");
    errs += check_msg(buf, 70, "buffer of an Irecv from MPI_PROC_NULL");

    CHECK_RC(MPI_Irecv(buf, LEN, MPI_INT, MPI_PROC_NULL, 71, MPI_COMM_WORLD,
                       &reqs[1]));
    while (!flag)
        CHECK_RC(MPI_Test(&reqs[1], &flag, &sts[1])); /* completes at once */
    if (!TU_MPICH_PROCNULL_BUG)
        errs += tu_check_procnull_status(&sts[1], "Irecv from MPI_PROC_NULL "
                                         "completed by Test");
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, peer, dir;

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();
    peer = rank ^ 1;
    errs += sec_procnull();
    if (peer < size) {
        int big = tu_big_ok(rank, peer);
        errs += sec_wait(peer, big);
        for (dir = 0; dir < 2; dir++) {
            int sender = (rank & 1) == dir;
            errs += sec_test(sender, peer);
            errs += sec_waitany(sender, peer);
            errs += sec_testany(sender, peer, big);
            errs += sec_waitall(sender, peer);
            errs += sec_testall(sender, peer);
            errs += sec_some(sender, peer);
            errs += sec_issend(sender, peer);
        }
    }
    return tu_finish(errs);
}
