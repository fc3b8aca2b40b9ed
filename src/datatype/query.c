/* Validity checks and element counting shared by every data path, and the
 * MPI calls that only read a type. */
#include <stdlib.h>

#include "../core/core.h"
#include "datatype.h"

int dt_check_usable(MPI_Datatype t, const char **why)
{
    if (t == MPI_DATATYPE_NULL) {
        *why = "MPI_DATATYPE_NULL is not a datatype";
        return MPI_ERR_TYPE;
    }
    if (!t->committed) {
        *why = "the datatype is not committed (call MPI_Type_commit)";
        return MPI_ERR_TYPE;
    }
    return MPI_SUCCESS;
}

bool dt_buffer_is_invalid(const void *buf, int count, MPI_Datatype t)
{
    /* MPI_BOTTOM is NULL: a NULL buffer is only valid with absolute
     * displacements, i.e. when the data does not start at address 0. */
    return buf == NULL && count > 0 && t->size > 0 && t->true_lb == 0;
}

int dt_count_from_bytes(MPI_Datatype t, size_t bytes)
{
    if (t->size == 0)
        return 0;
    if (bytes % t->size != 0)
        return MPI_UNDEFINED;
    return (int)(bytes / t->size);
}

/* Size of the basic element that the type's blocks are made of. */
static size_t basic_element_size(MPI_Datatype t)
{
    if (t->basic == DT_BASIC_PAIR)
        return t->nblocks == 2 ? 0 : t->size / 2;   /* 0: pair with padding, see below */
    return t->size;
}

int dt_elements_from_bytes(MPI_Datatype t, size_t bytes)
{
    if (t->size == 0)
        return 0;
    size_t element = basic_element_size(t);
    if (element != 0)
        return bytes % element == 0 ? (int)(bytes / element) : MPI_UNDEFINED;
    /* C pair types: value then int; a partial pair counts its value. */
    size_t whole = bytes / t->size, rest = bytes % t->size;
    size_t value = t->blocks[0].len;
    if (rest == 0)
        return (int)(2 * whole);
    return rest == value ? (int)(2 * whole + 1) : MPI_UNDEFINED;
}

void dt_retain(MPI_Datatype t)
{
    if (!t->predefined)
        atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
}

void dt_release(MPI_Datatype t)
{
    if (t->predefined)
        return;
    if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) == 1) {
        if (t->blocks != &t->single_block)
            free(t->blocks);
        free(t);
    }
}

static int status_check(const char *where, MPI_Status *status, MPI_Datatype t)
{
    const char *why;
    if (status == NULL || status == MPI_STATUS_IGNORE)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "status must be a real MPI_Status");
    if (t == MPI_DATATYPE_NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_TYPE, where, "MPI_DATATYPE_NULL is not a datatype");
    int rc = dt_check_usable(t, &why);
    if (rc != MPI_SUCCESS)
        return error_report(MPI_COMM_WORLD, rc, where, "%s", why);
    return MPI_SUCCESS;
}

int PMPI_Get_count(MPI_Status *status, MPI_Datatype datatype, int *count)
{
    int rc = status_check("MPI_Get_count", status, datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    *count = dt_count_from_bytes(datatype, (size_t)status->strand_count);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Get_count);

int PMPI_Get_elements(MPI_Status *status, MPI_Datatype datatype, int *count)
{
    int rc = status_check("MPI_Get_elements", status, datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    *count = dt_elements_from_bytes(datatype, (size_t)status->strand_count);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Get_elements);

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    if (datatype == MPI_DATATYPE_NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_size", "MPI_DATATYPE_NULL is not a datatype");
    *size = (int)datatype->size;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Type_size);
