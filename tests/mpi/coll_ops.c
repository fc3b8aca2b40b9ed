/* Every predefined operation on every type MPI-2.2 §5.9.2 defines it for,
 * through MPI_Reduce (root 0 and the last rank) and MPI_Allreduce, values
 * checked against a reference computed here. */
#include <complex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "coll_util.h"

enum { COUNT = 7 };
enum op_id { SUM, PROD, MAX, MIN, LAND, LOR, LXOR, BAND, BOR, BXOR };

/* Inputs chosen so that no reference overflows a signed type. */
#define INPUT_INT(op, r, i, n)                                                   \
    ((op) == SUM ? (r + i) % 3 :                                                 \
     (op) == PROD ? ((r) == (i) % (n) ? 2 : 1) :                                 \
     (op) == MAX || (op) == MIN ? ((r) * 7 + (i)) % 11 :                         \
     (op) == LAND ? ((r) != (i) % (n)) * ((r) % 3 + 1) :                         \
     (op) == LOR ? ((r) == (i) % (n)) * 2 :                                      \
     (op) == LXOR ? ((r) + (i)) % 2 :                                            \
     (op) == BAND ? 0x7f & ~(1 << (((r) + (i)) % 7)) :                           \
     (op) == BOR ? 1 << (((r) + (i)) % 7) : ((r) * 5 + (i)) & 0x7f)

static MPI_Op mpi_op(enum op_id op)
{
    const MPI_Op ops[] = { MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR,
                           MPI_BAND, MPI_BOR, MPI_BXOR };
    return ops[op];
}

/* Reference combiners per type group (only valid expressions for each). */
#define ARITH_COMB(op, a, b) ((op) == SUM ? (a) + (b) : (a) * (b))
#define ORDER_COMB(op, a, b)                                                     \
    ((op) <= PROD ? ARITH_COMB(op, a, b) : (op) == MAX ? ((a) > (b) ? (a) : (b)) : ((a) < (b) ? (a) : (b)))
#define LOGIC_COMB(op, a, b) ((op) == LAND ? ((a) && (b)) : (op) == LOR ? ((a) || (b)) : (!(a) != !(b)))
#define BIT_COMB(op, a, b) ((op) == BAND ? ((a) & (b)) : (op) == BOR ? ((a) | (b)) : ((a) ^ (b)))
#define INT_COMB(op, a, b)                                                       \
    ((op) <= MIN ? ORDER_COMB(op, a, b) : (op) <= LXOR ? LOGIC_COMB(op, a, b) : BIT_COMB(op, a, b))

/* Runs the three reductions of one op on one type and checks them. */
#define TEST_TYPE(ctype, mpitype, first_op, last_op, COMB)                             \
    for (int op = first_op; op <= last_op; op++) {                                        \
        ctype in[COUNT], out[COUNT], expect[COUNT];                                       \
        for (int i = 0; i < COUNT; i++) {                                                 \
            in[i] = (ctype)INPUT_INT(op, rank, i, size);                                  \
            expect[i] = (ctype)INPUT_INT(op, 0, i, size);                                 \
            for (int r = 1; r < size; r++) {                                              \
                ctype v = (ctype)INPUT_INT(op, r, i, size);                               \
                expect[i] = (ctype)COMB(op, expect[i], v);                                \
            }                                                                             \
        }                                                                                 \
        for (int round = 0; round < 3; round++) {                                         \
            int root = round == 1 ? size - 1 : 0;                                         \
            memset(out, 0x5a, sizeof out);                                                \
            int rc = round < 2 ? MPI_Reduce(in, out, COUNT, mpitype, mpi_op(op), root, MPI_COMM_WORLD) \
                               : MPI_Allreduce(in, out, COUNT, mpitype, mpi_op(op), MPI_COMM_WORLD); \
            CHECK(&errs, rc == MPI_SUCCESS, "%s op %d: error %d", #mpitype, op, rc);      \
            if (round == 2 || rank == root)                                               \
                for (int i = 0; i < COUNT; i++)                                           \
                    CHECK(&errs, memcmp(&out[i], &expect[i], sizeof(ctype)) == 0 || out[i] == expect[i], \
                          "%s op %d round %d: element %d differs", #mpitype, op, round, i); \
        }                                                                                 \
        tested++;                                                                         \
    }


struct pair_fi { float v; int i; };
struct pair_di { double v; int i; };
struct pair_li { long v; int i; };
struct pair_si { short v; int i; };
struct pair_ii { int v; int i; };
struct pair_ldi { long double v; int i; };
struct pair_ff { float v; float i; };
struct pair_dd { double v; double i; };

/* MINLOC/MAXLOC: values repeat so that ties pick the lowest rank. */
#define TEST_PAIR(stype, vtype, itype, mpitype)                                           \
    for (int loc = 0; loc < 2; loc++) {                                                   \
        struct stype in[COUNT], out[COUNT], expect[COUNT];                                \
        for (int i = 0; i < COUNT; i++) {                                                 \
            in[i].v = (vtype)(((rank + 3 * i) % 5) - 2);                                  \
            in[i].i = (itype)rank;                                                        \
            expect[i].v = (vtype)(((0 + 3 * i) % 5) - 2);                                 \
            expect[i].i = 0;                                                              \
            for (int r = 1; r < size; r++) {                                              \
                vtype v = (vtype)(((r + 3 * i) % 5) - 2);                                 \
                if (loc == 0 ? v < expect[i].v : v > expect[i].v) {                       \
                    expect[i].v = v;                                                      \
                    expect[i].i = (itype)r;                                               \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
        MPI_Allreduce(in, out, COUNT, mpitype, loc == 0 ? MPI_MINLOC : MPI_MAXLOC, MPI_COMM_WORLD); \
        for (int i = 0; i < COUNT; i++)                                                   \
            CHECK(&errs, out[i].v == expect[i].v && out[i].i == expect[i].i,              \
                  "%s %s element %d: (%g, %g) expected (%g, %g)", #mpitype,               \
                  loc ? "MAXLOC" : "MINLOC", i, (double)out[i].v, (double)out[i].i,       \
                  (double)expect[i].v, (double)expect[i].i);                              \
        tested++;                                                                         \
    }

int main(int argc, char **argv)
{
    int errs = 0, rank, size, tested = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* C and Fortran integers: every op. */
    TEST_TYPE(char, MPI_CHAR, SUM, BXOR, INT_COMB)
    TEST_TYPE(signed char, MPI_SIGNED_CHAR, SUM, BXOR, INT_COMB)
    TEST_TYPE(unsigned char, MPI_UNSIGNED_CHAR, SUM, BXOR, INT_COMB)
    TEST_TYPE(short, MPI_SHORT, SUM, BXOR, INT_COMB)
    TEST_TYPE(unsigned short, MPI_UNSIGNED_SHORT, SUM, BXOR, INT_COMB)
    TEST_TYPE(int, MPI_INT, SUM, BXOR, INT_COMB)
    TEST_TYPE(unsigned, MPI_UNSIGNED, SUM, BXOR, INT_COMB)
    TEST_TYPE(long, MPI_LONG, SUM, BXOR, INT_COMB)
    TEST_TYPE(unsigned long, MPI_UNSIGNED_LONG, SUM, BXOR, INT_COMB)
    TEST_TYPE(long long, MPI_LONG_LONG, SUM, BXOR, INT_COMB)
    TEST_TYPE(unsigned long long, MPI_UNSIGNED_LONG_LONG, SUM, BXOR, INT_COMB)
    TEST_TYPE(int8_t, MPI_INT8_T, SUM, BXOR, INT_COMB)
    TEST_TYPE(int16_t, MPI_INT16_T, SUM, BXOR, INT_COMB)
    TEST_TYPE(int32_t, MPI_INT32_T, SUM, BXOR, INT_COMB)
    TEST_TYPE(int64_t, MPI_INT64_T, SUM, BXOR, INT_COMB)
    TEST_TYPE(uint8_t, MPI_UINT8_T, SUM, BXOR, INT_COMB)
    TEST_TYPE(uint16_t, MPI_UINT16_T, SUM, BXOR, INT_COMB)
    TEST_TYPE(uint32_t, MPI_UINT32_T, SUM, BXOR, INT_COMB)
    TEST_TYPE(uint64_t, MPI_UINT64_T, SUM, BXOR, INT_COMB)
    TEST_TYPE(MPI_Aint, MPI_AINT, SUM, BXOR, INT_COMB)
    TEST_TYPE(MPI_Offset, MPI_OFFSET, SUM, BXOR, INT_COMB)
    TEST_TYPE(int, MPI_INTEGER, SUM, MIN, ORDER_COMB)
    TEST_TYPE(int, MPI_INTEGER, BAND, BXOR, BIT_COMB)
    TEST_TYPE(int8_t, MPI_INTEGER1, SUM, MIN, ORDER_COMB)
    TEST_TYPE(int16_t, MPI_INTEGER2, SUM, MIN, ORDER_COMB)
    TEST_TYPE(int32_t, MPI_INTEGER4, SUM, MIN, ORDER_COMB)
    TEST_TYPE(int64_t, MPI_INTEGER8, SUM, MIN, ORDER_COMB)
    /* Floating point: sum, prod, max, min. */
    TEST_TYPE(float, MPI_FLOAT, SUM, MIN, ORDER_COMB)
    TEST_TYPE(double, MPI_DOUBLE, SUM, MIN, ORDER_COMB)
    TEST_TYPE(long double, MPI_LONG_DOUBLE, SUM, MIN, ORDER_COMB)
    TEST_TYPE(float, MPI_REAL, SUM, MIN, ORDER_COMB)
    TEST_TYPE(double, MPI_DOUBLE_PRECISION, SUM, MIN, ORDER_COMB)
    TEST_TYPE(float, MPI_REAL4, SUM, MIN, ORDER_COMB)
    TEST_TYPE(double, MPI_REAL8, SUM, MIN, ORDER_COMB)
    /* Complex: sum, prod. */
    TEST_TYPE(float _Complex, MPI_C_FLOAT_COMPLEX, SUM, PROD, ARITH_COMB)
    TEST_TYPE(double _Complex, MPI_C_DOUBLE_COMPLEX, SUM, PROD, ARITH_COMB)
    TEST_TYPE(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX, SUM, PROD, ARITH_COMB)
    TEST_TYPE(float _Complex, MPI_COMPLEX, SUM, PROD, ARITH_COMB)
    TEST_TYPE(double _Complex, MPI_DOUBLE_COMPLEX, SUM, PROD, ARITH_COMB)
    /* Logical: land, lor, lxor. */
    TEST_TYPE(int, MPI_LOGICAL, LAND, LXOR, LOGIC_COMB)
    TEST_TYPE(_Bool, MPI_C_BOOL, LAND, LXOR, LOGIC_COMB)
    /* Byte: band, bor, bxor. */
    TEST_TYPE(unsigned char, MPI_BYTE, BAND, BXOR, BIT_COMB)
    /* Pairs. */
    TEST_PAIR(pair_fi, float, int, MPI_FLOAT_INT)
    TEST_PAIR(pair_di, double, int, MPI_DOUBLE_INT)
    TEST_PAIR(pair_li, long, int, MPI_LONG_INT)
    TEST_PAIR(pair_si, short, int, MPI_SHORT_INT)
    TEST_PAIR(pair_ii, int, int, MPI_2INT)
    TEST_PAIR(pair_ldi, long double, int, MPI_LONG_DOUBLE_INT)
    TEST_PAIR(pair_ii, int, int, MPI_2INTEGER)
    TEST_PAIR(pair_ff, float, float, MPI_2REAL)
    TEST_PAIR(pair_dd, double, double, MPI_2DOUBLE_PRECISION)
    CHECK(&errs, tested == 298, "tested %d op/type pairs", tested);
    return coll_finish(errs);
}
