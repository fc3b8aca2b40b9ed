/*
 * io.c - MPI-IO throughput (any rank count; the reference setting is 64).
 *
 * A file of --size bytes (256 MiB) in --dir (/tmp) is written and read by
 * all ranks in four ways; every rank moves size/np bytes from one
 * contiguous buffer:
 *   strided_coll   each rank owns every np-th --block (4 KiB) of the file
 *                  (a vector filetype), MPI_File_write_all / read_all
 *   strided_ind    the same view, MPI_File_write / MPI_File_read
 *   contig_coll    rank r owns bytes [r*size/np, (r+1)*size/np),
 *                  MPI_File_write_at_all / read_at_all
 *   contig_ind     the same with MPI_File_write_at / read_at
 * Each is timed as barrier, operation, barrier (the slowest rank), --reps
 * times (3), median reported as "io_PATTERN_write|read SIZE MB/s".
 * With --sync, writes include MPI_File_sync and the file's pages are
 * dropped from the page cache (fsync + posix_fadvise DONTNEED) before each
 * read, so reads come from the device; without it both may stay in memory.
 * Then overlap (contiguous blocks): `compute` is a fixed arithmetic loop
 * calibrated to last about as long as one rank's blocking write_at; reported
 * as MB/s of the file: io_overlap_write_then_compute (write_at, then the
 * loop) and io_overlap_iwrite_compute (iwrite_at, the loop, MPI_Wait).
 * With I/O that moves in the background the second approaches twice the
 * first; an MPI that writes inside iwrite_at gives both the same.
 * Every read is checked against the pattern written (rank and offset in
 * every 8-byte word), so a broken transfer aborts instead of giving a
 * number. No globals, no exit(): ranks may be threads.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    long size, block;
    int reps, sync;
    char dir[200];
} io_opts;

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    else if (*end == 'G' || *end == 'g')
        v <<= 30;
    return v;
}

static int parse(int argc, char **argv, io_opts *o)
{
    o->size = 256L << 20;
    o->block = 4096;
    o->reps = 3;
    o->sync = 0;
    snprintf(o->dir, sizeof o->dir, "/tmp");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            o->size = parse_size(argv[++i]);
        else if (strcmp(argv[i], "--block") == 0 && i + 1 < argc)
            o->block = parse_size(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            o->reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            snprintf(o->dir, sizeof o->dir, "%s", argv[++i]);
        else if (strcmp(argv[i], "--sync") == 0)
            o->sync = 1;
        else
            return 0;
    }
    return o->size > 0 && o->block > 0 && o->reps > 0;
}

/* The 8-byte word at file offset `off` holds (off, a mark of the rank). */
static void fill(uint64_t *buf, long words, const MPI_Offset *offsets, long block_words, int rank)
{
    for (long i = 0; i < words; i++)
        buf[i] = ((uint64_t)(offsets[i / block_words] + 8 * (i % block_words)) << 8) | (uint64_t)(rank & 0xff);
}

static int mismatch(const uint64_t *buf, long words, const MPI_Offset *offsets, long block_words, int rank)
{
    for (long i = 0; i < words; i++) {
        uint64_t want = ((uint64_t)(offsets[i / block_words] + 8 * (i % block_words)) << 8) | (uint64_t)(rank & 0xff);
        if (buf[i] != want)
            return 1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum pattern { STRIDED_COLL, STRIDED_IND, CONTIG_COLL, CONTIG_IND };
static const char *const pattern_name[] = { "strided_coll", "strided_ind", "contig_coll", "contig_ind" };

/* Drops the file's clean pages from the page cache (rank 0, after a sync). */
static void drop_cache(const char *path, int rank)
{
    if (rank == 0) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            fdatasync(fd);
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            close(fd);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static double run_once(MPI_File fh, enum pattern p, int writing, void *buf, long count, MPI_Offset at, int sync)
{
    MPI_Status st;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc;
    switch (p) {
    case STRIDED_COLL:
        rc = writing ? MPI_File_write_all(fh, buf, (int)count, MPI_BYTE, &st)
                     : MPI_File_read_all(fh, buf, (int)count, MPI_BYTE, &st);
        break;
    case STRIDED_IND:
        rc = writing ? MPI_File_write(fh, buf, (int)count, MPI_BYTE, &st)
                     : MPI_File_read(fh, buf, (int)count, MPI_BYTE, &st);
        break;
    case CONTIG_COLL:
        rc = writing ? MPI_File_write_at_all(fh, at, buf, (int)count, MPI_BYTE, &st)
                     : MPI_File_read_at_all(fh, at, buf, (int)count, MPI_BYTE, &st);
        break;
    default:
        rc = writing ? MPI_File_write_at(fh, at, buf, (int)count, MPI_BYTE, &st)
                     : MPI_File_read_at(fh, at, buf, (int)count, MPI_BYTE, &st);
        break;
    }
    if (rc == MPI_SUCCESS && writing && sync)
        rc = MPI_File_sync(fh);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "io: %s %s failed\n", pattern_name[p], writing ? "write" : "read");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

/* Arithmetic the compiler cannot drop: `iters` dependent multiply-adds. */
static double compute(long iters)
{
    volatile double sink;
    double x = 1.0;
    for (long i = 0; i < iters; i++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
    return sink;
}

static double compute_time(long iters)
{
    double t0 = MPI_Wtime();
    compute(iters);
    return MPI_Wtime() - t0;
}

/* Iterations of compute() lasting about `seconds` (the same on all ranks). */
static long calibrate(double seconds)
{
    long iters = 1 << 16;
    while (compute_time(iters) < seconds && iters < (1L << 40))
        iters *= 2;
    MPI_Allreduce(MPI_IN_PLACE, &iters, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    return iters;
}

/* Blocking write then compute, or iwrite, compute, wait: seconds. */
static double overlap_once(MPI_File fh, int background, void *buf, long count, MPI_Offset at, long iters)
{
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc;
    if (background) {
        rc = MPI_File_iwrite_at(fh, at, buf, (int)count, MPI_BYTE, &req);
        compute(iters);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        rc = MPI_File_write_at(fh, at, buf, (int)count, MPI_BYTE, MPI_STATUS_IGNORE);
        compute(iters);
    }
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "io: overlap %s failed\n", background ? "iwrite_at" : "write_at");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static void overlap(const char *path, const io_opts *o, uint64_t *buf, long mine, const MPI_Offset *contig,
                    int rank, double *t)
{
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, (char *)path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    fill(buf, mine / 8, contig, o->block / 8, rank);
    /* The loop lasts as long as one rank's own write (median of reps). */
    for (int r = 0; r < o->reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_File_write_at(fh, (MPI_Offset)rank * mine, buf, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE);
        t[r] = MPI_Wtime() - t0;
    }
    qsort(t, (size_t)o->reps, sizeof *t, cmp_double);
    double own = t[o->reps / 2];
    MPI_Allreduce(MPI_IN_PLACE, &own, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long iters = calibrate(own);
    for (int background = 0; background <= 1; background++) {
        for (int r = 0; r < o->reps; r++)
            t[r] = overlap_once(fh, background, buf, mine, (MPI_Offset)rank * mine, iters);
        qsort(t, (size_t)o->reps, sizeof *t, cmp_double);
        if (rank == 0) {
            printf("io_overlap_%s %ld %.1f MB/s\n", background ? "iwrite_compute" : "write_then_compute", o->size,
                   o->size / t[o->reps / 2] / 1e6);
            fflush(stdout);
        }
    }
    MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
    io_opts o;
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (!parse(argc, argv, &o) || o.size % ((long)np * o.block) != 0 || o.block % 8 != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: io [--size B] [--block B] [--reps N] [--dir D] [--sync]\n"
                            "  size must be a multiple of np * block, block of 8\n");
        MPI_Finalize();
        return 2;
    }
    long mine = o.size / np, blocks = mine / o.block, block_words = o.block / 8;
    uint64_t *buf = malloc((size_t)mine);
    MPI_Offset *strided = malloc((size_t)blocks * sizeof *strided);
    MPI_Offset *contig = malloc((size_t)blocks * sizeof *contig);
    for (long b = 0; b < blocks; b++) {
        strided[b] = (b * np + rank) * o.block;
        contig[b] = (MPI_Offset)rank * mine + b * o.block;
    }
    char path[300];
    if (rank == 0)
        snprintf(path, sizeof path, "%s/strand-bench-io.%ld", o.dir, (long)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Datatype filetype;
    MPI_Type_vector((int)blocks, (int)o.block, (int)(np * o.block), MPI_BYTE, &filetype);
    MPI_Type_commit(&filetype);
    if (rank == 0)
        printf("# io: %d ranks, file %ld bytes in %s, block %ld, reps %d, %s\n", np, o.size, o.dir, o.block,
               o.reps, o.sync ? "writes fsynced, reads from the device (page cache dropped)"
                              : "no fsync: page cache");
    double *t = malloc((size_t)o.reps * sizeof *t);
    for (int p = STRIDED_COLL; p <= CONTIG_IND; p++) {
        const MPI_Offset *offsets = p <= STRIDED_IND ? strided : contig;
        for (int writing = 1; writing >= 0; writing--) {
            MPI_File fh;
            MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
            for (int r = 0; r < o.reps; r++) {
                if (p <= STRIDED_IND)
                    MPI_File_set_view(fh, (MPI_Offset)rank * o.block, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
                if (writing)
                    fill(buf, mine / 8, offsets, block_words, rank);
                else
                    memset(buf, 0, (size_t)mine);
                if (!writing && o.sync)
                    drop_cache(path, rank);
                t[r] = run_once(fh, (enum pattern)p, writing, buf, mine, (MPI_Offset)rank * mine, o.sync);
                if (!writing && mismatch(buf, mine / 8, offsets, block_words, rank)) {
                    fprintf(stderr, "io: rank %d read wrong data (%s)\n", rank, pattern_name[p]);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
            MPI_File_close(&fh);
            qsort(t, (size_t)o.reps, sizeof *t, cmp_double);
            if (rank == 0) {
                printf("io_%s_%s%s %ld %.1f MB/s\n", pattern_name[p], writing ? "write" : "read",
                       o.sync ? "_sync" : "", o.size, o.size / t[o.reps / 2] / 1e6);
                fflush(stdout);
            }
        }
    }
    overlap(path, &o, buf, mine, contig, rank, t);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(path);
    MPI_Type_free(&filetype);
    free(t);
    free(buf);
    free(strided);
    free(contig);
    MPI_Finalize();
    return 0;
}
