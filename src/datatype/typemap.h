/* A derived type's type map as an ordered sequence of blocks, each `n`
 * consecutive copies of one child type (at the child's extent) at a byte
 * displacement, decoded from the constructor's arguments. Every other part
 * of the engine (bounds, layout, visiting, element counts) reads types
 * through this one decoder. */
#ifndef STRAND_DATATYPE_TYPEMAP_H
#define STRAND_DATATYPE_TYPEMAP_H

#include "datatype.h"

struct typemap_block {
    MPI_Datatype type;
    MPI_Aint disp;
    size_t n;
};

/* Vectors: equal blocks at a constant stride (the decoder's blocks 0 and
 * nblocks-1 bound the others). */
bool typemap_is_vector(MPI_Datatype t);
size_t typemap_nblocks(MPI_Datatype t);
/* False when the displacement overflows. */
bool typemap_block(MPI_Datatype t, size_t i, struct typemap_block *out);
/* Vectors: the byte stride between blocks. */
MPI_Aint typemap_vector_stride(MPI_Datatype t);

#endif
