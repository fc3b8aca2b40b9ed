/* Every collective on an intercommunicator (MPI-2.2 §5.2.2), values
 * checked: the groups may have different sizes, roots sit in either group
 * (MPI_ROOT / MPI_PROC_NULL), data flows between the groups; scan/exscan
 * are errors. `g` (0 or 1) names the caller's group, the other is 1 - g;
 * both groups call it at the same time. Shared by coll_inter.c
 * (intercommunicators of one job) and dpm_jobs.c (two jobs connected
 * through a port). Returns the number of failed checks. */
#ifndef INTER_CHECKS_H
#define INTER_CHECKS_H

#include <stdlib.h>
#include <string.h>
#include "coll_util.h"

static int inter_id(int group, int rank) { return group * 1000 + rank; }

static void inter_affine_like(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int *a = in, *b = inout;   /* non-commutative: keeps the left operand's digits first */
    (void)type;
    for (int i = 0; i < *len; i++)
        b[i] = (a[i] * 7 + b[i]) % 100003;
}

static int inter_collectives_check(MPI_Comm inter, int g)
{
    int errs = 0;
    int rank, lsize, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    int other = 1 - g;
    size_t big = (size_t)(lsize + 1) * (size_t)(rsize + 1) * 2 + 64;
    int *a = calloc(big, sizeof(int)), *b = calloc(big, sizeof(int));
    int *counts = calloc(big, sizeof(int)), *displs = calloc(big, sizeof(int));

    MPI_Barrier(inter);
    for (int rg = 0; rg < 2; rg++) {
        /* Root: the last rank of group rg. */
        int rootr = (rg == g ? lsize : rsize) - 1;
        int am_root_group = g == rg;
        int root = am_root_group ? (rank == rootr ? MPI_ROOT : MPI_PROC_NULL) : rootr;
        /* Bcast */
        int v = root == MPI_ROOT ? 4242 + rg : -1;
        MPI_Bcast(&v, 1, MPI_INT, root, inter);
        if (!am_root_group)
            CHECK(&errs, v == 4242 + rg, "bcast from group %d gave %d", rg, v);
        else if (root == MPI_PROC_NULL)
            CHECK(&errs, v == -1, "bcast changed a MPI_PROC_NULL rank's buffer");
        /* Gather: the root receives 2 ints from every remote rank. */
        int mine[2] = { inter_id(g, rank), inter_id(g, rank) + 1 };
        memset(a, 0xff, big * sizeof(int));
        MPI_Gather(mine, 2, MPI_INT, a, 2, MPI_INT, root, inter);
        if (root == MPI_ROOT)
            for (int r = 0; r < rsize; r++)
                CHECK(&errs, a[2 * r] == inter_id(other, r) && a[2 * r + 1] == inter_id(other, r) + 1, "gather from %d: %d %d",
                      r, a[2 * r], a[2 * r + 1]);
        /* Gatherv: r % 3 + 1 ints from remote rank r, reversed. */
        int total = 0;
        for (int r = rsize - 1; r >= 0; r--) {
            counts[r] = r % 3 + 1;
            displs[r] = total;
            total += counts[r];
        }
        int mv[3] = { inter_id(g, rank), inter_id(g, rank) * 2, inter_id(g, rank) * 3 };
        MPI_Gatherv(mv, rank % 3 + 1, MPI_INT, a, counts, displs, MPI_INT, root, inter);
        if (root == MPI_ROOT)
            for (int r = 0; r < rsize; r++)
                for (int i = 0; i < counts[r]; i++)
                    CHECK(&errs, a[displs[r] + i] == inter_id(other, r) * (i + 1), "gatherv from %d[%d]", r, i);
        /* Scatter and scatterv: the root sends to every remote rank. */
        if (root == MPI_ROOT)
            for (int r = 0; r < rsize * 2; r++)
                a[r] = inter_id(other, r / 2) * 10 + r % 2;
        int got[3] = { -1, -1, -1 };
        MPI_Scatter(a, 2, MPI_INT, got, 2, MPI_INT, root, inter);
        if (!am_root_group)
            CHECK(&errs, got[0] == inter_id(g, rank) * 10 && got[1] == inter_id(g, rank) * 10 + 1, "scatter gave %d %d", got[0],
                  got[1]);
        if (root == MPI_ROOT)
            for (int r = 0; r < rsize; r++)
                for (int i = 0; i < counts[r]; i++)
                    a[displs[r] + i] = inter_id(other, r) + i;
        MPI_Scatterv(a, counts, displs, MPI_INT, got, rank % 3 + 1, MPI_INT, root, inter);
        if (!am_root_group)
            for (int i = 0; i < rank % 3 + 1; i++)
                CHECK(&errs, got[i] == inter_id(g, rank) + i, "scatterv [%d] = %d", i, got[i]);
        /* Reduce: sum and a non-commutative op over the remote group, in rank order. */
        int in[2] = { inter_id(g, rank), rank + 1 }, out[2] = { -1, -1 };
        MPI_Reduce(in, out, 2, MPI_INT, MPI_SUM, root, inter);
        if (root == MPI_ROOT) {
            int s0 = 0, s1 = 0;
            for (int r = 0; r < rsize; r++) {
                s0 += inter_id(other, r);
                s1 += r + 1;
            }
            CHECK(&errs, out[0] == s0 && out[1] == s1, "reduce gave %d %d, expected %d %d", out[0], out[1], s0, s1);
        }
        MPI_Op nc;
        MPI_Op_create(inter_affine_like, 0, &nc);
        MPI_Reduce(&in[1], &out[0], 1, MPI_INT, nc, root, inter);
        if (root == MPI_ROOT) {
            int acc = rsize;   /* x_0 op (x_1 op ... x_{n-1}), with x_r = r + 1 */
            for (int r = rsize - 2; r >= 0; r--)
                acc = ((r + 1) * 7 + acc) % 100003;
            CHECK(&errs, out[0] == acc, "non-commutative reduce gave %d, expected %d", out[0], acc);
        }
        MPI_Op_free(&nc);
    }
    /* Allgather(v): each group receives the other's contributions. */
    int mine[2] = { inter_id(g, rank), -inter_id(g, rank) };
    MPI_Allgather(mine, 2, MPI_INT, a, 2, MPI_INT, inter);
    for (int r = 0; r < rsize; r++)
        CHECK(&errs, a[2 * r] == inter_id(other, r) && a[2 * r + 1] == -inter_id(other, r), "allgather from %d", r);
    int total = 0;
    for (int r = 0; r < rsize; r++) {
        counts[r] = (r + 1) % 2 + 1;
        displs[r] = total;
        total += counts[r];
    }
    MPI_Allgatherv(mine, (rank + 1) % 2 + 1, MPI_INT, a, counts, displs, MPI_INT, inter);
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < counts[r]; i++)
            CHECK(&errs, a[displs[r] + i] == (i ? -inter_id(other, r) : inter_id(other, r)), "allgatherv from %d[%d]", r, i);
    /* Alltoall: rank (g, r) sends id*100 + p to remote rank p. */
    for (int p = 0; p < rsize; p++)
        a[p] = inter_id(g, rank) * 100 + p;
    MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, inter);
    for (int p = 0; p < rsize; p++)
        CHECK(&errs, b[p] == inter_id(other, p) * 100 + rank, "alltoall from %d gave %d", p, b[p]);
    int *sc = calloc(big, sizeof(int)), *sd = calloc(big, sizeof(int));
    int st = 0, rt = 0;
    for (int p = 0; p < rsize; p++) {
        sc[p] = (rank + p) % 2 + 1;
        sd[p] = st;
        st += sc[p];
        counts[p] = (p + rank) % 2 + 1;
        displs[p] = rt;
        rt += counts[p];
        for (int i = 0; i < sc[p]; i++)
            a[sd[p] + i] = inter_id(g, rank) * 100 + p + i;
    }
    MPI_Alltoallv(a, sc, sd, MPI_INT, b, counts, displs, MPI_INT, inter);
    for (int p = 0; p < rsize; p++)
        for (int i = 0; i < counts[p]; i++)
            CHECK(&errs, b[displs[p] + i] == inter_id(other, p) * 100 + rank + i, "alltoallv from %d[%d]", p, i);
    /* Allreduce: each group gets the sum over the other group. */
    int in = inter_id(g, rank), sum = -1, want = 0;
    for (int r = 0; r < rsize; r++)
        want += inter_id(other, r);
    MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, inter);
    CHECK(&errs, sum == want, "allreduce gave %d, expected %d", sum, want);
    /* Reduce_scatter_block: vectors of n*rc elements; the sums n_A*rc_A == n_B*rc_B
     * hold with rc = the other group's size. */
    int rc = rsize, n = lsize * rc;
    for (int i = 0; i < n; i++)
        a[i] = inter_id(g, rank) + i;
    MPI_Reduce_scatter_block(a, b, rc, MPI_INT, MPI_SUM, inter);
    for (int i = 0; i < rc; i++) {
        int w = 0, gi = rank * rc + i;
        for (int r = 0; r < rsize; r++)
            w += inter_id(other, r) + gi;
        CHECK(&errs, b[i] == w, "reduce_scatter_block [%d] = %d, expected %d", i, b[i], w);
    }
    for (int r = 0; r < lsize; r++)
        counts[r] = r == 0 ? n : 0;   /* all to local rank 0 */
    MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_MAX, inter);
    if (rank == 0)
        for (int i = 0; i < n; i++)
            CHECK(&errs, b[i] == inter_id(other, rsize - 1) + i, "reduce_scatter [%d] = %d", i, b[i]);
    /* Not defined on intercommunicators / not allowed there. */
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int cls = MPI_SUCCESS, e = MPI_Scan(&in, &sum, 1, MPI_INT, MPI_SUM, inter);
    MPI_Error_class(e, &cls);
    CHECK(&errs, cls == MPI_ERR_COMM, "MPI_Scan on an intercommunicator gave class %d", cls);
    e = MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, inter);
    MPI_Error_class(e, &cls);
    CHECK(&errs, cls == MPI_ERR_BUFFER, "MPI_IN_PLACE on an intercommunicator gave class %d", cls);
    e = MPI_Bcast(&in, 1, MPI_INT, rsize, inter);
    MPI_Error_class(e, &cls);
    CHECK(&errs, cls == MPI_ERR_ROOT, "bcast root %d on an intercommunicator gave class %d", rsize, cls);
    MPI_Barrier(inter);
    free(a); free(b); free(counts); free(displs); free(sc); free(sd);
    return errs;
}

#endif
