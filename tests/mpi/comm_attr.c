/* Attribute caching: keyvals, set/get/delete, copy callbacks on dup,
 * delete callbacks on free (last in, first out), callback errors, the
 * MPI-1 names, predefined attributes, datatype attributes. */
#include <string.h>
#include "comm_check.h"

/* Per-rank call log (passed as extra_state, so no globals are shared). */
struct log {
    int copies, deletes;
    int deleted[8];
    int fail_copy, fail_delete;
};

static int copy_fn(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
    struct log *l = extra;
    l->copies++;
    if (l->fail_copy)
        return MPI_ERR_OTHER;
    *(void **)out = (char *)in + 1;     /* a visibly different value */
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int key, void *value, void *extra)
{
    struct log *l = extra;
    if (l->fail_delete)
        return MPI_ERR_OTHER;
    /* The communicator is still usable in the callback. */
    int size;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return MPI_ERR_OTHER;
    if (l->deletes < 8)
        l->deleted[l->deletes] = (int)(long)value;
    l->deletes++;
    return MPI_SUCCESS;
}

static int type_delete_fn(MPI_Datatype t, int key, void *value, void *extra)
{
    ((struct log *)extra)->deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, flag;
    void *v;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* predefined attributes of MPI_COMM_WORLD */
    int *ip;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ip, &flag);
    CHECK(errs, flag && *ip >= 32767, "MPI_TAG_UB");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &ip, &flag);
    CHECK(errs, flag && (*ip == MPI_PROC_NULL || (*ip >= 0 && *ip < size)), "MPI_HOST");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &ip, &flag);
    CHECK(errs, flag && (*ip == MPI_ANY_SOURCE || *ip == MPI_PROC_NULL || (*ip >= 0 && *ip < size)), "MPI_IO");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &ip, &flag);
    CHECK(errs, flag && (*ip == 0 || *ip == 1), "MPI_WTIME_IS_GLOBAL");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &ip, &flag);
    CHECK(errs, flag && *ip >= size, "MPI_UNIVERSE_SIZE %d", flag ? *ip : -1);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &ip, &flag);
    CHECK(errs, flag && *ip == 0, "MPI_APPNUM");
    MPI_Attr_get(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &ip, &flag);
    CHECK(errs, flag && *ip >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE");
    MPI_Comm_get_attr(MPI_COMM_SELF, MPI_TAG_UB, &ip, &flag);
    CHECK(errs, !flag, "MPI_TAG_UB on MPI_COMM_SELF");

    /* set / get / replace / delete, on world */
    struct log log = { 0 };
    int key, key_dup, key_null;
    MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &log);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key_dup, NULL);
    MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &key_null, NULL);
    MPI_Comm_get_attr(MPI_COMM_WORLD, key, &v, &flag);
    CHECK(errs, !flag, "unset attribute found");
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void *)100L);
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void *)200L);   /* replaces: deletes 100 */
    CHECK(errs, log.deletes == 1 && log.deleted[0] == 100, "replacing called delete %d times", log.deletes);
    MPI_Comm_get_attr(MPI_COMM_WORLD, key, &v, &flag);
    CHECK(errs, flag && v == (void *)200L, "get after replace");
    MPI_Attr_put(MPI_COMM_WORLD, key_dup, (void *)300L);
    MPI_Attr_put(MPI_COMM_WORLD, key_null, (void *)400L);

    /* dup: copy callbacks decide what the copy holds */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK(errs, log.copies == 1, "copy callback ran %d times", log.copies);
    MPI_Comm_get_attr(dup, key, &v, &flag);
    CHECK(errs, flag && v == (void *)201L, "copied value %p", v);
    MPI_Comm_get_attr(dup, key_dup, &v, &flag);
    CHECK(errs, flag && v == (void *)300L, "MPI_COMM_DUP_FN value %p", v);
    MPI_Attr_get(dup, key_null, &v, &flag);
    CHECK(errs, !flag, "MPI_NULL_COPY_FN copied");
    MPI_Comm_get_attr(dup, MPI_TAG_UB, &v, &flag);
    CHECK(errs, !flag, "predefined attribute copied to a dup");

    /* free: delete callbacks, newest first */
    MPI_Comm_set_attr(dup, key_dup, (void *)301L);
    int key2;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &key2, &log);
    MPI_Comm_set_attr(dup, key2, (void *)500L);
    log.deletes = 0;
    MPI_Comm_free(&dup);
    CHECK(errs, log.deletes == 2 && log.deleted[0] == 500 && log.deleted[1] == 201,
          "deletes %d: %d %d", log.deletes, log.deleted[0], log.deleted[1]);

    /* delete */
    log.deletes = 0;
    MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    CHECK(errs, log.deletes == 1 && log.deleted[0] == 200, "delete_attr");
    MPI_Comm_get_attr(MPI_COMM_WORLD, key, &v, &flag);
    CHECK(errs, !flag, "deleted attribute found");
    MPI_Attr_delete(MPI_COMM_WORLD, key_null);

    /* callback errors propagate; a failing delete keeps the attribute */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm d2, d3;
    MPI_Comm_dup(MPI_COMM_WORLD, &d2);
    MPI_Comm_set_errhandler(d2, MPI_ERRORS_RETURN);
    MPI_Comm_set_attr(d2, key, (void *)7L);
    log.fail_delete = 1;
    CHECK(errs, MPI_Comm_set_attr(d2, key, (void *)8L) != MPI_SUCCESS, "failing delete in set succeeded");
    CHECK(errs, MPI_Comm_delete_attr(d2, key) != MPI_SUCCESS, "failing delete succeeded");
    MPI_Comm_get_attr(d2, key, &v, &flag);
    CHECK(errs, flag && v == (void *)7L, "attribute lost after failing delete");
    CHECK(errs, MPI_Comm_free(&d2) != MPI_SUCCESS && d2 != MPI_COMM_NULL, "free with failing delete");
    log.fail_delete = 0;
    log.fail_copy = 1;
    CHECK(errs, MPI_Comm_dup(d2, &d3) != MPI_SUCCESS, "failing copy succeeded");
    CHECK(errs, d3 == MPI_COMM_NULL, "failed dup left a communicator");
    log.fail_copy = 0;
    MPI_Comm_free(&d2);

    /* bad keyvals */
    CHECK(errs, check_class(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v)) == MPI_ERR_KEYVAL,
          "setting a predefined attribute");
    CHECK(errs, check_class(MPI_Comm_get_attr(MPI_COMM_WORLD, 123456, &v, &flag)) == MPI_ERR_KEYVAL,
          "unknown keyval");
    int stale = key2;
    MPI_Comm_free_keyval(&key2);
    CHECK(errs, key2 == MPI_KEYVAL_INVALID, "free_keyval left %d", key2);
    CHECK(errs, check_class(MPI_Comm_set_attr(MPI_COMM_WORLD, stale, &v)) == MPI_ERR_KEYVAL, "freed keyval");
    int tkey;
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL);
    CHECK(errs, check_class(MPI_Comm_set_attr(MPI_COMM_WORLD, tkey, &v)) == MPI_ERR_KEYVAL,
          "type keyval on a communicator");

    /* datatype attributes (on a predefined type: each rank sees its own) */
    struct log tlog = { 0 };
    int tk2;
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete_fn, &tk2, &tlog);
    MPI_Type_set_attr(MPI_INT, tk2, (void *)(long)(rank + 1));
    MPI_Type_get_attr(MPI_INT, tk2, &v, &flag);
    CHECK(errs, flag && v == (void *)(long)(rank + 1), "type attribute %p", v);
    MPI_Type_delete_attr(MPI_INT, tk2);
    CHECK(errs, tlog.deletes == 1, "type delete callback ran %d times", tlog.deletes);
    MPI_Type_get_attr(MPI_INT, tk2, &v, &flag);
    CHECK(errs, !flag, "deleted type attribute found");
    MPI_Type_free_keyval(&tk2);
    MPI_Type_free_keyval(&tkey);

    /* window keyvals exist before windows do */
    int wkey;
    CHECK(errs, MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &wkey, NULL) == MPI_SUCCESS,
          "win keyval");
    CHECK(errs, check_class(MPI_Comm_free_keyval(&wkey)) == MPI_ERR_KEYVAL, "win keyval freed as comm keyval");
    MPI_Win_free_keyval(&wkey);

    /* keyvals outliving their freeing, as long as attributes use them */
    int kl;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &kl, &log);
    MPI_Comm_set_attr(MPI_COMM_SELF, kl, (void *)9L);
    int kl_copy = kl;
    MPI_Comm_free_keyval(&kl);
    MPI_Comm_get_attr(MPI_COMM_SELF, kl_copy, &v, &flag);   /* erroneous but must not crash */
    log.deletes = 0;
    MPI_Comm_delete_attr(MPI_COMM_SELF, kl_copy);

    MPI_Comm_free_keyval(&key);
    MPI_Comm_free_keyval(&key_dup);
    MPI_Keyval_free(&key_null);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return check_finish(errs);
}
