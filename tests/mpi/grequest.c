/*
 * grequest: generalized requests (MPI_Grequest_start / MPI_Grequest_complete).
 *   1. Not complete: MPI_Test gives flag = 0 and calls no callback.  After
 *      MPI_Grequest_complete, MPI_Test completes it: query_fn is called once
 *      (with the extra_state given at start) and fills the status
 *      (MPI_SOURCE, MPI_TAG, MPI_Status_set_elements, not cancelled), then
 *      free_fn once, after query_fn; the request becomes MPI_REQUEST_NULL.
 *   2. MPI_Grequest_complete from another thread (when MPI_THREAD_MULTIPLE
 *      is provided; otherwise later from the main thread) while the main
 *      thread is in MPI_Wait.  MPI_Wait with MPI_STATUS_IGNORE still calls
 *      query_fn.
 *   3. MPI_Cancel before completion: cancel_fn gets complete = false;
 *      query_fn uses MPI_Status_set_cancelled, and MPI_Test_cancelled is
 *      then true.  MPI_Cancel after completion: cancel_fn gets complete =
 *      true, and the request is not cancelled.
 *   4. MPI_Request_free before completion: free_fn runs only when
 *      MPI_Grequest_complete is called (and then exactly once).
 *   5. A generalized request mixed with a point-to-point receive and
 *      MPI_REQUEST_NULL in MPI_Waitall and MPI_Waitany.
 *
 * Each rank works alone (messages only to itself).  Minimum ranks: 1.
 */
#include "testutil.h"
#include <pthread.h>

struct gstate {
    int id;
    int query_calls, free_calls, cancel_calls;
    int cancel_complete_arg;
    int free_before_query;
    int cancelled;
    int elements;
    MPI_Request req; /* for the completing thread */
};

static int query_fn(void *extra, MPI_Status *status)
{
    struct gstate *s = (struct gstate *)extra;
    s->query_calls++;
    status->MPI_SOURCE = 1000 + s->id;
    status->MPI_TAG = 2000 + s->id;
    MPI_Status_set_elements(status, MPI_INT, s->elements);
    MPI_Status_set_cancelled(status, s->cancelled);
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    struct gstate *s = (struct gstate *)extra;
    if (s->query_calls == 0)
        s->free_before_query = 1;
    s->free_calls++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    struct gstate *s = (struct gstate *)extra;
    s->cancel_calls++;
    s->cancel_complete_arg = complete;
    if (!complete)
        s->cancelled = 1;
    return MPI_SUCCESS;
}

static void init_state(struct gstate *s, int id, int elements)
{
    memset(s, 0, sizeof *s);
    s->id = id;
    s->elements = elements;
    s->cancel_complete_arg = -1;
}

static int check_status(MPI_Status *st, const struct gstate *s,
                        const char *what)
{
    int errs = 0, cnt = -1, cancelled = -1;
    CHECK(st->MPI_SOURCE == 1000 + s->id && st->MPI_TAG == 2000 + s->id,
          "%s: status source/tag %d/%d, query_fn set %d/%d", what,
          st->MPI_SOURCE, st->MPI_TAG, 1000 + s->id, 2000 + s->id);
    MPI_Get_elements(st, MPI_INT, &cnt);
    CHECK(cnt == s->elements, "%s: Get_elements %d, query_fn set %d", what,
          cnt, s->elements);
    cnt = -1;
    MPI_Get_count(st, MPI_INT, &cnt);
    CHECK(cnt == s->elements, "%s: Get_count %d, query_fn set %d", what, cnt,
          s->elements);
    MPI_Test_cancelled(st, &cancelled);
    CHECK(!cancelled == !s->cancelled, "%s: Test_cancelled %d, expected %d",
          what, cancelled, s->cancelled);
    return errs;
}

static int check_calls(const struct gstate *s, int q, int f, int c,
                       const char *what)
{
    int errs = 0;
    CHECK(s->query_calls == q && s->free_calls == f && s->cancel_calls == c,
          "%s: query/free/cancel called %d/%d/%d times, expected %d/%d/%d",
          what, s->query_calls, s->free_calls, s->cancel_calls, q, f, c);
    CHECK(!s->free_before_query || q == 0,
          "%s: free_fn was called before query_fn", what);
    return errs;
}

static void *completer(void *arg)
{
    struct gstate *s = (struct gstate *)arg;
    tu_sleep_ms(20);
    MPI_Grequest_complete(s->req);
    return NULL;
}

int main(int argc, char **argv)
{
    int errs = 0, provided = -1, flag, rank;
    struct gstate s1, s2, s3, s4, s5, s6;
    MPI_Request req;
    MPI_Status st;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    rank = tu_rank();

    /* 1. Test before and after completion */
    init_state(&s1, 1, 7);
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s1, &req));
    CHECK(req != MPI_REQUEST_NULL, "Grequest_start gave MPI_REQUEST_NULL");
    flag = -1;
    CHECK_RC(MPI_Test(&req, &flag, &st));
    CHECK_INT("Test on an incomplete generalized request: flag", 0, flag);
    errs += check_calls(&s1, 0, 0, 0, "incomplete generalized request");
    CHECK_RC(MPI_Grequest_complete(req));
    errs += check_calls(&s1, 0, 0, 0, "after Grequest_complete");
    flag = 0;
    CHECK_RC(MPI_Test(&req, &flag, &st));
    CHECK(flag, "Test after Grequest_complete: flag 0");
    CHECK(req == MPI_REQUEST_NULL, "Test did not free the request");
    errs += check_calls(&s1, 1, 1, 0, "completed by Test");
    errs += check_status(&st, &s1, "completed by Test");

    /* 2. completed by another thread while we wait */
    init_state(&s2, 2, 3);
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s2, &req));
    s2.req = req;
    if (provided == MPI_THREAD_MULTIPLE) {
        pthread_t th;
        if (pthread_create(&th, NULL, completer, &s2) != 0)
            TU_ABORT("pthread_create failed");
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
        pthread_join(th, NULL);
    } else {
        CHECK_RC(MPI_Grequest_complete(req));
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    CHECK(req == MPI_REQUEST_NULL, "Wait did not free the request");
    errs += check_calls(&s2, 1, 1, 0, "Wait with MPI_STATUS_IGNORE");

    /* 3a. cancel before completion */
    init_state(&s3, 3, 0);
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s3, &req));
    CHECK_RC(MPI_Cancel(&req));
    CHECK(s3.cancel_calls == 1 && s3.cancel_complete_arg == 0,
          "cancel before completion: cancel_fn calls %d, complete = %d",
          s3.cancel_calls, s3.cancel_complete_arg);
    CHECK_RC(MPI_Grequest_complete(req));
    CHECK_RC(MPI_Wait(&req, &st));
    errs += check_calls(&s3, 1, 1, 1, "cancelled before completion");
    errs += check_status(&st, &s3, "cancelled before completion");

    /* 3b. cancel after completion */
    init_state(&s4, 4, 2);
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s4, &req));
    CHECK_RC(MPI_Grequest_complete(req));
    CHECK_RC(MPI_Cancel(&req));
    CHECK(s4.cancel_calls == 1 && s4.cancel_complete_arg != 0,
          "cancel after completion: cancel_fn calls %d, complete = %d",
          s4.cancel_calls, s4.cancel_complete_arg);
    CHECK_RC(MPI_Wait(&req, &st));
    errs += check_calls(&s4, 1, 1, 1, "cancelled after completion");
    errs += check_status(&st, &s4, "cancelled after completion");

    /* 4. Request_free before completion */
    init_state(&s5, 5, 1);
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s5, &req));
    s5.req = req;
    CHECK_RC(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "Request_free did not set "
          "MPI_REQUEST_NULL");
    CHECK(s5.free_calls == 0 || TU_MPICH_GREQUEST_EARLY_FREE,
          "free_fn called by Request_free before Grequest_complete");
    CHECK_RC(MPI_Grequest_complete(s5.req));
    CHECK(s5.free_calls == 1, "free_fn called %d times after "
          "Request_free + Grequest_complete", s5.free_calls);

    /* 5. mixed with point-to-point in Waitall and Waitany */
    {
        MPI_Request reqs[3];
        MPI_Status sts[3];
        int v = 0, out = 4321, idx = -1, k, seen_g = 0, seen_p = 0;
        init_state(&s6, 6, 9);
        CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s6,
                                    &reqs[0]));
        reqs[1] = MPI_REQUEST_NULL;
        CHECK_RC(MPI_Irecv(&v, 1, MPI_INT, rank, 5, MPI_COMM_WORLD,
                           &reqs[2]));
        CHECK_RC(MPI_Send(&out, 1, MPI_INT, rank, 5, MPI_COMM_WORLD));
        CHECK_RC(MPI_Grequest_complete(reqs[0]));
        CHECK_RC(MPI_Waitall(3, reqs, sts));
        errs += check_calls(&s6, 1, 1, 0, "Waitall");
        errs += check_status(&sts[0], &s6, "Waitall [0]");
        errs += tu_check_empty_status(&sts[1], "Waitall null entry");
        errs += tu_check_status(&sts[2], rank, 5, MPI_INT, 1, "Waitall [2]");
        CHECK_INT("Waitall point-to-point data", 4321, v);

        init_state(&s6, 6, 4);
        CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s6,
                                    &reqs[1]));
        reqs[0] = MPI_REQUEST_NULL;
        CHECK_RC(MPI_Irecv(&v, 1, MPI_INT, rank, 6, MPI_COMM_WORLD,
                           &reqs[2]));
        CHECK_RC(MPI_Send(&out, 1, MPI_INT, rank, 6, MPI_COMM_WORLD));
        CHECK_RC(MPI_Grequest_complete(reqs[1]));
        for (k = 0; k < 2; k++) {
            CHECK_RC(MPI_Waitany(3, reqs, &idx, &st));
            if (idx == 1) {
                seen_g++;
                errs += check_status(&st, &s6, "Waitany generalized");
            } else if (idx == 2) {
                seen_p++;
                errs += tu_check_status(&st, rank, 6, MPI_INT, 1,
                                        "Waitany point-to-point");
            } else
                errs += TU_FAIL("Waitany returned index %d", idx);
        }
        CHECK(seen_g == 1 && seen_p == 1, "Waitany completed the generalized "
              "request %d times and the receive %d times", seen_g, seen_p);
        errs += check_calls(&s6, 1, 1, 0, "Waitany");
    }

    return tu_finish(errs);
}
