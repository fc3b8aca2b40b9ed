/* Error handler objects: the two predefined ones and user functions for
 * communicators, windows and files. */
#ifndef STRAND_ERRHANDLER_H
#define STRAND_ERRHANDLER_H

#include <stdatomic.h>
#include <stdbool.h>
#include "mpi.h"

enum errhandler_kind { ERRHANDLER_FATAL, ERRHANDLER_RETURN, ERRHANDLER_COMM, ERRHANDLER_WIN, ERRHANDLER_FILE };

struct strand_errhandler {
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

#endif
