/* The reports of check.h: which argument is wrong, with its error class,
 * in the order the checks are made. */
#include "check.h"

int check_failed(const char *where, MPI_Comm comm, const void *buf, int count,
                 MPI_Datatype type, int peer, int tag, bool is_send)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    const struct strand_comm *c = comm_lookup(comm);
    if (c == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_COMM, where, "invalid communicator");
    if (count < 0)
        return error_report(comm, MPI_ERR_COUNT, where, "negative count %d", count);
    if (peer != MPI_PROC_NULL) {
        const char *why;
        rc = dt_check_usable(type, &why);
        if (rc != MPI_SUCCESS)
            return error_report(comm, rc, where, "%s", why);
        if (dt_buffer_is_invalid(buf, count, type))
            return error_report(comm, MPI_ERR_BUFFER, where, "NULL buffer with count %d", count);
    }
    int size = c->core->size;
    bool peer_ok = peer == MPI_PROC_NULL || (!is_send && peer == MPI_ANY_SOURCE) || (peer >= 0 && peer < size);
    if (!peer_ok)
        return error_report(comm, MPI_ERR_RANK, where, "invalid %s rank %d (communicator size %d)",
                            is_send ? "destination" : "source", peer, size);
    if (is_send)
        return error_report(comm, MPI_ERR_TAG, where, "invalid tag %d (tags of sends are 0..MPI_TAG_UB)", tag);
    return error_report(comm, MPI_ERR_TAG, where, "invalid tag %d", tag);
}
