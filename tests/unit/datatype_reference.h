/* A naive reference for the datatype engine: the type map of a type as a
 * list of basic elements (displacement, length), decoded only through the
 * public MPI_Type_get_envelope/get_contents and the standard's definitions
 * (subarray and darray element by element). */
#ifndef STRAND_DATATYPE_REFERENCE_H
#define STRAND_DATATYPE_REFERENCE_H

#include <stddef.h>
#include "mpi.h"

struct ref_entry {
    MPI_Aint disp;
    size_t len;
};

struct ref_map {
    struct ref_entry *v;
    size_t n, cap;
};

/* Appends the basic elements of `count` elements of t at `base`. */
void ref_flatten(MPI_Datatype t, MPI_Aint base, size_t count, struct ref_map *m);
void ref_free(struct ref_map *m);
/* Total data bytes of the map. */
size_t ref_bytes(const struct ref_map *m);
/* The map's data as a byte-offset stream: out[i] = offset of data byte i. */
MPI_Aint *ref_stream(const struct ref_map *m);
/* Basic elements entirely inside the first `bytes`; MPI_UNDEFINED when the
 * prefix ends inside one. */
int ref_elements(const struct ref_map *m, size_t bytes);

#endif
