/* Error handlers: user handlers for communicators (called with the handle
 * the program holds, inherited by new communicators), MPI_Comm_call_errhandler,
 * window and file handler objects, the MPI-1 names, and user error
 * classes, codes and strings. */
#include <string.h>
#include "comm_check.h"

/* Handlers cannot take a context argument: they count through the
 * communicator's attribute, whose keyval each rank keeps here (thread-local
 * so that the test also runs with unprivatized rank threads). */
static __thread int count_key = MPI_KEYVAL_INVALID;

static void counting_handler(MPI_Comm *comm, int *code, ...)
{
    int *calls, flag;
    MPI_Comm_get_attr(*comm, count_key, &calls, &flag);
    if (flag)
        calls[*code == MPI_ERR_OTHER ? 0 : 1]++;
}

static void win_handler(MPI_Win *win, int *code, ...) {}
static void file_handler(MPI_File *file, int *code, ...) {}

int main(int argc, char **argv)
{
    int errs = 0, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int key;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    count_key = key;

    MPI_Errhandler eh, got;
    MPI_Comm_create_errhandler(counting_handler, &eh);
    int calls[2] = { 0, 0 };
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, calls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    CHECK(errs, got == eh, "get_errhandler returned another handler");
    MPI_Errhandler_free(&got);
    CHECK(errs, MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER) == MPI_SUCCESS, "call_errhandler");
    CHECK(errs, calls[0] == 1, "handler called %d times", calls[0]);
    /* An error raised by MPI itself reaches the handler with its class. */
    int n;
    CHECK(errs, MPI_Comm_rank(MPI_COMM_WORLD, NULL) == MPI_ERR_ARG, "error code through a user handler");
    CHECK(errs, calls[1] == 1, "handler called %d times for MPI_ERR_ARG", calls[1]);

    /* Inherited by dup and split */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int dcalls[2] = { 0, 0 };
    MPI_Comm_set_attr(dup, key, dcalls);
    MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
    CHECK(errs, dcalls[0] == 1 && calls[0] == 1, "dup did not inherit the handler (%d, %d)", dcalls[0], calls[0]);
    MPI_Errhandler_free(&eh);   /* still in use by two communicators */
    MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
    CHECK(errs, dcalls[0] == 2, "handler gone after MPI_Errhandler_free");
    MPI_Comm_free(&dup);

    /* predefined handlers */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(errs, MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER) == MPI_ERR_OTHER,
          "MPI_ERRORS_RETURN: call_errhandler returns the code");
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &got);
    CHECK(errs, got == MPI_ERRORS_ARE_FATAL, "MPI_COMM_SELF's default handler");

    /* MPI-1 names */
    MPI_Errhandler old;
    MPI_Errhandler_create(counting_handler, &old);
    MPI_Errhandler_set(MPI_COMM_WORLD, old);
    MPI_Errhandler_get(MPI_COMM_WORLD, &got);
    CHECK(errs, got == old, "Errhandler_get");
    MPI_Errhandler_free(&got);
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    CHECK(errs, calls[0] == 2, "MPI-1 handler not called");
    MPI_Errhandler_free(&old);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* window and file handler objects */
    MPI_Errhandler weh, feh;
    CHECK(errs, MPI_Win_create_errhandler(win_handler, &weh) == MPI_SUCCESS, "win errhandler");
    CHECK(errs, MPI_File_create_errhandler(file_handler, &feh) == MPI_SUCCESS, "file errhandler");
    CHECK(errs, check_class(MPI_Comm_set_errhandler(MPI_COMM_WORLD, weh)) == MPI_ERR_ARG,
          "a window handler set on a communicator");
    MPI_Errhandler_free(&weh);
    MPI_Errhandler_free(&feh);
    CHECK(errs, weh == MPI_ERRHANDLER_NULL, "free did not null the handle");
    CHECK(errs, check_class(MPI_Errhandler_free(&weh)) == MPI_ERR_ARG, "freeing MPI_ERRHANDLER_NULL");

    /* user classes, codes and strings */
    int *last, flag, cls, code, code2, len, got_class;
    char text[MPI_MAX_ERROR_STRING];
    MPI_Add_error_class(&cls);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
    CHECK(errs, flag && *last >= cls && cls > MPI_ERR_LASTCODE, "class %d, last used %d", cls, *last);
    MPI_Add_error_code(cls, &code);
    MPI_Add_error_code(MPI_ERR_ARG, &code2);
    MPI_Error_class(code, &got_class);
    CHECK(errs, got_class == cls, "class of a user code %d", got_class);
    MPI_Error_class(code2, &got_class);
    CHECK(errs, got_class == MPI_ERR_ARG, "class of a code in a predefined class %d", got_class);
    MPI_Error_class(cls, &got_class);
    CHECK(errs, got_class == cls, "class of a user class %d", got_class);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
    CHECK(errs, *last >= code2, "MPI_LASTUSEDCODE %d did not grow to %d", *last, code2);
    MPI_Add_error_string(code, "a user error");
    MPI_Error_string(code, text, &len);
    CHECK(errs, strcmp(text, "a user error") == 0 && len == 12, "string '%s'", text);
    MPI_Add_error_string(code, "replaced");
    MPI_Error_string(code, text, &len);
    CHECK(errs, strcmp(text, "replaced") == 0, "replaced string '%s'", text);
    MPI_Error_string(MPI_ERR_COMM, text, &len);
    CHECK(errs, len > 0, "predefined string");
    CHECK(errs, check_class(MPI_Add_error_string(MPI_ERR_COMM, "no")) == MPI_ERR_ARG, "string for a predefined code");
    CHECK(errs, check_class(MPI_Add_error_code(code, &n)) == MPI_ERR_ARG, "a code as a class");
    CHECK(errs, check_class(MPI_Error_class(1 << 29, &n)) == MPI_ERR_ARG, "unknown code");
    /* A user code through a handler-less communicator returns as is. */
    CHECK(errs, MPI_Comm_call_errhandler(MPI_COMM_WORLD, code) == code, "call_errhandler with a user code");

    MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    MPI_Comm_free_keyval(&key);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return check_finish(errs);
}
