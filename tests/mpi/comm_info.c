/* Info objects: every call, key order, length limits and error classes. */
#include <string.h>
#include "comm_check.h"

int main(int argc, char **argv)
{
    int errs = 0, flag, n, len;
    char value[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
    MPI_Init(&argc, &argv);
    MPI_Info info, copy;
    MPI_Info_create(&info);
    MPI_Info_get_nkeys(info, &n);
    CHECK(errs, n == 0, "new info has %d keys", n);
    MPI_Info_set(info, "zeta", "1");
    MPI_Info_set(info, "alpha", "two");
    MPI_Info_set(info, "mid", "three3");
    MPI_Info_set(info, "alpha", "TWO!");     /* replace keeps the position */
    MPI_Info_get_nkeys(info, &n);
    CHECK(errs, n == 3, "nkeys %d", n);
    const char *order[] = { "zeta", "alpha", "mid" };
    for (int i = 0; i < 3; i++) {
        MPI_Info_get_nthkey(info, i, key);
        CHECK(errs, strcmp(key, order[i]) == 0, "key %d is '%s'", i, key);
    }
    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(errs, flag && strcmp(value, "TWO!") == 0, "value '%s'", value);
    MPI_Info_get_valuelen(info, "mid", &len, &flag);
    CHECK(errs, flag && len == 6, "valuelen %d", len);
    MPI_Info_get(info, "mid", 3, value, &flag);
    CHECK(errs, flag && strcmp(value, "thr") == 0, "truncated value '%s'", value);
    MPI_Info_get(info, "nope", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(errs, !flag, "missing key found");
    MPI_Info_get_valuelen(info, "nope", &len, &flag);
    CHECK(errs, !flag, "valuelen of a missing key");

    MPI_Info_dup(info, &copy);
    MPI_Info_delete(info, "zeta");
    MPI_Info_get_nkeys(info, &n);
    CHECK(errs, n == 2, "nkeys after delete %d", n);
    MPI_Info_get_nthkey(info, 0, key);
    CHECK(errs, strcmp(key, "alpha") == 0, "first key after delete '%s'", key);
    MPI_Info_get_nkeys(copy, &n);
    CHECK(errs, n == 3, "dup changed with the original: %d keys", n);
    MPI_Info_get(copy, "zeta", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(errs, flag && strcmp(value, "1") == 0, "dup value '%s'", value);

    /* limits and errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char longkey[MPI_MAX_INFO_KEY + 2], longval[MPI_MAX_INFO_VAL + 2];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    memset(longval, 'v', sizeof longval - 1);
    longval[sizeof longval - 1] = '\0';
    CHECK(errs, check_class(MPI_Info_set(info, longkey, "x")) == MPI_ERR_INFO_KEY, "key too long");
    CHECK(errs, check_class(MPI_Info_set(info, "", "x")) == MPI_ERR_INFO_KEY, "empty key");
    CHECK(errs, check_class(MPI_Info_set(info, "k", longval)) == MPI_ERR_INFO_VALUE, "value too long");
    longkey[MPI_MAX_INFO_KEY] = '\0';           /* exactly the maximum: fine */
    longval[MPI_MAX_INFO_VAL] = '\0';
    CHECK(errs, MPI_Info_set(info, longkey, longval) == MPI_SUCCESS, "maximum key and value");
    MPI_Info_get_valuelen(info, longkey, &len, &flag);
    CHECK(errs, flag && len == MPI_MAX_INFO_VAL, "maximum valuelen %d", len);
    CHECK(errs, check_class(MPI_Info_delete(info, "nope")) == MPI_ERR_INFO_NOKEY, "delete of a missing key");
    CHECK(errs, check_class(MPI_Info_get_nthkey(info, 99, key)) == MPI_ERR_ARG, "nthkey out of range");
    CHECK(errs, check_class(MPI_Info_get_nkeys(MPI_INFO_NULL, &n)) == MPI_ERR_INFO, "MPI_INFO_NULL");
    MPI_Info stale = copy;
    MPI_Info_free(&copy);
    CHECK(errs, copy == MPI_INFO_NULL, "free did not null the handle");
    CHECK(errs, check_class(MPI_Info_get_nkeys(stale, &n)) == MPI_ERR_INFO, "freed info accepted");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Info_free(&info);
    return check_finish(errs);
}
