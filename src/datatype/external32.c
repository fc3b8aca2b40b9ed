/* The "external32" representation (MPI-2.2 §13.5.2): every basic element
 * big-endian, at the standard's size, byte aligned, in type-map order.
 * Sizes that differ from this platform's: MPI_LONG and MPI_UNSIGNED_LONG
 * are 4 bytes, MPI_WCHAR 2, long double an IEEE binary128. A value that does
 * not fit its external size is an MPI_ERR_CONVERSION, never truncated
 * silently. */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "../core/core.h"
#include "datatype.h"
#include "typemap.h"

enum conv { CONV_SINT, CONV_UINT, CONV_FLOAT, CONV_LONG_DOUBLE };

/* `count` consecutive values of one kind at `offset` within an element. */
struct part {
    enum conv conv;
    uint8_t native, external, count;
    size_t offset;
};

static int scalar_part(enum dt_basic kind, MPI_Datatype t, struct part *p)
{
    *p = (struct part){ .conv = CONV_UINT, .count = 1, .offset = 0 };
    switch (kind) {
    case DT_BASIC_CHAR: case DT_BASIC_SIGNED_CHAR: case DT_BASIC_UNSIGNED_CHAR: case DT_BASIC_BYTE:
    case DT_BASIC_PACKED: case DT_BASIC_BOOL: case DT_BASIC_INT8: case DT_BASIC_UINT8:
        p->native = p->external = 1;
        return 1;
    case DT_BASIC_SHORT: case DT_BASIC_INT: case DT_BASIC_LONG_LONG: case DT_BASIC_INT16: case DT_BASIC_INT32:
    case DT_BASIC_INT64: case DT_BASIC_LOGICAL:
        p->conv = CONV_SINT;
        p->native = p->external = (uint8_t)t->size;
        return 1;
    case DT_BASIC_UNSIGNED_SHORT: case DT_BASIC_UNSIGNED: case DT_BASIC_UNSIGNED_LONG_LONG:
    case DT_BASIC_UINT16: case DT_BASIC_UINT32: case DT_BASIC_UINT64:
        p->native = p->external = (uint8_t)t->size;
        return 1;
    case DT_BASIC_LONG:     /* MPI_AINT and MPI_OFFSET share the kind but are 8 bytes */
        p->conv = CONV_SINT;
        p->native = sizeof(long);
        p->external = t == MPI_AINT || t == MPI_OFFSET ? 8 : 4;
        return 1;
    case DT_BASIC_UNSIGNED_LONG:
        p->native = sizeof(unsigned long);
        p->external = 4;
        return 1;
    case DT_BASIC_WCHAR:
        p->native = sizeof(wchar_t);
        p->external = 2;
        return 1;
    case DT_BASIC_FLOAT: case DT_BASIC_DOUBLE:
        p->conv = CONV_FLOAT;
        p->native = p->external = kind == DT_BASIC_FLOAT ? 4 : 8;
        return 1;
    case DT_BASIC_FLOAT_COMPLEX: case DT_BASIC_DOUBLE_COMPLEX:
        p->conv = CONV_FLOAT;
        p->native = p->external = kind == DT_BASIC_FLOAT_COMPLEX ? 4 : 8;
        p->count = 2;
        return 1;
    case DT_BASIC_LONG_DOUBLE: case DT_BASIC_LONG_DOUBLE_COMPLEX:
        p->conv = CONV_LONG_DOUBLE;
        p->native = sizeof(long double);
        p->external = 16;
        p->count = kind == DT_BASIC_LONG_DOUBLE ? 1 : 2;
        return 1;
    default:
        return 0;
    }
}

static bool is_fortran_pair(MPI_Datatype t)
{
    return t == MPI_2INTEGER || t == MPI_2REAL || t == MPI_2DOUBLE_PRECISION || t == MPI_2COMPLEX ||
           t == MPI_2DOUBLE_COMPLEX;
}

/* The parts of one element of a predefined type; returns how many. */
static int element_parts(MPI_Datatype t, struct part parts[2])
{
    if (t->basic != DT_BASIC_PAIR)
        return scalar_part(t->basic, t, &parts[0]);
    struct strand_datatype value = { .size = t->value_size };
    if (!scalar_part(t->pair_value, &value, &parts[0]))
        return 0;
    if (is_fortran_pair(t)) {
        parts[0].count *= 2;
        return 1;
    }
    /* C pair: the value, then an int index (after padding, if any). */
    size_t index_offset = t->layout.nops == 2 ? (size_t)t->single_op[1].disp : t->value_size;
    parts[1] = (struct part){ .conv = CONV_SINT, .native = sizeof(int), .external = 4, .count = 1,
                              .offset = index_offset };
    return 2;
}

static size_t element_external_size(MPI_Datatype t)
{
    struct part parts[2];
    int n = element_parts(t, parts);
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += (size_t)parts[i].external * parts[i].count;
    return bytes;
}

/* External bytes of one element of any type. */
static size_t external_size(MPI_Datatype t)
{
    if (t->predefined)
        return element_external_size(t);
    size_t nblocks = typemap_nblocks(t), bytes = 0;
    struct typemap_block b;
    if (typemap_is_vector(t)) {
        typemap_block(t, 0, &b);
        return nblocks * b.n * external_size(b.type);
    }
    for (size_t i = 0; i < nblocks; i++) {
        typemap_block(t, i, &b);
        bytes += b.n * external_size(b.type);
    }
    return bytes;
}

static void store_be(unsigned char *out, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        out[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
}

static uint64_t load_be(const unsigned char *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v = v << 8 | in[i];
    return v;
}

/* Native integer of `bytes` bytes to/from uint64 (sign-extended if signed). */
static uint64_t load_native(const void *p, unsigned bytes, bool is_signed)
{
    switch (bytes) {
    case 1: { uint8_t v; memcpy(&v, p, 1); return is_signed ? (uint64_t)(int64_t)(int8_t)v : v; }
    case 2: { uint16_t v; memcpy(&v, p, 2); return is_signed ? (uint64_t)(int64_t)(int16_t)v : v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return is_signed ? (uint64_t)(int64_t)(int32_t)v : v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static void store_native(void *p, uint64_t v, unsigned bytes)
{
    switch (bytes) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); return; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); return; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); return; }
    default: memcpy(p, &v, 8);
    }
}

/* Does v (a sign- or zero-extended 64-bit value) fit in `bytes` bytes? */
static bool fits(uint64_t v, unsigned bytes, bool is_signed)
{
    if (bytes >= 8)
        return true;
    if (is_signed) {
        int64_t s = (int64_t)v, lim = (int64_t)1 << (8 * bytes - 1);
        return s >= -lim && s < lim;
    }
    return v >> (8 * bytes) == 0;
}

/* IEEE binary128 bytes (big-endian) of a long double, and back. */
static bool long_double_to_external(const void *native, unsigned char out[16])
{
#if LDBL_MANT_DIG == 113
    unsigned char raw[16];
    memcpy(raw, native, 16);
    for (int i = 0; i < 16; i++)
        out[i] = raw[__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 15 - i : i];
    return true;
#elif defined(__SIZEOF_FLOAT128__)
    long double v;
    memcpy(&v, native, sizeof v);
    __float128 q = (__float128)v;
    unsigned char raw[16];
    memcpy(raw, &q, 16);
    for (int i = 0; i < 16; i++)
        out[i] = raw[__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 15 - i : i];
    return true;
#else
    (void)native;
    (void)out;
    return false;
#endif
}

static bool long_double_from_external(void *native, const unsigned char in[16])
{
    unsigned char raw[16];
    for (int i = 0; i < 16; i++)
        raw[i] = in[__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 15 - i : i];
#if LDBL_MANT_DIG == 113
    memcpy(native, raw, 16);
    return true;
#elif defined(__SIZEOF_FLOAT128__)
    __float128 q;
    memcpy(&q, raw, 16);
    long double v = (long double)q;
    memcpy(native, &v, sizeof v);
    return true;
#else
    (void)native;
    return false;
#endif
}

struct ext_ctx {
    unsigned char *ext;         /* the external buffer at the current position */
    bool packing;
    const char *failure;        /* why a value could not be converted */
};

/* Converts one value between its native and external form. */
static bool convert(struct ext_ctx *c, const struct part *p, char *native)
{
    unsigned char *ext = c->ext;
    c->ext += p->external;
    bool is_signed = p->conv == CONV_SINT;
    switch (p->conv) {
    case CONV_SINT:
    case CONV_UINT:
        if (c->packing) {
            uint64_t v = load_native(native, p->native, is_signed);
            if (!fits(v, p->external, is_signed)) {
                c->failure = "an integer value does not fit its external32 size";
                return false;
            }
            store_be(ext, v, p->external);
        } else {
            uint64_t v = load_be(ext, p->external);
            if (is_signed && p->external < 8 && (v >> (8 * p->external - 1)) & 1)
                v |= ~(uint64_t)0 << (8 * p->external);     /* sign-extend */
            store_native(native, v, p->native);
        }
        return true;
    case CONV_FLOAT:
        if (c->packing)
            store_be(ext, load_native(native, p->native, false), p->external);
        else
            store_native(native, load_be(ext, p->external), p->native);
        return true;
    case CONV_LONG_DOUBLE:
        if (c->packing ? long_double_to_external(native, ext) : long_double_from_external(native, ext))
            return true;
        c->failure = "long double has no external32 conversion on this platform";
        return false;
    }
    return false;
}

static int convert_elements(MPI_Datatype named, char *addr, size_t n, void *arg)
{
    struct ext_ctx *c = arg;
    struct part parts[2];
    int nparts = element_parts(named, parts);
    if (nparts == 0) {
        c->failure = "the type has no external32 representation";
        return 1;
    }
    MPI_Aint extent = dt_extent(named);
    for (size_t e = 0; e < n; e++) {
        char *elem = addr + (MPI_Aint)e * extent;
        for (int i = 0; i < nparts; i++)
            for (unsigned k = 0; k < parts[i].count; k++)
                if (!convert(c, &parts[i], elem + parts[i].offset + k * parts[i].native))
                    return 1;
    }
    return 0;
}

static int external_check(const char *where, const char *datarep, int count, MPI_Datatype t)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (datarep == NULL || strcmp(datarep, "external32") != 0)
        return dt_error(MPI_ERR_ARG, where, "unknown data representation \"%s\" (only \"external32\")",
                        datarep != NULL ? datarep : "(null)");
    if (count < 0)
        return dt_error(MPI_ERR_COUNT, where, "negative count %d", count);
    const char *why;
    rc = dt_check_usable(t, &why);
    if (rc != MPI_SUCCESS)
        return dt_error(rc, where, "%s", why);
    return MPI_SUCCESS;
}

/* External bytes of `count` elements, or -1 on overflow. */
static MPI_Aint external_bytes(int count, MPI_Datatype t)
{
    MPI_Aint bytes;
    if (__builtin_mul_overflow((MPI_Aint)count, (MPI_Aint)external_size(t), &bytes))
        return -1;
    return bytes;
}

size_t dt_external32_size(MPI_Datatype t)
{
    return external_size(t);
}

int dt_external32_convert(void *native, size_t count, MPI_Datatype t, void *external, bool packing, const char **why)
{
    struct ext_ctx c = { external, packing, NULL };
    if (dt_visit(t, native, count, convert_elements, &c) != 0) {
        *why = c.failure;
        return MPI_ERR_CONVERSION;
    }
    return MPI_SUCCESS;
}

int PMPI_Pack_external(char *datarep, void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                       MPI_Aint outsize, MPI_Aint *position)
{
    const char *where = "MPI_Pack_external";
    int rc = external_check(where, datarep, incount, datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    if (position == NULL)
        return dt_error(MPI_ERR_ARG, where, "position is NULL");
    MPI_Aint need = external_bytes(incount, datatype);
    if (need < 0 || *position < 0 || *position > outsize || need > outsize - *position)
        return dt_error(MPI_ERR_TRUNCATE, where, "%ld bytes do not fit at position %ld of a %ld-byte buffer",
                        (long)need, (long)*position, (long)outsize);
    if (need > 0 && (outbuf == NULL || dt_buffer_is_invalid(inbuf, incount, datatype)))
        return dt_error(MPI_ERR_BUFFER, where, "NULL buffer");
    struct ext_ctx c = { (unsigned char *)outbuf + *position, true, NULL };
    if (dt_visit(datatype, inbuf, (size_t)incount, convert_elements, &c) != 0)
        return dt_error(MPI_ERR_CONVERSION, where, "%s", c.failure);
    *position += need;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Pack_external);

int PMPI_Unpack_external(char *datarep, void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf,
                         int outcount, MPI_Datatype datatype)
{
    const char *where = "MPI_Unpack_external";
    int rc = external_check(where, datarep, outcount, datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    if (position == NULL)
        return dt_error(MPI_ERR_ARG, where, "position is NULL");
    MPI_Aint need = external_bytes(outcount, datatype);
    if (need < 0 || *position < 0 || *position > insize || need > insize - *position)
        return dt_error(MPI_ERR_TRUNCATE, where, "%ld bytes wanted at position %ld of a %ld-byte buffer",
                        (long)need, (long)*position, (long)insize);
    if (need > 0 && (inbuf == NULL || dt_buffer_is_invalid(outbuf, outcount, datatype)))
        return dt_error(MPI_ERR_BUFFER, where, "NULL buffer");
    struct ext_ctx c = { (unsigned char *)inbuf + *position, false, NULL };
    if (dt_visit(datatype, outbuf, (size_t)outcount, convert_elements, &c) != 0)
        return dt_error(MPI_ERR_CONVERSION, where, "%s", c.failure);
    *position += need;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Unpack_external);

int PMPI_Pack_external_size(char *datarep, int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    const char *where = "MPI_Pack_external_size";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (datarep == NULL || strcmp(datarep, "external32") != 0)
        return dt_error(MPI_ERR_ARG, where, "unknown data representation (only \"external32\")");
    if (incount < 0)
        return dt_error(MPI_ERR_COUNT, where, "negative count %d", incount);
    rc = dt_check_arg(where, datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    if (size == NULL)
        return dt_error(MPI_ERR_ARG, where, "size is NULL");
    MPI_Aint bytes = external_bytes(incount, datatype);
    if (bytes < 0)
        return dt_error(MPI_ERR_COUNT, where, "the packed size overflows");
    *size = bytes;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Pack_external_size);
