/* The predefined reduction kernels: every op of MPI-2.2 §5.9.2 on every
 * element type it is defined for, generated from one list per type group.
 * A kernel computes inout[i] = in[i] op inout[i]. Elements may be
 * misaligned (an accumulate into a window with displacement unit 1, a
 * packed buffer), so kernels access them through typedefs of alignment 1;
 * on x86 that costs nothing, and the loops still vectorize. */
#include <complex.h>
#include <stdint.h>

#include "../datatype/datatype.h"
#include "op.h"

#define KERNEL(opname, kind, ctype, expr)                                       \
    static void k_##opname##_##kind(const void *in_, void *inout_, size_t n)    \
    {                                                                           \
        typedef ctype __attribute__((aligned(1))) element;                      \
        const element *in = in_;                                                \
        element *inout = inout_;                                                \
        for (size_t i = 0; i < n; i++) {                                        \
            ctype a = in[i], b = inout[i];                                      \
            inout[i] = (ctype)(expr);                                           \
        }                                                                       \
    }

/* Type groups of MPI-2.2 §5.9.2. MPI_CHAR is admitted with the C integers,
 * as other implementations (and their test suites) do. Fortran INTEGER,
 * REAL, ... share the kinds of their C equivalents. */
#define C_INTEGER_TYPES(X)                                                                  \
    X(CHAR, char) X(SIGNED_CHAR, signed char) X(UNSIGNED_CHAR, unsigned char)               \
    X(SHORT, short) X(UNSIGNED_SHORT, unsigned short) X(INT, int) X(UNSIGNED, unsigned)     \
    X(LONG, long) X(UNSIGNED_LONG, unsigned long) X(LONG_LONG, long long)                   \
    X(UNSIGNED_LONG_LONG, unsigned long long) X(INT8, int8_t) X(INT16, int16_t)             \
    X(INT32, int32_t) X(INT64, int64_t) X(UINT8, uint8_t) X(UINT16, uint16_t)               \
    X(UINT32, uint32_t) X(UINT64, uint64_t)
#define FLOATING_TYPES(X) X(FLOAT, float) X(DOUBLE, double) X(LONG_DOUBLE, long double)
#define COMPLEX_TYPES(X)                                                                    \
    X(FLOAT_COMPLEX, float _Complex) X(DOUBLE_COMPLEX, double _Complex)                     \
    X(LONG_DOUBLE_COMPLEX, long double _Complex)
#define LOGICAL_TYPES(X) X(LOGICAL, int) X(BOOL, _Bool)
#define BYTE_TYPES(X) X(BYTE, unsigned char)

#define ORDER_KERNELS(kind, ctype)                                              \
    KERNEL(MAX, kind, ctype, a > b ? a : b)                                     \
    KERNEL(MIN, kind, ctype, a < b ? a : b)
#define ARITH_KERNELS(kind, ctype)                                              \
    KERNEL(SUM, kind, ctype, a + b)                                             \
    KERNEL(PROD, kind, ctype, a * b)
#define LOGIC_KERNELS(kind, ctype)                                              \
    KERNEL(LAND, kind, ctype, a && b)                                           \
    KERNEL(LOR, kind, ctype, a || b)                                            \
    KERNEL(LXOR, kind, ctype, !a != !b)
#define BIT_KERNELS(kind, ctype)                                                \
    KERNEL(BAND, kind, ctype, a & b)                                            \
    KERNEL(BOR, kind, ctype, a | b)                                             \
    KERNEL(BXOR, kind, ctype, a ^ b)

C_INTEGER_TYPES(ORDER_KERNELS)
C_INTEGER_TYPES(ARITH_KERNELS)
C_INTEGER_TYPES(LOGIC_KERNELS)
C_INTEGER_TYPES(BIT_KERNELS)
FLOATING_TYPES(ORDER_KERNELS)
FLOATING_TYPES(ARITH_KERNELS)
COMPLEX_TYPES(ARITH_KERNELS)
LOGICAL_TYPES(LOGIC_KERNELS)
BYTE_TYPES(BIT_KERNELS)

#define ENTRY(opname, kind) [OP_##opname][DT_BASIC_##kind] = k_##opname##_##kind,
#define ORDER_ENTRIES(kind, ctype) ENTRY(MAX, kind) ENTRY(MIN, kind)
#define ARITH_ENTRIES(kind, ctype) ENTRY(SUM, kind) ENTRY(PROD, kind)
#define LOGIC_ENTRIES(kind, ctype) ENTRY(LAND, kind) ENTRY(LOR, kind) ENTRY(LXOR, kind)
#define BIT_ENTRIES(kind, ctype) ENTRY(BAND, kind) ENTRY(BOR, kind) ENTRY(BXOR, kind)

static const op_kernel_fn basic_kernels[OP_KINDS][DT_BASIC_MARKER + 1] = {
    C_INTEGER_TYPES(ORDER_ENTRIES) C_INTEGER_TYPES(ARITH_ENTRIES)
    C_INTEGER_TYPES(LOGIC_ENTRIES) C_INTEGER_TYPES(BIT_ENTRIES)
    FLOATING_TYPES(ORDER_ENTRIES) FLOATING_TYPES(ARITH_ENTRIES)
    COMPLEX_TYPES(ARITH_ENTRIES)
    LOGICAL_TYPES(LOGIC_ENTRIES)
    BYTE_TYPES(BIT_ENTRIES)
};

/* MINLOC/MAXLOC: the pair with the smaller (larger) value wins; on a tie
 * the smaller index, which makes both ops commutative. */
#define PAIR_KERNELS(name, vtype, itype)                                               \
    struct pair_##name { vtype value; itype index; };                                  \
    typedef struct pair_##name __attribute__((aligned(1))) pair_##name##_any;          \
    static void k_MINLOC_##name(const void *in_, void *inout_, size_t n)               \
    {                                                                                  \
        const pair_##name##_any *in = in_;                                             \
        pair_##name##_any *inout = inout_;                                             \
        for (size_t i = 0; i < n; i++) {                                               \
            if (in[i].value < inout[i].value)                                          \
                inout[i] = in[i];                                                      \
            else if (in[i].value == inout[i].value && in[i].index < inout[i].index)    \
                inout[i].index = in[i].index;                                          \
        }                                                                              \
    }                                                                                  \
    static void k_MAXLOC_##name(const void *in_, void *inout_, size_t n)               \
    {                                                                                  \
        const pair_##name##_any *in = in_;                                             \
        pair_##name##_any *inout = inout_;                                             \
        for (size_t i = 0; i < n; i++) {                                               \
            if (in[i].value > inout[i].value)                                          \
                inout[i] = in[i];                                                      \
            else if (in[i].value == inout[i].value && in[i].index < inout[i].index)    \
                inout[i].index = in[i].index;                                          \
        }                                                                              \
    }

PAIR_KERNELS(float_int, float, int)
PAIR_KERNELS(double_int, double, int)
PAIR_KERNELS(long_int, long, int)
PAIR_KERNELS(short_int, short, int)
PAIR_KERNELS(int_int, int, int)
PAIR_KERNELS(long_double_int, long double, int)
PAIR_KERNELS(float_float, float, float)
PAIR_KERNELS(double_double, double, double)

struct pair_entry {
    MPI_Datatype type;
    op_kernel_fn minloc, maxloc;
};

#define PAIR_ENTRY(type, name) { type, k_MINLOC_##name, k_MAXLOC_##name }

static op_kernel_fn pair_kernel(enum op_kind kind, MPI_Datatype element)
{
    const struct pair_entry pairs[] = {
        PAIR_ENTRY(MPI_FLOAT_INT, float_int), PAIR_ENTRY(MPI_DOUBLE_INT, double_int),
        PAIR_ENTRY(MPI_LONG_INT, long_int), PAIR_ENTRY(MPI_SHORT_INT, short_int),
        PAIR_ENTRY(MPI_2INT, int_int), PAIR_ENTRY(MPI_LONG_DOUBLE_INT, long_double_int),
        PAIR_ENTRY(MPI_2INTEGER, int_int), PAIR_ENTRY(MPI_2REAL, float_float),
        PAIR_ENTRY(MPI_2DOUBLE_PRECISION, double_double),
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].type == element)
            return kind == OP_MINLOC ? pairs[i].minloc : pairs[i].maxloc;
    return NULL;
}

op_kernel_fn op_kernel(enum op_kind kind, MPI_Datatype element)
{
    if (kind == OP_MINLOC || kind == OP_MAXLOC)
        return pair_kernel(kind, element);
    if (kind >= OP_REPLACE || element->basic > DT_BASIC_MARKER)
        return NULL;
    return basic_kernels[kind][element->basic];
}
