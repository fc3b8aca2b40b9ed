/* Topologies: Cartesian (create, get, rank, coords, shift, sub, map,
 * Dims_create), graph (create, get, neighbors, map), distributed graph
 * (adjacent and general), MPI_Topo_test, dup keeping the topology, errors. */
#include <stdlib.h>
#include "comm_check.h"

/* GCC takes MPI_UNWEIGHTED ((int *)2) for an array of size 0. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

static int test_dims(void)
{
    int errs = 0;
    int d2[2] = { 0, 0 }, d3[3] = { 0, 3, 0 }, d1[1] = { 0 };
    MPI_Dims_create(12, 2, d2);
    CHECK(errs, d2[0] == 4 && d2[1] == 3, "12 in 2: %d x %d", d2[0], d2[1]);
    MPI_Dims_create(72, 2, d2 + 0 * (d2[0] = d2[1] = 0));
    CHECK(errs, d2[0] == 9 && d2[1] == 8, "72 in 2: %d x %d", d2[0], d2[1]);
    MPI_Dims_create(24, 3, d3);
    CHECK(errs, d3[1] == 3 && d3[0] * d3[2] == 8 && d3[0] >= d3[2] && d3[0] == 4, "24 with 3 fixed: %d %d %d",
          d3[0], d3[1], d3[2]);
    MPI_Dims_create(7, 1, d1);
    CHECK(errs, d1[0] == 7, "7 in 1: %d", d1[0]);
    int d4[4] = { 0, 0, 0, 0 };
    MPI_Dims_create(16, 4, d4);
    CHECK(errs, d4[0] == 2 && d4[1] == 2 && d4[2] == 2 && d4[3] == 2, "16 in 4");
    int bad[2] = { 5, 0 };
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(errs, check_class(MPI_Dims_create(12, 2, bad)) == MPI_ERR_DIMS, "5 does not divide 12");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return errs;
}

static int test_cart(int rank, int size)
{
    int errs = 0, status;
    int dims[2] = { 0, 0 }, periods[2] = { 1, 0 }, coords[2], r;
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Topo_test(cart, &status);
    CHECK(errs, status == MPI_CART, "topo_test %d", status);
    MPI_Topo_test(MPI_COMM_WORLD, &status);
    CHECK(errs, status == MPI_UNDEFINED, "world topo_test %d", status);
    int nd, gd[2], gp[2];
    MPI_Cartdim_get(cart, &nd);
    CHECK(errs, nd == 2, "cartdim %d", nd);
    MPI_Cart_get(cart, 2, gd, gp, coords);
    CHECK(errs, gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "cart_get");
    CHECK(errs, coords[0] == rank / dims[1] && coords[1] == rank % dims[1], "coords %d %d", coords[0], coords[1]);
    MPI_Cart_rank(cart, coords, &r);
    CHECK(errs, r == rank, "cart_rank %d", r);
    int c2[2];
    for (int q = 0; q < size; q++) {
        MPI_Cart_coords(cart, q, 2, c2);
        MPI_Cart_rank(cart, c2, &r);
        CHECK(errs, r == q, "coords/rank round trip %d -> %d", q, r);
    }
    int wrap[2] = { coords[0] - dims[0], coords[1] };     /* periodic dim wraps */
    MPI_Cart_rank(cart, wrap, &r);
    CHECK(errs, r == rank, "periodic wrap %d", r);
    int src, dst;
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    CHECK(errs, dst == ((coords[0] + 1) % dims[0]) * dims[1] + coords[1], "shift dest %d", dst);
    CHECK(errs, src == ((coords[0] - 1 + dims[0]) % dims[0]) * dims[1] + coords[1], "shift source %d", src);
    MPI_Cart_shift(cart, 1, 1, &src, &dst);
    CHECK(errs, dst == (coords[1] + 1 < dims[1] ? rank + 1 : MPI_PROC_NULL), "non-periodic dest %d", dst);
    CHECK(errs, src == (coords[1] > 0 ? rank - 1 : MPI_PROC_NULL), "non-periodic source %d", src);

    /* sub: keep dim 1 (rows) */
    int remain[2] = { 0, 1 };
    MPI_Comm row;
    MPI_Cart_sub(cart, remain, &row);
    int rs, rr;
    MPI_Comm_size(row, &rs);
    MPI_Comm_rank(row, &rr);
    CHECK(errs, rs == dims[1] && rr == coords[1], "row size %d rank %d", rs, rr);
    MPI_Cartdim_get(row, &nd);
    CHECK(errs, nd == 1, "row cartdim %d", nd);
    MPI_Comm_free(&row);
    int none[2] = { 0, 0 };
    MPI_Cart_sub(cart, none, &row);
    MPI_Comm_size(row, &rs);
    CHECK(errs, rs == 1, "sub with no dims size %d", rs);
    MPI_Comm_free(&row);

    /* dup keeps the topology */
    MPI_Comm dup;
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &status);
    CHECK(errs, status == MPI_CART, "dup topo_test %d", status);
    MPI_Cart_coords(dup, rank, 2, c2);
    CHECK(errs, c2[0] == coords[0] && c2[1] == coords[1], "dup coords");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&cart);

    /* fewer nodes than ranks: the others get MPI_COMM_NULL */
    int one[1] = { size > 1 ? size - 1 : 1 }, p1[1] = { 0 };
    MPI_Cart_create(MPI_COMM_WORLD, 1, one, p1, 1, &cart);
    if (rank < one[0]) {
        CHECK(errs, cart != MPI_COMM_NULL, "member without a cart");
        MPI_Comm_free(&cart);
    } else {
        CHECK(errs, cart == MPI_COMM_NULL, "extra rank got a cart");
    }
    MPI_Cart_map(MPI_COMM_WORLD, 1, one, p1, &r);
    CHECK(errs, r == (rank < one[0] ? rank : MPI_UNDEFINED), "cart_map %d", r);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int toomany[1] = { size + 1 };
    CHECK(errs, MPI_Cart_create(MPI_COMM_WORLD, 1, toomany, p1, 0, &cart) != MPI_SUCCESS, "grid too big");
    CHECK(errs, check_class(MPI_Cartdim_get(MPI_COMM_WORLD, &nd)) == MPI_ERR_TOPOLOGY, "cartdim without topology");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return errs;
}

/* A ring: node i -> i-1, i+1. */
static int test_graph(int rank, int size)
{
    int errs = 0, status, n, e;
    int *index = malloc(sizeof(int) * size), *edges = malloc(sizeof(int) * 2 * size);
    for (int i = 0, k = 0; i < size; i++) {
        edges[k++] = (i + size - 1) % size;
        edges[k++] = (i + 1) % size;
        index[i] = k;
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
    MPI_Topo_test(g, &status);
    CHECK(errs, status == MPI_GRAPH, "graph topo_test %d", status);
    MPI_Graphdims_get(g, &n, &e);
    CHECK(errs, n == size && e == 2 * size, "graphdims %d %d", n, e);
    int *gi = malloc(sizeof(int) * size), *ge = malloc(sizeof(int) * 2 * size);
    MPI_Graph_get(g, size, 2 * size, gi, ge);
    for (int i = 0; i < size; i++)
        CHECK(errs, gi[i] == index[i] && ge[2 * i] == edges[2 * i], "graph_get entry %d", i);
    int nn, nb[2];
    MPI_Graph_neighbors_count(g, rank, &nn);
    CHECK(errs, nn == 2, "neighbors count %d", nn);
    MPI_Graph_neighbors(g, rank, 2, nb);
    CHECK(errs, nb[0] == (rank + size - 1) % size && nb[1] == (rank + 1) % size, "neighbors %d %d", nb[0], nb[1]);
    int r;
    MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &r);
    CHECK(errs, r == rank, "graph_map %d", r);
    MPI_Comm_free(&g);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    edges[0] = size;    /* an edge to nowhere */
    CHECK(errs, MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g) != MPI_SUCCESS, "bad edge accepted");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(index), free(edges), free(gi), free(ge);
    return errs;
}

static int test_dist_graph(int rank, int size)
{
    int errs = 0, status, in, out, weighted;
    /* adjacent: i receives from i-1 (weight i), sends to i+1 */
    int src = (rank + size - 1) % size, dst = (rank + 1) % size, sw = rank, dw = dst;
    MPI_Comm dg;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &sw, 1, &dst, &dw, MPI_INFO_NULL, 0, &dg);
    MPI_Topo_test(dg, &status);
    CHECK(errs, status == MPI_DIST_GRAPH, "dist graph topo_test %d", status);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
    CHECK(errs, in == 1 && out == 1 && weighted, "counts %d %d %d", in, out, weighted);
    int s, w1, d, w2;
    MPI_Dist_graph_neighbors(dg, 1, &s, &w1, 1, &d, &w2);
    CHECK(errs, s == src && w1 == rank && d == dst && w2 == dst, "adjacent neighbors");
    MPI_Comm_free(&dg);

    /* general: rank 0 declares every edge i -> (i+1) % size with weight i;
     * the others declare none */
    int n = rank == 0 ? size : 0;
    int *sources = malloc(sizeof(int) * size), *degrees = malloc(sizeof(int) * size);
    int *dests = malloc(sizeof(int) * size), *weights = malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++) {
        sources[i] = i;
        degrees[i] = 1;
        dests[i] = (i + 1) % size;
        weights[i] = i;
    }
    MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, weights, MPI_INFO_NULL, 0, &dg);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
    CHECK(errs, in == 1 && out == 1, "general counts %d %d", in, out);
    MPI_Dist_graph_neighbors(dg, 1, &s, &w1, 1, &d, &w2);
    CHECK(errs, s == src && w1 == src && d == dst && w2 == rank, "general neighbors s=%d w=%d d=%d w=%d", s, w1, d,
          w2);
    MPI_Comm_free(&dg);
    /* unweighted, every rank declares its own out-edge */
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, degrees, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
    CHECK(errs, in == 1 && out == 1 && !weighted, "unweighted counts %d %d %d", in, out, weighted);
    MPI_Dist_graph_neighbors(dg, 1, &s, MPI_UNWEIGHTED, 1, &d, MPI_UNWEIGHTED);
    CHECK(errs, s == src && d == dst, "unweighted neighbors %d %d", s, d);
    MPI_Comm_free(&dg);
    free(sources), free(degrees), free(dests), free(weights);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    errs += test_dims();
    errs += test_cart(rank, size);
    errs += test_graph(rank, size);
    errs += test_dist_graph(rank, size);
    return check_finish(errs);
}
