/* Argument checks shared by the collective entry points. Each returns
 * MPI_SUCCESS or the error handler's result for the reported class; all
 * run before any synchronisation, so a rank with bad arguments returns
 * without entering the collective. */
#ifndef STRAND_COLL_CHECK_H
#define STRAND_COLL_CHECK_H

#include "coll_impl.h"

/* Initialized MPI and a live communicator: fills ctx. */
int coll_check_comm(struct coll_ctx *ctx, MPI_Comm comm, const char *where);
/* Count, datatype, and buffer of one block description. */
int coll_check_data(const struct coll_ctx *ctx, const char *where, const void *buf, int count,
                    MPI_Datatype type);
/* Counts and displacements for `n` peers (v variants: one `type`; w: `types`). */
int coll_check_vector(const struct coll_ctx *ctx, const char *where, const void *buf, const int *counts,
                      const int *displs, int n, MPI_Datatype type, const MPI_Datatype *types,
                      bool per_peer_types);
int coll_check_root(const struct coll_ctx *ctx, const char *where, int root);
int coll_check_op(const struct coll_ctx *ctx, const char *where, struct op_plan *plan, MPI_Op op,
                  MPI_Datatype type);
int coll_no_in_place(const struct coll_ctx *ctx, const char *where, const void *buf, const char *which);
int coll_intra_only(const struct coll_ctx *ctx, const char *where);
/* The handle errors are reported on. */
static inline MPI_Comm coll_errcomm(const struct coll_ctx *ctx) { return ctx->comm; }

#endif
