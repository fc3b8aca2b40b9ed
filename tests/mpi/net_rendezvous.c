/*
 * net_rendezvous: large messages between node processes (run with
 * mpiexec --nodes K; ranks pair up as (r, r + size/2), which puts the
 * partners of a pair in different node processes).
 *   - 1 MiB and 3 MiB + 7 bytes both ways, received with MPI_Irecv posted
 *     before and after the message arrived (matched at arrival, or pulled
 *     when the receive is posted later).
 *   - A strided (vector) send type into a contiguous receive and the
 *     reverse: the pulled bytes are laid out by each side's datatype.
 *   - A receive shorter than the message: MPI_ERR_TRUNCATE, nothing
 *     written past the buffer.
 *   - MPI_Issend (of one int, and of nothing) to a partner that has not
 *     posted its receive does not complete (checked for 100 ms), and
 *     completes once the receive is posted.
 * Minimum ranks: 2.
 */
#include "testutil.h"

enum { TAG_A = 1, TAG_B, TAG_VEC, TAG_TRUNC, TAG_SYNC, TAG_GO, GUARD = 64 };

static int exchange(int rank, int peer, int n, int post_first)
{
    int errs = 0;
    unsigned char *out = (unsigned char *)tu_malloc((size_t)n);
    unsigned char *in = (unsigned char *)tu_malloc((size_t)n + GUARD);
    MPI_Request r[2];
    MPI_Status st[2];
    tu_fill(out, (size_t)n, (unsigned)(rank + n));
    tu_guard(in, (size_t)n + GUARD);
    if (post_first) {
        CHECK_RC(MPI_Irecv(in, n + GUARD, MPI_BYTE, peer, TAG_A, MPI_COMM_WORLD, &r[0]));
        tu_barrier();
        CHECK_RC(MPI_Isend(out, n, MPI_BYTE, peer, TAG_A, MPI_COMM_WORLD, &r[1]));
    } else {
        CHECK_RC(MPI_Isend(out, n, MPI_BYTE, peer, TAG_A, MPI_COMM_WORLD, &r[1]));
        tu_sleep_ms(20);  /* let the envelope arrive unexpected */
        CHECK_RC(MPI_Irecv(in, n + GUARD, MPI_BYTE, peer, TAG_A, MPI_COMM_WORLD, &r[0]));
    }
    CHECK_RC(MPI_Waitall(2, r, st));
    char what[64];
    snprintf(what, sizeof what, "%d bytes (%s)", n, post_first ? "posted first" : "unexpected");
    errs += tu_check_status(&st[0], peer, TAG_A, MPI_BYTE, n, what);
    errs += tu_check_data(in, (size_t)n, (size_t)n + GUARD, (unsigned)(peer + n), what);
    free(out);
    free(in);
    return errs;
}

/* Every other int of 2n ints <-> n contiguous ints. */
static int vector_exchange(int rank, int peer)
{
    int errs = 0, n = 200000;
    int *strided = (int *)tu_malloc(2 * (size_t)n * sizeof(int));
    int *packed = (int *)tu_malloc((size_t)n * sizeof(int));
    MPI_Datatype vec;
    MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    if (rank < peer) {
        for (int i = 0; i < 2 * n; i++)
            strided[i] = i % 2 == 0 ? i / 2 : -1;
        CHECK_RC(MPI_Send(strided, 1, vec, peer, TAG_VEC, MPI_COMM_WORLD));
        for (int i = 0; i < 2 * n; i++)
            strided[i] = -7;
        CHECK_RC(MPI_Recv(strided, 1, vec, peer, TAG_VEC, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 2 * n; i++) {
            int want = i % 2 == 0 ? 3 * (i / 2) : -7;
            if (strided[i] != want) {
                errs += TU_FAIL("vector receive: element %d is %d, expected %d", i, strided[i], want);
                break;
            }
        }
    } else {
        CHECK_RC(MPI_Recv(packed, n, MPI_INT, peer, TAG_VEC, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) {
            if (packed[i] != i) {
                errs += TU_FAIL("contiguous receive of a vector: element %d is %d", i, packed[i]);
                break;
            }
        }
        for (int i = 0; i < n; i++)
            packed[i] = 3 * i;
        CHECK_RC(MPI_Send(packed, n, MPI_INT, peer, TAG_VEC, MPI_COMM_WORLD));
    }
    MPI_Type_free(&vec);
    free(strided);
    free(packed);
    return errs;
}

static int truncated(int rank, int peer)
{
    int errs = 0, n = 1 << 20, cap = 1000;
    unsigned char *buf = (unsigned char *)tu_malloc((size_t)n);
    if (rank < peer) {
        tu_fill(buf, (size_t)n, 9);
        CHECK_RC(MPI_Send(buf, n, MPI_BYTE, peer, TAG_TRUNC, MPI_COMM_WORLD));
    } else {
        MPI_Status st;
        tu_guard(buf, (size_t)cap + GUARD);
        int rc = MPI_Recv(buf, cap, MPI_BYTE, peer, TAG_TRUNC, MPI_COMM_WORLD, &st);
        CHECK(tu_class(rc) == MPI_ERR_TRUNCATE, "truncated receive: class %d, expected MPI_ERR_TRUNCATE",
              tu_class(rc));
        errs += tu_check_data(buf, (size_t)cap, (size_t)cap + GUARD, 9, "truncated receive");
    }
    free(buf);
    return errs;
}

static int synchronous(int rank, int peer, int n)
{
    int errs = 0, v = 42, flag = 0;
    if (rank < peer) {
        MPI_Request req;
        CHECK_RC(MPI_Issend(&v, n, MPI_INT, peer, TAG_SYNC, MPI_COMM_WORLD, &req));
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.1 && !flag) {
            CHECK_RC(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
            tu_sleep_ms(1);
        }
        CHECK(!flag, "MPI_Issend of %d ints completed before the receiver posted its receive", n);
        CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD));
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        int got = -1, count = -1;
        MPI_Status st;
        CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Recv(&got, 1, MPI_INT, peer, TAG_SYNC, MPI_COMM_WORLD, &st));
        CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == n, "synchronous message of %d ints: count %d", n, count);
        CHECK(got == (n == 1 ? 42 : -1), "synchronous message of %d ints: got %d", n, got);
    }
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int half = size / 2;
    int peer = rank < half ? rank + half : rank - half;
    int paired = rank < 2 * half;
    for (int post_first = 0; post_first < 2; post_first++) {
        if (paired) {
            errs += exchange(rank, peer, 1 << 20, post_first);
            errs += exchange(rank, peer, 3 * (1 << 20) + 7, post_first);
        } else if (post_first) {
            tu_barrier();   /* the partners' exchanges hold one barrier each */
            tu_barrier();
        }
    }
    if (paired) {
        errs += vector_exchange(rank, peer);
        errs += truncated(rank, peer);
        errs += synchronous(rank, peer, 1);
        errs += synchronous(rank, peer, 0);
    }
    return tu_finish(errs);
}
