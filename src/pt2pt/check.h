/* Argument validation shared by every point-to-point call (DESIGN §13):
 * each failure reports the right error class through the communicator's
 * error handler, naming the function (`where`).
 *
 * These run on every message, so the checks that pass are a few loads
 * and compares inline in the calling entry point; check.c explains a
 * failure. On success *c is the communicator's handle. */
#ifndef STRAND_PT2PT_CHECK_H
#define STRAND_PT2PT_CHECK_H

#include "../comm/comm.h"
#include "../datatype/datatype.h"

/* check.c: the error report once a check failed. */
int check_failed(const char *where, MPI_Comm comm, const void *buf, int count,
                 MPI_Datatype type, int peer, int tag, bool is_send);

static inline bool check_data_ok(const void *buf, int count, MPI_Datatype type)
{
    /* dt_check_usable and dt_buffer_is_invalid (datatype.h) where they pass */
    return type != MPI_DATATYPE_NULL && type->magic == DT_MAGIC && type->committed &&
           (buf != NULL || count == 0 || type->size == 0 || type->true_lb != 0);
}

/* With MPI_PROC_NULL as the peer no data moves, so, as other MPIs do, the
 * buffer and datatype are not checked (MPI_DATATYPE_NULL is accepted). */
static inline bool check_common_ok(MPI_Comm comm, struct strand_comm **c, const void *buf, int count,
                                   MPI_Datatype type, bool peer_is_null)
{
    struct rank *self = strand_self;
    if (STRAND_UNLIKELY(self == NULL || self->mpi_state != RANK_MPI_INITIALIZED)) {
        *c = NULL;
        return false;
    }
    *c = comm_lookup(comm);
    return *c != NULL && count >= 0 && (peer_is_null || check_data_ok(buf, count, type));
}

static inline int check_send_args(const char *where, MPI_Comm comm, struct strand_comm **c, const void *buf,
                                  int count, MPI_Datatype type, int dest, int tag)
{
    if (STRAND_LIKELY(check_common_ok(comm, c, buf, count, type, dest == MPI_PROC_NULL) &&
                      (dest == MPI_PROC_NULL || (dest >= 0 && dest < (*c)->core->size)) && tag >= 0))
        return MPI_SUCCESS;
    return check_failed(where, comm, buf, count, type, dest, tag, true);
}

static inline int check_recv_args(const char *where, MPI_Comm comm, struct strand_comm **c, const void *buf,
                                  int count, MPI_Datatype type, int source, int tag)
{
    if (STRAND_LIKELY(check_common_ok(comm, c, buf, count, type, source == MPI_PROC_NULL) &&
                      (source == MPI_PROC_NULL || source == MPI_ANY_SOURCE ||
                       (source >= 0 && source < (*c)->core->size)) &&
                      (tag >= 0 || tag == MPI_ANY_TAG)))
        return MPI_SUCCESS;
    return check_failed(where, comm, buf, count, type, source, tag, false);
}

#endif
