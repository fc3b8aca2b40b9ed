/* Helpers shared by the collective test programs: error counting and the
 * final " No Errors" report. No globals: every rank has its own counter. */
#ifndef COLL_UTIL_H
#define COLL_UTIL_H

#include <stdio.h>
#include <mpi.h>

#define CHECK(errs, cond, ...)                                  \
    do {                                                        \
        if (!(cond)) {                                          \
            if ((*(errs))++ < 10) {                             \
                int r_;                                         \
                MPI_Comm_rank(MPI_COMM_WORLD, &r_);             \
                fprintf(stderr, "[%d] %s:%d: ", r_, __FILE__, __LINE__); \
                fprintf(stderr, __VA_ARGS__);                   \
                fputc('\n', stderr);                            \
            }                                                   \
        }                                                       \
    } while (0)

/* Sums the error counts; rank 0 prints the verdict. Returns the exit status. */
static inline int coll_finish(int errs)
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
