/*
 * probe: MPI_Probe and MPI_Iprobe.
 *   - MPI_Iprobe returns flag = 0 when nothing matching has been sent (for a
 *     specific source and tag, MPI_ANY_TAG, MPI_ANY_SOURCE, and both
 *     wildcards), and after everything was received.
 *   - MPI_Probe with MPI_ANY_SOURCE / MPI_ANY_TAG returns the first message
 *     in sending order; probing again returns the same message (a probe does
 *     not consume); MPI_Get_count on the probe status gives the size, and a
 *     receive of exactly that size with the probed source and tag gets the
 *     message (data checked).
 *   - MPI_Iprobe polled until a (large: 1 MiB between ranks 0-3) message is
 *     there; zero-byte messages; MPI_Get_count for several types.
 *   - MPI_Probe / MPI_Iprobe on MPI_PROC_NULL return at once with source
 *     MPI_PROC_NULL, tag MPI_ANY_TAG, count 0.
 *
 * Ranks pair up as (2k, 2k+1): the even rank sends, the odd rank probes
 * (so rank 0 never probes with both wildcards).  With an odd rank count the
 * last rank only does the MPI_PROC_NULL part.  Minimum ranks: 2.
 */
#include "testutil.h"

#define TAG_GO 1
#define TAG_DONE 2

static int iprobe_none(int source, int tag, const char *what)
{
    int errs = 0, flag = -1;
    MPI_Status st;
    CHECK_RC(MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, &st));
    if (flag != 0)
        errs += TU_FAIL("%s: MPI_Iprobe found a message (source %d, tag "
                        "%d) where none was sent", what, st.MPI_SOURCE,
                        st.MPI_TAG);
    return errs;
}

static int prober(int peer, int big)
{
    int errs = 0, cnt, flag, i, k;
    int nlarge = big ? (1 << 20) + 1 : 20000;
    MPI_Status st, st2;

    /* Nothing was sent yet: the sender waits for our "go". */
    errs += iprobe_none(peer, 10, "before any send");
    errs += iprobe_none(peer, MPI_ANY_TAG, "before any send, ANY_TAG");
    errs += iprobe_none(MPI_ANY_SOURCE, 10, "before any send, ANY_SOURCE");
    errs += iprobe_none(MPI_ANY_SOURCE, MPI_ANY_TAG,
                        "before any send, ANY_SOURCE+ANY_TAG");
    CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD));

    /* Sent in order: tag 10 (37 ints), 11 (1000 doubles), 12 (empty),
     * 13 (large chars), 14 (5 long longs). */
    CHECK_RC(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    errs += tu_check_status(&st, peer, 10, MPI_INT, 37,
                            "Probe(ANY_SOURCE, ANY_TAG)");
    /* probing again finds the same message */
    CHECK_RC(MPI_Probe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st2));
    errs += tu_check_status(&st2, peer, 10, MPI_INT, 37, "second Probe");
    flag = 0;
    CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &flag, &st2));
    CHECK(flag, "Iprobe after Probe did not find the message");
    errs += tu_check_status(&st2, peer, 10, MPI_INT, 37, "Iprobe after Probe");
    cnt = -1;
    MPI_Get_count(&st, MPI_INT, &cnt);
    if (cnt == 37) {
        int *b = (int *)tu_malloc(sizeof(int) * (size_t)cnt);
        CHECK_RC(MPI_Recv(b, cnt, MPI_INT, st.MPI_SOURCE, st.MPI_TAG,
                          MPI_COMM_WORLD, &st2));
        errs += tu_check_status(&st2, peer, 10, MPI_INT, 37, "Recv(tag 10)");
        for (i = 0; i < cnt; i++)
            if (b[i] != 10 * i - 3) {
                errs += TU_FAIL("tag 10 element %d: expected %d, got %d", i,
                                10 * i - 3, b[i]);
                break;
            }
        free(b);
    }

    /* Specific tag, out of order: tag 14 before 11, 12, 13 */
    CHECK_RC(MPI_Probe(peer, 14, MPI_COMM_WORLD, &st));
    errs += tu_check_status(&st, peer, 14, MPI_LONG_LONG, 5, "Probe(tag 14)");
    {
        long long v[5];
        CHECK_RC(MPI_Recv(v, 5, MPI_LONG_LONG, peer, 14, MPI_COMM_WORLD,
                          &st));
        for (i = 0; i < 5; i++)
            CHECK(v[i] == (long long)i << 40,
                  "tag 14 element %d: expected %lld, got %lld", i,
                  (long long)i << 40, v[i]);
    }

    /* ANY_TAG now finds tag 11 (the earliest left) */
    CHECK_RC(MPI_Probe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    errs += tu_check_status(&st, peer, 11, MPI_DOUBLE, 1000,
                            "Probe(ANY_TAG) after receiving 10 and 14");
    cnt = -1;
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    if (cnt == 1000) {
        double *d = (double *)tu_malloc(sizeof(double) * 1000);
        CHECK_RC(MPI_Recv(d, cnt, MPI_DOUBLE, peer, 11, MPI_COMM_WORLD, &st));
        for (i = 0; i < 1000; i++)
            if (d[i] != 0.5 * i) {
                errs += TU_FAIL("tag 11 element %d: expected %g, got %g", i,
                                0.5 * i, d[i]);
                break;
            }
        free(d);
    }

    /* Iprobe polling for the large message on tag 13 */
    flag = 0;
    for (k = 0; !flag; k++) {
        CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, &flag, &st));
        if (!flag)
            tu_yield();
    }
    errs += tu_check_status(&st, peer, 13, MPI_CHAR, nlarge, "Iprobe(tag 13)");
    cnt = -1;
    MPI_Get_count(&st, MPI_CHAR, &cnt);
    if (cnt == nlarge) {
        char *c = (char *)tu_malloc((size_t)cnt);
        CHECK_RC(MPI_Recv(c, cnt, MPI_CHAR, peer, 13, MPI_COMM_WORLD, &st));
        errs += tu_check_data(c, (size_t)cnt, (size_t)cnt, 13, "tag 13");
        free(c);
    }

    /* the zero-byte message on tag 12 */
    CHECK_RC(MPI_Probe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    errs += tu_check_status(&st, peer, 12, MPI_INT, 0, "Probe(empty message)");
    CHECK_RC(MPI_Recv(NULL, 0, MPI_INT, peer, 12, MPI_COMM_WORLD, &st));

    /* everything consumed */
    errs += iprobe_none(peer, MPI_ANY_TAG, "after receiving everything");
    errs += iprobe_none(MPI_ANY_SOURCE, 12, "after receiving everything");
    CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_DONE, MPI_COMM_WORLD));
    return errs;
}

static int sender(int peer, int big)
{
    int errs = 0, i, nlarge = big ? (1 << 20) + 1 : 20000;
    int a[37];
    double *d = (double *)tu_malloc(sizeof(double) * 1000);
    char *c = (char *)tu_malloc((size_t)nlarge);
    long long v[5];
    MPI_Request reqs[5];

    for (i = 0; i < 37; i++)
        a[i] = 10 * i - 3;
    for (i = 0; i < 1000; i++)
        d[i] = 0.5 * i;
    tu_fill(c, (size_t)nlarge, 13);
    for (i = 0; i < 5; i++)
        v[i] = (long long)i << 40;

    CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Isend(a, 37, MPI_INT, peer, 10, MPI_COMM_WORLD, &reqs[0]));
    CHECK_RC(MPI_Isend(d, 1000, MPI_DOUBLE, peer, 11, MPI_COMM_WORLD,
                       &reqs[1]));
    CHECK_RC(MPI_Isend(NULL, 0, MPI_INT, peer, 12, MPI_COMM_WORLD, &reqs[2]));
    CHECK_RC(MPI_Isend(c, nlarge, MPI_CHAR, peer, 13, MPI_COMM_WORLD,
                       &reqs[3]));
    CHECK_RC(MPI_Isend(v, 5, MPI_LONG_LONG, peer, 14, MPI_COMM_WORLD,
                       &reqs[4]));
    CHECK_RC(MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE));
    CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_DONE, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE));
    free(d);
    free(c);
    return errs;
}

static int procnull(void)
{
    int errs = 0, flag = 0;
    MPI_Status st;
    CHECK_RC(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    errs += tu_check_procnull_status(&st, "Probe(MPI_PROC_NULL)");
    CHECK_RC(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                        &st));
    CHECK(flag, "Iprobe(MPI_PROC_NULL) gave flag 0");
    errs += tu_check_procnull_status(&st, "Iprobe(MPI_PROC_NULL)");
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, peer;

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();
    peer = rank ^ 1;
    errs += procnull();
    if (peer < size) {
        if (rank & 1)
            errs += prober(peer, tu_big_ok(rank, peer));
        else
            errs += sender(peer, tu_big_ok(rank, peer));
    }
    return tu_finish(errs);
}
