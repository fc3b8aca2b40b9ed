/* Intercommunicators and distributed graphs whose members span node
 * processes (mpiexec --nodes K; also correct in one node process).
 *
 * Group A = the even world ranks, group B = the odd ones, so both local
 * groups are split across node processes (or, with the argument "halves",
 * each group in one node process); A's leader is world rank 0 (the
 * first node process), B's leader its last member (the last node
 * process). Checked: queries and the remote group, point-to-point both
 * ways, collectives with every root mode, merge (both high orders), dup
 * (attributes copied, error handler inherited), split and create of the
 * intercommunicator, an intercommunicator built over the merged one, bad
 * arguments, then MPI_Dist_graph_create and _adjacent with their neighbour
 * lists and traffic along the edges. Needs 3 or more ranks. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "comm_check.h"

static int wrank, wsize;

/* World rank of member i of group g (0: even, 1: odd). */
/* halves = 0: A = even world ranks, B = odd ones (both groups split
 * across node processes); halves = 1 (argument "halves"): A = the first
 * half, B = the rest (each group within one node process at --nodes 2). */
static int halves;
static int group_size(int g)
{
    if (halves)
        return g == 0 ? wsize / 2 : wsize - wsize / 2;
    return (wsize - g + 1) / 2;
}
static int world_of(int g, int i) { return halves ? g * (wsize / 2) + i : 2 * i + g; }
static int group_of(int r) { return halves ? r >= wsize / 2 : r % 2; }
static int index_of(int r) { return halves ? r - group_of(r) * (wsize / 2) : r / 2; }

static int copies;
static int copy_attr(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int check_queries(MPI_Comm inter, int g)
{
    int errs = 0, flag, lsize, rsize, rank;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &rank);
    CHECK(errs, flag && lsize == group_size(g) && rsize == group_size(1 - g) && rank == index_of(wrank),
          "inter %d size %d remote %d rank %d", flag, lsize, rsize, rank);
    MPI_Group remote, world;
    MPI_Comm_remote_group(inter, &remote);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int *in = malloc(sizeof(int) * (size_t)rsize), *out = malloc(sizeof(int) * (size_t)rsize);
    for (int i = 0; i < rsize; i++)
        in[i] = i;
    MPI_Group_translate_ranks(remote, rsize, in, world, out);
    for (int i = 0; i < rsize; i++)
        CHECK(errs, out[i] == world_of(1 - g, i), "remote member %d is world rank %d", i, out[i]);
    free(in);
    free(out);
    MPI_Group_free(&remote);
    MPI_Group_free(&world);
    return errs;
}

static int check_pt2pt(MPI_Comm inter, int g, int tag)
{
    int errs = 0, rank, lsize, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    int out = 1000 * tag + world_of(g, rank);
    MPI_Request req;
    MPI_Isend(&out, 1, MPI_INT, rank % rsize, tag, inter, &req);
    for (int r = rank; r < rsize; r += lsize) {
        int in = -1;
        MPI_Status st;
        MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, tag, inter, &st);
        CHECK(errs, in == 1000 * tag + world_of(1 - g, st.MPI_SOURCE) && st.MPI_SOURCE % lsize == rank,
              "got %d from %d", in, st.MPI_SOURCE);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return errs;
}

/* Rooted collectives with the root in group rg (its last member). */
static int check_rooted(MPI_Comm inter, int g, int rg)
{
    int errs = 0, rank, lsize, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    int rootr = group_size(rg) - 1;
    int root = g == rg ? (rank == rootr ? MPI_ROOT : MPI_PROC_NULL) : rootr;
    int v = root == MPI_ROOT ? 700 + rg : -1;
    MPI_Bcast(&v, 1, MPI_INT, root, inter);
    CHECK(errs, g != rg ? v == 700 + rg : v == (root == MPI_ROOT ? 700 + rg : -1), "bcast gave %d", v);
    /* Reduce: the root gets the sum over the other group of (world rank + 1). */
    int mine[2] = { world_of(g, rank) + 1, 1 }, sum[2] = { -1, -1 };
    MPI_Reduce(mine, sum, 2, MPI_INT, MPI_SUM, root, inter);
    int want = 0;
    for (int i = 0; i < rsize; i++)
        want += world_of(1 - g, i) + 1;
    if (root == MPI_ROOT)
        CHECK(errs, sum[0] == want && sum[1] == rsize, "reduce gave %d %d, want %d %d", sum[0], sum[1], want, rsize);
    else
        CHECK(errs, sum[0] == -1, "reduce wrote a non-root buffer");
    /* Gather and scatter. */
    int *all = malloc(sizeof(int) * 2 * (size_t)(rsize + lsize));
    for (int i = 0; i < rsize + lsize; i++)
        all[i] = -1;
    int w = world_of(g, rank);
    MPI_Gather(&w, 1, MPI_INT, all, 1, MPI_INT, root, inter);
    for (int i = 0; root == MPI_ROOT && i < rsize; i++)
        CHECK(errs, all[i] == world_of(1 - g, i), "gather slot %d holds %d", i, all[i]);
    for (int i = 0; i < rsize; i++)
        all[i] = root == MPI_ROOT ? 5000 + i : -1;
    int got = -1;
    MPI_Scatter(all, 1, MPI_INT, &got, 1, MPI_INT, root, inter);
    CHECK(errs, g == rg ? got == -1 : got == 5000 + rank, "scatter gave %d", got);
    free(all);
    return errs;
}

static int check_all(MPI_Comm inter, int g)
{
    int errs = 0, rank, lsize, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Barrier(inter);
    int w = world_of(g, rank), sum = -1, want = 0;
    for (int i = 0; i < rsize; i++)
        want += world_of(1 - g, i);
    MPI_Allreduce(&w, &sum, 1, MPI_INT, MPI_SUM, inter);
    CHECK(errs, sum == want, "allreduce gave %d, want %d", sum, want);
    int *in = malloc(sizeof(int) * (size_t)rsize * 2), *out = malloc(sizeof(int) * (size_t)rsize * 2);
    MPI_Allgather(&w, 1, MPI_INT, in, 1, MPI_INT, inter);
    for (int i = 0; i < rsize; i++)
        CHECK(errs, in[i] == world_of(1 - g, i), "allgather slot %d holds %d", i, in[i]);
    for (int i = 0; i < rsize; i++)
        out[i] = 100 * w + i;
    MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, inter);
    for (int i = 0; i < rsize; i++)
        CHECK(errs, in[i] == 100 * world_of(1 - g, i) + rank, "alltoall slot %d holds %d", i, in[i]);
    /* Reduce_scatter_block: my group's blocks of 2 come from the other
     * group's vectors of 2 * lsize elements. */
    int *vec = malloc(sizeof(int) * 2 * (size_t)rsize), res[2] = { -1, -1 };
    for (int i = 0; i < 2 * rsize; i++)
        vec[i] = w + i;
    MPI_Reduce_scatter_block(vec, res, 2, MPI_INT, MPI_SUM, inter);
    int base = 0;
    for (int i = 0; i < rsize; i++)
        base += world_of(1 - g, i);
    CHECK(errs, res[0] == base + rsize * 2 * rank && res[1] == base + rsize * (2 * rank + 1),
          "reduce_scatter_block gave %d %d", res[0], res[1]);
    free(vec);
    free(in);
    free(out);
    return errs;
}

static int check_merge(MPI_Comm inter, int g, int high_group)
{
    int errs = 0, rank, size, lrank;
    MPI_Comm merged;
    MPI_Comm_rank(inter, &lrank);
    MPI_Intercomm_merge(inter, g == high_group, &merged);
    MPI_Comm_rank(merged, &rank);
    MPI_Comm_size(merged, &size);
    int want = g == high_group ? group_size(1 - g) + lrank : lrank;
    CHECK(errs, size == wsize && rank == want, "merged rank %d of %d, want %d", rank, size, want);
    int w = wrank, sum = -1;
    MPI_Allreduce(&w, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK(errs, sum == wsize * (wsize - 1) / 2, "allreduce on the merged comm gave %d", sum);
    /* Rank order: the low group first. */
    int *all = malloc(sizeof(int) * (size_t)wsize);
    MPI_Allgather(&w, 1, MPI_INT, all, 1, MPI_INT, merged);
    for (int i = 0; i < wsize; i++) {
        int lg = 1 - high_group, n = group_size(lg);
        int expect = i < n ? world_of(lg, i) : world_of(high_group, i - n);
        CHECK(errs, all[i] == expect, "merged rank %d is world %d, want %d", i, all[i], expect);
    }
    free(all);
    MPI_Comm_free(&merged);
    return errs;
}

static int check_constructors(MPI_Comm inter, int g)
{
    int errs = 0, rank, flag, key;
    MPI_Comm_rank(inter, &rank);
    /* Dup: attribute copied, error handler inherited, independent traffic. */
    MPI_Comm_create_keyval(copy_attr, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    static char anchor[4];
    MPI_Comm_set_attr(inter, key, anchor);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    MPI_Comm dup;
    MPI_Comm_dup(inter, &dup);
    void *val = NULL;
    MPI_Comm_get_attr(dup, key, &val, &flag);
    CHECK(errs, flag && val == anchor + 1 && copies == 1, "dup's attribute %p (flag %d, copies %d)", val, flag,
          copies);
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(dup, &eh);
    CHECK(errs, eh == MPI_ERRORS_RETURN, "dup did not inherit MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    errs += check_pt2pt(dup, g, 3);
    errs += check_queries(dup, g);
    /* Split: color by world rank % 3 (undefined for 2), key reversed. */
    int color = wrank % 3 == 2 ? MPI_UNDEFINED : wrank % 3, nsplit;
    MPI_Comm split;
    MPI_Comm_split(dup, color, -wrank, &split);
    if (color == MPI_UNDEFINED) {
        CHECK(errs, split == MPI_COMM_NULL, "undefined color gave a communicator");
    } else if (split != MPI_COMM_NULL) {
        int lsize, rsize, srank;
        MPI_Comm_size(split, &lsize);
        MPI_Comm_remote_size(split, &rsize);
        MPI_Comm_rank(split, &srank);
        int want_l = 0, want_r = 0, want_rank = 0;
        for (int r = 0; r < wsize; r++) {
            if (r % 3 != color)
                continue;
            if (group_of(r) == g) {
                want_l++;
                want_rank += r > wrank;
            } else {
                want_r++;
            }
        }
        CHECK(errs, lsize == want_l && rsize == want_r && srank == want_rank,
              "split: local %d remote %d rank %d (want %d %d %d)", lsize, rsize, srank, want_l, want_r, want_rank);
        int w = wrank, sum = -1, want = 0;
        for (int r = 0; r < wsize; r++)
            if (r % 3 == color && group_of(r) != g)
                want += r;
        MPI_Allreduce(&w, &sum, 1, MPI_INT, MPI_SUM, split);
        CHECK(errs, sum == want, "allreduce on the split intercomm gave %d, want %d", sum, want);
        MPI_Comm_free(&split);
    } else {
        /* A color present on one side only gives MPI_COMM_NULL. */
        int other = 0;
        for (int r = 0; r < wsize; r++)
            other += r % 3 == color && group_of(r) != g;
        CHECK(errs, other == 0, "color %d has partners but gave MPI_COMM_NULL", color);
    }
    /* Create: each group keeps its first half (at least one member). */
    MPI_Group local, sub;
    MPI_Comm_group(inter, &local);
    int lsize;
    MPI_Group_size(local, &lsize);
    int range[1][3] = { { 0, (lsize + 1) / 2 - 1, 1 } };
    MPI_Group_range_incl(local, 1, range, &sub);
    MPI_Comm created;
    MPI_Comm_create(inter, sub, &created);
    nsplit = (lsize + 1) / 2;
    if (rank < nsplit) {
        int cs, crs;
        MPI_Comm_size(created, &cs);
        MPI_Comm_remote_size(created, &crs);
        CHECK(errs, cs == nsplit && crs == (group_size(1 - g) + 1) / 2, "created: %d remote %d", cs, crs);
        int w = wrank, sum = -1, want = 0;
        for (int i = 0; i < crs; i++)
            want += world_of(1 - g, i);
        MPI_Allreduce(&w, &sum, 1, MPI_INT, MPI_SUM, created);
        CHECK(errs, sum == want, "allreduce on the created intercomm gave %d, want %d", sum, want);
        MPI_Comm_free(&created);
    } else {
        CHECK(errs, created == MPI_COMM_NULL, "a non-member got a communicator");
    }
    MPI_Group_free(&sub);
    MPI_Group_free(&local);
    MPI_Comm_free(&dup);
    MPI_Comm_delete_attr(inter, key);
    MPI_Comm_free_keyval(&key);
    return errs;
}

static int check_bad_input(MPI_Comm local, MPI_Comm inter, int g)
{
    int errs = 0, lsize;
    MPI_Comm_size(local, &lsize);
    MPI_Comm bad = MPI_COMM_NULL;
    int rc = MPI_Intercomm_create(local, lsize, MPI_COMM_WORLD, 0, 5, &bad);
    CHECK(errs, check_class(rc) == MPI_ERR_RANK && bad == MPI_COMM_NULL, "bad local leader gave %d", rc);
    /* Both leaders name an impossible remote leader: both groups fail. */
    rc = MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, wsize, 5, &bad);
    CHECK(errs, check_class(rc) == MPI_ERR_RANK && bad == MPI_COMM_NULL, "bad remote leader gave %d", rc);
    rc = MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, 0, 5, &bad);
    CHECK(errs, check_class(rc) == MPI_ERR_COMM, "an intercomm as local_comm gave %d", rc);
    rc = MPI_Intercomm_merge(local, 0, &bad);
    CHECK(errs, check_class(rc) == MPI_ERR_COMM, "merging an intracomm gave %d", rc);
    int dummy;
    rc = MPI_Reduce(&dummy, &dummy, 1, MPI_INT, MPI_SUM, group_size(1 - g), inter);
    CHECK(errs, check_class(rc) == MPI_ERR_ROOT, "an out-of-range intercomm root gave %d", rc);
    rc = MPI_Scan(&dummy, &dummy, 1, MPI_INT, MPI_SUM, inter);
    CHECK(errs, check_class(rc) == MPI_ERR_COMM, "scan on an intercomm gave %d", rc);
    return errs;
}

static bool holds(const int *ranks, const int *weights, int n, int rank, int weight)
{
    for (int i = 0; i < n; i++)
        if (ranks[i] == rank && (weights == NULL || weights[i] == weight))
            return true;
    return false;
}

/* A ring plus a second ring two ahead; rank r's edges are declared by
 * rank r + 1 (MPI_Dist_graph_create), weights r and 100 + r. */
static int check_dist_graph(void)
{
    int errs = 0, n = wsize, r = wrank;
    int owner = (r + n - 1) % n;    /* whose edges I declare */
    int sources[1] = { owner }, degrees[1] = { 2 };
    int dests[2] = { (owner + 1) % n, (owner + 2) % n }, weights[2] = { owner, 100 + owner };
    MPI_Comm dg;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, sources, degrees, dests, weights, MPI_INFO_NULL, 1, &dg);
    int in, out, weighted, status;
    MPI_Topo_test(dg, &status);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
    CHECK(errs, status == MPI_DIST_GRAPH && in == 2 && out == 2 && weighted, "counts %d %d %d", in, out, weighted);
    int s[2], sw[2], d[2], dw[2];
    MPI_Dist_graph_neighbors(dg, 2, s, sw, 2, d, dw);
    int p1 = (r + n - 1) % n, p2 = (r + n - 2) % n;
    CHECK(errs, holds(s, sw, 2, p1, p1) && holds(s, sw, 2, p2, 100 + p2), "sources %d/%d %d/%d", s[0], sw[0], s[1],
          sw[1]);
    CHECK(errs, holds(d, dw, 2, (r + 1) % n, r) && holds(d, dw, 2, (r + 2) % n, 100 + r),
          "destinations %d/%d %d/%d", d[0], dw[0], d[1], dw[1]);
    /* Traffic along the edges. */
    MPI_Request reqs[4];
    int got[2] = { -1, -1 };
    for (int i = 0; i < 2; i++) {
        MPI_Irecv(&got[i], 1, MPI_INT, s[i], 9, dg, &reqs[i]);
        MPI_Isend(&r, 1, MPI_INT, d[i], 9, dg, &reqs[2 + i]);
    }
    MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    CHECK(errs, got[0] == s[0] && got[1] == s[1], "edge traffic %d %d", got[0], got[1]);
    MPI_Comm_free(&dg);

    /* Adjacent, unweighted: the reverse ring. */
    int src = (r + 1) % n, dst = (r + n - 1) % n;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                   0, &dg);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
    MPI_Dist_graph_neighbors(dg, 1, s, MPI_UNWEIGHTED, 1, d, MPI_UNWEIGHTED);
    CHECK(errs, in == 1 && out == 1 && !weighted && s[0] == src && d[0] == dst, "adjacent %d %d %d %d %d", in, out,
          weighted, s[0], d[0]);
    int sum = -1;
    MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, dg);
    CHECK(errs, sum == n * (n - 1) / 2, "allreduce on the adjacent graph gave %d", sum);
    MPI_Comm_free(&dg);

    /* One member names a destination out of range: everyone fails. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad_dest = r == n - 1 ? n : 0, one = 1;
    dg = MPI_COMM_NULL;
    int rc = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &r, &one, &bad_dest, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
    CHECK(errs, check_class(rc) == MPI_ERR_RANK && dg == MPI_COMM_NULL, "a bad edge gave %d", rc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 3) {
        printf("needs 3 or more ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    halves = argc > 1 && strcmp(argv[1], "halves") == 0;
    int g = group_of(wrank);
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, g, wrank, &local);
    /* A's leader: its member 0 (world 0); B's: its last member. */
    int local_leader = g == 0 ? 0 : group_size(1) - 1;
    int remote_leader = g == 0 ? world_of(1, group_size(1) - 1) : 0;
    MPI_Intercomm_create(local, local_leader, MPI_COMM_WORLD, remote_leader, 11, &inter);
    errs += check_queries(inter, g);
    errs += check_pt2pt(inter, g, 1);
    errs += check_rooted(inter, g, 0);
    errs += check_rooted(inter, g, 1);
    errs += check_all(inter, g);
    errs += check_merge(inter, g, 0);
    errs += check_merge(inter, g, 1);
    errs += check_constructors(inter, g);
    /* An intercommunicator over the merged communicator as peer, leaders
     * swapped. */
    MPI_Comm merged, inter2;
    MPI_Intercomm_merge(inter, g, &merged);
    MPI_Intercomm_create(local, g == 0 ? group_size(0) - 1 : 0, merged, g == 0 ? group_size(0) : group_size(0) - 1,
                         12, &inter2);
    errs += check_queries(inter2, g);
    errs += check_all(inter2, g);
    MPI_Comm_free(&inter2);
    MPI_Comm_free(&merged);
    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    errs += check_bad_input(local, inter, g);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    errs += check_dist_graph();
    return check_finish(errs);
}
