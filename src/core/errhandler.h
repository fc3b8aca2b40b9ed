/* Error handler objects: the two predefined ones and user functions for
 * communicators, windows and files. */
#ifndef STRAND_ERRHANDLER_H
#define STRAND_ERRHANDLER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "mpi.h"

#define ERRHANDLER_MAGIC 0x53455248u   /* "SERH" */

enum errhandler_kind { ERRHANDLER_FATAL, ERRHANDLER_RETURN, ERRHANDLER_COMM, ERRHANDLER_WIN, ERRHANDLER_FILE };

struct strand_errhandler {
    uint32_t magic;
    enum errhandler_kind kind;
    union {
        MPI_Comm_errhandler_fn *comm;
        MPI_Win_errhandler_fn *win;
        MPI_File_errhandler_fn *file;
    } fn;
    atomic_int refcount;
    bool predefined;
};

/* True for the predefined handlers and for user handlers of `object_kind`. */
bool errhandler_valid_for(MPI_Errhandler e, enum errhandler_kind object_kind);
void errhandler_retain(MPI_Errhandler e);
void errhandler_release(MPI_Errhandler e);
/* NULL unless `e` is a live error handler. */
struct strand_errhandler *errhandler_lookup(MPI_Errhandler e);

/* The largest error code or class in use: the value of the MPI_LASTUSEDCODE
 * attribute (grows with MPI_Add_error_class/_code). */
extern int errhandler_last_used_code;

#endif
