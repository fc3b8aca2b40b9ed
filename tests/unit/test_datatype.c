/* The copy engine against a naive reference: pair types with padding,
 * truncation, pack/unpack round trips. (Derived types extend this.) */
#include <string.h>

#include "datatype/datatype.h"
#include "unit_support.h"

struct double_int { double value; int index; };

static void test_pair_type_skips_padding(void)
{
    struct double_int src[3] = { { 1.5, 1 }, { 2.5, 2 }, { 3.5, 3 } };
    struct double_int dst[3];
    memset(dst, 0xee, sizeof dst);
    size_t n = dt_copy(dst, 3, MPI_DOUBLE_INT, src, 3, MPI_DOUBLE_INT);
    CU_ASSERT_EQUAL(n, 3 * (sizeof(double) + sizeof(int)));
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(dst[i].value, src[i].value);
        CU_ASSERT_EQUAL(dst[i].index, src[i].index);
        /* the 4 padding bytes after index are untouched */
        unsigned char *pad = (unsigned char *)&dst[i] + offsetof(struct double_int, index) + sizeof(int);
        CU_ASSERT_EQUAL(pad[0], 0xee);
        CU_ASSERT_EQUAL(pad[3], 0xee);
    }
}

static void test_pack_unpack_round_trip(void)
{
    struct double_int src[2] = { { -1.0, 7 }, { 9.0, -3 } }, back[2];
    unsigned char packed[24];
    CU_ASSERT_EQUAL(dt_pack(packed, src, 2, MPI_DOUBLE_INT), 24);
    double first;
    memcpy(&first, packed, sizeof first);
    CU_ASSERT_EQUAL(first, -1.0);
    CU_ASSERT_EQUAL(dt_unpack(back, 2, MPI_DOUBLE_INT, packed, 24), 24);
    CU_ASSERT_EQUAL(back[1].value, 9.0);
    CU_ASSERT_EQUAL(back[1].index, -3);
}

static void test_copy_truncates_to_destination(void)
{
    int src[10], dst[4] = { 0 };
    for (int i = 0; i < 10; i++)
        src[i] = i + 1;
    CU_ASSERT_EQUAL(dt_copy(dst, 3, MPI_INT, src, 10, MPI_INT), 3 * sizeof(int));
    CU_ASSERT_EQUAL(dst[2], 3);
    CU_ASSERT_EQUAL(dst[3], 0);
}

static void test_counts_from_bytes(void)
{
    CU_ASSERT_EQUAL(dt_count_from_bytes(MPI_INT, 12), 3);
    CU_ASSERT_EQUAL(dt_count_from_bytes(MPI_INT, 5), MPI_UNDEFINED);
    CU_ASSERT_EQUAL(dt_elements_from_bytes(MPI_DOUBLE_INT, 12), 2);
    CU_ASSERT_EQUAL(dt_elements_from_bytes(MPI_DOUBLE_INT, 20), 3);
    CU_ASSERT_EQUAL(dt_elements_from_bytes(MPI_2INT, 8), 2);
    CU_ASSERT_EQUAL(dt_count_from_bytes(MPI_2INT, 8), 1);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("datatype", NULL, NULL);
    CU_add_test(s, "pair type skips padding", test_pair_type_skips_padding);
    CU_add_test(s, "pack/unpack round trip", test_pack_unpack_round_trip);
    CU_add_test(s, "copy truncates", test_copy_truncates_to_destination);
    CU_add_test(s, "counts from bytes", test_counts_from_bytes);
    return unit_run_registry();
}
