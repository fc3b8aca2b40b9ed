/* Window objects: predefined attributes, user keyvals with copy/delete
 * callbacks, names, the window's group, error handlers (a user handler
 * gets the window and the code), windows on sub-communicators, zero-size
 * windows, and a window that outlives its communicator. */
#include <stdio.h>
#include <string.h>
#include "rma_util.h"

static int count_delete(MPI_Win win, int keyval, void *value, void *extra_state)
{
    (void)win; (void)keyval; (void)value;
    ++*(int *)extra_state;
    return MPI_SUCCESS;
}

static void errhandler_called(MPI_Win *win, int *code, ...)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Win_get_name(*win, name, &len);
    /* Tag the window's name with the class so the test can see the call. */
    int cls;
    MPI_Error_class(*code, &cls);
    snprintf(name, sizeof name, "handled %d", cls);
    MPI_Win_set_name(*win, name);
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double mem[10];
    MPI_Win win;
    MUST(&errs, MPI_Win_create(mem, sizeof mem - rank % 2 * sizeof(double), sizeof(double), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &win));
    void *base;
    MPI_Aint *wsize;
    int *unit, flag;
    MUST(&errs, MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(&errs, flag && base == mem, "MPI_WIN_BASE %p, expected %p", base, (void *)mem);
    MUST(&errs, MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
    CHECK(&errs, flag && *wsize == (MPI_Aint)(sizeof mem - rank % 2 * sizeof(double)), "MPI_WIN_SIZE %ld",
          (long)*wsize);
    MUST(&errs, MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(&errs, flag && *unit == sizeof(double), "MPI_WIN_DISP_UNIT %d", *unit);

    /* User keyvals. */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int deletes = 0, key, value = 17, *got;
    MUST(&errs, MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, &deletes));
    MUST(&errs, MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(&errs, !flag, "attribute present before set");
    MUST(&errs, MPI_Win_set_attr(win, key, &value));
    MUST(&errs, MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(&errs, flag && got == &value, "attribute value %p, expected %p", (void *)got, (void *)&value);
    MUST(&errs, MPI_Win_set_attr(win, key, &deletes));   /* replacing deletes the old value */
    CHECK(&errs, deletes == 1, "delete callback ran %d times after replace", deletes);
    MUST(&errs, MPI_Win_delete_attr(win, key));
    CHECK(&errs, deletes == 2, "delete callback ran %d times after delete", deletes);
    EXPECT_CLASS(&errs, MPI_Win_set_attr(win, MPI_WIN_BASE, &value), MPI_ERR_KEYVAL);
    int comm_key;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &comm_key, NULL);
    EXPECT_CLASS(&errs, MPI_Win_set_attr(win, comm_key, &value), MPI_ERR_KEYVAL);
    MPI_Comm_free_keyval(&comm_key);
    MUST(&errs, MPI_Win_set_attr(win, key, &value));

    /* Names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MUST(&errs, MPI_Win_get_name(win, name, &len));
    CHECK(&errs, len == 0 && name[0] == '\0', "default name '%s'", name);
    MUST(&errs, MPI_Win_set_name(win, "halo window"));
    MUST(&errs, MPI_Win_get_name(win, name, &len));
    CHECK(&errs, len == 11 && strcmp(name, "halo window") == 0, "name '%s' (%d)", name, len);

    /* Group. */
    MPI_Group g, world;
    MUST(&errs, MPI_Win_get_group(win, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int cmp;
    MPI_Group_compare(g, world, &cmp);
    CHECK(&errs, cmp == MPI_IDENT, "window group compares %d to the world group", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&world);

    /* Error handlers. */
    MPI_Errhandler eh, cur;
    MUST(&errs, MPI_Win_create_errhandler(errhandler_called, &eh));
    MUST(&errs, MPI_Win_set_errhandler(win, eh));
    MUST(&errs, MPI_Win_get_errhandler(win, &cur));
    CHECK(&errs, cur == eh, "MPI_Win_get_errhandler returned another handler");
    MPI_Errhandler_free(&cur);
    MPI_Win_fence(0, win);
    MPI_Put(mem, 1, MPI_DOUBLE, size, 0, 1, MPI_DOUBLE, win);    /* MPI_ERR_RANK through the handler */
    MPI_Win_get_name(win, name, &len);
    CHECK(&errs, strcmp(name, "handled 6") == 0, "user handler after a bad rank: name '%s'", name);
    MUST(&errs, MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    MPI_Win_get_name(win, name, &len);
    CHECK(&errs, strcmp(name, "handled 16") == 0, "MPI_Win_call_errhandler: name '%s'", name);
    MPI_Errhandler_free(&eh);
    MPI_Errhandler comm_handler;
    MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)errhandler_called, &comm_handler);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    EXPECT_CLASS(&errs, MPI_Win_set_errhandler(win, comm_handler), MPI_ERR_ARG);
    MPI_Errhandler_free(&comm_handler);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    MUST(&errs, MPI_Win_free(&win));
    CHECK(&errs, deletes == 3, "MPI_Win_free ran the delete callback %d times in all", deletes);
    MUST(&errs, MPI_Win_free_keyval(&key));

    /* A window on half of the ranks, over a communicator freed right away. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hrank, hsize, cell = -1;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    MUST(&errs, MPI_Win_create(&cell, sizeof cell, sizeof cell, MPI_INFO_NULL, half, &win));
    MPI_Comm_free(&half);
    MUST(&errs, MPI_Win_fence(0, win));
    MUST(&errs, MPI_Put(&rank, 1, MPI_INT, (hrank + 1) % hsize, 0, 1, MPI_INT, win));
    MUST(&errs, MPI_Win_fence(0, win));
    int from = (hrank + hsize - 1) % hsize * 2 + rank % 2;
    CHECK(&errs, cell == from, "sub-communicator window: %d, expected %d", cell, from);
    MUST(&errs, MPI_Win_free(&win));

    /* Zero-size windows everywhere: operations of zero elements only. */
    MUST(&errs, MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MUST(&errs, MPI_Win_fence(0, win));
    MUST(&errs, MPI_Put(mem, 0, MPI_DOUBLE, 0, 0, 0, MPI_DOUBLE, win));
    MUST(&errs, MPI_Win_fence(0, win));
    MUST(&errs, MPI_Win_free(&win));
    return rma_finish(errs);
}
