/*
 * testutil.h - small helpers shared by the MPI test programs in tests/mpi.
 *
 * The tests use nothing but MPI-2.2 point-to-point and environment calls
 * (no collectives, no communicator constructors, no derived datatypes), so
 * these helpers synchronise and gather results with plain messages.
 *
 * Rules every test follows (see README.md):
 *
 *  - Tags >= TU_TAG_RESERVED belong to the helpers; tests use smaller tags.
 *  - tu_finish() sends each rank's error count to rank 0 unsolicited, and
 *    tu_barrier() sends to other ranks.  Hence rank 0 never posts a receive
 *    or probe that has BOTH MPI_ANY_SOURCE and MPI_ANY_TAG (one wildcard is
 *    fine: a specific tag excludes the helper tags, and from a specific
 *    source the helper message comes after that source's test messages, so
 *    the non-overtaking rule keeps it out of the way).  Other ranks use
 *    ANY_SOURCE + ANY_TAG only where no rank can have entered a later
 *    tu_barrier().
 *  - No mutable global or static variables: each rank's state lives on its
 *    own stack, so the tests do not depend on an implementation keeping
 *    globals private to a rank (in Strand every rank is a thread).
 *  - Large messages (1 MiB and more) only between low ranks (tu_big_ok()),
 *    so that a run with hundreds of ranks stays small in memory and time.
 *
 * Everything here is static inline so one header serves every test.
 */
#ifndef STRAND_TESTUTIL_H
#define STRAND_TESTUTIL_H

#include <mpi.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TU_TAG_RESERVED 32000
#define TU_TAG_BARRIER  32001
#define TU_TAG_RESULT   32002

/* MPICH (4.0.2, the reference the tests are checked against) has a bug a
 * few checks must step around: the status of a nonblocking or persistent
 * receive from MPI_PROC_NULL is wrong (source 0 / tag 0, or an empty
 * status) instead of source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0.  Those
 * status checks are skipped when TU_MPICH_PROCNULL_BUG is non-zero; the
 * blocking MPI_Recv / MPI_Sendrecv / MPI_Probe ones are always made. */
#if defined(MPICH_VERSION)
#define TU_MPICH_PROCNULL_BUG 1
#else
#define TU_MPICH_PROCNULL_BUG 0
#endif

/* MPICH 4.0.2 (ch4:ucx) and Open MPI 4.1 deviate from MPI-2.2 3.8.4 when
 * a send is cancelled: a send they cannot cancel makes MPI_Wait / MPI_Test
 * wait for the receiver to post a receive (the standard says a wait on a
 * request marked for cancellation is local), and a send they report as
 * cancelled can still be seen by MPI_Iprobe at the receiver.  cancel.c
 * tolerates both only when TU_SEND_CANCEL_QUIRKS is non-zero. */
#if defined(MPICH_VERSION) || defined(OPEN_MPI)
#define TU_SEND_CANCEL_QUIRKS 1
#else
#define TU_SEND_CANCEL_QUIRKS 0
#endif

/* MPICH 4.0.2 calls a generalized request's free_fn from MPI_Request_free
 * even when MPI_Grequest_complete has not been called yet (MPI-2.2 12.2:
 * free_fn runs in whichever of the two calls comes last).  grequest.c
 * accepts that only when TU_MPICH_GREQUEST_EARLY_FREE is non-zero. */
#if defined(MPICH_VERSION)
#define TU_MPICH_GREQUEST_EARLY_FREE 1
#else
#define TU_MPICH_GREQUEST_EARLY_FREE 0
#endif

/* Ranks below this exchange the large (MiB-sized) messages. */
#define TU_BIG_RANKS 4

static inline int tu_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline int tu_size(void)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

/* True when this rank and its partner may use MiB-sized messages. */
static inline int tu_big_ok(int rank, int peer)
{
    return rank < TU_BIG_RANKS && peer < TU_BIG_RANKS;
}

static inline void tu_sleep_ms(int ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Call between the iterations of a polling loop (MPI_Test, MPI_Iprobe,
 * ...): with many more ranks than cores, a rank that spins without giving
 * up the CPU slows everybody down (Strand's test calls yield by themselves
 * then, MPICH's do not; poll_loops tests that). */
static inline void tu_yield(void)
{
    sched_yield();
}

/* Report one failure: "rank R, line L: message".  Returns 1 so that callers
 * can write errs += tu_fail(...). */
static inline int tu_fail(int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("rank %d, line %d: %s\n", tu_rank(), line, msg);
    fflush(stdout);
    return 1;
}

#define TU_FAIL(...) tu_fail(__LINE__, __VA_ARGS__)

/* These expect an int variable named errs in scope. */
#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond))                                                         \
            errs += TU_FAIL(__VA_ARGS__);                                    \
    } while (0)

#define CHECK_INT(what, expected, got)                                       \
    do {                                                                     \
        long long e_ = (long long)(expected), g_ = (long long)(got);         \
        if (e_ != g_)                                                        \
            errs += TU_FAIL("%s: expected %lld, got %lld", (what), e_, g_);  \
    } while (0)

/* An MPI call that must succeed.  Under MPI_ERRORS_ARE_FATAL it cannot
 * fail visibly; under MPI_ERRORS_RETURN this reports the error string. */
#define CHECK_RC(call)                                                       \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != MPI_SUCCESS) {                                            \
            char s_[MPI_MAX_ERROR_STRING];                                   \
            int l_ = 0;                                                      \
            s_[0] = '\0';                                                    \
            MPI_Error_string(rc_, s_, &l_);                                  \
            errs += TU_FAIL("%s returned %d (%s)", #call, rc_, s_);          \
        }                                                                    \
    } while (0)

/* Stop the whole job after an error that makes going on pointless. */
static inline void tu_abort(int line, const char *what)
{
    printf("rank %d, line %d: fatal test error: %s\n", tu_rank(), line, what);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define TU_ABORT(what) tu_abort(__LINE__, (what))

static inline void *tu_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        TU_ABORT("out of memory");
    return p;
}

/* ---- data patterns ---------------------------------------------------- */

/* Byte i of the pattern identified by seed; neighbouring bytes and
 * neighbouring seeds give different values. */
static inline unsigned char tu_pattern_byte(unsigned seed, size_t i)
{
    unsigned x = (unsigned)i * 2654435761u + seed * 40503u + 0x9e3779b9u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return (unsigned char)x;
}

static inline void tu_fill(void *buf, size_t nbytes, unsigned seed)
{
    unsigned char *p = (unsigned char *)buf;
    size_t i;
    for (i = 0; i < nbytes; i++)
        p[i] = tu_pattern_byte(seed, i);
}

#define TU_GUARD_BYTE 0xA5

/* Set a whole receive buffer to the guard byte before receiving into it. */
static inline void tu_guard(void *buf, size_t nbytes)
{
    memset(buf, TU_GUARD_BYTE, nbytes);
}

/* Check that buf holds nbytes of pattern seed followed by guard bytes up to
 * capacity.  Reports the first difference; returns 1 on mismatch. */
static inline int tu_check_data(const void *buf, size_t nbytes,
                                size_t capacity, unsigned seed,
                                const char *what)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t i;
    for (i = 0; i < nbytes; i++) {
        if (p[i] != tu_pattern_byte(seed, i))
            return TU_FAIL("%s: byte %zu of %zu: expected 0x%02x, got 0x%02x",
                           what, i, nbytes, tu_pattern_byte(seed, i), p[i]);
    }
    for (; i < capacity; i++) {
        if (p[i] != TU_GUARD_BYTE)
            return TU_FAIL("%s: byte %zu written past the %zu-byte message "
                           "(0x%02x)", what, i, nbytes, p[i]);
    }
    return 0;
}

/* ---- status checks ---------------------------------------------------- */

/* Check source, tag and Get_count of a receive status. */
static inline int tu_check_status(MPI_Status *st, int source, int tag,
                                  MPI_Datatype type, int count,
                                  const char *what)
{
    int errs = 0, got = -12345;
    if (st->MPI_SOURCE != source)
        errs += TU_FAIL("%s: status.MPI_SOURCE expected %d, got %d", what,
                        source, st->MPI_SOURCE);
    if (st->MPI_TAG != tag)
        errs += TU_FAIL("%s: status.MPI_TAG expected %d, got %d", what, tag,
                        st->MPI_TAG);
    MPI_Get_count(st, type, &got);
    if (got != count)
        errs += TU_FAIL("%s: MPI_Get_count expected %d, got %d", what, count,
                        got);
    return errs;
}

/* An "empty" status (MPI-2.2 3.7.3): what a wait on a null or inactive
 * request returns. */
static inline int tu_check_empty_status(MPI_Status *st,
                                        const char *what)
{
    return tu_check_status(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_BYTE, 0,
                           what);
}

/* Status of a receive from MPI_PROC_NULL (MPI-2.2 3.11). */
static inline int tu_check_procnull_status(MPI_Status *st,
                                           const char *what)
{
    return tu_check_status(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_BYTE, 0, what);
}

/* Error class of an MPI return code. */
static inline int tu_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* ---- synchronisation and result collection ----------------------------- */

/* Dissemination barrier over MPI_COMM_WORLD with zero-byte messages.  Each
 * ordered pair of ranks meets in at most one round, so one tag suffices and
 * consecutive barriers cannot mix their messages. */
static inline void tu_barrier(void)
{
    int rank = tu_rank(), size = tu_size(), k;
    for (k = 1; k < size; k *= 2) {
        int to = (rank + k) % size;
        int from = (rank - k + size) % size;
        if (MPI_Sendrecv(NULL, 0, MPI_BYTE, to, TU_TAG_BARRIER, NULL, 0,
                         MPI_BYTE, from, TU_TAG_BARRIER, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE) != MPI_SUCCESS)
            TU_ABORT("tu_barrier: MPI_Sendrecv failed");
    }
}

/* Sum of all ranks' error counts at rank 0 (other ranks get their own). */
static inline int tu_collect(int errs)
{
    int rank = tu_rank(), size = tu_size(), r, total = errs;
    fflush(stdout);
    if (rank != 0) {
        if (MPI_Send(&errs, 1, MPI_INT, 0, TU_TAG_RESULT, MPI_COMM_WORLD)
            != MPI_SUCCESS)
            TU_ABORT("tu_collect: MPI_Send failed");
        return errs;
    }
    for (r = 1; r < size; r++) {
        int e = 0;
        if (MPI_Recv(&e, 1, MPI_INT, r, TU_TAG_RESULT, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
            TU_ABORT("tu_collect: MPI_Recv failed");
        total += e;
    }
    return total;
}

/* Rank 0's final line. */
static inline void tu_report(int total)
{
    if (total == 0)
        printf(" No Errors\n");
    else
        printf(" Found %d errors\n", total);
    fflush(stdout);
}

/* Collect, finalize, report; main returns what this returns.  The verdict
 * is printed after MPI_Finalize so that it is the last line even if the
 * library prints something while finalizing, and only if finalizing
 * returned. */
static inline int tu_finish(int errs)
{
    int rank = tu_rank();
    int total = tu_collect(errs);
    MPI_Finalize();
    if (rank == 0)
        tu_report(total);
    return total != 0;
}

#endif /* STRAND_TESTUTIL_H */
