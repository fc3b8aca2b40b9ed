/* The staged (eager) paths of the rooted collectives and short reductions:
 * batches of back-to-back calls with rotating roots, where a root or
 * member overwrites its buffer as soon as a call returns and results are
 * checked only after the batch, so a ring entry reused before every reader
 * copied it out shows as a wrong value. Also mixes staged and direct sizes
 * on one communicator (gatherv with some blocks above the staging limit),
 * derived types on the staged path, a non-commutative user op and an
 * intercommunicator; allgather and alltoall of blocks that are staged
 * (inline or in an area) at some sizes and direct at others. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "coll_util.h"

enum { BATCH = 24, SMALL = 3, LARGE = 600 };   /* ints; LARGE x 4 B is above the staging limit */

static int value(int it, int k, int i)
{
    return it * 1000003 + k * 101 + i;
}

/* Bcasts of SMALL ints, every third one LARGE, roots rotating. */
static void bcast_batch(MPI_Comm comm, int it, int *errs)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *got = malloc(sizeof(int) * BATCH * LARGE), src[LARGE];
    for (int k = 0; k < BATCH; k++) {
        int root = (it + k * 7) % size, n = k % 3 == 2 ? LARGE : SMALL;
        int *buf = rank == root ? src : got + k * LARGE;
        if (rank == root)
            for (int i = 0; i < n; i++)
                src[i] = value(it, k, i);
        MPI_Bcast(buf, n, MPI_INT, root, comm);
        if (rank == root) {
            memcpy(got + k * LARGE, src, sizeof(int) * (size_t)n);
            memset(src, 0xff, sizeof src);  /* reusable at once */
        }
    }
    for (int k = 0; k < BATCH; k++)
        for (int i = 0, n = k % 3 == 2 ? LARGE : SMALL; i < n; i++)
            CHECK(errs, got[k * LARGE + i] == value(it, k, i), "bcast it %d call %d [%d] = %d", it, k, i,
                  got[k * LARGE + i]);
    free(got);
}

/* Gathers of 2 ints, then gathervs where every third rank sends LARGE
 * ints (direct) and the others 2 (staged); the sender overwrites at once. */
static void gather_batch(MPI_Comm comm, int it, int *errs)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r % 3 == 1 ? LARGE : 2;
        displs[r] = total;
        total += counts[r];
    }
    int *all = malloc(sizeof(int) * (size_t)total), mine[LARGE];
    for (int k = 0; k < BATCH; k++) {
        int root = (it * 5 + k) % size;
        bool v = k % 2 == 1;
        int n = v ? counts[rank] : 2;
        for (int i = 0; i < n; i++)
            mine[i] = value(it, k, rank * 7 + i);
        if (rank == root)
            memset(all, 0, sizeof(int) * (size_t)total);
        if (v)
            MPI_Gatherv(mine, n, MPI_INT, all, counts, displs, MPI_INT, root, comm);
        else
            MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, root, comm);
        memset(mine, 0xff, sizeof mine);
        if (rank != root)
            continue;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < (v ? counts[r] : 2); i++) {
                int at = v ? displs[r] + i : r * 2 + i;
                CHECK(errs, all[at] == value(it, k, r * 7 + i), "gather%s it %d call %d from %d [%d] = %d",
                      v ? "v" : "", it, k, r, i, all[at]);
            }
    }
    free(all);
    free(counts);
    free(displs);
}

/* Scatters of one int per rank (staged while size x 4 B fits the limit). */
static void scatter_batch(MPI_Comm comm, int it, int *errs)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *src = malloc(sizeof(int) * (size_t)size), got[BATCH];
    for (int k = 0; k < BATCH; k++) {
        int root = (it + k * 3) % size;
        if (rank == root)
            for (int r = 0; r < size; r++)
                src[r] = value(it, k, r);
        MPI_Scatter(src, 1, MPI_INT, &got[k], 1, MPI_INT, root, comm);
        if (rank == root)
            memset(src, 0xff, sizeof(int) * (size_t)size);
    }
    for (int k = 0; k < BATCH; k++)
        CHECK(errs, got[k] == value(it, k, rank), "scatter it %d call %d = %d", it, k, got[k]);
    free(src);
}

/* Block size (ints) of exchange call k: inline, area or direct sized
 * (large groups use small blocks only, to bound the test's memory). */
static int exchange_ints(int k, int size)
{
    static const int sizes[] = { 1, 3, 100, 1, LARGE }, large_group[] = { 1, 3, 2, 1, 3 };
    return size > 16 ? large_group[k % 5] : sizes[k % 5];
}

/* Allgathers (every fourth in place) and alltoalls; send buffers are
 * overwritten as soon as a call returns, results checked after the batch. */
static void exchange_batch(MPI_Comm comm, int it, int *errs)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t per_call = (size_t)size * (size_t)exchange_ints(4, size);
    int *gathered = malloc(sizeof(int) * BATCH * per_call), *swapped = malloc(sizeof(int) * BATCH * per_call);
    int *src = malloc(sizeof(int) * per_call);
    for (int k = 0; k < BATCH; k++) {
        int n = exchange_ints(k, size);
        int *g = gathered + k * per_call, *a = swapped + k * per_call;
        bool in_place = k % 4 == 3;
        int *mine = in_place ? g + rank * n : src;
        for (int i = 0; i < n; i++)
            mine[i] = value(it, k, rank * 1000 + i);
        MPI_Allgather(in_place ? MPI_IN_PLACE : src, n, MPI_INT, g, n, MPI_INT, comm);
        for (int p = 0; p < size; p++)
            for (int i = 0; i < n; i++)
                src[p * n + i] = value(it, k, (rank * size + p) * 7 + i);
        MPI_Alltoall(src, n, MPI_INT, a, n, MPI_INT, comm);
        memset(src, 0xff, sizeof(int) * per_call);
    }
    for (int k = 0; k < BATCH; k++) {
        int n = exchange_ints(k, size);
        const int *g = gathered + k * per_call, *a = swapped + k * per_call;
        for (int p = 0; p < size; p++)
            for (int i = 0; i < n; i++) {
                CHECK(errs, g[p * n + i] == value(it, k, p * 1000 + i), "allgather it %d call %d from %d [%d] = %d",
                      it, k, p, i, g[p * n + i]);
                CHECK(errs, a[p * n + i] == value(it, k, (p * size + rank) * 7 + i),
                      "alltoall it %d call %d from %d [%d] = %d", it, k, p, i, a[p * n + i]);
            }
    }
    free(src);
    free(swapped);
    free(gathered);
}

/* A strided type (every other int) on one side, plain ints on the other. */
static void derived_batch(MPI_Comm comm, int it, int *errs)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype vector, strided;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vector);
    /* Extent 6 ints (the vector alone spans 5), so gathered blocks tile. */
    MPI_Type_create_resized(vector, 0, 6 * (MPI_Aint)sizeof(int), &strided);
    MPI_Type_free(&vector);
    MPI_Type_commit(&strided);
    for (int k = 0; k < 4; k++) {
        int root = (it + k) % size, wide[6], plain[3];
        for (int i = 0; i < 6; i++)
            wide[i] = rank == root ? value(it, k, i) : -1;
        /* Bcast: the root sends strided, members receive 3 plain ints. */
        if (rank == root)
            MPI_Bcast(wide, 1, strided, root, comm);
        else
            MPI_Bcast(plain, 3, MPI_INT, root, comm);
        if (rank != root)
            for (int i = 0; i < 3; i++)
                CHECK(errs, plain[i] == value(it, k, 2 * i), "strided bcast it %d [%d] = %d", it, i, plain[i]);
        /* Gather: members send 3 plain ints, the root receives strided. */
        int *all = malloc(sizeof(int) * 6 * (size_t)size);
        for (int i = 0; i < 3; i++)
            plain[i] = value(it, k, rank * 3 + i);
        for (int i = 0; i < 6 * size; i++)
            all[i] = -7;
        MPI_Gather(plain, 3, MPI_INT, all, 1, strided, root, comm);
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < 6; i++) {
                    int want = i % 2 == 0 ? value(it, k, r * 3 + i / 2) : -7;
                    CHECK(errs, all[6 * r + i] == want, "strided gather it %d from %d [%d] = %d", it, r, i,
                          all[6 * r + i]);
                }
        free(all);
    }
    MPI_Type_free(&strided);
}

/* Affine maps x -> a x + b under composition: associative, not commutative. */
typedef struct { unsigned a, b; } affine;

static void compose(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    affine *f = in, *g = inout;
    for (int i = 0; i < *len; i++) {
        /* in is the lower rank: apply f, then g. */
        affine h = { f[i].a * g[i].a, f[i].b * g[i].a + g[i].b };
        g[i] = h;
    }
}

static affine affine_of(int it, int k, int r, int i)
{
    return (affine){ (unsigned)(2 * r + 3 + k + i), (unsigned)(r * 5 + it + i) };
}

/* Reduce (staged) with sum and a non-commutative op, in place at the root
 * every other call; allreduce with the same op. */
static void reduce_batch(MPI_Comm comm, int it, int *errs)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &pair);
    MPI_Type_commit(&pair);
    MPI_Op op;
    MPI_Op_create(compose, 0, &op);
    for (int k = 0; k < BATCH; k++) {
        int root = (it * 3 + k) % size;
        int in[SMALL], out[SMALL];
        for (int i = 0; i < SMALL; i++)
            in[i] = out[i] = value(it, k, i) + rank;
        bool in_place = rank == root && k % 2 == 1;
        MPI_Reduce(in_place ? MPI_IN_PLACE : in, out, SMALL, MPI_INT, MPI_SUM, root, comm);
        memset(in, 0xff, sizeof in);
        if (rank == root)
            for (int i = 0; i < SMALL; i++) {
                int want = size * value(it, k, i) + size * (size - 1) / 2;
                CHECK(errs, out[i] == want, "reduce sum it %d call %d [%d] = %d, want %d", it, k, i, out[i], want);
            }
        affine f[2], g[2], want[2];
        for (int i = 0; i < 2; i++) {
            f[i] = affine_of(it, k, rank, i);
            want[i] = affine_of(it, k, 0, i);
            for (int r = 1; r < size; r++) {
                affine x = affine_of(it, k, r, i), h = { want[i].a * x.a, want[i].b * x.a + x.b };
                want[i] = h;
            }
        }
        if (k % 2 == 0) {
            MPI_Reduce(f, g, 2, pair, op, root, comm);
            if (rank != root)
                continue;
        } else {
            MPI_Allreduce(f, g, 2, pair, op, comm);
        }
        for (int i = 0; i < 2; i++)
            CHECK(errs, g[i].a == want[i].a && g[i].b == want[i].b, "compose it %d call %d [%d] = (%u,%u)", it, k,
                  i, g[i].a, g[i].b);
    }
    MPI_Op_free(&op);
    MPI_Type_free(&pair);
}

/* Bcast and gather from the low half to the high half and back. */
static void inter_batch(MPI_Comm inter, int low, int it, int *errs)
{
    int rank, size, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    int *all = malloc(sizeof(int) * (size_t)rsize);
    for (int k = 0; k < BATCH; k++) {
        bool from_low = k % 2 == 0;
        int sender = (it + k) % (from_low ? (low ? size : rsize) : (low ? rsize : size));
        bool sending = from_low == (bool)low;
        int v = value(it, k, 0), got = -1;
        int root = sending ? (rank == sender ? MPI_ROOT : MPI_PROC_NULL) : sender;
        MPI_Bcast(sending ? &v : &got, 1, MPI_INT, root, inter);
        if (!sending)
            CHECK(errs, got == v, "inter bcast it %d call %d = %d", it, k, got);
        int mine = value(it, k, rank);
        MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, root, inter);
        if (root == MPI_ROOT)
            for (int r = 0; r < rsize; r++)
                CHECK(errs, all[r] == value(it, k, r), "inter gather it %d call %d [%d] = %d", it, k, r, all[r]);
    }
    free(all);
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = size >= 256 ? 1 : size >= 64 ? 3 : 20;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int it = 0; it < iters; it++) {
        MPI_Comm comm = it % 2 == 0 ? MPI_COMM_WORLD : dup;
        bcast_batch(comm, it, &errs);
        gather_batch(comm, it, &errs);
        scatter_batch(comm, it, &errs);
        derived_batch(comm, it, &errs);
        exchange_batch(comm, it, &errs);
        reduce_batch(comm, it, &errs);
    }
    if (size >= 2) {
        int low = rank < size / 2;
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 7, &inter);
        for (int it = 0; it < iters; it++)
            inter_batch(inter, low, it, &errs);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    MPI_Comm_free(&dup);
    return coll_finish(errs);
}
