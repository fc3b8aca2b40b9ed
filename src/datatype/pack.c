/* MPI_Pack / MPI_Unpack / MPI_Pack_size: the native packed format is the
 * type's data bytes in type-map order, moved by the copy engine. */
#include <stdint.h>

#include "../comm/comm.h"
#include "datatype.h"

static int pack_check(const char *where, MPI_Comm comm, int count, MPI_Datatype t, const void *position)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm_lookup(comm) == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_COMM, where, "invalid communicator");
    if (count < 0)
        return error_report(comm, MPI_ERR_COUNT, where, "negative count %d", count);
    const char *why;
    rc = dt_check_usable(t, &why);
    if (rc != MPI_SUCCESS)
        return error_report(comm, rc, where, "%s", why);
    if (position == NULL)
        return error_report(comm, MPI_ERR_ARG, where, "position is NULL");
    return MPI_SUCCESS;
}

/* Bytes of `count` elements, or -1 when that exceeds an int. */
static long packed_bytes(int count, MPI_Datatype t)
{
    size_t bytes;
    if (__builtin_mul_overflow((size_t)count, t->size, &bytes) || bytes > INT32_MAX)
        return -1;
    return (long)bytes;
}

int PMPI_Pack(void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
              MPI_Comm comm)
{
    const char *where = "MPI_Pack";
    int rc = pack_check(where, comm, incount, datatype, position);
    if (rc != MPI_SUCCESS)
        return rc;
    long need = packed_bytes(incount, datatype);
    if (need < 0)
        return error_report(comm, MPI_ERR_COUNT, where, "%d elements exceed the int range of bytes", incount);
    if (*position < 0 || outsize < 0 || *position > outsize || need > outsize - *position)
        return error_report(comm, MPI_ERR_TRUNCATE, where,
                            "%ld bytes do not fit at position %d of a %d-byte buffer", need, *position, outsize);
    if (need > 0 && (outbuf == NULL || dt_buffer_is_invalid(inbuf, incount, datatype)))
        return error_report(comm, MPI_ERR_BUFFER, where, "NULL buffer");
    dt_pack((char *)outbuf + *position, inbuf, (size_t)incount, datatype);
    *position += (int)need;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Pack);

int PMPI_Unpack(void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm)
{
    const char *where = "MPI_Unpack";
    int rc = pack_check(where, comm, outcount, datatype, position);
    if (rc != MPI_SUCCESS)
        return rc;
    long need = packed_bytes(outcount, datatype);
    if (need < 0)
        return error_report(comm, MPI_ERR_COUNT, where, "%d elements exceed the int range of bytes", outcount);
    if (*position < 0 || insize < 0 || *position > insize || need > insize - *position)
        return error_report(comm, MPI_ERR_TRUNCATE, where,
                            "%ld bytes wanted at position %d of a %d-byte buffer", need, *position, insize);
    if (need > 0 && (inbuf == NULL || dt_buffer_is_invalid(outbuf, outcount, datatype)))
        return error_report(comm, MPI_ERR_BUFFER, where, "NULL buffer");
    dt_unpack(outbuf, (size_t)outcount, datatype, (char *)inbuf + *position, (size_t)need);
    *position += (int)need;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Unpack);

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    const char *where = "MPI_Pack_size";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm_lookup(comm) == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_COMM, where, "invalid communicator");
    if (incount < 0)
        return error_report(comm, MPI_ERR_COUNT, where, "negative count %d", incount);
    if (!dt_valid(datatype))
        return error_report(comm, MPI_ERR_TYPE, where, "invalid datatype");
    if (size == NULL)
        return error_report(comm, MPI_ERR_ARG, where, "size is NULL");
    long need = packed_bytes(incount, datatype);
    if (need < 0)
        return error_report(comm, MPI_ERR_COUNT, where, "%d elements exceed the int range of bytes", incount);
    *size = (int)need;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Pack_size);
