/* MPI_Type_get_envelope / MPI_Type_get_contents: a type returns exactly the
 * arguments it was built with (kept by dt_create). */
#include <string.h>

#include "../core/core.h"
#include "datatype.h"

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    const char *where = "MPI_Type_get_envelope";
    int rc = dt_check_arg(where, datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    if (num_integers == NULL || num_addresses == NULL || num_datatypes == NULL || combiner == NULL)
        return dt_error(MPI_ERR_ARG, where, "an output argument is NULL");
    *num_integers = datatype->nints;
    *num_addresses = datatype->naddrs;
    *num_datatypes = datatype->ntypes;
    *combiner = datatype->combiner;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Type_get_envelope);

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int array_of_integers[], MPI_Aint array_of_addresses[],
                           MPI_Datatype array_of_datatypes[])
{
    const char *where = "MPI_Type_get_contents";
    int rc = dt_check_arg(where, datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Datatype t = datatype;
    if (t->combiner == MPI_COMBINER_NAMED)
        return dt_error(MPI_ERR_TYPE, where, "%s is a named type: it has no contents", t->name);
    if (max_integers < t->nints || max_addresses < t->naddrs || max_datatypes < t->ntypes)
        return dt_error(MPI_ERR_ARG, where,
                        "arrays too small: the type needs %d integers, %d addresses, %d datatypes "
                        "(given %d, %d, %d)", t->nints, t->naddrs, t->ntypes, max_integers,
                        max_addresses, max_datatypes);
    if ((t->nints > 0 && array_of_integers == NULL) || (t->naddrs > 0 && array_of_addresses == NULL) ||
        (t->ntypes > 0 && array_of_datatypes == NULL))
        return dt_error(MPI_ERR_ARG, where, "a needed output array is NULL");
    if (t->nints > 0)
        memcpy(array_of_integers, t->ints, (size_t)t->nints * sizeof(int));
    if (t->naddrs > 0)
        memcpy(array_of_addresses, t->addrs, (size_t)t->naddrs * sizeof(MPI_Aint));
    /* Derived types come back as handles the caller must free. */
    for (int i = 0; i < t->ntypes; i++) {
        array_of_datatypes[i] = t->types[i];
        dt_retain(t->types[i]);
    }
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Type_get_contents);
