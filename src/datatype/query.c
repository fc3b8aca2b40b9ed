/* Validity checks and element counting shared by every data path, and the
 * MPI calls that only read a type. */
#include <stdint.h>
#include <stdlib.h>

#include "../core/core.h"
#include "datatype.h"

bool dt_valid(MPI_Datatype t)
{
    return t != MPI_DATATYPE_NULL && t->magic == DT_MAGIC;
}

int dt_check_usable(MPI_Datatype t, const char **why)
{
    if (t == MPI_DATATYPE_NULL) {
        *why = "MPI_DATATYPE_NULL is not a datatype";
        return MPI_ERR_TYPE;
    }
    if (t->magic != DT_MAGIC) {
        *why = "invalid datatype handle";
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
    if (bytes % t->size != 0 || bytes / t->size > INT32_MAX)
        return MPI_UNDEFINED;
    return (int)(bytes / t->size);
}

/* A derived type (dt_retain and dt_release in datatype.h skip the others). */
void dt_retain_derived(MPI_Datatype t)
{
    atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
}

void dt_release_derived(MPI_Datatype t)
{
    if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1)
        return;
    for (int i = 0; i < t->ntypes; i++)
        dt_release(t->types[i]);
    if (t->inner != NULL)
        dt_release(t->inner);
    dt_layout_free(&t->layout);
    free(t->addrs);     /* the one allocation holding all three argument arrays */
    t->magic = 0;
    free(t);
}

static int status_check(const char *where, MPI_Status *status, MPI_Datatype t, const int *count)
{
    const char *why;
    if (status == NULL || status == MPI_STATUS_IGNORE)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "status must be a real MPI_Status");
    if (count == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "count is NULL");
    int rc = dt_check_usable(t, &why);
    if (rc != MPI_SUCCESS)
        return error_report(MPI_COMM_WORLD, rc, where, "%s", why);
    return MPI_SUCCESS;
}

int PMPI_Get_count(MPI_Status *status, MPI_Datatype datatype, int *count)
{
    int rc = status_check("MPI_Get_count", status, datatype, count);
    if (rc != MPI_SUCCESS)
        return rc;
    *count = dt_count_from_bytes(datatype, (size_t)status->strand_count);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Get_count);

int PMPI_Get_elements(MPI_Status *status, MPI_Datatype datatype, int *count)
{
    int rc = status_check("MPI_Get_elements", status, datatype, count);
    if (rc != MPI_SUCCESS)
        return rc;
    *count = dt_elements_from_bytes(datatype, (size_t)status->strand_count);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Get_elements);

/* Initialized, a datatype, and a non-NULL output argument. */
static int query_check(const char *where, MPI_Datatype t, const void *out)
{
    int rc = dt_check_arg(where, t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (out == NULL)
        return dt_error(MPI_ERR_ARG, where, "output argument is NULL");
    return MPI_SUCCESS;
}

/* A type's bounds (the true ones with `true_bounds`) after the checks of
 * a query with the two outputs out1 and out2. */
static int bounds_of(const char *where, MPI_Datatype t, bool true_bounds, const void *out1, const void *out2,
                     MPI_Aint *lb, MPI_Aint *extent)
{
    int rc = query_check(where, t, out1);
    if (rc == MPI_SUCCESS)
        rc = query_check(where, t, out2);
    if (rc != MPI_SUCCESS)
        return rc;
    *lb = true_bounds ? t->true_lb : t->lb;
    *extent = true_bounds ? t->true_ub - t->true_lb : dt_extent(t);
    return MPI_SUCCESS;
}

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    int rc = query_check("MPI_Type_size", datatype, size);
    if (rc != MPI_SUCCESS)
        return rc;
    *size = datatype->size > INT32_MAX ? MPI_UNDEFINED : (int)datatype->size;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Type_size);

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    MPI_Aint l, e;
    int rc = bounds_of("MPI_Type_get_extent", datatype, false, lb, extent, &l, &e);
    if (rc == MPI_SUCCESS) {
        *lb = l;
        *extent = e;
    }
    return rc;
}
STRAND_MPI_ALIAS(MPI_Type_get_extent);

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    MPI_Aint l, e;
    int rc = bounds_of("MPI_Type_get_true_extent", datatype, true, true_lb, true_extent, &l, &e);
    if (rc == MPI_SUCCESS) {
        *true_lb = l;
        *true_extent = e;
    }
    return rc;
}
STRAND_MPI_ALIAS(MPI_Type_get_true_extent);

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    int rc = query_check("MPI_Type_extent", datatype, extent);
    if (rc != MPI_SUCCESS)
        return rc;
    *extent = dt_extent(datatype);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Type_extent);

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    int rc = query_check("MPI_Type_lb", datatype, displacement);
    if (rc != MPI_SUCCESS)
        return rc;
    *displacement = datatype->lb;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Type_lb);

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    int rc = query_check("MPI_Type_ub", datatype, displacement);
    if (rc != MPI_SUCCESS)
        return rc;
    *displacement = datatype->ub;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Type_ub);

static int get_address(const char *where, void *location, MPI_Aint *address)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (address == NULL)
        return dt_error(MPI_ERR_ARG, where, "address is NULL");
    /* MPI_BOTTOM is address 0, so an address is the pointer's value. */
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

int PMPI_Get_address(void *location, MPI_Aint *address)
{
    return get_address("MPI_Get_address", location, address);
}
STRAND_MPI_ALIAS(MPI_Get_address);

int PMPI_Address(void *location, MPI_Aint *address)
{
    return get_address("MPI_Address", location, address);
}
STRAND_MPI_ALIAS(MPI_Address);

/* --- large-count queries (MPI-3 names, for I/O tools; MPI_Count is 64 bits) */

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    int rc = query_check("MPI_Type_size_x", datatype, size);
    if (rc != MPI_SUCCESS)
        return rc;
    *size = (MPI_Count)datatype->size;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Type_size_x);

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    MPI_Aint l, e;
    int rc = bounds_of("MPI_Type_get_extent_x", datatype, false, lb, extent, &l, &e);
    if (rc == MPI_SUCCESS) {
        *lb = l;
        *extent = e;
    }
    return rc;
}
STRAND_MPI_ALIAS(MPI_Type_get_extent_x);

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    MPI_Aint l, e;
    int rc = bounds_of("MPI_Type_get_true_extent_x", datatype, true, true_lb, true_extent, &l, &e);
    if (rc == MPI_SUCCESS) {
        *true_lb = l;
        *true_extent = e;
    }
    return rc;
}
STRAND_MPI_ALIAS(MPI_Type_get_true_extent_x);

int PMPI_Get_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    const char *where = "MPI_Get_elements_x";
    const char *why;
    if (status == NULL || status == MPI_STATUS_IGNORE)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "status must be a real MPI_Status");
    if (count == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "count is NULL");
    int rc = dt_check_usable(datatype, &why);
    if (rc != MPI_SUCCESS)
        return error_report(MPI_COMM_WORLD, rc, where, "%s", why);
    size_t bytes = (size_t)status->strand_count;
    if (datatype->size == 0) {
        *count = 0;
        return MPI_SUCCESS;
    }
    /* Whole elements, then the basic elements of the partial one. */
    int partial = dt_elements_from_bytes(datatype, bytes % datatype->size);
    if (partial == MPI_UNDEFINED) {
        *count = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *count = (MPI_Count)(bytes / datatype->size) * (MPI_Count)datatype->nelements + partial;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Get_elements_x);
