/* Collectives on communicators whose members span node processes (run it
 * with mpiexec --nodes K, also with uneven -ppn placements): every
 * collective on MPI_COMM_WORLD, on a copy in reversed rank order and on
 * one that interleaves the nodes (evens then odds), with results checked
 * against a serial computation. A non-commutative user op (composition
 * of affine maps mod a prime) checks that reductions and scans combine in
 * rank order; also in-place variants, a derived datatype, zero counts;
 * alltoall with blocks on either side of the hierarchical path's limit.
 * Any rank count; at one node process it checks the local algorithms. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coll_util.h"

enum { PRIME = 1000003, LONG = 3000 };

/* Element i of rank r's contribution: the affine map x -> a x + b. */
static void affine_of(int r, int i, int *pair)
{
    pair[0] = (r + i) % 7 + 2;
    pair[1] = (3 * r + i) % 11;
}

/* inout = in op inout, where x op y applies x first, then y. */
static void affine_compose(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const int *x = in;
    int *y = inout;
    for (int i = 0; i < *len; i++, x += 2, y += 2) {
        long long a = (long long)x[0] * y[0] % PRIME;
        long long b = ((long long)x[1] * y[0] + y[1]) % PRIME;
        y[0] = (int)a;
        y[1] = (int)b;
    }
}

/* The serial result over ranks [0, upto) of element i (identity when empty). */
static void affine_fold(int upto, int i, int *pair)
{
    pair[0] = 1;
    pair[1] = 0;
    for (int r = 0; r < upto; r++) {
        int x[2], len = 1;
        affine_of(r, i, x);
        int acc[2] = { pair[0], pair[1] };
        affine_compose(acc, x, &len, NULL);
        pair[0] = x[0];
        pair[1] = x[1];
    }
}

static int value(int r, int i) { return r * 1000 + i; }

static void check_barrier_bcast(MPI_Comm comm, int *errs)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Barrier(comm);
    int *buf = malloc(LONG * sizeof *buf);
    MPI_Datatype every_other;
    MPI_Type_vector(LONG / 2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (int root = 0; root < size; root++) {
        int counts[] = { 0, 1, LONG };
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < LONG; i++)
                buf[i] = rank == root ? value(root, i) : -1;
            MPI_Bcast(buf, counts[k], MPI_INT, root, comm);
            for (int i = 0; i < LONG; i++)
                CHECK(errs, buf[i] == (i < counts[k] || rank == root ? value(root, i) : -1),
                      "bcast root %d count %d: [%d] = %d", root, counts[k], i, buf[i]);
        }
        for (int i = 0; i < LONG; i++)
            buf[i] = rank == root ? value(root, i) : -1;
        MPI_Bcast(buf, 1, every_other, root, comm);
        for (int i = 0; i < LONG; i++)
            CHECK(errs, buf[i] == (i % 2 == 0 || rank == root ? value(root, i) : -1),
                  "bcast vector root %d: [%d] = %d", root, i, buf[i]);
    }
    MPI_Type_free(&every_other);
    free(buf);
    MPI_Barrier(comm);
}

static void check_reductions(MPI_Comm comm, MPI_Op affine, MPI_Datatype pair, int *errs)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int counts[] = { 0, 1, 5, LONG };
    int *in = malloc(2 * LONG * sizeof *in), *out = malloc(2 * LONG * sizeof *out);
    int *rcounts = malloc(size * sizeof *rcounts);
    for (int k = 0; k < 4; k++) {
        int n = counts[k], want[2];
        for (int i = 0; i < n; i++)
            affine_of(rank, i, &in[2 * i]);
        /* Reduce to every root, in place at the root half of the time. */
        for (int root = 0; root < size; root++) {
            bool in_place = rank == root && root % 2 == 1;
            memcpy(out, in, 2 * n * sizeof *in);
            MPI_Reduce(in_place ? MPI_IN_PLACE : in, out, n, pair, affine, root, comm);
            for (int i = 0; rank == root && i < n; i++) {
                affine_fold(size, i, want);
                CHECK(errs, out[2 * i] == want[0] && out[2 * i + 1] == want[1],
                      "reduce root %d count %d [%d]: (%d,%d) want (%d,%d)", root, n, i, out[2 * i],
                      out[2 * i + 1], want[0], want[1]);
            }
            int s = 0, sum = rank + n;
            MPI_Reduce(&sum, &s, 1, MPI_INT, MPI_SUM, root, comm);
            CHECK(errs, rank != root || s == size * (size - 1) / 2 + size * n, "sum reduce root %d: %d", root, s);
        }
        memcpy(out, in, 2 * n * sizeof *in);
        MPI_Allreduce(k % 2 ? MPI_IN_PLACE : in, out, n, pair, affine, comm);
        for (int i = 0; i < n; i++) {
            affine_fold(size, i, want);
            CHECK(errs, out[2 * i] == want[0] && out[2 * i + 1] == want[1], "allreduce count %d [%d]", n, i);
        }
        /* Scan and exscan. */
        memcpy(out, in, 2 * n * sizeof *in);
        MPI_Scan(k % 2 ? MPI_IN_PLACE : in, out, n, pair, affine, comm);
        for (int i = 0; i < n; i++) {
            affine_fold(rank + 1, i, want);
            CHECK(errs, out[2 * i] == want[0] && out[2 * i + 1] == want[1], "scan count %d [%d]", n, i);
        }
        memcpy(out, in, 2 * n * sizeof *in);
        MPI_Exscan(k % 2 ? MPI_IN_PLACE : in, out, n, pair, affine, comm);
        for (int i = 0; rank > 0 && i < n; i++) {
            affine_fold(rank, i, want);
            CHECK(errs, out[2 * i] == want[0] && out[2 * i + 1] == want[1], "exscan count %d [%d]", n, i);
        }
        int prefix = -1, mine = rank + 1;
        MPI_Scan(&mine, &prefix, 1, MPI_INT, MPI_SUM, comm);
        CHECK(errs, prefix == (rank + 1) * (rank + 2) / 2, "sum scan: %d", prefix);
        /* Reduce_scatter_block: n pairs each; reduce_scatter: rank r gets (r + k) % 3 pairs. */
        int *all = malloc(2 * (size_t)(size * n + 3 * size + 1) * sizeof *all);
        for (int j = 0; j < size * n; j++)
            affine_of(rank, j, &all[2 * j]);
        MPI_Reduce_scatter_block(all, out, n, pair, affine, comm);
        for (int i = 0; i < n; i++) {
            affine_fold(size, rank * n + i, want);
            CHECK(errs, out[2 * i] == want[0] && out[2 * i + 1] == want[1], "reduce_scatter_block %d [%d]", n, i);
        }
        int total = 0, first = 0;
        for (int r = 0; r < size; r++) {
            rcounts[r] = (r + k) % 3;
            first += r < rank ? rcounts[r] : 0;
            total += rcounts[r];
        }
        for (int j = 0; j < total; j++)
            affine_of(rank, j, &all[2 * j]);
        MPI_Reduce_scatter(k % 2 ? MPI_IN_PLACE : all, k % 2 ? all : out, rcounts, pair, affine, comm);
        const int *got = k % 2 ? all : out;
        for (int i = 0; i < rcounts[rank]; i++) {
            affine_fold(size, first + i, want);
            CHECK(errs, got[2 * i] == want[0] && got[2 * i + 1] == want[1], "reduce_scatter [%d]", i);
        }
        free(all);
    }
    free(rcounts);
    free(in);
    free(out);
}

static void check_moves(MPI_Comm comm, int *errs)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int counts[] = { 0, 1, 700 };
    int *all = malloc((size_t)size * 700 * sizeof *all), *mine = malloc(700 * sizeof *mine);
    int *vcounts = malloc(2 * (size_t)size * sizeof *vcounts), *displs = vcounts + size;
    for (int k = 0; k < 3; k++) {
        int n = counts[k];
        for (int root = 0; root < size; root++) {
            bool in_place = rank == root && k == 1;
            for (int i = 0; i < n; i++)
                mine[i] = value(rank, i);
            for (int j = 0; j < size * n; j++)
                all[j] = rank == root && in_place ? value(j / n, j % n) : -1;
            MPI_Gather(in_place ? MPI_IN_PLACE : mine, n, MPI_INT, all, n, MPI_INT, root, comm);
            for (int j = 0; rank == root && j < size * n; j++)
                CHECK(errs, all[j] == value(j / n, j % n), "gather root %d count %d [%d] = %d", root, n, j, all[j]);
            for (int j = 0; j < size * n; j++)
                all[j] = rank == root ? value(j / n, j % n) : -1;
            for (int i = 0; i < n; i++)
                mine[i] = -1;
            MPI_Scatter(all, n, MPI_INT, in_place ? MPI_IN_PLACE : mine, n, MPI_INT, root, comm);
            for (int i = 0; !in_place && i < n; i++)
                CHECK(errs, mine[i] == value(rank, i), "scatter root %d count %d [%d] = %d", root, n, i, mine[i]);
            /* The v variants: rank r has (r + k) % 4 elements. */
            for (int r = 0, at = 0; r < size; r++) {
                vcounts[r] = (r + k) % 4;
                displs[r] = at;
                at += vcounts[r] + 1;
            }
            for (int i = 0; i < vcounts[rank]; i++)
                mine[i] = value(rank, i);
            for (int j = 0; j < size * 5 && j < size * 700; j++)
                all[j] = -1;
            MPI_Gatherv(mine, vcounts[rank], MPI_INT, all, vcounts, displs, MPI_INT, root, comm);
            for (int r = 0; rank == root && r < size; r++)
                for (int i = 0; i < vcounts[r]; i++)
                    CHECK(errs, all[displs[r] + i] == value(r, i), "gatherv root %d from %d [%d]", root, r, i);
            /* Scatterv back, the root in place when k == 1. */
            for (int r = 0; rank == root && r < size; r++)
                for (int i = 0; i < vcounts[r]; i++)
                    all[displs[r] + i] = value(r, i) + 7;
            for (int i = 0; i < 4; i++)
                mine[i] = -1;
            bool v_in_place = rank == root && k == 1;
            MPI_Scatterv(all, vcounts, displs, MPI_INT, v_in_place ? MPI_IN_PLACE : mine, vcounts[rank], MPI_INT,
                         root, comm);
            for (int i = 0; !v_in_place && i < 4; i++)
                CHECK(errs, mine[i] == (i < vcounts[rank] ? value(rank, i) + 7 : -1), "scatterv root %d [%d] = %d",
                      root, i, mine[i]);
        }
        /* Allgatherv: rank r has (r + k) % 4 elements, gaps between the blocks; in place when k == 1. */
        for (int r = 0, at = 0; r < size; r++) {
            vcounts[r] = (r + k) % 4;
            displs[r] = at;
            at += vcounts[r] + 1;
        }
        for (int j = 0; j < size * 5; j++)
            all[j] = -1;
        for (int i = 0; i < vcounts[rank]; i++) {
            mine[i] = value(rank, i);
            if (k == 1)
                all[displs[rank] + i] = value(rank, i);
        }
        MPI_Allgatherv(k == 1 ? MPI_IN_PLACE : mine, vcounts[rank], MPI_INT, all, vcounts, displs, MPI_INT, comm);
        for (int r = 0; r < size; r++) {
            for (int i = 0; i < vcounts[r]; i++)
                CHECK(errs, all[displs[r] + i] == value(r, i), "allgatherv from %d [%d] = %d", r, i,
                      all[displs[r] + i]);
            CHECK(errs, all[displs[r] + vcounts[r]] == -1, "allgatherv wrote the gap after %d", r);
        }
        for (int i = 0; i < n; i++)
            mine[i] = value(rank, i);
        for (int j = 0; j < size * n; j++)
            all[j] = k == 2 && j / n == rank ? value(rank, j % n) : -1;
        MPI_Allgather(k == 2 ? MPI_IN_PLACE : mine, n, MPI_INT, all, n, MPI_INT, comm);
        for (int j = 0; j < size * n; j++)
            CHECK(errs, all[j] == value(j / n, j % n), "allgather count %d [%d] = %d", n, j, all[j]);
        /* Alltoall: 700 ints per block take the hierarchical path
         * (blocks up to 4 KiB), 1100 the point-to-point one. */
        int blocks[] = { n, n == 700 ? 1100 : n };
        for (int v = 0; v < 2; v++) {
            int m = blocks[v];
            int *out = malloc((size_t)size * (size_t)m * sizeof *out + 1);
            int *send = malloc((size_t)size * (size_t)m * sizeof *send + 1);
            for (int j = 0; j < size * m; j++) {
                send[j] = value(rank, j);
                out[j] = -1;
            }
            MPI_Alltoall(send, m, MPI_INT, out, m, MPI_INT, comm);
            for (int j = 0; j < size * m; j++)
                CHECK(errs, out[j] == value(j / m, rank * m + j % m), "alltoall count %d [%d] = %d", m, j, out[j]);
            free(out);
            free(send);
        }
    }
    /* Alltoall of 100 ints per block into every other int (a vector
     * receive type): the blocks are laid out by the types on both sides. */
    int *send = malloc((size_t)size * 100 * sizeof *send), *out = malloc((size_t)size * 200 * sizeof *out);
    MPI_Datatype vec, strided;
    MPI_Type_vector(100, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 200 * (MPI_Aint)sizeof(int), &strided);    /* blocks 200 ints apart */
    MPI_Type_commit(&strided);
    MPI_Type_free(&vec);
    for (int j = 0; j < size * 100; j++)
        send[j] = value(rank, j);
    for (int j = 0; j < size * 200; j++)
        out[j] = -1;
    MPI_Alltoall(send, 100, MPI_INT, out, 1, strided, comm);
    MPI_Type_free(&strided);
    for (int j = 0; j < size * 200; j++) {
        int from = j / 200, i = (j % 200) / 2;
        CHECK(errs, out[j] == (j % 2 == 0 ? value(from, rank * 100 + i) : -1), "alltoall into a vector [%d] = %d",
              j, out[j]);
    }
    free(send);
    free(out);
    free(vcounts);
    free(all);
    free(mine);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int errs = 0, rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op affine;
    MPI_Op_create(affine_compose, 0, &affine);
    MPI_Comm comms[3];
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[1]);           /* reversed */
    MPI_Comm_split(MPI_COMM_WORLD, 0, (rank % 2) * size + rank, &comms[2]); /* evens, then odds */
    bool quick = size > 16;     /* the 64-rank runs check one communicator fully */
    for (int c = 0; c < 3; c++) {
        check_barrier_bcast(comms[c], &errs);
        if (!quick || c == 2)
            check_reductions(comms[c], affine, pair, &errs);
        if (!quick || c == 0)
            check_moves(comms[c], &errs);
        MPI_Comm_free(&comms[c]);
    }
    MPI_Op_free(&affine);
    MPI_Type_free(&pair);
    return coll_finish(errs);
}
