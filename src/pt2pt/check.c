/* Argument validation shared by every point-to-point call (DESIGN §13):
 * each failure reports the right error class through the communicator's
 * error handler, naming the function. */
#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "pt2pt.h"

/* With MPI_PROC_NULL as the peer no data moves, so, as other MPIs do, the
 * buffer and datatype are not checked (MPI_DATATYPE_NULL is accepted). */
static int check_common(const char *where, MPI_Comm comm, struct strand_comm **c, const void *buf,
                        int count, MPI_Datatype type, bool peer_is_null)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    *c = comm_lookup(comm);
    if (*c == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_COMM, where, "invalid communicator");
    if (count < 0)
        return error_report(comm, MPI_ERR_COUNT, where, "negative count %d", count);
    if (peer_is_null)
        return MPI_SUCCESS;
    const char *why;
    rc = dt_check_usable(type, &why);
    if (rc != MPI_SUCCESS)
        return error_report(comm, rc, where, "%s", why);
    if (dt_buffer_is_invalid(buf, count, type))
        return error_report(comm, MPI_ERR_BUFFER, where, "NULL buffer with count %d", count);
    return MPI_SUCCESS;
}

int check_send_args(const char *where, MPI_Comm comm, struct strand_comm **c, const void *buf,
                    int count, MPI_Datatype type, int dest, int tag)
{
    int rc = check_common(where, comm, c, buf, count, type, dest == MPI_PROC_NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    int size = (*c)->core->size;
    if (dest != MPI_PROC_NULL && (dest < 0 || dest >= size))
        return error_report(comm, MPI_ERR_RANK, where, "invalid destination rank %d (communicator size %d)",
                            dest, size);
    if (tag < 0)
        return error_report(comm, MPI_ERR_TAG, where, "invalid tag %d (tags of sends are 0..MPI_TAG_UB)", tag);
    return MPI_SUCCESS;
}

int check_recv_args(const char *where, MPI_Comm comm, struct strand_comm **c, const void *buf,
                    int count, MPI_Datatype type, int source, int tag)
{
    int rc = check_common(where, comm, c, buf, count, type, source == MPI_PROC_NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    int size = (*c)->core->size;
    if (source != MPI_PROC_NULL && source != MPI_ANY_SOURCE && (source < 0 || source >= size))
        return error_report(comm, MPI_ERR_RANK, where, "invalid source rank %d (communicator size %d)",
                            source, size);
    if (tag < 0 && tag != MPI_ANY_TAG)
        return error_report(comm, MPI_ERR_TAG, where, "invalid tag %d", tag);
    return MPI_SUCCESS;
}
