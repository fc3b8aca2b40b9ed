/* Cartesian topologies (MPI-2.2 §7.5.1, §7.5.4, §7.5.5). Ranks are laid out
 * in row-major order; reordering is never done (allowed by the standard). */
#include <string.h>

#include "topo_internal.h"

/* A Cartesian topology of ndims dims (periods as 0/1). */
static struct topo *cart_new(int ndims, const int *dims, const int *periods)
{
    struct topo *t = topo_alloc(MPI_CART, 2 * (size_t)ndims);
    if (t == NULL)
        return NULL;
    t->ndims = ndims;
    t->dims = t->storage;
    t->periods = t->storage + ndims;
    for (int i = 0; i < ndims; i++) {
        t->dims[i] = dims[i];
        t->periods[i] = periods[i] != 0;
    }
    return t;
}

static void cart_coords_of(const struct topo *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* Checks dims and gives their product; MPI_SUCCESS or an error class. */
static int dims_check(int ndims, const int *dims, const int *periods, int size, int *product)
{
    if (ndims < 0 || (ndims > 0 && (dims == NULL || periods == NULL)))
        return MPI_ERR_ARG;
    long long p = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return MPI_ERR_DIMS;
        p *= dims[i];
        if (p > size)
            return MPI_ERR_TOPOLOGY;
    }
    *product = (int)p;
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, int dims[], int periods[], int reorder, MPI_Comm *comm_cart)
{
    const char *where = "MPI_Cart_create";
    int rc;
    struct strand_comm *c = topo_comm_checked(comm_old, where, 0, &rc);
    if (c == NULL)
        return rc;
    if (comm_cart == NULL)
        return error_report(comm_old, MPI_ERR_ARG, where, "comm_cart must not be NULL");
    *comm_cart = MPI_COMM_NULL;
    int product = 0;
    int error = c->core->is_inter ? MPI_ERR_COMM : dims_check(ndims, dims, periods, c->core->size, &product);
    struct topo *t = error == MPI_SUCCESS ? cart_new(ndims, dims, periods) : NULL;
    int color = c->rank < product ? 0 : MPI_UNDEFINED;
    return topo_comm_create(comm_old, where, c, color, c->rank, error, t, comm_cart);
}
STRAND_MPI_ALIAS(MPI_Cart_create);

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Cartdim_get", MPI_CART, &rc);
    if (c == NULL)
        return rc;
    if (ndims == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Cartdim_get", "ndims must not be NULL");
    *ndims = c->topo->ndims;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Cartdim_get);

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Cart_get", MPI_CART, &rc);
    if (c == NULL)
        return rc;
    const struct topo *t = c->topo;
    if (maxdims < t->ndims)
        return error_report(comm, MPI_ERR_ARG, "MPI_Cart_get", "maxdims %d < ndims %d", maxdims, t->ndims);
    if (t->ndims > 0 && (dims == NULL || periods == NULL || coords == NULL))
        return error_report(comm, MPI_ERR_ARG, "MPI_Cart_get", "dims, periods and coords must not be NULL");
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
    }
    cart_coords_of(t, c->rank, coords);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Cart_get);

/* The rank at coords; periodic coordinates wrap. */
static int cart_rank_of(MPI_Comm comm, const struct topo *t, const int *coords, int *rank, const char *where)
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i], d = t->dims[i];
        if (t->periods[i])
            x = ((x % d) + d) % d;
        else if (x < 0 || x >= d)
            return error_report(comm, MPI_ERR_ARG, where, "coordinate %d of dimension %d is outside 0..%d", x, i,
                                d - 1);
        r = r * d + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm comm, int coords[], int *rank)
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Cart_rank", MPI_CART, &rc);
    if (c == NULL)
        return rc;
    if (rank == NULL || (c->topo->ndims > 0 && coords == NULL))
        return error_report(comm, MPI_ERR_ARG, "MPI_Cart_rank", "coords and rank must not be NULL");
    return cart_rank_of(comm, c->topo, coords, rank, "MPI_Cart_rank");
}
STRAND_MPI_ALIAS(MPI_Cart_rank);

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Cart_coords", MPI_CART, &rc);
    if (c == NULL)
        return rc;
    const struct topo *t = c->topo;
    if (rank < 0 || rank >= c->core->size)
        return error_report(comm, MPI_ERR_RANK, "MPI_Cart_coords", "invalid rank %d", rank);
    if (maxdims < t->ndims || (t->ndims > 0 && coords == NULL))
        return error_report(comm, MPI_ERR_ARG, "MPI_Cart_coords", "coords must hold %d entries", t->ndims);
    cart_coords_of(t, rank, coords);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Cart_coords);

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Cart_shift", MPI_CART, &rc);
    if (c == NULL)
        return rc;
    const struct topo *t = c->topo;
    if (direction < 0 || direction >= t->ndims)
        return error_report(comm, MPI_ERR_ARG, "MPI_Cart_shift", "direction %d outside 0..%d", direction,
                            t->ndims - 1);
    if (rank_source == NULL || rank_dest == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Cart_shift", "rank_source and rank_dest must not be NULL");
    int coords[t->ndims];
    cart_coords_of(t, c->rank, coords);
    int here = coords[direction], d = t->dims[direction];
    int *out[2] = { rank_source, rank_dest };
    int moved[2] = { here - disp, here + disp };
    for (int k = 0; k < 2; k++) {
        int x = moved[k];
        if (t->periods[direction])
            x = ((x % d) + d) % d;
        if (x < 0 || x >= d) {
            *out[k] = MPI_PROC_NULL;
            continue;
        }
        coords[direction] = x;
        cart_rank_of(comm, t, coords, out[k], "MPI_Cart_shift");
    }
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Cart_shift);

int PMPI_Cart_sub(MPI_Comm comm, int remain_dims[], MPI_Comm *newcomm)
{
    const char *where = "MPI_Cart_sub";
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, where, MPI_CART, &rc);
    if (c == NULL)
        return rc;
    const struct topo *t = c->topo;
    if (newcomm == NULL)
        return error_report(comm, MPI_ERR_ARG, where, "newcomm must not be NULL");
    *newcomm = MPI_COMM_NULL;
    int error = t->ndims > 0 && remain_dims == NULL ? MPI_ERR_ARG : MPI_SUCCESS;
    int coords[t->ndims + 1], dims[t->ndims + 1], periods[t->ndims + 1];
    cart_coords_of(t, c->rank, coords);
    /* Color: position among the dropped dims; key: among the kept ones. */
    int color = 0, key = 0, kept = 0;
    for (int i = 0; i < t->ndims && error == MPI_SUCCESS; i++) {
        if (remain_dims[i]) {
            key = key * t->dims[i] + coords[i];
            dims[kept] = t->dims[i];
            periods[kept++] = t->periods[i];
        } else {
            color = color * t->dims[i] + coords[i];
        }
    }
    struct topo *sub = error == MPI_SUCCESS ? cart_new(kept, dims, periods) : NULL;
    return topo_comm_create(comm, where, c, color, key, error, sub, newcomm);
}
STRAND_MPI_ALIAS(MPI_Cart_sub);

int PMPI_Cart_map(MPI_Comm comm, int ndims, int dims[], int periods[], int *newrank)
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Cart_map", 0, &rc);
    if (c == NULL)
        return rc;
    if (newrank == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Cart_map", "newrank must not be NULL");
    int product = 0;
    rc = dims_check(ndims, dims, periods, c->core->local_size, &product);
    if (rc != MPI_SUCCESS)
        return error_report(comm, rc, "MPI_Cart_map", "invalid dimensions for %d processes", c->core->local_size);
    *newrank = c->rank < product ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Cart_map);
