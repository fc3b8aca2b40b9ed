/* MPI_Accumulate with every predefined operation (and MPI_REPLACE) on the
 * types they are defined for: every rank combines its data into rank 0's
 * window in one fence epoch, concurrently, and rank 0 compares with the
 * result computed locally. Then 16-byte and unaligned elements (the
 * locked path), derived origin and target datatypes, and puts mixed with
 * accumulates on disjoint parts of one window. */
#include <complex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "rma_util.h"

enum { E = 16 };

typedef struct { int v, i; } int_int;
typedef struct { double v; int i; } double_int;

/* One case: C type T, MPI type, op, rank r's element i, the reference
 * combination of a (accumulated) with b (new operand). */
#define ACC_CASE(errs, rank, size, T, mpitype, op, init, gen, combine) \
    ACC_CASE_EQ(errs, rank, size, T, mpitype, op, init, gen, combine, x == y)
/* `eq` compares x and y (types with padding cannot be compared with memcmp). */
#define ACC_CASE_EQ(errs, rank, size, T, mpitype, op, init, gen, combine, eq)                    \
    do {                                                                                          \
        T win_buf[E], mine[E], ref[E];                                                            \
        for (int i = 0; i < E; i++)                                                               \
            win_buf[i] = ref[i] = (init);                                                         \
        MPI_Win win;                                                                              \
        MUST(errs, MPI_Win_create(win_buf, sizeof win_buf, sizeof(T), MPI_INFO_NULL, MPI_COMM_WORLD, &win)); \
        for (int i = 0; i < E; i++) {                                                             \
            int r = rank;                                                                         \
            mine[i] = (gen);                                                                      \
            (void)r;                                                                              \
        }                                                                                         \
        MUST(errs, MPI_Win_fence(0, win));                                                        \
        MUST(errs, MPI_Accumulate(mine, E, mpitype, 0, 0, E, mpitype, op, win));                  \
        MUST(errs, MPI_Win_fence(0, win));                                                        \
        if (rank == 0) {                                                                          \
            for (int r = 0; r < size; r++)                                                        \
                for (int i = 0; i < E; i++) {                                                     \
                    T a = ref[i], b = (gen);                                                      \
                    ref[i] = (combine);                                                           \
                    (void)a;                                                                      \
                }                                                                                 \
            for (int i = 0; i < E; i++) {                                                         \
                T x = win_buf[i], y = ref[i];                                                     \
                CHECK(errs, (eq), "%s on %s: element %d differs", #op, #mpitype, i);              \
            }                                                                                     \
        }                                                                                         \
        MUST(errs, MPI_Win_free(&win));                                                           \
    } while (0)

#define MAX_(a, b) ((a) > (b) ? (a) : (b))
#define MIN_(a, b) ((a) < (b) ? (a) : (b))

static void predefined_ops(int *errs, int rank, int size)
{
    ACC_CASE(errs, rank, size, int, MPI_INT, MPI_SUM, 5, r * 3 + i, a + b);
    ACC_CASE(errs, rank, size, long, MPI_LONG, MPI_SUM, 0, (long)r << 33 | i, a + b);
    ACC_CASE(errs, rank, size, short, MPI_SHORT, MPI_SUM, 1, (short)(r + i), (short)(a + b));
    ACC_CASE(errs, rank, size, signed char, MPI_SIGNED_CHAR, MPI_SUM, 0, (signed char)(r - i), (signed char)(a + b));
    ACC_CASE(errs, rank, size, unsigned long long, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 7, r * 1000ull + i, a + b);
    ACC_CASE(errs, rank, size, double, MPI_DOUBLE, MPI_SUM, 0.5, r * 2.0 + i, a + b);
    ACC_CASE(errs, rank, size, float, MPI_FLOAT, MPI_SUM, 0, (float)(r + i), a + b);
    ACC_CASE(errs, rank, size, unsigned, MPI_UNSIGNED, MPI_PROD, 1, (unsigned)(r % 3 + i), a * b);
    ACC_CASE(errs, rank, size, double, MPI_DOUBLE, MPI_PROD, 1, (r + i) % 2 ? -1.0 : 1.0, a * b);
    ACC_CASE(errs, rank, size, int, MPI_INT, MPI_MAX, -100, (r * 7919 + i * 31) % 1000, MAX_(a, b));
    ACC_CASE(errs, rank, size, int, MPI_INT, MPI_MIN, 100000, (r * 7919 + i * 31) % 1000, MIN_(a, b));
    ACC_CASE(errs, rank, size, double, MPI_DOUBLE, MPI_MAX, -1e9, (r * 7919 + i * 31) % 1000 * 0.25, MAX_(a, b));
    ACC_CASE(errs, rank, size, float, MPI_FLOAT, MPI_MIN, 1e9f, (float)((r * 13 + i) % 97), MIN_(a, b));
    ACC_CASE(errs, rank, size, unsigned char, MPI_UNSIGNED_CHAR, MPI_MAX, 0, (unsigned char)(r * 37 + i), MAX_(a, b));
    ACC_CASE(errs, rank, size, int, MPI_INT, MPI_BAND, -1, ~(1 << ((r + i) % 31)), a & b);
    ACC_CASE(errs, rank, size, int, MPI_INT, MPI_BOR, 0, 1 << ((r + i) % 31), a | b);
    ACC_CASE(errs, rank, size, long long, MPI_LONG_LONG, MPI_BXOR, 0, (long long)r * 0x10001 + i, a ^ b);
    ACC_CASE(errs, rank, size, unsigned char, MPI_BYTE, MPI_BXOR, 0x5a, (unsigned char)(r * 3 + i), a ^ b);
    ACC_CASE(errs, rank, size, int, MPI_INT, MPI_LAND, 1, (r + i) % 5 != 0, a && b);
    ACC_CASE(errs, rank, size, int, MPI_INT, MPI_LOR, 0, (r == 1 && i % 2), a || b);
    ACC_CASE(errs, rank, size, int, MPI_INT, MPI_LXOR, 0, (r + i) % 3 == 0, !a != !b);
    ACC_CASE(errs, rank, size, int, MPI_INT, MPI_REPLACE, -1, 42 + i, b);
    ACC_CASE(errs, rank, size, double, MPI_DOUBLE, MPI_REPLACE, -1, 0.5 * i, b);
    /* Pair types and 16-byte elements. */
    ACC_CASE_EQ(errs, rank, size, int_int, MPI_2INT, MPI_MINLOC, ((int_int){ 1 << 30, 0 }),
                ((int_int){ (r * 7 + i) % 5, r }), (b.v < a.v || (b.v == a.v && b.i < a.i)) ? b : a,
                x.v == y.v && x.i == y.i);
    ACC_CASE_EQ(errs, rank, size, double_int, MPI_DOUBLE_INT, MPI_MAXLOC, ((double_int){ -1.0, 0 }),
                ((double_int){ (double)((r * 3 + i) % 4), r }), (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a,
                x.v == y.v && x.i == y.i);
    ACC_CASE(errs, rank, size, long double, MPI_LONG_DOUBLE, MPI_SUM, 0.25L, (long double)r * i, a + b);
    ACC_CASE(errs, rank, size, double _Complex, MPI_C_DOUBLE_COMPLEX, MPI_SUM, 0, r + i * 1.0 * I, a + b);
    ACC_CASE(errs, rank, size, float _Complex, MPI_C_FLOAT_COMPLEX, MPI_PROD, 1, (r + i) % 2 ? I : 1, a * b);
}

/* Every rank adds into ints that straddle alignment (disp_unit 1, odd
 * displacements) and into long doubles, many times, concurrently. */
static void locked_path(int *errs, int rank, int size)
{
    char raw[1 + 4 * sizeof(int)];
    long double ld[3] = { 0, 0, 0 };
    memset(raw, 0, sizeof raw);
    MPI_Win wraw, wld;
    MUST(errs, MPI_Win_create(raw, sizeof raw, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wraw));
    MUST(errs, MPI_Win_create(ld, sizeof ld, sizeof ld[0], MPI_INFO_NULL, MPI_COMM_WORLD, &wld));
    int ones[4] = { 1, 2, 3, 4 };
    long double lones[3] = { 1, 0.5L, 2 };
    MUST(errs, MPI_Win_fence(0, wraw));
    MUST(errs, MPI_Win_fence(0, wld));
    for (int rep = 0; rep < 100; rep++) {
        MUST(errs, MPI_Accumulate(ones, 4, MPI_INT, 0, 1, 4, MPI_INT, MPI_SUM, wraw));
        MUST(errs, MPI_Accumulate(lones, 3, MPI_LONG_DOUBLE, 0, 0, 3, MPI_LONG_DOUBLE, MPI_SUM, wld));
    }
    MUST(errs, MPI_Win_fence(0, wraw));
    MUST(errs, MPI_Win_fence(0, wld));
    if (rank == 0) {
        for (int i = 0; i < 4; i++) {
            int v;
            memcpy(&v, raw + 1 + i * sizeof(int), sizeof v);
            CHECK(errs, v == 100 * size * (i + 1), "unaligned int %d: %d", i, v);
        }
        for (int i = 0; i < 3; i++)
            CHECK(errs, ld[i] == 100.0L * size * lones[i], "long double %d: %Lg", i, ld[i]);
    }
    MUST(errs, MPI_Win_free(&wraw));
    MUST(errs, MPI_Win_free(&wld));
}

/* Origin: every other int of 2E; target: an indexed type on rank 0. */
static void derived_types(int *errs, int rank, int size)
{
    int target[4 * E];
    for (int i = 0; i < 4 * E; i++)
        target[i] = -i;
    MPI_Win win;
    MUST(errs, MPI_Win_create(target, sizeof target, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Datatype strided, scattered;
    MPI_Type_vector(E, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int lens[3] = { 3, 5, E - 8 }, displs[3] = { 1, 10, 3 * E };
    MPI_Type_indexed(3, lens, displs, MPI_INT, &scattered);
    MPI_Type_commit(&scattered);
    int src[2 * E];
    for (int i = 0; i < 2 * E; i++)
        src[i] = i % 2 ? -1000 : rank + i / 2;
    MUST(errs, MPI_Win_fence(0, win));
    MUST(errs, MPI_Accumulate(src, 1, strided, 0, 0, 1, scattered, MPI_SUM, win));
    MUST(errs, MPI_Win_fence(0, win));
    if (rank == 0) {
        int k = 0;
        bool touched[4 * E] = { false };
        for (int b = 0; b < 3; b++)
            for (int j = 0; j < lens[b]; j++, k++) {
                int at = displs[b] + j, want = -at + size * (size - 1) / 2 + size * k;
                touched[at] = true;
                CHECK(errs, target[at] == want, "indexed element %d: %d, expected %d", at, target[at], want);
            }
        for (int i = 0; i < 4 * E; i++)
            CHECK(errs, touched[i] || target[i] == -i, "element %d changed to %d", i, target[i]);
    }
    MPI_Type_free(&strided);
    MPI_Type_free(&scattered);
    MUST(errs, MPI_Win_free(&win));
}

/* Rank r puts into its own slot and adds into a shared slot of every
 * target, in the same epoch (disjoint locations: allowed). */
static void mixed_put_accumulate(int *errs, int rank, int size)
{
    long *slots = calloc((size_t)size + 1, sizeof *slots);
    MPI_Win win;
    MUST(errs, MPI_Win_create(slots, (size + 1) * sizeof *slots, sizeof *slots, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int round = 1; round <= 3; round++) {
        MUST(errs, MPI_Win_fence(0, win));
        long mine = rank * 10L + round, one = round;
        for (int t = 0; t < size; t++) {
            MUST(errs, MPI_Put(&mine, 1, MPI_LONG, t, rank, 1, MPI_LONG, win));
            MUST(errs, MPI_Accumulate(&one, 1, MPI_LONG, t, size, 1, MPI_LONG, MPI_SUM, win));
        }
        MUST(errs, MPI_Win_fence(0, win));
        for (int r = 0; r < size; r++)
            CHECK(errs, slots[r] == r * 10L + round, "round %d slot %d: %ld", round, r, slots[r]);
        long want = (long)size * round * (round + 1) / 2;
        CHECK(errs, slots[size] == want, "round %d: shared slot %ld, expected %ld", round, slots[size], want);
    }
    MUST(errs, MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MUST(errs, MPI_Win_free(&win));
    free(slots);
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    predefined_ops(&errs, rank, size);
    locked_path(&errs, rank, size);
    derived_types(&errs, rank, size);
    mixed_put_accumulate(&errs, rank, size);
    return rma_finish(errs);
}
