/* Point-to-point with several threads per rank (MPI_THREAD_MULTIPLE) on a
 * unit node: each of R ranks runs T threads, all acting as that rank
 * (they share its mailbox, request pool and waiter). Thread t of every
 * rank talks to thread t of every other rank on tag 100+t, with eager and
 * rendezvous sizes, wildcard sources, probes, synchronous sends and
 * cancels of receives that cannot match; every payload, status and the
 * per-source order is checked. A lost message or wake-up hangs the test
 * (the runner's timeout), a race shows under ThreadSanitizer
 * (./configure --enable-tsan), where this is the race check of the
 * mailbox. STRAND_STRESS_SCALE=N multiplies the iteration count. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pt2pt/pt2pt.h"
#include "unit_support.h"

enum { MAX_RANKS = 4, MAX_THREADS = 4, MAX_BYTES = 2048, EAGER = 256, ITERS = 300 };


enum receive_kind { BY_RECV, BY_PROBE, BY_IRECV, RECEIVE_KINDS };

struct worker {
    int rank, size, tid, iters;
    enum receive_kind kind;
};

static int msg_bytes(int sender, int tid, int it)
{
    static const int sizes[] = { 4, 40, 200, 700, 2048 };   /* eager below EAGER, rendezvous above */
    return sizes[(it + sender + tid) % 5];
}

static unsigned char msg_byte(int sender, int tid, int it, int i)
{
    return (unsigned char)(sender * 31 + tid * 7 + it * 13 + i);
}

static void check_message(const struct worker *w, const unsigned char *buf, const MPI_Status *st, int *next_it)
{
    int src = st->MPI_SOURCE, it;
    UNIT_EXPECT(src >= 0 && src < w->size && src != w->rank);
    if (src < 0 || src >= w->size)
        return;
    memcpy(&it, buf, sizeof it);
    UNIT_EXPECT(it == next_it[src]);
    next_it[src] = it + 1;
    int n = msg_bytes(src, w->tid, it), count = -1;
    MPI_Get_count((MPI_Status *)st, MPI_BYTE, &count);
    UNIT_EXPECT(count == n);
    UNIT_EXPECT(st->MPI_TAG == 100 + w->tid);
    for (int i = (int)sizeof it; i < n; i++)
        if (buf[i] != msg_byte(src, w->tid, it, i)) {
            UNIT_EXPECT(buf[i] == msg_byte(src, w->tid, it, i));
            break;
        }
}

static void receive_all(const struct worker *w, unsigned char *rbuf, int *next_it)
{
    int n = w->size - 1, tag = 100 + w->tid;
    MPI_Status st;
    if (w->kind == BY_IRECV) {
        MPI_Request reqs[MAX_RANKS];
        for (int k = 0; k < n; k++)
            UNIT_EXPECT(MPI_Irecv(rbuf + k * MAX_BYTES, MAX_BYTES, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD,
                             &reqs[k]) == MPI_SUCCESS);
        for (int k = 0; k < n; k++) {
            UNIT_EXPECT(MPI_Wait(&reqs[k], &st) == MPI_SUCCESS);
            check_message(w, rbuf + k * MAX_BYTES, &st, next_it);
        }
        return;
    }
    for (int k = 0; k < n; k++) {
        int src = MPI_ANY_SOURCE;
        if (w->kind == BY_PROBE) {
            UNIT_EXPECT(MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
            src = st.MPI_SOURCE;
        }
        UNIT_EXPECT(MPI_Recv(rbuf, MAX_BYTES, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
        check_message(w, rbuf, &st, next_it);
    }
}

/* A receive on a tag nobody sends to, cancelled: it must leave the
 * mailbox without disturbing the other threads' matching. */
static void cancel_unmatchable(const struct worker *w)
{
    int dummy;
    MPI_Request req;
    MPI_Status st;
    UNIT_EXPECT(MPI_Irecv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 9000 + w->tid, MPI_COMM_WORLD, &req) == MPI_SUCCESS);
    UNIT_EXPECT(MPI_Cancel(&req) == MPI_SUCCESS);
    UNIT_EXPECT(MPI_Wait(&req, &st) == MPI_SUCCESS);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    UNIT_EXPECT(cancelled);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    unit_act_as(w->rank);
    unsigned char sbuf[MAX_RANKS][MAX_BYTES];
    static _Thread_local unsigned char rbuf[MAX_RANKS * MAX_BYTES];
    int next_it[MAX_RANKS] = { 0 };
    for (int it = 0; it < w->iters; it++) {
        MPI_Request sreqs[MAX_RANKS];
        int n = msg_bytes(w->rank, w->tid, it), k = 0;
        for (int d = 1; d < w->size; d++, k++) {
            int dest = (w->rank + d) % w->size;
            memcpy(sbuf[k], &it, sizeof it);
            for (int i = (int)sizeof it; i < n; i++)
                sbuf[k][i] = msg_byte(w->rank, w->tid, it, i);
            int rc = it % 7 == 3 ? MPI_Issend(sbuf[k], n, MPI_BYTE, dest, 100 + w->tid, MPI_COMM_WORLD, &sreqs[k])
                                 : MPI_Isend(sbuf[k], n, MPI_BYTE, dest, 100 + w->tid, MPI_COMM_WORLD, &sreqs[k]);
            UNIT_EXPECT(rc == MPI_SUCCESS);
        }
        receive_all(w, rbuf, next_it);
        UNIT_EXPECT(MPI_Waitall(k, sreqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        if (it % 16 == 5)
            cancel_unmatchable(w);
    }
    return NULL;
}

/* R ranks of T threads each, every thread receiving by `kind` (or each
 * thread by a different kind when kind == RECEIVE_KINDS). */
static void run_threads(int ranks, int threads, enum receive_kind kind, int cores)
{
    unit_node_create(ranks, EAGER);
    strand_node.ncores = cores;
    strand_node.spin_limit = cores >= ranks ? 100 : 1;
    atomic_store(&unit_stress_failures, 0);
    pthread_t ids[MAX_RANKS * MAX_THREADS];
    struct worker ws[MAX_RANKS * MAX_THREADS];
    for (int r = 0; r < ranks; r++)
        for (int t = 0; t < threads; t++) {
            struct worker *w = &ws[r * threads + t];
            *w = (struct worker){ r, ranks, t, unit_stress_scaled(ITERS),
                                  kind == RECEIVE_KINDS ? (enum receive_kind)(t % RECEIVE_KINDS) : kind };
            CU_ASSERT_EQUAL_FATAL(pthread_create(&ids[r * threads + t], NULL, worker_main, w), 0);
        }
    for (int i = 0; i < ranks * threads; i++)
        pthread_join(ids[i], NULL);
    for (int r = 0; r < ranks; r++) {
        struct mailbox *mb = &strand_node.ranks[r]->pt2pt.mailbox;
        UNIT_EXPECT(mb->posted_head == NULL && mb->unexpected_head == NULL);
    }
    unit_node_destroy();
    CU_ASSERT_EQUAL(atomic_load(&unit_stress_failures), 0);
}

static void test_recv_any_source(void) { run_threads(4, 4, BY_RECV, 2); }
static void test_probe_then_recv(void) { run_threads(4, 4, BY_PROBE, 2); }
static void test_irecv_wait(void) { run_threads(4, 4, BY_IRECV, 2); }
static void test_mixed_kinds(void) { run_threads(3, 3, RECEIVE_KINDS, 2); }
static void test_two_ranks_core_each(void) { run_threads(2, 4, RECEIVE_KINDS, 2); }

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("pt2pt_threads", NULL, NULL);
    CU_add_test(s, "MPI_Recv(ANY_SOURCE) from 4 threads per rank", test_recv_any_source);
    CU_add_test(s, "MPI_Probe + MPI_Recv from 4 threads per rank", test_probe_then_recv);
    CU_add_test(s, "MPI_Irecv + MPI_Wait from 4 threads per rank", test_irecv_wait);
    CU_add_test(s, "recv, probe and irecv threads mixed", test_mixed_kinds);
    CU_add_test(s, "two ranks with a core each", test_two_ranks_core_each);
    return unit_run_registry();
}
