/* Helpers shared by the RMA test programs: error counting and the final
 * " No Errors" report. No mutable globals: every rank has its own counter. */
#ifndef RMA_UTIL_H
#define RMA_UTIL_H

#include <stdio.h>
#include <mpi.h>

#define CHECK(errs, cond, ...)                                              \
    do {                                                                    \
        if (!(cond)) {                                                      \
            if ((*(errs))++ < 10) {                                         \
                int r_;                                                     \
                MPI_Comm_rank(MPI_COMM_WORLD, &r_);                         \
                fprintf(stderr, "[%d] %s:%d: ", r_, __FILE__, __LINE__);    \
                fprintf(stderr, __VA_ARGS__);                               \
                fputc('\n', stderr);                                        \
            }                                                               \
        }                                                                   \
    } while (0)

/* An MPI call that must succeed. */
#define MUST(errs, call) CHECK(errs, (call) == MPI_SUCCESS, "%s failed", #call)

/* The error class a call returned (under MPI_ERRORS_RETURN). */
static inline int error_class_of(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

#define EXPECT_CLASS(errs, call, want)                                                        \
    do {                                                                                      \
        int got_ = error_class_of(call);                                                      \
        CHECK(errs, got_ == (want), "%s returned class %d, expected %s (%d)", #call, got_, #want, want); \
    } while (0)

/* Sums the error counts; rank 0 prints the verdict. Returns the exit status. */
static inline int rma_finish(int errs)
{
    int total = 0, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
    }
    MPI_Finalize();
    return errs != 0;
}

#endif
