/* MPI entry points of the reductions: reduce, allreduce, reduce_scatter
 * (and _block), scan, exscan. MPI-2.2 §5.9-5.11. */
#include "../datatype/datatype.h"
#include "check.h"

static int run(struct coll_ctx *ctx, struct coll_args *args, const char *where)
{
    int rc = coll_run(ctx, args);
    return rc == MPI_SUCCESS ? rc : error_report(coll_errcomm(ctx), rc, where, "collective failed");
}

/* Checks one reduction's buffers and op; `reads`/`writes`: whether this
 * rank's sendbuf (or its in-place recvbuf) and recvbuf are significant.
 * `in_place_ok`: MPI_IN_PLACE is allowed as sendbuf here. */
static int reduction_args(struct coll_ctx *ctx, const char *where, struct coll_args *args, void *sendbuf,
                          void *recvbuf, int count, size_t out_count, MPI_Datatype type, MPI_Op op,
                          bool reads, bool writes, bool in_place_ok)
{
    int rc = MPI_SUCCESS;
    if (count < 0)
        return error_report(coll_errcomm(ctx), MPI_ERR_COUNT, where, "negative count %d", count);
    args->in_place = sendbuf == MPI_IN_PLACE;
    if (args->in_place && (!in_place_ok || ctx->inter))
        return coll_no_in_place(ctx, where, sendbuf, "sendbuf");
    if (reads && !args->in_place)
        rc = coll_check_data(ctx, where, sendbuf, count, type);
    if (rc == MPI_SUCCESS && (writes || args->in_place))
        rc = coll_check_data(ctx, where, recvbuf, args->in_place ? count : (int)out_count, type);
    if (rc == MPI_SUCCESS && !reads && !writes) {
        /* Not significant here, but the type must still be a type for the op check. */
        const char *why;
        if (dt_check_usable(type, &why) != MPI_SUCCESS)
            return error_report(coll_errcomm(ctx), MPI_ERR_TYPE, where, "%s", why);
    }
    if (rc == MPI_SUCCESS)
        rc = coll_check_op(ctx, where, &args->plan, op, type);
    args->input = args->in_place ? recvbuf : sendbuf;
    args->output = recvbuf;
    return rc;
}

int PMPI_Reduce(void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm)
{
    const char *where = "MPI_Reduce";
    struct coll_ctx ctx;
    int rc = coll_check_comm(&ctx, comm, where);
    if (rc == MPI_SUCCESS)
        rc = coll_check_root(&ctx, where, root);
    if (rc != MPI_SUCCESS)
        return rc;
    enum coll_role role = coll_role_of(&ctx, root);
    struct coll_args args;
    coll_args_init(&args, COLL_REDUCE, root);
    args.count = (size_t)(count > 0 ? count : 0);
    bool reads = role == ROLE_MEMBER || !ctx.inter;
    bool writes = role == ROLE_ROOT;
    rc = reduction_args(&ctx, where, &args, sendbuf, recvbuf, count, args.count, datatype, op, reads, writes,
                        role == ROLE_ROOT);
    if (rc != MPI_SUCCESS)
        return rc;
    return run(&ctx, &args, where);
}
STRAND_MPI_ALIAS(MPI_Reduce);

int PMPI_Allreduce(void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const char *where = "MPI_Allreduce";
    struct coll_ctx ctx;
    int rc = coll_check_comm(&ctx, comm, where);
    if (rc != MPI_SUCCESS)
        return rc;
    struct coll_args args;
    coll_args_init(&args, COLL_ALLREDUCE, 0);
    args.count = (size_t)(count > 0 ? count : 0);
    rc = reduction_args(&ctx, where, &args, sendbuf, recvbuf, count, args.count, datatype, op, true, true, true);
    if (rc != MPI_SUCCESS)
        return rc;
    return run(&ctx, &args, where);
}
STRAND_MPI_ALIAS(MPI_Allreduce);

/* Reduce_scatter(_block): the input vector has `total` elements (the sum
 * of the blocks of this rank's group); this rank receives `mine`. */
static int reduce_scatter(const char *where, enum coll_kind kind, void *sendbuf, void *recvbuf,
                          const int *recvcounts, int recvcount, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm)
{
    struct coll_ctx ctx;
    int rc = coll_check_comm(&ctx, comm, where);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t total = 0;
    int mine = recvcount;
    if (kind == COLL_REDUCE_SCATTER) {
        if (recvcounts == NULL)
            return error_report(coll_errcomm(&ctx), MPI_ERR_ARG, where, "recvcounts must not be NULL");
        for (int i = 0; i < ctx.local_size; i++) {
            if (recvcounts[i] < 0)
                return error_report(coll_errcomm(&ctx), MPI_ERR_COUNT, where, "negative count %d for rank %d",
                                    recvcounts[i], i);
            total += (size_t)recvcounts[i];
        }
        mine = recvcounts[ctx.rank];
    } else if (recvcount >= 0) {
        total = (size_t)recvcount * (size_t)ctx.local_size;
    }
    if (total > (size_t)INT32_MAX)
        return error_report(coll_errcomm(&ctx), MPI_ERR_COUNT, where, "vector of %zu elements is too long",
                            total);
    struct coll_args args;
    coll_args_init(&args, kind, 0);
    args.recvcounts = kind == COLL_REDUCE_SCATTER ? recvcounts : NULL;
    rc = reduction_args(&ctx, where, &args, sendbuf, recvbuf, (int)total, (size_t)(mine > 0 ? mine : 0),
                        datatype, op, true, true, true);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mine < 0)
        return error_report(coll_errcomm(&ctx), MPI_ERR_COUNT, where, "negative count %d", mine);
    args.count = (size_t)mine;
    return run(&ctx, &args, where);
}

int PMPI_Reduce_scatter(void *sendbuf, void *recvbuf, int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm)
{
    return reduce_scatter("MPI_Reduce_scatter", COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcounts, 0,
                          datatype, op, comm);
}
STRAND_MPI_ALIAS(MPI_Reduce_scatter);

int PMPI_Reduce_scatter_block(void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm)
{
    return reduce_scatter("MPI_Reduce_scatter_block", COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, NULL,
                          recvcount, datatype, op, comm);
}
STRAND_MPI_ALIAS(MPI_Reduce_scatter_block);

static int scan(const char *where, enum coll_kind kind, void *sendbuf, void *recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    struct coll_ctx ctx;
    int rc = coll_check_comm(&ctx, comm, where);
    if (rc == MPI_SUCCESS)
        rc = coll_intra_only(&ctx, where);
    if (rc != MPI_SUCCESS)
        return rc;
    struct coll_args args;
    coll_args_init(&args, kind, 0);
    args.count = (size_t)(count > 0 ? count : 0);
    rc = reduction_args(&ctx, where, &args, sendbuf, recvbuf, count, args.count, datatype, op, true, true, true);
    if (rc != MPI_SUCCESS)
        return rc;
    return run(&ctx, &args, where);
}

int PMPI_Scan(void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return scan("MPI_Scan", COLL_SCAN, sendbuf, recvbuf, count, datatype, op, comm);
}
STRAND_MPI_ALIAS(MPI_Scan);

int PMPI_Exscan(void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return scan("MPI_Exscan", COLL_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm);
}
STRAND_MPI_ALIAS(MPI_Exscan);
