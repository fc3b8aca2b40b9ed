/* Generalized requests (MPI-2.2 §12.2): operations the program completes
 * itself, waited on with the ordinary Wait/Test calls. */
#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "pt2pt.h"

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
    int rc = error_check_initialized("MPI_Grequest_start");
    if (rc != MPI_SUCCESS)
        return rc;
    if (query_fn == NULL || request == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Grequest_start",
                            "query_fn and request must not be NULL");
    struct strand_request *req = request_alloc(strand_self, REQUEST_GENERALIZED);
    if (req == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Grequest_start", "cannot allocate a request");
    req->query_fn = query_fn;
    req->free_fn = free_fn;
    req->cancel_fn = cancel_fn;
    req->extra_state = extra_state;
    req->type = MPI_DATATYPE_NULL;
    request_set_empty_status(&req->status);
    *request = req;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Grequest_start);

void greq_release(struct rank *pool_owner, struct strand_request *req)
{
    if (atomic_fetch_add_explicit(&req->greq_releases, 1, memory_order_acq_rel) != 1)
        return;
    if (!req->greq_freed && req->free_fn != NULL)
        req->free_fn(req->extra_state);
    if (strand_self == pool_owner)
        request_free(pool_owner, req);
    else
        request_give_back(pool_owner, req);  /* the I/O thread, or any thread */
}

int PMPI_Grequest_complete(MPI_Request request)
{
    if (request == MPI_REQUEST_NULL || request->kind != REQUEST_GENERALIZED)
        return error_report(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                            "not a generalized request");
    /* May be called from any thread, even one that is not a rank. */
    struct rank *owner = request->done.owner;
    completion_signal(&request->done);
    greq_release(owner, request);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Grequest_complete);

static int status_set_elements(const char *where, MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    const char *why;
    if (status == NULL || status == MPI_STATUS_IGNORE)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "status must be real");
    int rc = dt_check_usable(datatype, &why);
    if (rc != MPI_SUCCESS)
        return error_report(MPI_COMM_WORLD, rc, where, "%s", why);
    if (count < 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_COUNT, where, "negative count %lld", count);
    /* Elements of a type's basic kind: bytes = count * basic element size. */
    int per_element = dt_elements_from_bytes(datatype, datatype->size);
    size_t basic = per_element > 0 ? datatype->size / (size_t)per_element : datatype->size;
    status->strand_count = count * (long long)basic;
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return status_set_elements("MPI_Status_set_elements", status, datatype, count);
}
STRAND_MPI_ALIAS(MPI_Status_set_elements);

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return status_set_elements("MPI_Status_set_elements_x", status, datatype, count);
}
STRAND_MPI_ALIAS(MPI_Status_set_elements_x);

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (status == NULL || status == MPI_STATUS_IGNORE)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_cancelled", "status must be real");
    status->strand_cancelled = flag != 0;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Status_set_cancelled);
