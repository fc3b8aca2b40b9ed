/* The launcher's description of an MPMD job (src/core/apps.c): every word
 * survives encoding and parsing, malformed values are refused with a
 * reason, apps may not overlap or leave the job, and a rank finds its app.
 * Random values never crash the parser (run it under AddressSanitizer with
 * configure --enable-sanitizers). */
#include <stdlib.h>
#include <string.h>

#include "core/apps.h"
#include "unit_support.h"

/* "FIRST N APPNUM" and then the words, encoded. */
static void encode_app(char *out, size_t len, const char *numbers, const char *const *words, int nwords)
{
    size_t used = (size_t)snprintf(out, len, "%s", numbers);
    for (int i = 0; i < nwords; i++) {
        out[used++] = ' ';
        CU_ASSERT_FATAL(apps_encode(words[i], out, len, &used) == 0);
    }
}

static void test_round_trip(void)
{
    static const char *const words[] = { "/bin/prog", "prog", "a b", "", "100%", "tab\there", "é", "-x=1,2:3" };
    char value[512], why[160];
    encode_app(value, sizeof value, "3 4 1", words, 8);
    CU_ASSERT(strchr(value, '\t') == NULL);
    struct app a;
    CU_ASSERT_FATAL(apps_parse(value, &a, why, sizeof why) == 0);
    CU_ASSERT_EQUAL(a.first_rank, 3);
    CU_ASSERT_EQUAL(a.nranks, 4);
    CU_ASSERT_EQUAL(a.appnum, 1);
    CU_ASSERT_STRING_EQUAL(a.path, "/bin/prog");
    CU_ASSERT_EQUAL_FATAL(a.argc, 7);
    for (int i = 0; i < 7; i++)
        CU_ASSERT_STRING_EQUAL(a.argv[i], words[i + 1]);
    CU_ASSERT(a.argv[7] == NULL);
    apps_free_one(&a);
}

static void test_encode_full_buffer(void)
{
    char out[8];
    size_t used = 0;
    CU_ASSERT(apps_encode("abc", out, sizeof out, &used) == 0);
    CU_ASSERT(apps_encode(" ", out, sizeof out, &used) == 0);     /* %20: 6 bytes */
    CU_ASSERT(apps_encode("xy", out, sizeof out, &used) == -1);   /* no room for the NUL */
    CU_ASSERT_EQUAL(used, 6);
    CU_ASSERT(used < sizeof out && out[used] == '\0');
}

static void test_malformed(void)
{
    static const char *const bad[] = {
        "", "0", "0 1", "0 1 0", "0 1 0 /p",                   /* too few fields */
        "0 0 0 /p p", "-1 1 0 /p p", "x 1 0 /p p",            /* bad numbers */
        "0 1 0 p p",                                           /* a path without '/' */
        "0 1 0 /p p%", "0 1 0 /p p%4", "0 1 0 /p p%zz", "0 1 0 /p p%00", /* bad escapes */
        "0 1 0 /p  p",                                         /* an empty word not written %% */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct app a;
        char why[160] = "";
        CU_ASSERT(apps_parse(bad[i], &a, why, sizeof why) == -1);
        CU_ASSERT(why[0] != '\0');
    }
}

static void test_table(void)
{
    char why[200];
    setenv("STRAND_APPS", "2", 1);
    setenv("STRAND_APP_0", "0 2 0 /a a", 1);
    setenv("STRAND_APP_1", "2 3 1 /b b x", 1);
    CU_ASSERT_EQUAL(apps_read(5, why, sizeof why), 2);
    CU_ASSERT(apps_of_rank(0) != NULL && apps_index(apps_of_rank(1)) == 0);
    CU_ASSERT(apps_of_rank(4) != NULL && apps_index(apps_of_rank(4)) == 1 && apps_of_rank(4)->appnum == 1);
    CU_ASSERT(apps_of_rank(5) == NULL);
    setenv("STRAND_APP_1", "1 3 1 /b b", 1);                      /* overlaps app 0 */
    CU_ASSERT_EQUAL(apps_read(5, why, sizeof why), -1);
    setenv("STRAND_APP_1", "2 4 1 /b b", 1);                      /* past the job's end */
    CU_ASSERT_EQUAL(apps_read(5, why, sizeof why), -1);
    unsetenv("STRAND_APP_1");                                      /* announced, not given */
    CU_ASSERT_EQUAL(apps_read(5, why, sizeof why), -1);
    setenv("STRAND_APPS", "9", 1);                                 /* more apps than ranks */
    CU_ASSERT_EQUAL(apps_read(5, why, sizeof why), -1);
    unsetenv("STRAND_APPS");
    unsetenv("STRAND_APP_0");
    CU_ASSERT_EQUAL(apps_read(5, why, sizeof why), 0);
    CU_ASSERT(apps_of_rank(0) == NULL);
}

/* Random printable values: a clean verdict each time. */
static void test_random_values(void)
{
    static const char alphabet[] = "0123 45%%/ab ";
    srand(11);
    for (int round = 0; round < 100000; round++) {
        size_t n = (size_t)(rand() % 24);
        char *value = malloc(n + 1), why[160];
        for (size_t i = 0; i < n; i++)
            value[i] = alphabet[rand() % (int)(sizeof alphabet - 1)];
        value[n] = '\0';
        struct app a;
        if (apps_parse(value, &a, why, sizeof why) == 0) {
            CU_ASSERT(a.nranks > 0 && a.argc >= 1 && strchr(a.path, '/') != NULL);
            apps_free_one(&a);
        }
        free(value);
    }
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("apps", NULL, NULL);
    CU_add_test(s, "words survive encoding and parsing", test_round_trip);
    CU_add_test(s, "encoding stops at a full buffer", test_encode_full_buffer);
    CU_add_test(s, "malformed values are refused", test_malformed);
    CU_add_test(s, "the table: lookup, overlap, bounds", test_table);
    CU_add_test(s, "random values: clean verdicts", test_random_values);
    return unit_run_registry();
}
