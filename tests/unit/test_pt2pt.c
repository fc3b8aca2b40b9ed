/* The matching engine and request life cycle, driven from one thread by
 * switching which rank the thread acts as. */
#include <stdlib.h>
#include <string.h>

#include "pt2pt/pt2pt.h"
#include "unit_support.h"

enum { EAGER_LIMIT = 1024 };

static void setup(void) { unit_node_create(3, EAGER_LIMIT); }
static void teardown(void) { unit_node_destroy(); }

static void test_unexpected_eager_then_receive(void)
{
    setup();
    int out[4] = { 1, 2, 3, 4 }, in[4] = { 0 };
    unit_act_as(0);
    CU_ASSERT_EQUAL(MPI_Send(out, 4, MPI_INT, 1, 7, MPI_COMM_WORLD), MPI_SUCCESS);
    out[0] = 99; /* eager: the message must already be copied */
    unit_act_as(1);
    MPI_Status st;
    CU_ASSERT_EQUAL(MPI_Recv(in, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    CU_ASSERT_EQUAL(in[0], 1);
    CU_ASSERT_EQUAL(in[3], 4);
    CU_ASSERT_EQUAL(st.MPI_SOURCE, 0);
    CU_ASSERT_EQUAL(st.MPI_TAG, 7);
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    CU_ASSERT_EQUAL(count, 4);
    teardown();
}

static void test_posted_then_send_copies_directly(void)
{
    setup();
    double in[8] = { 0 }, out[8];
    for (int i = 0; i < 8; i++)
        out[i] = i * 1.5;
    unit_act_as(1);
    MPI_Request req;
    CU_ASSERT_EQUAL(MPI_Irecv(in, 8, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL(strand_self->pt2pt.mailbox.posted_head);
    unit_act_as(2);
    CU_ASSERT_EQUAL(MPI_Send(out, 8, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD), MPI_SUCCESS);
    CU_ASSERT_PTR_NULL(strand_node.ranks[1]->pt2pt.mailbox.unexpected_head);
    unit_act_as(1);
    int flag = 0;
    MPI_Status st;
    CU_ASSERT_EQUAL(MPI_Test(&req, &flag, &st), MPI_SUCCESS);
    CU_ASSERT_TRUE(flag);
    CU_ASSERT_EQUAL(req, MPI_REQUEST_NULL);
    CU_ASSERT_EQUAL(st.MPI_SOURCE, 2);
    CU_ASSERT_EQUAL(st.MPI_TAG, 3);
    CU_ASSERT_EQUAL(memcmp(in, out, sizeof in), 0);
    teardown();
}

static void test_order_per_sender_and_tag(void)
{
    setup();
    unit_act_as(0);
    for (int i = 0; i < 20; i++)
        MPI_Send(&i, 1, MPI_INT, 2, i % 2, MPI_COMM_WORLD);
    unit_act_as(2);
    int v;
    for (int i = 1; i < 20; i += 2) {   /* tag 1 first: 1, 3, 5, ... */
        MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CU_ASSERT_EQUAL(v, i);
    }
    for (int i = 0; i < 20; i += 2) {
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CU_ASSERT_EQUAL(v, i);
    }
    CU_ASSERT_PTR_NULL(strand_self->pt2pt.mailbox.unexpected_head);
    teardown();
}

static void test_rendezvous_completes_sender_on_receive(void)
{
    setup();
    size_t n = 4 * EAGER_LIMIT;
    char *out = malloc(n), *in = calloc(1, n);
    memset(out, 0x5a, n);
    unit_act_as(0);
    MPI_Request sreq;
    MPI_Isend(out, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &sreq);
    int flag = 1;
    MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE);
    CU_ASSERT_FALSE(flag); /* large: waits for the receiver */
    unit_act_as(1);
    MPI_Recv(in, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CU_ASSERT_EQUAL(memcmp(in, out, n), 0);
    unit_act_as(0);
    MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE);
    CU_ASSERT_TRUE(flag);
    free(out);
    free(in);
    teardown();
}

static void test_truncation_reports_error(void)
{
    setup();
    unit_act_as(1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unit_act_as(0);
    int out[3] = { 1, 2, 3 }, in[2] = { 0, 0 };
    MPI_Send(out, 3, MPI_INT, 1, 0, MPI_COMM_WORLD);
    unit_act_as(1);
    MPI_Status st;
    int rc = MPI_Recv(in, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
    CU_ASSERT_EQUAL(rc, MPI_ERR_TRUNCATE);
    CU_ASSERT_EQUAL(in[0], 1);
    CU_ASSERT_EQUAL(in[1], 2);
    teardown();
}

static void test_cancel_posted_receive(void)
{
    setup();
    unit_act_as(1);
    int v = 0;
    MPI_Request req;
    MPI_Irecv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &req);
    CU_ASSERT_EQUAL(MPI_Cancel(&req), MPI_SUCCESS);
    MPI_Status st;
    MPI_Wait(&req, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    CU_ASSERT_TRUE(cancelled);
    CU_ASSERT_PTR_NULL(strand_self->pt2pt.mailbox.posted_head);
    teardown();
}

static void test_cancel_unmatched_synchronous_send(void)
{
    setup();
    unit_act_as(0);
    int v = 42;
    MPI_Request req;
    MPI_Issend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Status st;
    MPI_Wait(&req, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    CU_ASSERT_TRUE(cancelled);
    CU_ASSERT_PTR_NULL(strand_node.ranks[1]->pt2pt.mailbox.unexpected_head);
    teardown();
}

static void test_probe_sees_without_receiving(void)
{
    setup();
    unit_act_as(2);
    int flag = 1;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CU_ASSERT_FALSE(flag);
    unit_act_as(0);
    long data[5] = { 0 };
    MPI_Send(data, 5, MPI_LONG, 2, 11, MPI_COMM_WORLD);
    unit_act_as(2);
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CU_ASSERT_TRUE(flag);
    CU_ASSERT_EQUAL(st.MPI_TAG, 11);
    int count;
    MPI_Get_count(&st, MPI_LONG, &count);
    CU_ASSERT_EQUAL(count, 5);
    CU_ASSERT_PTR_NOT_NULL(strand_self->pt2pt.mailbox.unexpected_head);
    teardown();
}

static void test_request_pool_reuses_objects(void)
{
    setup();
    unit_act_as(0);
    int v = 1;
    MPI_Request first, again;
    MPI_Isend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &first);
    MPI_Request saved = first;
    MPI_Wait(&first, MPI_STATUS_IGNORE);
    MPI_Isend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &again);
    CU_ASSERT_PTR_EQUAL(again, saved);
    MPI_Wait(&again, MPI_STATUS_IGNORE);
    teardown();
}

static void test_persistent_request_restarts(void)
{
    setup();
    int out = 0, in = -1;
    MPI_Request sreq, rreq;
    unit_act_as(0);
    MPI_Send_init(&out, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &sreq);
    unit_act_as(1);
    MPI_Recv_init(&in, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, &rreq);
    for (int i = 0; i < 5; i++) {
        unit_act_as(1);
        MPI_Start(&rreq);
        unit_act_as(0);
        out = i * 10;
        MPI_Start(&sreq);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        CU_ASSERT_PTR_NOT_NULL(sreq);
        unit_act_as(1);
        MPI_Wait(&rreq, MPI_STATUS_IGNORE);
        CU_ASSERT_EQUAL(in, i * 10);
    }
    MPI_Request_free(&rreq);
    unit_act_as(0);
    MPI_Request_free(&sreq);
    CU_ASSERT_EQUAL(sreq, MPI_REQUEST_NULL);
    teardown();
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("pt2pt", NULL, NULL);
    CU_add_test(s, "unexpected eager then receive", test_unexpected_eager_then_receive);
    CU_add_test(s, "posted receive: sender copies directly", test_posted_then_send_copies_directly);
    CU_add_test(s, "order per sender and tag", test_order_per_sender_and_tag);
    CU_add_test(s, "rendezvous completes the sender", test_rendezvous_completes_sender_on_receive);
    CU_add_test(s, "truncation", test_truncation_reports_error);
    CU_add_test(s, "cancel posted receive", test_cancel_posted_receive);
    CU_add_test(s, "cancel unmatched synchronous send", test_cancel_unmatched_synchronous_send);
    CU_add_test(s, "probe", test_probe_sees_without_receiving);
    CU_add_test(s, "request pool reuse", test_request_pool_reuses_objects);
    CU_add_test(s, "persistent restart", test_persistent_request_restarts);
    return unit_run_registry();
}
