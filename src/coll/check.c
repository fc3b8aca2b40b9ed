/* Argument checks of the collective entry points (DESIGN §13). */
#include "../datatype/datatype.h"
#include "check.h"

int coll_check_comm(struct coll_ctx *ctx, MPI_Comm comm, const char *where)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (coll_ctx_open(ctx, comm) == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_COMM, where, "invalid communicator");
    return MPI_SUCCESS;
}

static int check_type(const struct coll_ctx *ctx, const char *where, MPI_Datatype type)
{
    const char *why;
    int rc = dt_check_usable(type, &why);
    return rc == MPI_SUCCESS ? rc : error_report(coll_errcomm(ctx), rc, where, "%s", why);
}

int coll_check_data(const struct coll_ctx *ctx, const char *where, const void *buf, int count,
                    MPI_Datatype type)
{
    if (count < 0)
        return error_report(coll_errcomm(ctx), MPI_ERR_COUNT, where, "negative count %d", count);
    int rc = check_type(ctx, where, type);
    if (rc != MPI_SUCCESS)
        return rc;
    if (buf == MPI_IN_PLACE)
        return error_report(coll_errcomm(ctx), MPI_ERR_BUFFER, where, "MPI_IN_PLACE is not allowed here");
    if (dt_buffer_is_invalid(buf, count, type))
        return error_report(coll_errcomm(ctx), MPI_ERR_BUFFER, where, "NULL buffer with count %d", count);
    return MPI_SUCCESS;
}

int coll_check_vector(const struct coll_ctx *ctx, const char *where, const void *buf, const int *counts,
                      const int *displs, int n, MPI_Datatype type, const MPI_Datatype *types,
                      bool per_peer_types)
{
    MPI_Comm ec = coll_errcomm(ctx);
    if (counts == NULL || displs == NULL)
        return error_report(ec, MPI_ERR_ARG, where, "counts and displacements must not be NULL");
    if (buf == MPI_IN_PLACE)
        return error_report(ec, MPI_ERR_BUFFER, where, "MPI_IN_PLACE is not allowed here");
    if (!per_peer_types) {
        int rc = check_type(ctx, where, type);
        if (rc != MPI_SUCCESS)
            return rc;
    } else if (types == NULL) {
        return error_report(ec, MPI_ERR_ARG, where, "datatypes must not be NULL");
    }
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0)
            return error_report(ec, MPI_ERR_COUNT, where, "negative count %d for rank %d", counts[i], i);
        if (per_peer_types && counts[i] > 0) {
            int rc = check_type(ctx, where, types[i]);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        MPI_Datatype t = per_peer_types ? types[i] : type;
        if (counts[i] > 0 && buf == NULL && t->true_lb == 0 && t->size > 0 && displs[i] == 0)
            return error_report(ec, MPI_ERR_BUFFER, where, "NULL buffer with count %d", counts[i]);
    }
    return MPI_SUCCESS;
}

int coll_check_root(const struct coll_ctx *ctx, const char *where, int root)
{
    if (ctx->inter) {
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < ctx->peer_size))
            return MPI_SUCCESS;
        return error_report(coll_errcomm(ctx), MPI_ERR_ROOT, where,
                            "invalid root %d (intercommunicator: MPI_ROOT, MPI_PROC_NULL or 0..%d)", root,
                            ctx->peer_size - 1);
    }
    if (root >= 0 && root < ctx->local_size)
        return MPI_SUCCESS;
    return error_report(coll_errcomm(ctx), MPI_ERR_ROOT, where, "invalid root %d (communicator size %d)",
                        root, ctx->local_size);
}

int coll_check_op(const struct coll_ctx *ctx, const char *where, struct op_plan *plan, MPI_Op op,
                  MPI_Datatype type)
{
    const char *why;
    int rc = op_plan_init(plan, op, type, false, &why);
    return rc == MPI_SUCCESS ? rc : error_report(coll_errcomm(ctx), rc, where, "%s", why);
}

int coll_no_in_place(const struct coll_ctx *ctx, const char *where, const void *buf, const char *which)
{
    if (buf != MPI_IN_PLACE)
        return MPI_SUCCESS;
    return error_report(coll_errcomm(ctx), MPI_ERR_BUFFER, where, "MPI_IN_PLACE is not allowed as %s%s",
                        which, ctx->inter ? " on an intercommunicator" : " here");
}

int coll_intra_only(const struct coll_ctx *ctx, const char *where)
{
    if (!ctx->inter)
        return MPI_SUCCESS;
    return error_report(coll_errcomm(ctx), MPI_ERR_COMM, where,
                        "not defined on intercommunicators (MPI-2.2)");
}
