/* The predefined datatypes of MPI-2.2: one object each, built from a table.
 * Pair types (MPI_DOUBLE_INT, ...) have padding, so they carry two blocks.
 * Every one is its own layout: a block op (two for padded pairs). */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "../core/core.h"
#include "datatype.h"

/* A block op of `len` bytes at `disp`. */
#define BLOCK_OP(d, l) { .disp = (d), .stride = 0, .count = 1, .len = (l), .body = 0, .nbody = 0 }

#define COMMON_FIELDS(var, label)                                                         \
    .magic = DT_MAGIC, .committed = true, .predefined = true,                             \
    .combiner = MPI_COMBINER_NAMED, .name = label, .refcount = 1

#define SIMPLE_TYPE(var, ctype, kind, label)                                              \
    STRAND_EXPORT struct strand_datatype var = {                                         \
        COMMON_FIELDS(var, label), .size = sizeof(ctype), .lb = 0, .ub = sizeof(ctype),   \
        .true_lb = 0, .true_ub = sizeof(ctype), .align = _Alignof(ctype), .nelements = 1,  \
        .uniform = &var, .layout = { .ops = var.single_op, .nops = 1, .ntop = 1 },        \
        .contiguous = true, .basic = kind,                                                \
        .single_op = { BLOCK_OP(0, sizeof(ctype)) } };

/* Fortran pairs: two values of one kind, no padding; two basic elements. */
#define FORTRAN_PAIR_TYPE(var, ctype, kind, label)                                        \
    STRAND_EXPORT struct strand_datatype var = {                                         \
        COMMON_FIELDS(var, label), .size = sizeof(ctype), .lb = 0, .ub = sizeof(ctype),   \
        .true_lb = 0, .true_ub = sizeof(ctype), .align = _Alignof(ctype), .nelements = 2,  \
        .uniform = &var, .layout = { .ops = var.single_op, .nops = 1, .ntop = 1 },        \
        .contiguous = true, .basic = DT_BASIC_PAIR, .pair_value = kind,                   \
        .value_size = sizeof(ctype) / 2,                                                  \
        .single_op = { BLOCK_OP(0, sizeof(ctype)) } };

/* C pairs: value then int, with padding when the struct has any. */
#define PAIR_TYPE(var, stype, vtype, kind, label)                                         \
    STRAND_EXPORT struct strand_datatype var = {                                         \
        COMMON_FIELDS(var, label), .size = sizeof(vtype) + sizeof(int), .lb = 0,          \
        .ub = sizeof(stype), .true_lb = 0, .true_ub = offsetof(stype, index) + sizeof(int), \
        .align = _Alignof(stype), .nelements = 2, .uniform = &var,                        \
        .layout = { .ops = var.single_op, .nops = PAIR_OPS(stype, vtype), .ntop = PAIR_OPS(stype, vtype) }, \
        .contiguous = sizeof(stype) == sizeof(vtype) + sizeof(int),                       \
        .basic = DT_BASIC_PAIR, .pair_value = kind, .value_size = sizeof(vtype),          \
        .single_op = { PAIR_FIRST_OP(stype, vtype), BLOCK_OP(offsetof(stype, index), sizeof(int)) } };
/* A pair without padding between value and index is one block. */
#define PAIR_GAP(stype, vtype) (offsetof(stype, index) != sizeof(vtype))
#define PAIR_OPS(stype, vtype) (PAIR_GAP(stype, vtype) ? 2 : 1)
#define PAIR_FIRST_OP(stype, vtype) \
    BLOCK_OP(0, PAIR_GAP(stype, vtype) ? sizeof(vtype) : sizeof(vtype) + sizeof(int))

#define MARKER_TYPE(var, label)                                                           \
    STRAND_EXPORT struct strand_datatype var = {                                         \
        COMMON_FIELDS(var, label), .size = 0, .lb = 0, .ub = 0, .true_lb = 0,             \
        .true_ub = 0, .align = 1, .nelements = 0, .uniform = NULL,                        \
        .layout = { .ops = NULL, .nops = 0, .ntop = 0 }, .contiguous = true,              \
        .basic = DT_BASIC_MARKER };

struct pair_float_int { float value; int index; };
struct pair_double_int { double value; int index; };
struct pair_long_int { long value; int index; };
struct pair_short_int { short value; int index; };
struct pair_int_int { int value; int index; };
struct pair_long_double_int { long double value; int index; };
struct pair_float_float { float value; float index; };
struct pair_double_double { double value; double index; };
typedef struct { float re, im; } fortran_complex;
typedef struct { double re, im; } fortran_double_complex;
struct pair_complex { fortran_complex value, index; };
struct pair_double_complex { fortran_double_complex value, index; };

SIMPLE_TYPE(strand_dt_char, char, DT_BASIC_CHAR, "MPI_CHAR")
SIMPLE_TYPE(strand_dt_signed_char, signed char, DT_BASIC_SIGNED_CHAR, "MPI_SIGNED_CHAR")
SIMPLE_TYPE(strand_dt_unsigned_char, unsigned char, DT_BASIC_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR")
SIMPLE_TYPE(strand_dt_byte, unsigned char, DT_BASIC_BYTE, "MPI_BYTE")
SIMPLE_TYPE(strand_dt_packed, unsigned char, DT_BASIC_PACKED, "MPI_PACKED")
SIMPLE_TYPE(strand_dt_short, short, DT_BASIC_SHORT, "MPI_SHORT")
SIMPLE_TYPE(strand_dt_unsigned_short, unsigned short, DT_BASIC_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT")
SIMPLE_TYPE(strand_dt_int, int, DT_BASIC_INT, "MPI_INT")
SIMPLE_TYPE(strand_dt_unsigned, unsigned, DT_BASIC_UNSIGNED, "MPI_UNSIGNED")
SIMPLE_TYPE(strand_dt_long, long, DT_BASIC_LONG, "MPI_LONG")
SIMPLE_TYPE(strand_dt_unsigned_long, unsigned long, DT_BASIC_UNSIGNED_LONG, "MPI_UNSIGNED_LONG")
SIMPLE_TYPE(strand_dt_long_long_int, long long, DT_BASIC_LONG_LONG, "MPI_LONG_LONG_INT")
SIMPLE_TYPE(strand_dt_unsigned_long_long, unsigned long long, DT_BASIC_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG")
SIMPLE_TYPE(strand_dt_float, float, DT_BASIC_FLOAT, "MPI_FLOAT")
SIMPLE_TYPE(strand_dt_double, double, DT_BASIC_DOUBLE, "MPI_DOUBLE")
SIMPLE_TYPE(strand_dt_long_double, long double, DT_BASIC_LONG_DOUBLE, "MPI_LONG_DOUBLE")
SIMPLE_TYPE(strand_dt_wchar, wchar_t, DT_BASIC_WCHAR, "MPI_WCHAR")
SIMPLE_TYPE(strand_dt_c_bool, _Bool, DT_BASIC_BOOL, "MPI_C_BOOL")
SIMPLE_TYPE(strand_dt_int8_t, int8_t, DT_BASIC_INT8, "MPI_INT8_T")
SIMPLE_TYPE(strand_dt_int16_t, int16_t, DT_BASIC_INT16, "MPI_INT16_T")
SIMPLE_TYPE(strand_dt_int32_t, int32_t, DT_BASIC_INT32, "MPI_INT32_T")
SIMPLE_TYPE(strand_dt_int64_t, int64_t, DT_BASIC_INT64, "MPI_INT64_T")
SIMPLE_TYPE(strand_dt_uint8_t, uint8_t, DT_BASIC_UINT8, "MPI_UINT8_T")
SIMPLE_TYPE(strand_dt_uint16_t, uint16_t, DT_BASIC_UINT16, "MPI_UINT16_T")
SIMPLE_TYPE(strand_dt_uint32_t, uint32_t, DT_BASIC_UINT32, "MPI_UINT32_T")
SIMPLE_TYPE(strand_dt_uint64_t, uint64_t, DT_BASIC_UINT64, "MPI_UINT64_T")
SIMPLE_TYPE(strand_dt_aint, MPI_Aint, DT_BASIC_LONG, "MPI_AINT")
SIMPLE_TYPE(strand_dt_offset, MPI_Offset, DT_BASIC_LONG_LONG, "MPI_OFFSET")
SIMPLE_TYPE(strand_dt_count, MPI_Count, DT_BASIC_LONG_LONG, "MPI_COUNT")
SIMPLE_TYPE(strand_dt_c_float_complex, float _Complex, DT_BASIC_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX")
SIMPLE_TYPE(strand_dt_c_double_complex, double _Complex, DT_BASIC_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX")
SIMPLE_TYPE(strand_dt_c_long_double_complex, long double _Complex, DT_BASIC_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX")
/* Fortran types, with the sizes gfortran uses by default. */
SIMPLE_TYPE(strand_dt_character, char, DT_BASIC_CHAR, "MPI_CHARACTER")
SIMPLE_TYPE(strand_dt_logical, int, DT_BASIC_LOGICAL, "MPI_LOGICAL")
SIMPLE_TYPE(strand_dt_integer, int, DT_BASIC_INT, "MPI_INTEGER")
SIMPLE_TYPE(strand_dt_real, float, DT_BASIC_FLOAT, "MPI_REAL")
SIMPLE_TYPE(strand_dt_double_precision, double, DT_BASIC_DOUBLE, "MPI_DOUBLE_PRECISION")
SIMPLE_TYPE(strand_dt_complex, fortran_complex, DT_BASIC_FLOAT_COMPLEX, "MPI_COMPLEX")
SIMPLE_TYPE(strand_dt_double_complex, fortran_double_complex, DT_BASIC_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX")
SIMPLE_TYPE(strand_dt_integer1, int8_t, DT_BASIC_INT8, "MPI_INTEGER1")
SIMPLE_TYPE(strand_dt_integer2, int16_t, DT_BASIC_INT16, "MPI_INTEGER2")
SIMPLE_TYPE(strand_dt_integer4, int32_t, DT_BASIC_INT32, "MPI_INTEGER4")
SIMPLE_TYPE(strand_dt_integer8, int64_t, DT_BASIC_INT64, "MPI_INTEGER8")
SIMPLE_TYPE(strand_dt_integer16, __int128, DT_BASIC_NONE, "MPI_INTEGER16")
SIMPLE_TYPE(strand_dt_real4, float, DT_BASIC_FLOAT, "MPI_REAL4")
SIMPLE_TYPE(strand_dt_real8, double, DT_BASIC_DOUBLE, "MPI_REAL8")
SIMPLE_TYPE(strand_dt_real16, long double, DT_BASIC_LONG_DOUBLE, "MPI_REAL16")
SIMPLE_TYPE(strand_dt_complex8, fortran_complex, DT_BASIC_FLOAT_COMPLEX, "MPI_COMPLEX8")
SIMPLE_TYPE(strand_dt_complex16, fortran_double_complex, DT_BASIC_DOUBLE_COMPLEX, "MPI_COMPLEX16")
SIMPLE_TYPE(strand_dt_complex32, long double _Complex, DT_BASIC_LONG_DOUBLE_COMPLEX, "MPI_COMPLEX32")

PAIR_TYPE(strand_dt_float_int, struct pair_float_int, float, DT_BASIC_FLOAT, "MPI_FLOAT_INT")
PAIR_TYPE(strand_dt_double_int, struct pair_double_int, double, DT_BASIC_DOUBLE, "MPI_DOUBLE_INT")
PAIR_TYPE(strand_dt_long_int, struct pair_long_int, long, DT_BASIC_LONG, "MPI_LONG_INT")
PAIR_TYPE(strand_dt_short_int, struct pair_short_int, short, DT_BASIC_SHORT, "MPI_SHORT_INT")
PAIR_TYPE(strand_dt_2int, struct pair_int_int, int, DT_BASIC_INT, "MPI_2INT")
PAIR_TYPE(strand_dt_long_double_int, struct pair_long_double_int, long double, DT_BASIC_LONG_DOUBLE, "MPI_LONG_DOUBLE_INT")
/* Fortran pair types are two values of the same kind, no padding. */
FORTRAN_PAIR_TYPE(strand_dt_2integer, struct pair_int_int, DT_BASIC_INT, "MPI_2INTEGER")
FORTRAN_PAIR_TYPE(strand_dt_2real, struct pair_float_float, DT_BASIC_FLOAT, "MPI_2REAL")
FORTRAN_PAIR_TYPE(strand_dt_2double_precision, struct pair_double_double, DT_BASIC_DOUBLE, "MPI_2DOUBLE_PRECISION")
FORTRAN_PAIR_TYPE(strand_dt_2complex, struct pair_complex, DT_BASIC_FLOAT_COMPLEX, "MPI_2COMPLEX")
FORTRAN_PAIR_TYPE(strand_dt_2double_complex, struct pair_double_complex, DT_BASIC_DOUBLE_COMPLEX, "MPI_2DOUBLE_COMPLEX")

MARKER_TYPE(strand_dt_lb, "MPI_LB")
MARKER_TYPE(strand_dt_ub, "MPI_UB")
