/* The reduction kernels: every predefined op on every predefined type,
 * against a reference computed here; which op/type pairs exist (MPI-2.2
 * §5.9.2); MINLOC/MAXLOC on every pair type; plans for user ops. */
#include <complex.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "op/op.h"
#include "unit_support.h"

enum group { G_INT, G_FLOAT, G_COMPLEX, G_LOGICAL, G_BYTE, G_PAIR, G_NONE };

struct tcase {
    MPI_Datatype type;
    enum group group;
    bool is_signed;
};

static const struct tcase cases[] = {
    { MPI_CHAR, G_INT, CHAR_MIN < 0 }, { MPI_SIGNED_CHAR, G_INT, true }, { MPI_UNSIGNED_CHAR, G_INT, false },
    { MPI_SHORT, G_INT, true }, { MPI_UNSIGNED_SHORT, G_INT, false }, { MPI_INT, G_INT, true },
    { MPI_UNSIGNED, G_INT, false }, { MPI_LONG, G_INT, true }, { MPI_UNSIGNED_LONG, G_INT, false },
    { MPI_LONG_LONG_INT, G_INT, true }, { MPI_UNSIGNED_LONG_LONG, G_INT, false },
    { MPI_INT8_T, G_INT, true }, { MPI_INT16_T, G_INT, true }, { MPI_INT32_T, G_INT, true },
    { MPI_INT64_T, G_INT, true }, { MPI_UINT8_T, G_INT, false }, { MPI_UINT16_T, G_INT, false },
    { MPI_UINT32_T, G_INT, false }, { MPI_UINT64_T, G_INT, false }, { MPI_AINT, G_INT, true },
    { MPI_OFFSET, G_INT, true }, { MPI_INTEGER, G_INT, true }, { MPI_INTEGER1, G_INT, true },
    { MPI_INTEGER2, G_INT, true }, { MPI_INTEGER4, G_INT, true }, { MPI_INTEGER8, G_INT, true },
    { MPI_FLOAT, G_FLOAT, true }, { MPI_DOUBLE, G_FLOAT, true }, { MPI_LONG_DOUBLE, G_FLOAT, true },
    { MPI_REAL, G_FLOAT, true }, { MPI_DOUBLE_PRECISION, G_FLOAT, true }, { MPI_REAL4, G_FLOAT, true },
    { MPI_REAL8, G_FLOAT, true }, { MPI_REAL16, G_FLOAT, true },
    { MPI_C_FLOAT_COMPLEX, G_COMPLEX, true }, { MPI_C_DOUBLE_COMPLEX, G_COMPLEX, true },
    { MPI_C_LONG_DOUBLE_COMPLEX, G_COMPLEX, true }, { MPI_COMPLEX, G_COMPLEX, true },
    { MPI_DOUBLE_COMPLEX, G_COMPLEX, true }, { MPI_COMPLEX8, G_COMPLEX, true },
    { MPI_COMPLEX16, G_COMPLEX, true }, { MPI_COMPLEX32, G_COMPLEX, true },
    { MPI_LOGICAL, G_LOGICAL, true }, { MPI_C_BOOL, G_LOGICAL, false },
    { MPI_BYTE, G_BYTE, false },
    { MPI_FLOAT_INT, G_PAIR, true }, { MPI_DOUBLE_INT, G_PAIR, true }, { MPI_LONG_INT, G_PAIR, true },
    { MPI_SHORT_INT, G_PAIR, true }, { MPI_2INT, G_PAIR, true }, { MPI_LONG_DOUBLE_INT, G_PAIR, true },
    { MPI_2INTEGER, G_PAIR, true }, { MPI_2REAL, G_PAIR, true }, { MPI_2DOUBLE_PRECISION, G_PAIR, true },
    { MPI_WCHAR, G_NONE, true }, { MPI_PACKED, G_NONE, false }, { MPI_CHARACTER, G_INT, CHAR_MIN < 0 },
};
enum { NCASES = sizeof cases / sizeof cases[0], N = 24 };

static const MPI_Op ops[] = { MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR,
                              MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC };
enum { NOPS = sizeof ops / sizeof ops[0] };

static bool defined_for(enum op_kind k, enum group g)
{
    switch (g) {
    case G_INT: return k <= OP_BXOR;
    case G_FLOAT: return k == OP_MAX || k == OP_MIN || k == OP_SUM || k == OP_PROD;
    case G_COMPLEX: return k == OP_SUM || k == OP_PROD;
    case G_LOGICAL: return k == OP_LAND || k == OP_LOR || k == OP_LXOR;
    case G_BYTE: return k == OP_BAND || k == OP_BOR || k == OP_BXOR;
    case G_PAIR: return k == OP_MINLOC || k == OP_MAXLOC;
    default: return false;
    }
}

static void test_which_pairs_exist(void)
{
    for (int c = 0; c < NCASES; c++)
        for (int o = 0; o < NOPS; o++) {
            struct op_plan plan;
            const char *why;
            int rc = op_plan_init(&plan, ops[o], cases[c].type, false, &why);
            bool expect = defined_for(ops[o]->kind, cases[c].group);
            if ((rc == MPI_SUCCESS) != expect)
                fprintf(stderr, "%s on %s: rc %d, expected %s\n", ops[o]->name, cases[c].type->name, rc,
                        expect ? "defined" : "MPI_ERR_OP");
            CU_ASSERT_EQUAL(rc == MPI_SUCCESS, expect);
            if (!expect)
                CU_ASSERT_EQUAL(rc, MPI_ERR_OP);
        }
}

static void test_replace_only_for_accumulate(void)
{
    struct op_plan plan;
    const char *why;
    CU_ASSERT_EQUAL(op_plan_init(&plan, MPI_REPLACE, MPI_INT, false, &why), MPI_ERR_OP);
    CU_ASSERT_EQUAL(op_plan_init(&plan, MPI_REPLACE, MPI_DOUBLE_INT, true, &why), MPI_SUCCESS);
    struct { double v; int i; } a = { 1.5, 3 }, b = { 0, 0 };
    op_plan_apply(&plan, &a, &b, 1);
    CU_ASSERT(b.v == 1.5 && b.i == 3);
    CU_ASSERT_EQUAL(op_plan_init(&plan, MPI_OP_NULL, MPI_INT, false, &why), MPI_ERR_OP);
}

/* Integer inputs with negatives; reference in 64-bit modular arithmetic. */
static int64_t int_input(int which, int i) { return which ? (i * 37 % 11) - 5 : (i * 13 % 7) - 3; }

static uint64_t int_read(const void *p, size_t size, bool is_signed)
{
    uint64_t u = 0;
    memcpy(&u, p, size);   /* little-endian */
    if (is_signed && size < 8 && (u >> (size * 8 - 1)) & 1)
        u |= ~UINT64_C(0) << (size * 8);
    return u;
}

static uint64_t int_reference(enum op_kind k, uint64_t a, uint64_t b, bool is_signed)
{
    bool less = is_signed ? (int64_t)a < (int64_t)b : a < b;
    switch (k) {
    case OP_MAX: return less ? b : a;
    case OP_MIN: return less ? a : b;
    case OP_SUM: return a + b;
    case OP_PROD: return a * b;
    case OP_LAND: return a && b;
    case OP_LOR: return a || b;
    case OP_LXOR: return !a != !b;
    case OP_BAND: return a & b;
    case OP_BOR: return a | b;
    case OP_BXOR: return a ^ b;
    default: return 0;
    }
}

static void check_int_case(const struct tcase *c, enum op_kind k, const struct op_plan *plan)
{
    size_t size = c->type->size;
    unsigned char in[N * 16], inout[N * 16];
    for (int i = 0; i < N; i++) {
        uint64_t a = (uint64_t)int_input(0, i), b = (uint64_t)int_input(1, i);
        if (c->group == G_LOGICAL || c->group == G_BYTE || !c->is_signed) {
            a &= 0x7f;
            b &= 0x7f;
        }
        if (c->type == MPI_C_BOOL) {
            a = a & 1;
            b = (b >> 1) & 1;
        }
        memcpy(in + i * size, &a, size);
        memcpy(inout + i * size, &b, size);
    }
    unsigned char before[N * 16];
    memcpy(before, inout, sizeof inout);
    op_plan_apply(plan, in, inout, N);
    for (int i = 0; i < N; i++) {
        uint64_t a = int_read(in + i * size, size, c->is_signed);
        uint64_t b = int_read(before + i * size, size, c->is_signed);
        uint64_t want = int_reference(k, a, b, c->is_signed);
        uint64_t got = int_read(inout + i * size, size, c->is_signed);
        uint64_t mask = size < 8 ? (UINT64_C(1) << (size * 8)) - 1 : ~UINT64_C(0);
        if ((want & mask) != (got & mask))
            fprintf(stderr, "%s on %s [%d]: %llx expected %llx\n", plan->op->name, c->type->name, i,
                    (unsigned long long)got, (unsigned long long)want);
        CU_ASSERT_EQUAL(want & mask, got & mask);
    }
}

#define FLOAT_CHECK(ctype, k, plan)                                                       \
    do {                                                                                  \
        ctype in[N], inout[N], want[N];                                                   \
        for (int i = 0; i < N; i++) {                                                     \
            in[i] = (ctype)(int_input(0, i) / 2.0);                                       \
            inout[i] = (ctype)(int_input(1, i) / 4.0);                                    \
            ctype a = in[i], b = inout[i];                                                \
            want[i] = k == OP_SUM ? a + b : k == OP_PROD ? a * b : k == OP_MAX ? (a > b ? a : b) : (a < b ? a : b); \
        }                                                                                 \
        op_plan_apply(plan, in, inout, N);                                                \
        /* values, not bytes: long double has padding bytes */                           \
        for (int i = 0; i < N; i++)                                                       \
            CU_ASSERT(inout[i] == want[i]);                                               \
    } while (0)

#define COMPLEX_CHECK(ctype, k, plan)                                                     \
    do {                                                                                  \
        ctype in[N], inout[N];                                                            \
        for (int i = 0; i < N; i++) {                                                     \
            in[i] = int_input(0, i) + int_input(1, i) * I;                                \
            inout[i] = (i % 5) - 2 * I;                                                   \
        }                                                                                 \
        op_plan_apply(plan, in, inout, N);                                                \
        for (int i = 0; i < N; i++) {                                                     \
            ctype a = int_input(0, i) + int_input(1, i) * I, b = (i % 5) - 2 * I;         \
            ctype w = k == OP_SUM ? a + b : a * b;                                        \
            CU_ASSERT(creall(w) == creall(inout[i]) && cimagl(w) == cimagl(inout[i]));    \
        }                                                                                 \
    } while (0)

static void test_kernels_against_reference(void)
{
    int checked = 0;
    for (int c = 0; c < NCASES; c++)
        for (int o = 0; o < NOPS; o++) {
            struct op_plan plan;
            const char *why;
            const struct tcase *tc = &cases[c];
            enum op_kind k = ops[o]->kind;
            if (tc->group == G_PAIR || op_plan_init(&plan, ops[o], tc->type, false, &why) != MPI_SUCCESS)
                continue;
            checked++;
            if (tc->group == G_INT || tc->group == G_LOGICAL || tc->group == G_BYTE) {
                check_int_case(tc, k, &plan);
            } else if (tc->group == G_FLOAT) {
                if (tc->type->size == sizeof(float))
                    FLOAT_CHECK(float, k, &plan);
                else if (tc->type->size == sizeof(double))
                    FLOAT_CHECK(double, k, &plan);
                else
                    FLOAT_CHECK(long double, k, &plan);
            } else if (tc->group == G_COMPLEX) {
                if (tc->type->size == sizeof(float _Complex))
                    COMPLEX_CHECK(float _Complex, k, &plan);
                else if (tc->type->size == sizeof(double _Complex))
                    COMPLEX_CHECK(double _Complex, k, &plan);
                else
                    COMPLEX_CHECK(long double _Complex, k, &plan);
            }
        }
    /* 27 integer types x 10 + 8 floating x 4 + 8 complex x 2 + 2 logical x 3 + byte x 3 */
    CU_ASSERT_EQUAL(checked, 27 * 10 + 8 * 4 + 8 * 2 + 2 * 3 + 3);
}

#define PAIR_CHECK(vtype, itype, mpitype)                                                 \
    do {                                                                                  \
        struct { vtype v; itype i; } in[4] = { { 1, 5 }, { 2, 1 }, { 3, 3 }, { -1, 9 } }; \
        struct { vtype v; itype i; } lo[4] = { { 1, 2 }, { 2, 2 }, { 2, 7 }, { 0, 0 } };  \
        struct { vtype v; itype i; } hi[4];                                               \
        memcpy(hi, lo, sizeof lo);                                                        \
        struct op_plan plan;                                                              \
        const char *why;                                                                  \
        CU_ASSERT_EQUAL_FATAL(op_plan_init(&plan, MPI_MINLOC, mpitype, false, &why), MPI_SUCCESS); \
        op_plan_apply(&plan, in, lo, 4);                                                  \
        CU_ASSERT(lo[0].v == 1 && lo[0].i == 2); /* tie: smaller index */                 \
        CU_ASSERT(lo[1].v == 2 && lo[1].i == 1);                                          \
        CU_ASSERT(lo[2].v == 2 && lo[2].i == 7);                                          \
        CU_ASSERT(lo[3].v == -1 && lo[3].i == 9);                                         \
        CU_ASSERT_EQUAL_FATAL(op_plan_init(&plan, MPI_MAXLOC, mpitype, false, &why), MPI_SUCCESS); \
        op_plan_apply(&plan, in, hi, 4);                                                  \
        CU_ASSERT(hi[0].v == 1 && hi[0].i == 2);                                          \
        CU_ASSERT(hi[1].v == 2 && hi[1].i == 1);                                          \
        CU_ASSERT(hi[2].v == 3 && hi[2].i == 3);                                          \
        CU_ASSERT(hi[3].v == 0 && hi[3].i == 0);                                          \
    } while (0)

static void test_minloc_maxloc(void)
{
    PAIR_CHECK(float, int, MPI_FLOAT_INT);
    PAIR_CHECK(double, int, MPI_DOUBLE_INT);
    PAIR_CHECK(long, int, MPI_LONG_INT);
    PAIR_CHECK(short, int, MPI_SHORT_INT);
    PAIR_CHECK(int, int, MPI_2INT);
    PAIR_CHECK(long double, int, MPI_LONG_DOUBLE_INT);
    PAIR_CHECK(int, int, MPI_2INTEGER);
    PAIR_CHECK(float, float, MPI_2REAL);
    PAIR_CHECK(double, double, MPI_2DOUBLE_PRECISION);
}

/* Elements at odd addresses (an accumulate into a window of displacement
 * unit 1): predefined kernels must not assume alignment (UBSan checks it
 * in a --enable-sanitizers build). */
static void test_misaligned_elements(void)
{
    struct op_plan plan;
    const char *why;
    unsigned char in[1 + 3 * sizeof(double)], inout[3 + 3 * sizeof(double)];
    double x[3] = { 1.5, -2.0, 4.0 }, y[3] = { 10.0, 20.0, 30.0 }, got[3];
    memcpy(in + 1, x, sizeof x);
    memcpy(inout + 3, y, sizeof y);
    CU_ASSERT_EQUAL_FATAL(op_plan_init(&plan, MPI_SUM, MPI_DOUBLE, false, &why), MPI_SUCCESS);
    op_plan_apply(&plan, in + 1, inout + 3, 3);
    memcpy(got, inout + 3, sizeof got);
    CU_ASSERT(got[0] == 11.5 && got[1] == 18.0 && got[2] == 34.0);
    struct { int value, index; } a = { 5, 2 }, b = { 5, 1 }, c;
    unsigned char pa[1 + sizeof a], pb[1 + sizeof b];
    memcpy(pa + 1, &a, sizeof a);
    memcpy(pb + 1, &b, sizeof b);
    CU_ASSERT_EQUAL_FATAL(op_plan_init(&plan, MPI_MINLOC, MPI_2INT, false, &why), MPI_SUCCESS);
    op_plan_apply(&plan, pa + 1, pb + 1, 1);
    memcpy(&c, pb + 1, sizeof c);
    CU_ASSERT(c.value == 5 && c.index == 1);
}

static void concat_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] * 10 + b[i];
}

static void test_user_op_plan(void)
{
    struct strand_op user = { .magic = OP_MAGIC, .kind = OP_USER, .user_fn = concat_op };
    struct op_plan plan;
    const char *why;
    CU_ASSERT_EQUAL_FATAL(op_plan_init(&plan, &user, MPI_INT, false, &why), MPI_SUCCESS);
    CU_ASSERT(plan.direct);
    int a[3] = { 1, 2, 3 }, b[3] = { 4, 5, 6 };
    CU_ASSERT_EQUAL(op_reduce_buffers(&plan, a, b, 3), MPI_SUCCESS);
    CU_ASSERT(b[0] == 14 && b[1] == 25 && b[2] == 36);   /* in op inout, in that order */
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("op", NULL, NULL);
    CU_add_test(s, "op/type pairs of MPI-2.2 5.9.2", test_which_pairs_exist);
    CU_add_test(s, "MPI_REPLACE only for accumulate", test_replace_only_for_accumulate);
    CU_add_test(s, "kernels against a reference", test_kernels_against_reference);
    CU_add_test(s, "MINLOC/MAXLOC on every pair type", test_minloc_maxloc);
    CU_add_test(s, "user operation plans", test_user_op_plan);
    CU_add_test(s, "misaligned elements", test_misaligned_elements);
    return unit_run_registry();
}
