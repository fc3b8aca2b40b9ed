/* MPI entry points of the barrier and the data movement collectives: each
 * checks its arguments, describes its blocks per peer (`struct coll_side`)
 * and runs the communicator's algorithm. MPI-2.2 chapter 5. */
#include "../datatype/datatype.h"
#include "check.h"

/* The sides are filled in place, field by field: building a side by value
 * and copying it made the compiler reload bytes it had just stored in
 * other widths; such a load waits until every older store is in the cache,
 * and on a bcast root that includes the store to the staging line a member
 * is reading, which made every call wait for the previous one's transfer. */
static void side_set(struct coll_side *s, enum coll_layout layout, void *buf, int count, MPI_Datatype type)
{
    s->layout = layout;
    s->buf = buf;
    s->count = count;
    s->type = type;
}

static void side_set_v(struct coll_side *s, enum coll_layout layout, void *buf, const int *counts,
                       const int *displs, MPI_Datatype type, const MPI_Datatype *types)
{
    s->layout = layout;
    s->buf = buf;
    s->counts = counts;
    s->displs = displs;
    s->type = type;
    s->types = types;
}

static int run(struct coll_ctx *ctx, struct coll_args *args, const char *where)
{
    int rc = coll_run(ctx, args);
    return rc == MPI_SUCCESS ? rc : error_report(coll_errcomm(ctx), rc, where, "collective failed");
}

int PMPI_Barrier(MPI_Comm comm)
{
    struct coll_ctx ctx;
    int rc = coll_check_comm(&ctx, comm, "MPI_Barrier");
    if (rc != MPI_SUCCESS)
        return rc;
    struct coll_args args;
    coll_args_init(&args, COLL_BARRIER, 0);
    return run(&ctx, &args, "MPI_Barrier");
}
STRAND_MPI_ALIAS(MPI_Barrier);

int coll_barrier(struct strand_comm *c)
{
    struct coll_ctx ctx;
    if (coll_ctx_open(&ctx, c->public_handle) == NULL)
        return MPI_ERR_COMM;
    struct coll_args args;
    coll_args_init(&args, COLL_BARRIER, 0);
    return coll_run(&ctx, &args);
}

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    const char *where = "MPI_Bcast";
    struct coll_ctx ctx;
    int rc = coll_check_comm(&ctx, comm, where);
    if (rc == MPI_SUCCESS)
        rc = coll_check_root(&ctx, where, root);
    if (rc != MPI_SUCCESS)
        return rc;
    enum coll_role role = coll_role_of(&ctx, root);
    struct coll_args args;
    coll_args_init(&args, COLL_BCAST, root);
    if (role != ROLE_IDLE) {
        rc = coll_check_data(&ctx, where, buffer, count, datatype);
        if (rc != MPI_SUCCESS)
            return rc;
        side_set(role == ROLE_ROOT ? &args.send : &args.recv, LAYOUT_SAME, buffer, count, datatype);
    }
    return run(&ctx, &args, where);
}
STRAND_MPI_ALIAS(MPI_Bcast);

/* Gather, gatherv, scatter, scatterv: one block per member on the member
 * side, the root's indexed (or v) layout on the root side. For gathers the
 * member side is the send buffer, for scatters the receive buffer. */
struct rooted_sides {
    void *member_buf;
    int member_count;
    MPI_Datatype member_type;
    const char *member_name;     /* "sendbuf" or "recvbuf", for messages */
    void *root_buf;
    int root_count;              /* gather/scatter */
    const int *root_counts;      /* the v variants */
    const int *displs;
    MPI_Datatype root_type;
};

static int rooted(const char *where, enum coll_kind kind, const struct rooted_sides *s, int root, MPI_Comm comm)
{
    struct coll_ctx ctx;
    int rc = coll_check_comm(&ctx, comm, where);
    if (rc == MPI_SUCCESS)
        rc = coll_check_root(&ctx, where, root);
    if (rc != MPI_SUCCESS)
        return rc;
    enum coll_role role = coll_role_of(&ctx, root);
    bool vector = kind == COLL_GATHERV || kind == COLL_SCATTERV;
    bool gathers = kind == COLL_GATHER || kind == COLL_GATHERV;
    struct coll_args args;
    coll_args_init(&args, kind, root);
    args.skip_self = s->member_buf == MPI_IN_PLACE;
    struct coll_side *member = gathers ? &args.send : &args.recv;
    struct coll_side *at_root = gathers ? &args.recv : &args.send;
    bool member_moves = role == ROLE_MEMBER || (role == ROLE_ROOT && !ctx.inter && s->member_buf != MPI_IN_PLACE);
    if (role == ROLE_MEMBER || (role == ROLE_ROOT && ctx.inter))
        rc = coll_no_in_place(&ctx, where, s->member_buf, s->member_name);
    if (rc == MPI_SUCCESS && member_moves) {
        rc = coll_check_data(&ctx, where, s->member_buf, s->member_count, s->member_type);
        side_set(member, LAYOUT_SAME, s->member_buf, s->member_count, s->member_type);
    }
    if (rc == MPI_SUCCESS && role == ROLE_ROOT) {
        if (!vector) {
            rc = coll_check_data(&ctx, where, s->root_buf, s->root_count, s->root_type);
            side_set(at_root, LAYOUT_INDEXED, s->root_buf, s->root_count, s->root_type);
        } else {
            rc = coll_check_vector(&ctx, where, s->root_buf, s->root_counts, s->displs, ctx.peer_size,
                                   s->root_type, NULL, false);
            side_set_v(at_root, LAYOUT_V, s->root_buf, s->root_counts, s->displs, s->root_type, NULL);
        }
    }
    if (rc != MPI_SUCCESS)
        return rc;
    return run(&ctx, &args, where);
}

int PMPI_Gather(void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct rooted_sides s = { sendbuf, sendcount, sendtype, "sendbuf", recvbuf, recvcount, NULL, NULL, recvtype };
    return rooted("MPI_Gather", COLL_GATHER, &s, root, comm);
}
STRAND_MPI_ALIAS(MPI_Gather);

int PMPI_Gatherv(void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcounts[],
                 int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct rooted_sides s = { sendbuf, sendcount, sendtype, "sendbuf", recvbuf, 0, recvcounts, displs, recvtype };
    return rooted("MPI_Gatherv", COLL_GATHERV, &s, root, comm);
}
STRAND_MPI_ALIAS(MPI_Gatherv);

int PMPI_Scatter(void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct rooted_sides s = { recvbuf, recvcount, recvtype, "recvbuf", sendbuf, sendcount, NULL, NULL, sendtype };
    return rooted("MPI_Scatter", COLL_SCATTER, &s, root, comm);
}
STRAND_MPI_ALIAS(MPI_Scatter);

int PMPI_Scatterv(void *sendbuf, int sendcounts[], int displs[], MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct rooted_sides s = { recvbuf, recvcount, recvtype, "recvbuf", sendbuf, 0, sendcounts, displs, sendtype };
    return rooted("MPI_Scatterv", COLL_SCATTERV, &s, root, comm);
}
STRAND_MPI_ALIAS(MPI_Scatterv);

/* Allgather and allgatherv. In place, a rank's contribution is its own
 * block of the receive buffer. */
static int allgather(const char *where, enum coll_kind kind, void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, const int *recvcounts,
                     const int *displs, MPI_Datatype recvtype, MPI_Comm comm)
{
    struct coll_ctx ctx;
    int rc = coll_check_comm(&ctx, comm, where);
    if (rc == MPI_SUCCESS && ctx.inter)
        rc = coll_no_in_place(&ctx, where, sendbuf, "sendbuf");
    if (rc != MPI_SUCCESS)
        return rc;
    struct coll_args args;
    coll_args_init(&args, kind, 0);
    if (kind == COLL_ALLGATHER) {
        rc = coll_check_data(&ctx, where, recvbuf, recvcount, recvtype);
        side_set(&args.recv, LAYOUT_INDEXED, recvbuf, recvcount, recvtype);
    } else {
        rc = coll_check_vector(&ctx, where, recvbuf, recvcounts, displs, ctx.peer_size, recvtype, NULL, false);
        side_set_v(&args.recv, LAYOUT_V, recvbuf, recvcounts, displs, recvtype, NULL);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if (sendbuf == MPI_IN_PLACE) {
        MPI_Aint extent = dt_extent(recvtype);
        if (kind == COLL_ALLGATHER)
            side_set(&args.send, LAYOUT_SAME, (char *)recvbuf + (MPI_Aint)ctx.rank * recvcount * extent,
                     recvcount, recvtype);
        else
            side_set(&args.send, LAYOUT_SAME, (char *)recvbuf + (MPI_Aint)displs[ctx.rank] * extent,
                     recvcounts[ctx.rank], recvtype);
        args.skip_self = true;
    } else {
        rc = coll_check_data(&ctx, where, sendbuf, sendcount, sendtype);
        if (rc != MPI_SUCCESS)
            return rc;
        side_set(&args.send, LAYOUT_SAME, sendbuf, sendcount, sendtype);
    }
    return run(&ctx, &args, where);
}

int PMPI_Allgather(void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather("MPI_Allgather", COLL_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                     NULL, recvtype, comm);
}
STRAND_MPI_ALIAS(MPI_Allgather);

int PMPI_Allgatherv(void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcounts[],
                    int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather("MPI_Allgatherv", COLL_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                     displs, recvtype, comm);
}
STRAND_MPI_ALIAS(MPI_Allgatherv);

/* Alltoall, v and w: both sides are per-peer layouts of the same kind,
 * already in `args`. In place (intracommunicators), the receive layout
 * holds the outgoing data. */
static int alltoall(const char *where, struct coll_args *args, MPI_Comm comm)
{
    struct coll_ctx ctx;
    int rc = coll_check_comm(&ctx, comm, where);
    if (rc != MPI_SUCCESS)
        return rc;
    args->in_place = args->send.buf == MPI_IN_PLACE;
    if (args->in_place && ctx.inter)
        rc = coll_no_in_place(&ctx, where, args->send.buf, "sendbuf");
    int n = ctx.peer_size;
    for (int side = args->in_place ? 1 : 0; side < 2 && rc == MPI_SUCCESS; side++) {
        const struct coll_side *s = side == 0 ? &args->send : &args->recv;
        if (s->layout == LAYOUT_INDEXED)
            rc = coll_check_data(&ctx, where, s->buf, s->count, s->type);
        else
            rc = coll_check_vector(&ctx, where, s->buf, s->counts, s->displs, n, s->type, s->types,
                                   s->layout == LAYOUT_W);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    return run(&ctx, args, where);
}

int PMPI_Alltoall(void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    struct coll_args args;
    coll_args_init(&args, COLL_ALLTOALL, 0);
    side_set(&args.send, LAYOUT_INDEXED, sendbuf, sendcount, sendtype);
    side_set(&args.recv, LAYOUT_INDEXED, recvbuf, recvcount, recvtype);
    return alltoall("MPI_Alltoall", &args, comm);
}
STRAND_MPI_ALIAS(MPI_Alltoall);

int PMPI_Alltoallv(void *sendbuf, int sendcounts[], int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                   int recvcounts[], int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    struct coll_args args;
    coll_args_init(&args, COLL_ALLTOALLV, 0);
    side_set_v(&args.send, LAYOUT_V, sendbuf, sendcounts, sdispls, sendtype, NULL);
    side_set_v(&args.recv, LAYOUT_V, recvbuf, recvcounts, rdispls, recvtype, NULL);
    return alltoall("MPI_Alltoallv", &args, comm);
}
STRAND_MPI_ALIAS(MPI_Alltoallv);

int PMPI_Alltoallw(void *sendbuf, int sendcounts[], int sdispls[], MPI_Datatype sendtypes[], void *recvbuf,
                   int recvcounts[], int rdispls[], MPI_Datatype recvtypes[], MPI_Comm comm)
{
    struct coll_args args;
    coll_args_init(&args, COLL_ALLTOALLW, 0);
    side_set_v(&args.send, LAYOUT_W, sendbuf, sendcounts, sdispls, NULL, sendtypes);
    side_set_v(&args.recv, LAYOUT_W, recvbuf, recvcounts, rdispls, NULL, recvtypes);
    return alltoall("MPI_Alltoallw", &args, comm);
}
STRAND_MPI_ALIAS(MPI_Alltoallw);
