/* The algorithm table of communicator cores whose members all live in this
 * node process: every collective maps to one of the shared-address-space
 * engines. */
#include "coll_impl.h"

static int shm_barrier(struct coll_ctx *ctx, struct coll_args *args)
{
    if (coll_meet_fits(ctx))
        coll_meet_published(ctx);
    else
        coll_gate_pass(ctx);
    return MPI_SUCCESS;
}

static int shm_alltoall(struct coll_ctx *ctx, struct coll_args *args)
{
    return args->in_place ? coll_alltoall_in_place(ctx, args) : coll_exchange_all(ctx, args);
}

const struct coll_algorithms coll_shm_algorithms = {
    .name = "shared-address-space",
    .run = {
        [COLL_BARRIER] = shm_barrier,
        [COLL_BCAST] = coll_rooted_engine,
        [COLL_GATHER] = coll_rooted_engine,
        [COLL_GATHERV] = coll_rooted_engine,
        [COLL_SCATTER] = coll_rooted_engine,
        [COLL_SCATTERV] = coll_rooted_engine,
        [COLL_ALLGATHER] = coll_exchange_all,
        [COLL_ALLGATHERV] = coll_exchange_all,
        [COLL_ALLTOALL] = shm_alltoall,
        [COLL_ALLTOALLV] = shm_alltoall,
        [COLL_ALLTOALLW] = shm_alltoall,
        [COLL_REDUCE] = coll_reduce_engine,
        [COLL_ALLREDUCE] = coll_reduce_engine,
        [COLL_REDUCE_SCATTER] = coll_reduce_engine,
        [COLL_REDUCE_SCATTER_BLOCK] = coll_reduce_engine,
        [COLL_SCAN] = coll_prefix_engine,
        [COLL_EXSCAN] = coll_prefix_engine,
    },
};
