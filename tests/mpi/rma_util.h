/* Helpers shared by the RMA test programs (on top of coll_util.h): call
 * checks and error classes. No mutable globals: every rank has its own counter. */
#ifndef RMA_UTIL_H
#define RMA_UTIL_H

#include "coll_util.h"   /* CHECK and the final report */

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

static inline int rma_finish(int errs)
{
    return coll_finish(errs);
}

#endif
