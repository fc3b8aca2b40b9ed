/*
 * bench.h - shared helpers of the Strand benchmark suite (header only).
 *
 * Every benchmark in bench/ is a plain MPI-2.2 C11 program.  Under Strand
 * every MPI rank is a thread of one process, so nothing here keeps state in
 * global or static variables and nothing calls exit(): all state lives in
 * caller-owned structs, and errors end with MPI_Abort or a return from main.
 *
 * Output convention (rank 0 only): one result per line,
 *     name size value unit
 * e.g. "pingpong 8 0.35 us".  Lines starting with '#' are comments.
 *
 * Measurement model (bench_measure): a kernel runs `iters` iterations of the
 * operation under test.  One timed batch is barrier, kernel, and the maximum
 * elapsed time over all ranks.  After warm-up, batches grow until one takes
 * about time/reps seconds (or max-iters is reached); then `reps` batches of
 * that length are timed and the median time per iteration is returned.
 * The harness itself uses only MPI_Send and MPI_Recv, so the point-to-point
 * benchmarks need nothing else from the MPI under test.
 */
#ifndef STRAND_BENCH_H
#define STRAND_BENCH_H

#include <mpi.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_KIB 1024L
#define BENCH_MIB (1024L * 1024L)

/* Options shared by all benchmarks; see bench_usage_common(). */
typedef struct {
    double time;    /* seconds budget per measured point (all repetitions) */
    int reps;       /* timed repetitions; the median is reported */
    long max_iters; /* cap on iterations of one repetition */
    long warmup;    /* warm-up iterations; < 0 means "choose by size" */
    long min_size;  /* smallest message size to run, bytes */
    long max_size;  /* largest message size to run, bytes */
} bench_opts;

/* Runs `iters` iterations of the operation under test. */
typedef void (*bench_kernel)(void *ctx, long iters);

static inline void bench_default_opts(bench_opts *o)
{
    o->time = 0.2;
    o->reps = 5;
    o->max_iters = 1000000;
    o->warmup = -1;
    o->min_size = 0;
    o->max_size = 4 * BENCH_MIB;
}

static inline int bench_rank(MPI_Comm comm)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    return rank;
}

static inline int bench_nprocs(MPI_Comm comm)
{
    int n;
    MPI_Comm_size(comm, &n);
    return n;
}

/* Prints an error with the rank and aborts the whole job. */
static inline void bench_fail(MPI_Comm comm, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "[rank %d] ERROR: ", bench_rank(comm));
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(comm, 3);
}

static inline void *bench_malloc(MPI_Comm comm, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        bench_fail(comm, "out of memory allocating %zu bytes", bytes);
    return p;
}

/* ---- start-up ---------------------------------------------------------- */

/* MPI_Init, or MPI_Init_thread(MPI_THREAD_MULTIPLE) when the environment
 * has BENCH_THREAD_MULTIPLE=1 (to measure what that level costs a
 * single-threaded program); bench_header prints the level. */
static inline void bench_init(int *argc, char ***argv)
{
    const char *multiple = getenv("BENCH_THREAD_MULTIPLE");
    int provided = MPI_THREAD_SINGLE;
    if (multiple != NULL && strcmp(multiple, "1") == 0)
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(argc, argv);
}

/* ---- output ------------------------------------------------------------ */

/* Prints one result line on rank 0 and flushes it at once, so partial
 * results survive a run that is killed by a timeout. */
static inline void bench_report(MPI_Comm comm, const char *name, long size,
                                double value, const char *unit)
{
    if (bench_rank(comm) != 0)
        return;
    printf("%s %ld %.6g %s\n", name, size, value, unit);
    fflush(stdout);
}

/* Prints the header comment on rank 0. */
static inline void bench_header(MPI_Comm comm, const char *what,
                                const bench_opts *o)
{
    int version, subversion, level = MPI_THREAD_SINGLE;
    if (bench_rank(comm) != 0)
        return;
    MPI_Get_version(&version, &subversion);
    MPI_Query_thread(&level);
    printf("# %s\n", what);
    printf("# ranks=%d mpi=%d.%d thread_level=%s time=%gs reps=%d max_iters=%ld"
           " (value = median over reps)\n",
           bench_nprocs(comm), version, subversion,
           level == MPI_THREAD_MULTIPLE ? "multiple" : level == MPI_THREAD_SERIALIZED ? "serialized"
           : level == MPI_THREAD_FUNNELED ? "funneled" : "single", o->time, o->reps,
           o->max_iters);
    printf("# name size value unit\n");
    fflush(stdout);
}

/* ---- option parsing ----------------------------------------------------- */

/* Parses "123", "4k", "4K", "2m", "1M", "1g" as a byte count; -1 on error. */
static inline long bench_parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 0)
        return -1;
    switch (*end) {
    case '\0': return v;
    case 'k': case 'K': v *= BENCH_KIB; end++; break;
    case 'm': case 'M': v *= BENCH_MIB; end++; break;
    case 'g': case 'G': v *= 1024 * BENCH_MIB; end++; break;
    default: return -1;
    }
    return *end == '\0' ? v : -1;
}

static inline void bench_usage_common(void)
{
    fprintf(stderr,
            "common options:\n"
            "  --time S        time budget per measured point, seconds (0.2)\n"
            "  --reps N        timed repetitions, median reported (5)\n"
            "  --max-iters N   cap on iterations per repetition (1000000)\n"
            "  --warmup N      warm-up iterations (default: by size)\n"
            "  --min-size B    smallest message size (0; pingpong, bandwidth)\n"
            "  --max-size B    largest message size, e.g. 64K, 1M (4M)\n"
            "  --help          this text\n");
}

/*
 * Parses one common option at argv[*i] (advancing *i past its value).
 * Returns 1 if consumed, 0 if not a common option, -1 on a bad value.
 */
static inline int bench_parse_common(int argc, char **argv, int *i,
                                     bench_opts *o)
{
    const char *opt = argv[*i];
    const char *val = *i + 1 < argc ? argv[*i + 1] : NULL;
    int known = !strcmp(opt, "--time") || !strcmp(opt, "--reps") ||
                !strcmp(opt, "--max-iters") || !strcmp(opt, "--warmup") ||
                !strcmp(opt, "--min-size") || !strcmp(opt, "--max-size");
    char *end = NULL;

    if (!known)
        return 0;
    if (val == NULL)
        return -1;
    (*i)++;
    if (!strcmp(opt, "--time")) {
        o->time = strtod(val, &end);
        return (*end == '\0' && o->time > 0) ? 1 : -1;
    }
    if (!strcmp(opt, "--reps")) {
        o->reps = (int)strtol(val, &end, 10);
        return (*end == '\0' && o->reps > 0) ? 1 : -1;
    }
    if (!strcmp(opt, "--max-iters")) {
        o->max_iters = strtol(val, &end, 10);
        return (*end == '\0' && o->max_iters > 0) ? 1 : -1;
    }
    if (!strcmp(opt, "--warmup")) {
        o->warmup = strtol(val, &end, 10);
        return (*end == '\0' && o->warmup >= 0) ? 1 : -1;
    }
    long size = bench_parse_size(val); /* counts are ints: cap at 1 GiB */
    if (size < 0 || size > 1024 * BENCH_MIB)
        return -1;
    if (!strcmp(opt, "--min-size"))
        o->min_size = size;
    else
        o->max_size = size;
    return 1;
}

/* Parses one benchmark-specific option at argv[*i]; same contract as
 * bench_parse_common(). */
typedef int (*bench_extra_parser)(void *extra, int argc, char **argv, int *i);

/*
 * Parses argv: the common options, then those of `parse_extra` (may be NULL).
 * Returns 0 to go on, 1 for --help, -1 on error (usage printed by rank 0).
 * The same argv reaches every rank, so all ranks reach the same verdict.
 */
static inline int bench_parse_args(MPI_Comm comm, int argc, char **argv,
                                   bench_opts *o, const char *usage,
                                   bench_extra_parser parse_extra, void *extra)
{
    int root = bench_rank(comm) == 0;
    bench_default_opts(o);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int r;
        if (!strcmp(arg, "--help")) {
            if (root) {
                fprintf(stderr, "usage: %s [options]\n%s", argv[0], usage);
                bench_usage_common();
            }
            return 1;
        }
        r = bench_parse_common(argc, argv, &i, o);
        if (r == 0 && parse_extra != NULL)
            r = parse_extra(extra, argc, argv, &i);
        if (r <= 0) {
            if (root)
                fprintf(stderr, "%s: bad option or value: %s (try --help)\n",
                        argv[0], arg);
            return -1;
        }
    }
    return 0;
}

/* ---- data patterns ------------------------------------------------------ */

/* Pseudo-random but reproducible byte i of the pattern `seed`. */
static inline unsigned char bench_pattern_byte(size_t i, uint32_t seed)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed * 0x9E3779B9u + 0x7F4A7C15u;
    x ^= x >> 15;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    return (unsigned char)(x >> 24);
}

static inline void bench_fill(void *buf, size_t bytes, uint32_t seed)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < bytes; i++)
        p[i] = bench_pattern_byte(i, seed);
}

/* Returns the index of the first byte that differs from the pattern, or
 * (size_t)-1 if the buffer matches. */
static inline size_t bench_find_mismatch(const void *buf, size_t bytes,
                                         uint32_t seed)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < bytes; i++)
        if (p[i] != bench_pattern_byte(i, seed))
            return i;
    return (size_t)-1;
}

/* Aborts the job if buf does not hold the pattern `seed`. */
static inline void bench_check(MPI_Comm comm, const char *what,
                               const void *buf, size_t bytes, uint32_t seed)
{
    size_t bad = bench_find_mismatch(buf, bytes, seed);
    if (bad != (size_t)-1)
        bench_fail(comm, "%s: wrong data at byte %zu of %zu (got 0x%02x,"
                   " want 0x%02x)", what, bad, bytes,
                   ((const unsigned char *)buf)[bad],
                   bench_pattern_byte(bad, seed));
}

/* ---- timing ------------------------------------------------------------- */

#define BENCH_HARNESS_TAG 32001

/*
 * Maximum of `value` over all ranks, returned on every rank.  Built from
 * MPI_Send/MPI_Recv on purpose (not MPI_Allreduce): the point-to-point
 * benchmarks then rely on nothing but point-to-point from the MPI under
 * test.  No rank returns before every rank has called it, so it doubles as
 * a barrier.  Called between timed regions only.
 */
static inline double bench_max_all(MPI_Comm comm, double value)
{
    int rank = bench_rank(comm), nprocs = bench_nprocs(comm);
    double other;
    if (rank == 0) {
        for (int r = 1; r < nprocs; r++) {
            MPI_Recv(&other, 1, MPI_DOUBLE, r, BENCH_HARNESS_TAG, comm,
                     MPI_STATUS_IGNORE);
            if (other > value)
                value = other;
        }
        for (int r = 1; r < nprocs; r++)
            MPI_Send(&value, 1, MPI_DOUBLE, r, BENCH_HARNESS_TAG, comm);
    } else {
        MPI_Send(&value, 1, MPI_DOUBLE, 0, BENCH_HARNESS_TAG, comm);
        MPI_Recv(&value, 1, MPI_DOUBLE, 0, BENCH_HARNESS_TAG, comm,
                 MPI_STATUS_IGNORE);
    }
    return value;
}

/* One timed batch: barrier, kernel, max elapsed over ranks (collective).
 * The barrier is bench_max_all: no rank starts before all have arrived. */
static inline double bench_batch(MPI_Comm comm, bench_kernel kernel,
                                 void *ctx, long iters)
{
    double start;
    bench_max_all(comm, 0.0);
    start = MPI_Wtime();
    kernel(ctx, iters);
    return bench_max_all(comm, MPI_Wtime() - start);
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n-1]; sorts v in place. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Default warm-up iteration count for a message of `bytes`. */
static inline long bench_warmup_for(const bench_opts *o, long bytes)
{
    if (o->warmup >= 0)
        return o->warmup;
    return bytes <= 64 * BENCH_KIB ? 20 : 3;
}

/*
 * Grows the batch length until one batch takes about `per_rep` seconds or
 * `max_iters` is reached; returns the length.  *last gets the duration of
 * the last batch.  All ranks see the same (reduced) times, so they all take
 * the same decisions.
 */
static inline long bench_calibrate(MPI_Comm comm, bench_kernel kernel,
                                   void *ctx, double per_rep, long max_iters,
                                   double *last)
{
    long iters = 1;
    double t = bench_batch(comm, kernel, ctx, iters);
    while (t < 0.5 * per_rep && iters < max_iters) {
        double factor = t > 0 ? per_rep / t : 64.0;
        if (factor < 2.0)
            factor = 2.0;
        if (factor > 64.0)
            factor = 64.0;
        iters = (long)((double)iters * factor + 0.5);
        if (iters > max_iters)
            iters = max_iters;
        t = bench_batch(comm, kernel, ctx, iters);
    }
    *last = t;
    return iters;
}

/*
 * Measures `kernel` and returns the median time per iteration (seconds).
 * If single batches are slow, fewer repetitions are run so that the point
 * stays within about o->time (at least one repetition).  Collective.
 */
static inline double bench_measure(MPI_Comm comm, bench_kernel kernel,
                                   void *ctx, const bench_opts *o,
                                   long warmup)
{
    double per_rep = o->time / o->reps, last, result;
    long iters;
    int reps = o->reps;
    double *samples;

    if (warmup > 0)
        bench_batch(comm, kernel, ctx, warmup);
    iters = bench_calibrate(comm, kernel, ctx, per_rep, o->max_iters, &last);
    if (last * reps > 2.0 * o->time) {
        reps = (int)(o->time / last);
        if (reps < 1)
            reps = 1;
    }
    samples = bench_malloc(comm, sizeof *samples * (size_t)reps);
    for (int r = 0; r < reps; r++)
        samples[r] = bench_batch(comm, kernel, ctx, iters) / (double)iters;
    result = bench_median(samples, reps);
    free(samples);
    return result;
}

#endif /* STRAND_BENCH_H */
