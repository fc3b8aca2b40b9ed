/* Decoding constructor arguments into blocks; visiting the type map;
 * counting basic elements in a prefix of a message. */
#include "../core/core.h"
#include "typemap.h"

bool typemap_is_vector(MPI_Datatype t)
{
    return t->combiner == MPI_COMBINER_VECTOR || t->combiner == MPI_COMBINER_HVECTOR;
}

size_t typemap_nblocks(MPI_Datatype t)
{
    if (t->predefined)
        return 0;
    switch (t->combiner) {
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_STRUCT:
        return (size_t)t->ints[0];
    default:
        return 1;
    }
}

MPI_Aint typemap_vector_stride(MPI_Datatype t)
{
    if (t->combiner == MPI_COMBINER_HVECTOR)
        return t->addrs[0];
    return (MPI_Aint)t->ints[2] * dt_extent(t->types[0]);
}

static bool scaled(MPI_Aint index, MPI_Aint unit, MPI_Aint *out)
{
    return !__builtin_mul_overflow(index, unit, out);
}

bool typemap_block(MPI_Datatype t, size_t i, struct typemap_block *out)
{
    const int *ints = t->ints;
    int count = t->nints > 0 ? ints[0] : 0;
    out->type = t->ntypes > 0 ? t->types[0] : NULL;
    out->disp = 0;
    out->n = 1;
    switch (t->combiner) {
    case MPI_COMBINER_CONTIGUOUS:
        out->n = (size_t)count;
        return true;
    case MPI_COMBINER_VECTOR: {
        out->n = (size_t)ints[1];
        MPI_Aint stride;
        return scaled(ints[2], dt_extent(out->type), &stride) && scaled((MPI_Aint)i, stride, &out->disp);
    }
    case MPI_COMBINER_HVECTOR:
        out->n = (size_t)ints[1];
        return scaled((MPI_Aint)i, t->addrs[0], &out->disp);
    case MPI_COMBINER_INDEXED:
        out->n = (size_t)ints[1 + i];
        return scaled(ints[1 + count + i], dt_extent(out->type), &out->disp);
    case MPI_COMBINER_HINDEXED:
        out->n = (size_t)ints[1 + i];
        out->disp = t->addrs[i];
        return true;
    case MPI_COMBINER_INDEXED_BLOCK:
        out->n = (size_t)ints[1];
        return scaled(ints[2 + i], dt_extent(out->type), &out->disp);
    case MPI_COMBINER_STRUCT:
        out->type = t->types[i];
        out->n = (size_t)ints[1 + i];
        out->disp = t->addrs[i];
        return true;
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
        out->type = t->inner;
        return true;
    default: /* DUP, RESIZED */
        return true;
    }
}

int dt_visit(MPI_Datatype t, char *base, size_t count, dt_visit_fn fn, void *arg)
{
    if (count == 0 || t->nelements == 0)
        return 0;
    if (t->predefined)
        return fn(t, base, count, arg);
    MPI_Aint extent = dt_extent(t);
    size_t nblocks = typemap_nblocks(t);
    for (size_t e = 0; e < count; e++) {
        char *elem = base + (MPI_Aint)e * extent;
        for (size_t i = 0; i < nblocks; i++) {
            struct typemap_block b;
            typemap_block(t, i, &b);
            int rc = dt_visit(b.type, elem + b.disp, b.n, fn, arg);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

/* Basic elements in the first `bytes` of ONE predefined element; -1 when
 * the prefix ends inside a basic element. */
static long named_prefix_elements(MPI_Datatype t, size_t bytes)
{
    if (bytes == 0)
        return 0;
    if (t->basic != DT_BASIC_PAIR)
        return bytes == t->size ? 1 : -1;
    if (bytes == t->value_size)
        return 1;
    return bytes == t->size ? 2 : -1;
}

/* Basic elements in the first `bytes` of `count` elements of t (bytes is at
 * most count * size); -1 when the prefix ends inside a basic element. */
static long prefix_elements(MPI_Datatype t, size_t count, size_t bytes)
{
    if (t->size == 0 || bytes == 0)
        return 0;
    size_t whole = bytes / t->size, rest = bytes % t->size;
    long n = (long)(whole * t->nelements);
    if (rest == 0 || whole >= count)
        return n;
    long part;
    if (t->predefined) {
        part = named_prefix_elements(t, rest);
    } else {
        part = 0;
        size_t nblocks = typemap_nblocks(t);
        for (size_t i = 0; i < nblocks && rest > 0; i++) {
            struct typemap_block b;
            typemap_block(t, i, &b);
            size_t block_bytes = b.n * b.type->size;
            if (typemap_is_vector(t) && block_bytes > 0) {
                /* equal blocks: skip the whole ones at once */
                size_t skip = rest / block_bytes;
                part += (long)(skip * b.n * b.type->nelements);
                rest -= skip * block_bytes;
                if (rest == 0)
                    break;
                typemap_block(t, i + skip, &b);
                i = nblocks;
            }
            if (block_bytes <= rest) {
                part += (long)(b.n * b.type->nelements);
                rest -= block_bytes;
                continue;
            }
            long p = prefix_elements(b.type, b.n, rest);
            if (p < 0)
                return -1;
            part += p;
            rest = 0;
        }
    }
    return part < 0 ? -1 : n + part;
}

int dt_elements_from_bytes(MPI_Datatype t, size_t bytes)
{
    if (t->size == 0)
        return 0;
    size_t count = bytes / t->size + 1;
    long n = prefix_elements(t, count, bytes);
    if (n < 0 || n > INT32_MAX)
        return MPI_UNDEFINED;
    return (int)n;
}
