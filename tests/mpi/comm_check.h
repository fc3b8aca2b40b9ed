/* Helpers of the comm_* test programs: count failed checks per rank, and
 * let rank 0 gather the counts (point-to-point only, so the tests do not
 * depend on collectives) and print " No Errors". */
#ifndef COMM_CHECK_H
#define COMM_CHECK_H

#include <stdio.h>
#include "mpi.h"

#define CHECK(errs, cond, ...)                                                       \
    do {                                                                             \
        if (!(cond)) {                                                               \
            int rank_;                                                               \
            MPI_Comm_rank(MPI_COMM_WORLD, &rank_);                                   \
            printf("rank %d: %s:%d: check failed: %s: ", rank_, __FILE__, __LINE__, #cond); \
            printf(__VA_ARGS__);                                                     \
            printf("\n");                                                            \
            fflush(stdout);                                                          \
            (errs)++;                                                                \
        }                                                                            \
    } while (0)

/* The error class an MPI call returned (it must run under MPI_ERRORS_RETURN). */
static inline int check_class(int code)
{
    int cls = code;
    if (code != MPI_SUCCESS)
        MPI_Error_class(code, &cls);
    return cls;
}

enum { CHECK_TAG = 32000 };

/* Rank 0 sums every rank's count; returns the process exit status. */
static inline int check_finish(int errs)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != 0) {
        MPI_Send(&errs, 1, MPI_INT, 0, CHECK_TAG, MPI_COMM_WORLD);
    } else {
        for (int i = 1; i < size; i++) {
            int theirs;
            MPI_Recv(&theirs, 1, MPI_INT, i, CHECK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += theirs;
        }
        if (errs == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", errs);
        fflush(stdout);
    }
    MPI_Finalize();
    return errs != 0;
}

#endif
