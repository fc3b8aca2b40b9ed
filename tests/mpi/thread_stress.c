/*
 * thread_stress: MPI from several threads per rank (MPI_THREAD_MULTIPLE),
 * the pattern of a hybrid program, checked value by value.
 *
 * Every rank runs NTHREADS threads (the main thread and NTHREADS-1
 * pthreads); thread t owns a duplicate of MPI_COMM_WORLD (made in order by
 * the main thread, so dup t is the same communicator on every rank) and
 * uses tag 100+t on it. Variants (argument 1):
 *
 *  recv   Each iteration thread t MPI_Isend's one message to thread t of
 *         every other rank (sizes cycle through 8 B, 64 B, 1000 B, 4 KiB
 *         and 64 KiB: eager and rendezvous), receives size-1 messages with
 *         MPI_Recv(MPI_ANY_SOURCE) checking payload, status and per-source
 *         order (each message carries its iteration number), MPI_Waitall's
 *         its sends, and every 10 iterations MPI_Allreduce's and
 *         MPI_Bcast's on its communicator (collectives on different
 *         communicators at once from the threads of a rank).
 *  probe  the same, receiving with MPI_Probe(ANY_SOURCE) + MPI_Recv.
 *  irecv  the same, posting MPI_Irecv(ANY_SOURCE) for all first.
 *  ssend  the same with MPI_Issend, plus an MPI_Irecv on a tag nobody
 *         sends to, cancelled, each iteration.
 *  persistent  MPI_Send_init/MPI_Recv_init(ANY_SOURCE) restarted each
 *         iteration with MPI_Startall.
 *  construct  the threads dup MPI_COMM_WORLD at the same time (each must
 *         get its own communicator; the k-th dup of every rank is one
 *         communicator), and split and dup their own communicators
 *         concurrently; sizes and an allreduce on each are checked.
 *  rma    each thread creates a window on its communicator and adds 1
 *         to a counter at every rank under MPI_Win_lock(EXCLUSIVE) /
 *         MPI_Accumulate / MPI_Win_unlock, many times; the counters are
 *         exact at the end.
 *
 * Argument 2: iterations (default 200); argument 3: how many times the
 * whole pattern repeats in one run (default 1). A lost message or wake-up
 * shows as a hang (the runner's timeout).
 * Minimum ranks: 1 (with one rank only the collectives and RMA run).
 */
#include "testutil.h"
#include <pthread.h>

#define NTHREADS 4
#define MAX_BYTES 65536

enum variant { V_RECV, V_PROBE, V_IRECV, V_SSEND, V_PERSISTENT, V_CONSTRUCT, V_RMA };

struct worker {
    int rank, size, tid;
    int iters;
    enum variant variant;
    MPI_Comm comm;
    int errs;
};

static const int sizes[] = { 8, 64, 1000, 4096, 65536 };

static int msg_bytes(int sender, int tid, int it)
{
    return sizes[(it + sender + tid) % 5];
}

static unsigned char msg_byte(int sender, int tid, int it, int i)
{
    return (unsigned char)(sender * 31 + tid * 7 + it * 13 + i);
}

static void fill(unsigned char *buf, int n, int sender, int tid, int it)
{
    /* The first four bytes carry the iteration for the order check. */
    memcpy(buf, &it, sizeof it);
    for (int i = (int)sizeof it; i < n; i++)
        buf[i] = msg_byte(sender, tid, it, i);
}

static int check_message(struct worker *w, const unsigned char *buf, const MPI_Status *st,
                         int *next_it)
{
    int src = st->MPI_SOURCE, count = -1, it;
    if (src < 0 || src >= w->size || src == w->rank)
        return TU_FAIL("thread %d: message from impossible source %d", w->tid, src);
    memcpy(&it, buf, sizeof it);
    if (it != next_it[src])
        return TU_FAIL("thread %d: from rank %d expected iteration %d, got %d", w->tid, src,
                       next_it[src], it);
    next_it[src]++;
    int n = msg_bytes(src, w->tid, it);
    MPI_Get_count((MPI_Status *)st, MPI_BYTE, &count);
    if (count != n || st->MPI_TAG != 100 + w->tid)
        return TU_FAIL("thread %d: from rank %d iteration %d: count %d tag %d, expected %d and %d",
                       w->tid, src, it, count, st->MPI_TAG, n, 100 + w->tid);
    for (int i = (int)sizeof it; i < n; i++)
        if (buf[i] != msg_byte(src, w->tid, it, i))
            return TU_FAIL("thread %d: from rank %d iteration %d: byte %d wrong", w->tid, src, it, i);
    return 0;
}

static int receive_all(struct worker *w, unsigned char *rbuf, int *next_it)
{
    int errs = 0, n = w->size - 1, tag = 100 + w->tid;
    MPI_Status st;
    if (w->variant == V_IRECV) {
        MPI_Request *reqs = tu_malloc(sizeof *reqs * (size_t)n);
        for (int k = 0; k < n; k++)
            MPI_Irecv(rbuf + (size_t)k * MAX_BYTES, MAX_BYTES, MPI_BYTE, MPI_ANY_SOURCE, tag,
                      w->comm, &reqs[k]);
        /* Requests complete in matching order (posted order), and the
         * per-source order holds along it; check them in that order. */
        for (int k = 0; k < n; k++) {
            MPI_Wait(&reqs[k], &st);
            errs += check_message(w, rbuf + (size_t)k * MAX_BYTES, &st, next_it);
        }
        free(reqs);
        return errs;
    }
    for (int k = 0; k < n; k++) {
        int src = MPI_ANY_SOURCE;
        if (w->variant == V_PROBE) {
            MPI_Probe(MPI_ANY_SOURCE, tag, w->comm, &st);
            src = st.MPI_SOURCE;
        }
        MPI_Recv(rbuf, MAX_BYTES, MPI_BYTE, src, tag, w->comm, &st);
        errs += check_message(w, rbuf, &st, next_it);
    }
    return errs;
}

/* Collectives on the thread's own communicator, values checked. */
static int collectives(struct worker *w, int it)
{
    int errs = 0;
    long mine = (long)w->rank * 1000 + w->tid + it, sum = -1;
    long want = (long)w->size * (w->size - 1) / 2 * 1000 + (long)w->size * (w->tid + it);
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, w->comm);
    CHECK(sum == want, "thread %d iteration %d: allreduce gave %ld, expected %ld", w->tid, it, sum, want);
    int root = it % w->size, value = w->rank == root ? it * 10 + w->tid : -1;
    MPI_Bcast(&value, 1, MPI_INT, root, w->comm);
    CHECK(value == it * 10 + w->tid, "thread %d iteration %d: bcast gave %d", w->tid, it, value);
    return errs;
}

/* A receive that nothing can match, cancelled: it must leave the mailbox
 * without disturbing the other threads' matching. */
static int cancel_unmatchable(struct worker *w)
{
    int errs = 0, dummy, cancelled = 0;
    MPI_Request req;
    MPI_Status st;
    MPI_Irecv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 9000 + w->tid, w->comm, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled, "thread %d: a receive nobody matched was not cancelled", w->tid);
    return errs;
}

static int messages(struct worker *w)
{
    int errs = 0, tag = 100 + w->tid;
    int peers = w->size - 1 > 0 ? w->size - 1 : 1;
    unsigned char *sbuf = tu_malloc((size_t)MAX_BYTES * (size_t)peers);
    unsigned char *rbuf = tu_malloc((size_t)MAX_BYTES * (size_t)peers);
    MPI_Request *sreqs = tu_malloc(sizeof *sreqs * (size_t)peers);
    int *next_it = tu_malloc(sizeof *next_it * (size_t)w->size);
    memset(next_it, 0, sizeof *next_it * (size_t)w->size);

    for (int it = 0; it < w->iters && errs <= 10; it++) {
        int n = msg_bytes(w->rank, w->tid, it), k = 0;
        for (int d = 1; d < w->size; d++) {
            int dest = (w->rank + d) % w->size;
            unsigned char *b = sbuf + (size_t)k * MAX_BYTES;
            fill(b, n, w->rank, w->tid, it);
            if (w->variant == V_SSEND)
                MPI_Issend(b, n, MPI_BYTE, dest, tag, w->comm, &sreqs[k++]);
            else
                MPI_Isend(b, n, MPI_BYTE, dest, tag, w->comm, &sreqs[k++]);
        }
        errs += receive_all(w, rbuf, next_it);
        MPI_Waitall(k, sreqs, MPI_STATUSES_IGNORE);
        if (w->variant == V_SSEND)
            errs += cancel_unmatchable(w);
        if (it % 10 == 9)
            errs += collectives(w, it);
    }
    free(sbuf);
    free(rbuf);
    free(sreqs);
    free(next_it);
    return errs;
}

/* Persistent requests: one send to every peer (its size fixed per sender
 * and thread) and size-1 wildcard receives, restarted every iteration. */
static int persistent(struct worker *w)
{
    int errs = 0, tag = 100 + w->tid, peers = w->size - 1;
    if (peers == 0)
        return 0;
    unsigned char *sbuf = tu_malloc((size_t)MAX_BYTES * (size_t)peers);
    unsigned char *rbuf = tu_malloc((size_t)MAX_BYTES * (size_t)peers);
    MPI_Request *sreqs = tu_malloc(sizeof *sreqs * (size_t)peers);
    MPI_Request *rreqs = tu_malloc(sizeof *rreqs * (size_t)peers);
    MPI_Status *st = tu_malloc(sizeof *st * (size_t)peers);
    int *next_it = tu_malloc(sizeof *next_it * (size_t)w->size);
    memset(next_it, 0, sizeof *next_it * (size_t)w->size);
    int n = msg_bytes(w->rank, w->tid, 0);
    for (int k = 0; k < peers; k++) {
        MPI_Send_init(sbuf + (size_t)k * MAX_BYTES, n, MPI_BYTE, (w->rank + 1 + k) % w->size, tag, w->comm,
                      &sreqs[k]);
        MPI_Recv_init(rbuf + (size_t)k * MAX_BYTES, MAX_BYTES, MPI_BYTE, MPI_ANY_SOURCE, tag, w->comm,
                      &rreqs[k]);
    }
    for (int it = 0; it < w->iters && errs <= 10; it++) {
        MPI_Startall(peers, rreqs);
        for (int k = 0; k < peers; k++)
            fill(sbuf + (size_t)k * MAX_BYTES, n, w->rank, w->tid, it);
        MPI_Startall(peers, sreqs);
        MPI_Waitall(peers, rreqs, st);
        /* Sizes are fixed per sender: check against the sender's first size. */
        for (int k = 0; k < peers; k++) {
            int src = st[k].MPI_SOURCE, count = -1, got_it = -1;
            MPI_Get_count(&st[k], MPI_BYTE, &count);
            CHECK(src >= 0 && src < w->size && count == msg_bytes(src, w->tid, 0),
                  "thread %d: persistent receive from %d of %d bytes", w->tid, src, count);
            if (src < 0 || src >= w->size)
                continue;
            memcpy(&got_it, rbuf + (size_t)k * MAX_BYTES, sizeof got_it);
            CHECK(got_it == next_it[src], "thread %d: from rank %d expected iteration %d, got %d", w->tid, src,
                  next_it[src], got_it);
            next_it[src] = got_it + 1;
        }
        MPI_Waitall(peers, sreqs, MPI_STATUSES_IGNORE);
        if (it % 10 == 9)
            errs += collectives(w, it);
    }
    for (int k = 0; k < peers; k++) {
        MPI_Request_free(&sreqs[k]);
        MPI_Request_free(&rreqs[k]);
    }
    free(sbuf);
    free(rbuf);
    free(sreqs);
    free(rreqs);
    free(st);
    free(next_it);
    return errs;
}

static int check_comm(struct worker *w, MPI_Comm c, int want_size, const char *what)
{
    int errs = 0, size = -1, one = 1, sum = -1;
    MPI_Comm_size(c, &size);
    CHECK(size == want_size, "thread %d: %s has %d members, expected %d", w->tid, what, size, want_size);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == want_size, "thread %d: allreduce on %s gave %d, expected %d", w->tid, what, sum, want_size);
    return errs;
}

/* Communicator construction from all threads at once: dups of the one
 * parent MPI_COMM_WORLD (their order decides which communicator each
 * thread gets; all are equal), and splits and dups of each thread's own
 * communicator (different parents). */
static int construct(struct worker *w)
{
    int errs = 0;
    for (int it = 0; it < w->iters && errs <= 10; it++) {
        MPI_Comm world_dup, half, own_dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &world_dup);
        errs += check_comm(w, world_dup, w->size, "a dup of MPI_COMM_WORLD");
        MPI_Comm_free(&world_dup);
        MPI_Comm_split(w->comm, w->rank % 2, -w->rank, &half);
        errs += check_comm(w, half, (w->size + 1 - w->rank % 2) / 2, "a split");
        int half_rank = -1;
        MPI_Comm_rank(half, &half_rank);
        int half_size = (w->size + 1 - w->rank % 2) / 2;
        CHECK(half_rank == half_size - 1 - w->rank / 2, "thread %d: split rank %d for rank %d", w->tid,
              half_rank, w->rank);
        MPI_Comm_dup(half, &own_dup);
        errs += check_comm(w, own_dup, half_size, "a dup of a split");
        MPI_Comm_free(&own_dup);
        MPI_Comm_free(&half);
    }
    return errs;
}

/* Passive-target RMA from every thread on its own window: every thread
 * adds 1 to a counter at every rank under an exclusive lock. */
static int rma(struct worker *w)
{
    int errs = 0;
    long *counter;
    MPI_Win win;
    MPI_Alloc_mem(sizeof *counter, MPI_INFO_NULL, &counter);
    *counter = 0;
    MPI_Win_create(counter, sizeof *counter, sizeof *counter, MPI_INFO_NULL, w->comm, &win);
    const long one = 1;
    for (int it = 0; it < w->iters; it++) {
        int target = (w->rank + it) % w->size;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
        MPI_Accumulate((void *)&one, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_SUM, win);
        MPI_Win_unlock(target, win);
    }
    MPI_Barrier(w->comm);
    MPI_Win_lock(MPI_LOCK_SHARED, w->rank, 0, win);
    long got = *counter;
    MPI_Win_unlock(w->rank, win);
    /* Rank r receives from every rank the iterations it targeted r. */
    long want = 0;
    for (int src = 0; src < w->size; src++)
        for (int it = 0; it < w->iters; it++)
            want += (src + it) % w->size == w->rank;
    CHECK(got == want, "thread %d: window counter %ld, expected %ld", w->tid, got, want);
    MPI_Win_free(&win);
    MPI_Free_mem(counter);
    return errs;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    switch (w->variant) {
    case V_PERSISTENT: w->errs = persistent(w); break;
    case V_CONSTRUCT: w->errs = construct(w); break;
    case V_RMA: w->errs = rma(w); break;
    default: w->errs = messages(w); break;
    }
    return NULL;
}

static enum variant parse_variant(const char *s)
{
    static const char *const names[] = { "recv", "probe", "irecv", "ssend", "persistent", "construct", "rma" };
    for (int v = 0; v < (int)(sizeof names / sizeof names[0]); v++)
        if (strcmp(s, names[v]) == 0)
            return (enum variant)v;
    TU_ABORT("unknown variant");
    return V_RECV;
}

int main(int argc, char **argv)
{
    int errs = 0, provided = -1, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE)
        TU_ABORT("MPI_THREAD_MULTIPLE not provided");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum variant variant = argc > 1 ? parse_variant(argv[1]) : V_RECV;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    int repeats = argc > 3 ? atoi(argv[3]) : 1;

    for (int r = 0; r < repeats && errs == 0; r++) {
        struct worker w[NTHREADS];
        pthread_t threads[NTHREADS];
        for (int t = 0; t < NTHREADS; t++) {
            w[t] = (struct worker){ .rank = rank, .size = size, .tid = t, .iters = iters,
                                    .variant = variant };
            MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm);
        }
        for (int t = 1; t < NTHREADS; t++)
            if (pthread_create(&threads[t], NULL, worker_main, &w[t]) != 0)
                TU_ABORT("pthread_create");
        worker_main(&w[0]);
        for (int t = 1; t < NTHREADS; t++)
            pthread_join(threads[t], NULL);
        for (int t = 0; t < NTHREADS; t++) {
            errs += w[t].errs;
            MPI_Comm_free(&w[t].comm);
        }
    }
    return tu_finish(errs);
}
