/* Error classes, their strings, and reporting an error through the error
 * handler of the object involved (DESIGN §13). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "../util/lock.h"
#include "core.h"
#include "errhandler.h"

STRAND_EXPORT struct strand_errhandler strand_errhandler_fatal = {
    .magic = ERRHANDLER_MAGIC, .kind = ERRHANDLER_FATAL, .predefined = true };
STRAND_EXPORT struct strand_errhandler strand_errhandler_return = {
    .magic = ERRHANDLER_MAGIC, .kind = ERRHANDLER_RETURN, .predefined = true };

static const struct {
    int errclass;
    const char *name;
    const char *text;
} error_classes[] = {
    { MPI_SUCCESS, "MPI_SUCCESS", "no error" },
    { MPI_ERR_BUFFER, "MPI_ERR_BUFFER", "invalid buffer pointer" },
    { MPI_ERR_COUNT, "MPI_ERR_COUNT", "invalid count argument" },
    { MPI_ERR_TYPE, "MPI_ERR_TYPE", "invalid datatype" },
    { MPI_ERR_TAG, "MPI_ERR_TAG", "invalid tag" },
    { MPI_ERR_COMM, "MPI_ERR_COMM", "invalid communicator" },
    { MPI_ERR_RANK, "MPI_ERR_RANK", "invalid rank" },
    { MPI_ERR_REQUEST, "MPI_ERR_REQUEST", "invalid request" },
    { MPI_ERR_ROOT, "MPI_ERR_ROOT", "invalid root" },
    { MPI_ERR_GROUP, "MPI_ERR_GROUP", "invalid group" },
    { MPI_ERR_OP, "MPI_ERR_OP", "invalid reduction operation" },
    { MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY", "invalid topology" },
    { MPI_ERR_DIMS, "MPI_ERR_DIMS", "invalid dimension argument" },
    { MPI_ERR_ARG, "MPI_ERR_ARG", "invalid argument" },
    { MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN", "unknown error" },
    { MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE", "message truncated on receive" },
    { MPI_ERR_OTHER, "MPI_ERR_OTHER", "other error" },
    { MPI_ERR_INTERN, "MPI_ERR_INTERN", "internal error" },
    { MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS", "error code is in status" },
    { MPI_ERR_PENDING, "MPI_ERR_PENDING", "pending request" },
    { MPI_ERR_ACCESS, "MPI_ERR_ACCESS", "permission denied" },
    { MPI_ERR_AMODE, "MPI_ERR_AMODE", "invalid file access mode" },
    { MPI_ERR_ASSERT, "MPI_ERR_ASSERT", "invalid assert argument" },
    { MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE", "invalid file name" },
    { MPI_ERR_BASE, "MPI_ERR_BASE", "invalid base address" },
    { MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION", "data conversion error" },
    { MPI_ERR_DISP, "MPI_ERR_DISP", "invalid displacement" },
    { MPI_ERR_DUP_DATAREP, "MPI_ERR_DUP_DATAREP", "data representation already registered" },
    { MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS", "file exists" },
    { MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE", "file in use" },
    { MPI_ERR_FILE, "MPI_ERR_FILE", "invalid file handle" },
    { MPI_ERR_INFO_KEY, "MPI_ERR_INFO_KEY", "invalid info key" },
    { MPI_ERR_INFO_NOKEY, "MPI_ERR_INFO_NOKEY", "info key not defined" },
    { MPI_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE", "invalid info value" },
    { MPI_ERR_INFO, "MPI_ERR_INFO", "invalid info object" },
    { MPI_ERR_IO, "MPI_ERR_IO", "I/O error" },
    { MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL", "invalid attribute key" },
    { MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE", "invalid lock type" },
    { MPI_ERR_NAME, "MPI_ERR_NAME", "service name not published" },
    { MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", "out of memory" },
    { MPI_ERR_NOT_SAME, "MPI_ERR_NOT_SAME", "arguments differ between processes" },
    { MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE", "no space left on device" },
    { MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE", "no such file" },
    { MPI_ERR_PORT, "MPI_ERR_PORT", "invalid port name" },
    { MPI_ERR_QUOTA, "MPI_ERR_QUOTA", "quota exceeded" },
    { MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY", "file is read-only" },
    { MPI_ERR_RMA_CONFLICT, "MPI_ERR_RMA_CONFLICT", "conflicting RMA accesses" },
    { MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC", "wrong RMA synchronization" },
    { MPI_ERR_SERVICE, "MPI_ERR_SERVICE", "invalid service name" },
    { MPI_ERR_SIZE, "MPI_ERR_SIZE", "invalid size" },
    { MPI_ERR_SPAWN, "MPI_ERR_SPAWN", "error spawning processes" },
    { MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation" },
    { MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation" },
    { MPI_ERR_WIN, "MPI_ERR_WIN", "invalid window" },
    { MPI_ERR_LASTCODE, "MPI_ERR_LASTCODE", "last error code" },
};

enum { ERROR_CLASS_COUNT = sizeof error_classes / sizeof error_classes[0] };

static int class_index(int errclass)
{
    for (int i = 0; i < ERROR_CLASS_COUNT; i++)
        if (error_classes[i].errclass == errclass)
            return i;
    return -1;
}

/* Codes and classes added by the program (MPI-2.2 §8.5), process-wide:
 * number FIRST_USER_CODE + i is user_codes[i]. Adding is rare and takes the
 * lock; so does reading, which only error paths do. */
enum { FIRST_USER_CODE = MPI_ERR_LASTCODE + 1 };

struct user_code {
    int errclass;                   /* itself, for a class */
    char *string;                   /* NULL: none set */
};

static struct lite_lock user_codes_lock = LITE_LOCK_INIT;
static struct user_code *user_codes;
static int user_codes_count, user_codes_capacity;
int errhandler_last_used_code = MPI_ERR_LASTCODE;

/* Copies out code's entry; false when it is not a user code. */
static bool user_code_find(int code, struct user_code *out, char *string, size_t len)
{
    bool found = false;
    lite_lock(&user_codes_lock);
    int i = code - FIRST_USER_CODE;
    if (i >= 0 && i < user_codes_count) {
        found = true;
        *out = user_codes[i];
        if (string != NULL)
            snprintf(string, len, "%s", user_codes[i].string != NULL ? user_codes[i].string : "");
    }
    lite_unlock(&user_codes_lock);
    return found;
}

static int user_code_add(int errclass)
{
    int code = -1;
    lite_lock(&user_codes_lock);
    if (user_codes_count == user_codes_capacity) {
        int cap = user_codes_capacity ? 2 * user_codes_capacity : 64;
        struct user_code *grown = realloc(user_codes, (size_t)cap * sizeof *grown);
        if (grown != NULL) {
            user_codes = grown;
            user_codes_capacity = cap;
        }
    }
    if (user_codes_count < user_codes_capacity) {
        code = FIRST_USER_CODE + user_codes_count;
        user_codes[user_codes_count++] = (struct user_code){ errclass < 0 ? code : errclass, NULL };
        errhandler_last_used_code = code;
    }
    lite_unlock(&user_codes_lock);
    return code;
}

static bool is_user_class(int code)
{
    struct user_code entry;
    return user_code_find(code, &entry, NULL, 0) && entry.errclass == code;
}

const char *error_class_name(int errclass)
{
    int i = class_index(errclass);
    if (i >= 0)
        return error_classes[i].name;
    struct user_code entry;
    if (user_code_find(errclass, &entry, NULL, 0))
        return entry.errclass == errclass ? "user-defined error class" : error_class_name(entry.errclass);
    return "MPI_ERR_UNKNOWN";
}

struct strand_errhandler *errhandler_lookup(MPI_Errhandler e)
{
    return e != MPI_ERRHANDLER_NULL && e->magic == ERRHANDLER_MAGIC ? e : NULL;
}

bool errhandler_valid_for(MPI_Errhandler e, enum errhandler_kind object_kind)
{
    if (errhandler_lookup(e) == NULL)
        return false;
    return e->kind == ERRHANDLER_FATAL || e->kind == ERRHANDLER_RETURN || e->kind == object_kind;
}

void errhandler_retain(MPI_Errhandler e)
{
    if (!e->predefined)
        atomic_fetch_add_explicit(&e->refcount, 1, memory_order_relaxed);
}

void errhandler_release(MPI_Errhandler e)
{
    if (e->predefined)
        return;
    if (atomic_fetch_sub_explicit(&e->refcount, 1, memory_order_acq_rel) == 1) {
        handle_magic_clear(&e->magic);
        free(e);
    }
}

_Noreturn void error_fatal(const char *where, int code, const char *message)
{
    char line[1024];
    int rank = strand_self != NULL ? strand_self->world_rank : -1;
    snprintf(line, sizeof line, "Strand MPI: fatal error in %s on rank %d: %s: %s\n",
             where, rank, error_class_name(code), message);
    strand_job_abort(1, line);
}

/* The one engine: applies handler `e` of the object `handle` (as the
 * program holds it) to an error. */
static int error_apply(MPI_Errhandler e, void *handle, int code, const char *where, const char *message)
{
    switch (e->kind) {
    case ERRHANDLER_RETURN:
        return code;
    case ERRHANDLER_COMM: {
        MPI_Comm comm = handle;
        e->fn.comm(&comm, &code);
        return code;
    }
    case ERRHANDLER_WIN: {
        MPI_Win win = handle;
        e->fn.win(&win, &code);
        return code;
    }
    case ERRHANDLER_FILE: {
        MPI_File file = handle;
        e->fn.file(&file, &code);
        return code;
    }
    default:
        error_fatal(where, code, message);
    }
}

int error_report(MPI_Comm comm, int code, const char *where, const char *fmt, ...)
{
    char message[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);

    struct strand_comm *c = comm_lookup(comm);
    if (c == NULL)
        c = comm_lookup(MPI_COMM_WORLD);
    if (c == NULL)
        error_fatal(where, code, message);
    /* The handler sees the communicator as the program holds it. */
    return error_apply(c->errhandler, c->public_handle, code, where, message);
}

int error_report_object(MPI_Errhandler errhandler, void *handle, int code, const char *where, const char *fmt, ...)
{
    char message[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return error_apply(errhandler, handle, code, where, message);
}

void error_not_initialized(const char *where)
{
    struct rank *r = strand_self;
    const char *why = r == NULL                           ? node_no_rank_reason()
                      : r->mpi_state == RANK_MPI_NOT_STARTED ? "MPI is not initialized (call MPI_Init first)"
                                                             : "MPI has already been finalized";
    error_fatal(where, MPI_ERR_OTHER, why);
}

int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (errorclass == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_class", "errorclass must not be NULL");
    struct user_code entry;
    if (class_index(errorcode) >= 0)
        *errorclass = errorcode;
    else if (user_code_find(errorcode, &entry, NULL, 0))
        *errorclass = entry.errclass;
    else
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d", errorcode);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Error_class);

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (string == NULL || resultlen == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_string", "string and resultlen must not be NULL");
    int i = class_index(errorcode);
    struct user_code entry;
    int n;
    if (i >= 0)
        n = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", error_classes[i].name, error_classes[i].text);
    else if (user_code_find(errorcode, &entry, string, MPI_MAX_ERROR_STRING))
        n = (int)strlen(string);
    else
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_string", "invalid error code %d", errorcode);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Error_string);

int PMPI_Add_error_class(int *errorclass)
{
    int rc = error_check_initialized("MPI_Add_error_class");
    if (rc != MPI_SUCCESS)
        return rc;
    if (errorclass == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_class", "errorclass must not be NULL");
    int code = user_code_add(-1);
    if (code < 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Add_error_class", "out of memory");
    *errorclass = code;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Add_error_class);

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    int rc = error_check_initialized("MPI_Add_error_code");
    if (rc != MPI_SUCCESS)
        return rc;
    if (errorcode == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code", "errorcode must not be NULL");
    if (class_index(errorclass) < 0 && !is_user_class(errorclass))
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code", "%d is not an error class",
                            errorclass);
    int code = user_code_add(errorclass);
    if (code < 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Add_error_code", "out of memory");
    *errorcode = code;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Add_error_code);

int PMPI_Add_error_string(int errorcode, char *string)
{
    const char *where = "MPI_Add_error_string";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (string == NULL || strlen(string) >= MPI_MAX_ERROR_STRING)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "the string must be shorter than %d characters",
                            MPI_MAX_ERROR_STRING);
    char *copy = strdup(string);
    if (copy == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, where, "out of memory");
    bool known = false;
    lite_lock(&user_codes_lock);
    int i = errorcode - FIRST_USER_CODE;
    if (i >= 0 && i < user_codes_count) {
        known = true;
        free(user_codes[i].string);
        user_codes[i].string = copy;
    }
    lite_unlock(&user_codes_lock);
    if (!known) {
        free(copy);
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "%d is not an error code added by the program",
                            errorcode);
    }
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Add_error_string);

/* --- error handler objects */

static int errhandler_create(const char *where, enum errhandler_kind kind, void (*fn)(void),
                             MPI_Errhandler *errhandler)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (fn == NULL || errhandler == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "function and errhandler must not be NULL");
    struct strand_errhandler *e = calloc(1, sizeof *e);
    if (e == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, where, "out of memory");
    e->magic = ERRHANDLER_MAGIC;
    e->kind = kind;
    /* The three handler types differ only in the handle type. */
    e->fn.comm = (MPI_Comm_errhandler_fn *)fn;
    atomic_store(&e->refcount, 1);
    *errhandler = e;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler)
{
    return errhandler_create("MPI_Comm_create_errhandler", ERRHANDLER_COMM, (void (*)(void))function, errhandler);
}
STRAND_MPI_ALIAS(MPI_Comm_create_errhandler);

int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    return errhandler_create("MPI_Errhandler_create", ERRHANDLER_COMM, (void (*)(void))function, errhandler);
}
STRAND_MPI_ALIAS(MPI_Errhandler_create);

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *function, MPI_Errhandler *errhandler)
{
    return errhandler_create("MPI_Win_create_errhandler", ERRHANDLER_WIN, (void (*)(void))function, errhandler);
}
STRAND_MPI_ALIAS(MPI_Win_create_errhandler);

int PMPI_File_create_errhandler(MPI_File_errhandler_function *function, MPI_Errhandler *errhandler)
{
    return errhandler_create("MPI_File_create_errhandler", ERRHANDLER_FILE, (void (*)(void))function, errhandler);
}
STRAND_MPI_ALIAS(MPI_File_create_errhandler);

int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    int rc = error_check_initialized("MPI_Errhandler_free");
    if (rc != MPI_SUCCESS)
        return rc;
    if (errhandler == NULL || errhandler_lookup(*errhandler) == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free", "invalid error handler");
    errhandler_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Errhandler_free);
