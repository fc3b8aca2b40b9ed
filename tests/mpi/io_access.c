/* MPI-IO data access, every cell of the standard's table, with values read
 * back: explicit offsets, individual and shared file pointers; blocking,
 * nonblocking (completed by MPI_Waitall among message requests), collective
 * and split collective; ordered access producing an exact file; a strided
 * view; pointers and byte offsets; reads past the end; SEQUENTIAL files;
 * external32 bytes against bytes written by hand; a user data
 * representation; invalid views; the large-count queries. Minimum 1 rank. */
#include <stdint.h>
#include "io_util.h"

enum { N = 64 };

static int value(int rank, int i) { return rank * 100000 + i; }

static int check_count(MPI_Status *st, MPI_Datatype t, int expected, const char *what)
{
    int errs = 0, count = -1;
    MPI_Get_count(st, t, &count);
    CHECK_INT(what, expected, count);
    return errs;
}

static int check_ints(const int *buf, int rank, int n, const char *what)
{
    int errs = 0;
    for (int i = 0; i < n; i++)
        if (buf[i] != value(rank, i)) {
            errs += TU_FAIL("%s: element %d: expected %d, got %d", what, i, value(rank, i), buf[i]);
            break;
        }
    return errs;
}

/* Explicit offsets: every rank owns block `rank` of N ints. */
static int explicit_offsets(MPI_File fh)
{
    int errs = 0, rank = tu_rank();
    int out[N], in[N];
    MPI_Status st;
    MPI_Offset at = (MPI_Offset)rank * N * sizeof(int);
    for (int i = 0; i < N; i++)
        out[i] = value(rank, i);

    CHECK_RC(MPI_File_write_at(fh, at, out, N, MPI_INT, &st));
    errs += check_count(&st, MPI_INT, N, "write_at count");
    MPI_Barrier(MPI_COMM_WORLD);
    memset(in, 0, sizeof in);
    CHECK_RC(MPI_File_read_at(fh, at, in, N, MPI_INT, &st));
    errs += check_count(&st, MPI_INT, N, "read_at count");
    errs += check_ints(in, rank, N, "read_at");

    memset(in, 0, sizeof in);
    CHECK_RC(MPI_File_read_at_all(fh, at, in, N, MPI_INT, &st));
    errs += check_count(&st, MPI_INT, N, "read_at_all count");
    errs += check_ints(in, rank, N, "read_at_all");
    for (int i = 0; i < N; i++)
        out[i] = value(rank, i) + 7;
    CHECK_RC(MPI_File_write_at_all(fh, at, out, N, MPI_INT, &st));
    errs += check_count(&st, MPI_INT, N, "write_at_all count");
    CHECK_RC(MPI_File_read_at(fh, at, in, N, MPI_INT, &st));
    CHECK_INT("write_at_all data", value(rank, 3) + 7, in[3]);

    /* Nonblocking, completed among message requests. */
    MPI_Request reqs[4];
    MPI_Status sts[4];
    int token = rank, got = -1;
    for (int i = 0; i < N; i++)
        out[i] = value(rank, i);
    CHECK_RC(MPI_Irecv(&got, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &reqs[0]));
    CHECK_RC(MPI_File_iwrite_at(fh, at, out, N, MPI_INT, &reqs[1]));
    CHECK_RC(MPI_Isend(&token, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &reqs[2]));
    CHECK_RC(MPI_Waitall(3, reqs, sts));
    errs += check_count(&sts[1], MPI_INT, N, "iwrite_at count");
    CHECK_INT("message among I/O requests", rank, got);
    memset(in, 0, sizeof in);
    CHECK_RC(MPI_File_iread_at(fh, at, in, N, MPI_INT, &reqs[0]));
    int flag = 0;
    while (!flag)
        CHECK_RC(MPI_Test(&reqs[0], &flag, &st));
    errs += check_count(&st, MPI_INT, N, "iread_at count");
    errs += check_ints(in, rank, N, "iread_at");

    /* Split collectives. */
    for (int i = 0; i < N; i++)
        out[i] = value(rank, i) + 9;
    CHECK_RC(MPI_File_write_at_all_begin(fh, at, out, N, MPI_INT));
    CHECK_RC(MPI_File_write_at_all_end(fh, out, &st));
    errs += check_count(&st, MPI_INT, N, "write_at_all_end count");
    memset(in, 0, sizeof in);
    CHECK_RC(MPI_File_read_at_all_begin(fh, at, in, N, MPI_INT));
    CHECK_RC(MPI_File_read_at_all_end(fh, in, &st));
    errs += check_count(&st, MPI_INT, N, "read_at_all_end count");
    CHECK_INT("read_at_all_end data", value(rank, 5) + 9, in[5]);
    if (!IO_ROMIO_QUIRKS)
        CHECK_CLASS("end without begin", MPI_ERR_OTHER, MPI_File_read_at_all_end(fh, in, &st));
    return errs;
}

/* Individual pointers, on a view that starts at the rank's block. */
static int individual_pointers(MPI_File fh)
{
    int errs = 0, rank = tu_rank();
    int out[N], in[N];
    MPI_Status st;
    MPI_Offset pos, byte;
    MPI_Request req;
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)rank * N * sizeof(int), MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int i = 0; i < N; i++)
        out[i] = value(rank, i) + 11;
    CHECK_RC(MPI_File_write(fh, out, N / 2, MPI_INT, &st));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT("position after write", N / 2, pos);
    CHECK_RC(MPI_File_write_all(fh, out + N / 2, N / 4, MPI_INT, &st));
    CHECK_RC(MPI_File_iwrite(fh, out + 3 * N / 4, N / 4, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT("position after three writes", N, pos);
    CHECK_RC(MPI_File_get_byte_offset(fh, 3, &byte));
    CHECK_INT("byte offset", (MPI_Offset)rank * N * sizeof(int) + 3 * sizeof(int), byte);
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(in, 0, sizeof in);
    CHECK_RC(MPI_File_read(fh, in, N / 4, MPI_INT, &st));
    CHECK_RC(MPI_File_read_all(fh, in + N / 4, N / 4, MPI_INT, &st));
    CHECK_RC(MPI_File_iread(fh, in + N / 2, N / 4, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK_RC(MPI_File_read_all_begin(fh, in + 3 * N / 4, N / 4, MPI_INT));
    CHECK_RC(MPI_File_read_all_end(fh, in + 3 * N / 4, &st));
    errs += check_count(&st, MPI_INT, N / 4, "read_all_end count");
    for (int i = 0; i < N; i++)
        if (in[i] != value(rank, i) + 11) {
            errs += TU_FAIL("individual pointer read %d: expected %d, got %d", i, value(rank, i) + 11, in[i]);
            break;
        }
    CHECK_RC(MPI_File_seek(fh, -4, MPI_SEEK_CUR));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT("SEEK_CUR", N - 4, pos);
    CHECK_RC(MPI_File_seek(fh, 2, MPI_SEEK_SET));
    CHECK_RC(MPI_File_write_all_begin(fh, out, 1, MPI_INT));
    CHECK_RC(MPI_File_write_all_end(fh, out, &st));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT("position after write_all_end", 3, pos);
    CHECK_CLASS("negative seek", MPI_ERR_ARG, MPI_File_seek(fh, -10, MPI_SEEK_SET));
    /* Reading past the end: a count of 0 and no error. */
    MPI_Offset size;
    CHECK_RC(MPI_File_get_size(fh, &size));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CHECK_RC(MPI_File_read_at(fh, size, in, N, MPI_INT, &st));
    errs += check_count(&st, MPI_INT, 0, "read past end of file");
    CHECK_RC(MPI_File_read_at(fh, size - 2 * sizeof(int), in, N, MPI_INT, &st));
    errs += check_count(&st, MPI_INT, 2, "read across end of file");
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_END));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT("SEEK_END", size, pos);
    return errs;
}

/* Rank r owns every size-th int: one strided collective write, checked
 * through POSIX reads of the file. */
static int strided_view(MPI_File fh, const char *path)
{
    int errs = 0, rank = tu_rank(), size = tu_size();
    int out[N];
    MPI_Datatype filetype;
    MPI_Status st;
    MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)size * sizeof(int), &filetype);
    MPI_Type_commit(&filetype);
    CHECK_RC(MPI_File_set_size(fh, 0));
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)rank * sizeof(int), MPI_INT, filetype, "native", MPI_INFO_NULL));
    for (int i = 0; i < N; i++)
        out[i] = value(rank, i);
    CHECK_RC(MPI_File_write_all(fh, out, N, MPI_INT, &st));
    errs += check_count(&st, MPI_INT, N, "strided write_all count");
    MPI_Offset disp;
    MPI_Datatype etype, ftype;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK_RC(MPI_File_get_view(fh, &disp, &etype, &ftype, rep));
    CHECK_INT("view disp", (MPI_Offset)rank * sizeof(int), disp);
    CHECK(etype == MPI_INT, "view etype");
    CHECK(strcmp(rep, "native") == 0, "view datarep %s", rep);
    MPI_Type_free(&ftype);
    CHECK_RC(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long bytes;
        int *all = (int *)io_slurp(path, &bytes);
        CHECK_INT("strided file size", (long)size * N * sizeof(int), bytes);
        for (long k = 0; k < bytes / (long)sizeof(int); k++)
            if (all[k] != value((int)(k % size), (int)(k / size))) {
                errs += TU_FAIL("strided file int %ld: expected %d, got %d", k, value((int)(k % size), (int)(k / size)), all[k]);
                break;
            }
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Read back into a strided memory type (every other int). */
    int in[2 * N];
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    memset(in, 0, sizeof in);
    CHECK_RC(MPI_File_read_at_all(fh, 0, in, 1, every_other, &st));
    for (int i = 0; i < N; i++)
        if (in[2 * i] != value(rank, i) || in[2 * i + 1] != 0) {
            errs += TU_FAIL("strided read into a vector: element %d", i);
            break;
        }
    MPI_Type_free(&every_other);
    MPI_Type_free(&filetype);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    return errs;
}

/* Shared and ordered pointers: the exact file. */
static int shared_pointer(MPI_File fh, const char *path)
{
    int errs = 0, rank = tu_rank(), size = tu_size();
    int block[4], in[4];
    MPI_Status st;
    MPI_Request req;
    MPI_Offset pos;
    CHECK_RC(MPI_File_set_size(fh, 0));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int i = 0; i < 4; i++)
        block[i] = rank;
    CHECK_RC(MPI_File_write_shared(fh, block, 2, MPI_INT, &st));
    CHECK_RC(MPI_File_iwrite_shared(fh, block, 2, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    if (!IO_ROMIO_QUIRKS)
        CHECK_INT("shared pointer after the writes", 4L * size, pos);
    if (rank == 0) {
        /* Every rank's two pairs appear exactly twice, each pair whole. */
        long bytes;
        int *all = (int *)io_slurp(path, &bytes);
        int *seen = calloc((size_t)size, sizeof *seen);
        CHECK_INT("shared file size", 4L * size * sizeof(int), bytes);
        for (long k = 0; k + 1 < bytes / (long)sizeof(int); k += 2) {
            if (all[k] != all[k + 1] || all[k] < 0 || all[k] >= size)
                errs += TU_FAIL("shared file pair %ld: %d %d", k / 2, all[k], all[k + 1]);
            else
                seen[all[k]]++;
        }
        for (int r = 0; r < size; r++)
            CHECK_INT("pairs of a rank", 2, seen[r]);
        free(seen);
        free(all);
    }
    /* Reading through the shared pointer: every pair read exactly once. */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_read_shared(fh, in, 2, MPI_INT, &st));
    CHECK_RC(MPI_File_iread_shared(fh, in + 2, 2, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK(in[0] == in[1] && in[2] == in[3], "read_shared got a torn pair");
    int sum = in[0] + in[2], total = 0;
    MPI_Allreduce(&sum, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_INT("sum of pairs read through the shared pointer", size * (size - 1), total);

    /* Ordered: rank r writes r % 3 + 1 ints of value r, in rank order. */
    CHECK_RC(MPI_File_set_size(fh, 0));
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int n = rank % 3 + 1;
    CHECK_RC(MPI_File_write_ordered(fh, block, n, MPI_INT, &st));
    errs += check_count(&st, MPI_INT, n, "write_ordered count");
    CHECK_RC(MPI_File_write_ordered_begin(fh, block, n, MPI_INT));
    CHECK_RC(MPI_File_write_ordered_end(fh, block, &st));
    CHECK_RC(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long bytes, k = 0;
        int *all = (int *)io_slurp(path, &bytes);
        for (int round = 0; round < 2; round++)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < r % 3 + 1; i++, k++)
                    if (k >= bytes / (long)sizeof(int) || all[k] != r) {
                        errs += TU_FAIL("ordered file int %ld: expected %d", k, r);
                        round = 2, r = size;
                        break;
                    }
        CHECK_INT("ordered file size", k * (long)sizeof(int), bytes);
        free(all);
    }
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(in, -1, sizeof in);
    CHECK_RC(MPI_File_read_ordered(fh, in, n, MPI_INT, &st));
    for (int i = 0; i < n; i++)
        CHECK_INT("read_ordered", rank, in[i]);
    memset(in, -1, sizeof in);
    CHECK_RC(MPI_File_read_ordered_begin(fh, in, n, MPI_INT));
    CHECK_RC(MPI_File_read_ordered_end(fh, in, &st));
    errs += check_count(&st, MPI_INT, n, "read_ordered_end count");
    for (int i = 0; i < n; i++)
        CHECK_INT("read_ordered_begin/end", rank, in[i]);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    return errs;
}

/* Atomic mode: concurrent overlapping non-contiguous writes are never
 * mixed, so both blocks of the view hold one rank's data. */
static int atomic_mode(MPI_File fh, const char *path)
{
    int errs = 0, rank = tu_rank();
    enum { BLOCK = 8192 };
    MPI_Datatype two;
    MPI_Status st;
    MPI_Type_vector(2, BLOCK, 2 * BLOCK, MPI_BYTE, &two);
    MPI_Type_commit(&two);
    CHECK_RC(MPI_File_set_atomicity(fh, 1));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, two, "native", MPI_INFO_NULL));
    char *data = malloc(2 * BLOCK);
    for (int round = 0; round < 4; round++) {
        memset(data, 'A' + (rank + round) % 26, 2 * BLOCK);
        CHECK_RC(MPI_File_write_at(fh, 0, data, 2 * BLOCK, MPI_BYTE, &st));
        MPI_Barrier(MPI_COMM_WORLD);
        memset(data, 0, 2 * BLOCK);
        CHECK_RC(MPI_File_read_at(fh, 0, data, 2 * BLOCK, MPI_BYTE, &st));
        for (int i = 1; i < 2 * BLOCK; i++)
            if (data[i] != data[0]) {
                errs += TU_FAIL("atomic mode: byte %d is %c, byte 0 is %c", i, data[i], data[0]);
                break;
            }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(data);
    CHECK_RC(MPI_File_set_atomicity(fh, 0));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&two);
    (void)path;
    return errs;
}

/* A user representation: every byte stored complemented. */
static int complement(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position, void *extra)
{
    int size;
    MPI_Type_size(t, &size);
    (void)position;
    ++*(int *)extra;
    unsigned char *u = userbuf, *f = filebuf;
    for (long i = 0; i < (long)count * size; i++)
        f[i] = (unsigned char)~u[i];
    return MPI_SUCCESS;
}

static int uncomplement(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position, void *extra)
{
    return complement(filebuf, t, count, userbuf, position, extra);
}

static int native_extent(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
    MPI_Aint lb;
    (void)extra;
    return MPI_Type_get_extent(t, &lb, extent);
}

static int representations(const char *dir)
{
    int errs = 0, rank = tu_rank();
    char path[IO_PATH_MAX], name[32];
    MPI_File fh;
    MPI_Status st;
    snprintf(name, sizeof name, "rep.%d", rank);
    io_path(path, dir, name);
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    int ints[2] = { 0x01020304, -2 };
    double d = 1.0;
    CHECK_RC(MPI_File_write(fh, ints, 2, MPI_INT, &st));
    CHECK_RC(MPI_File_write(fh, &d, 1, MPI_DOUBLE, &st));
    MPI_Aint ext;
    CHECK_RC(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    CHECK_INT("external32 extent of MPI_INT", 4, ext);
    CHECK_RC(MPI_File_sync(fh));
    const unsigned char expected[16] = { 1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0 };
    long bytes;
    unsigned char *all = io_slurp(path, &bytes);
    CHECK_INT("external32 file size", 16, bytes);
    CHECK(bytes == 16 && memcmp(all, expected, 16) == 0, "external32 bytes differ from the hand-written ones");
    free(all);
    int back[2] = { 0, 0 };
    double dback = 0;
    CHECK_RC(MPI_File_read_at(fh, 0, back, 2, MPI_INT, &st));
    CHECK_RC(MPI_File_read_at(fh, 8, &dback, 1, MPI_DOUBLE, &st));
    CHECK(back[0] == ints[0] && back[1] == ints[1] && dback == 1.0, "external32 values read back");
    CHECK_CLASS("unknown datarep", MPI_ERR_UNSUPPORTED_DATAREP,
                MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-rep", MPI_INFO_NULL));
    CHECK_RC(MPI_File_close(&fh));
    if (IO_ROMIO_QUIRKS)
        return errs;

    /* A user representation (registered once per rank under its own name). */
    int calls = 0;
    char rep[32];
    snprintf(rep, sizeof rep, "complement%d", rank);
    CHECK_RC(MPI_Register_datarep(rep, uncomplement, complement, native_extent, &calls));
    CHECK_CLASS("registered twice", MPI_ERR_DUP_DATAREP,
                MPI_Register_datarep(rep, uncomplement, complement, native_extent, &calls));
    CHECK_CLASS("external32 registered", MPI_ERR_DUP_DATAREP,
                MPI_Register_datarep("external32", uncomplement, complement, native_extent, &calls));
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_size(fh, 0));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rep, MPI_INFO_NULL));
    CHECK_RC(MPI_File_write(fh, ints, 2, MPI_INT, &st));
    CHECK_RC(MPI_File_sync(fh));
    all = io_slurp(path, &bytes);
    CHECK(bytes == 8 && all[0] == (unsigned char)~((unsigned char *)ints)[0], "user representation bytes");
    free(all);
    back[0] = back[1] = 0;
    CHECK_RC(MPI_File_read_at(fh, 0, back, 2, MPI_INT, &st));
    CHECK(back[0] == ints[0] && back[1] == ints[1], "user representation values read back");
    CHECK_INT("conversion calls", 2, calls);
    CHECK_RC(MPI_File_close(&fh));
    return errs;
}

static int bad_input(MPI_File fh, const char *dir)
{
    int errs = 0;
    int buf[4] = { 0 };
    MPI_Status st;
    CHECK_CLASS("negative displacement", MPI_ERR_ARG,
                MPI_File_set_view(fh, -8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    if (!IO_ROMIO_QUIRKS)
        CHECK_CLASS("filetype not built from etype", MPI_ERR_TYPE,
                    MPI_File_set_view(fh, 0, MPI_INT, MPI_SHORT, "native", MPI_INFO_NULL));
    CHECK_CLASS("negative count", MPI_ERR_COUNT, MPI_File_write_at(fh, 0, buf, -1, MPI_INT, &st));
    CHECK_CLASS("negative offset", MPI_ERR_ARG, MPI_File_read_at(fh, -1, buf, 1, MPI_INT, &st));
    CHECK_CLASS("null datatype", MPI_ERR_TYPE, MPI_File_write_at(fh, 0, buf, 1, MPI_DATATYPE_NULL, &st));
    CHECK_CLASS("file null", MPI_ERR_FILE, MPI_File_write_at(MPI_FILE_NULL, 0, buf, 1, MPI_INT, &st));
    /* A collective that fails on one member fails on all, with its class. */
    if (!IO_ROMIO_QUIRKS)
        CHECK_CLASS("collective with one bad member", MPI_ERR_COUNT,
                    MPI_File_write_at_all(fh, 0, buf, tu_rank() == 0 ? -1 : 1, MPI_INT, &st));

    /* SEQUENTIAL: the shared pointer only. */
    char path[IO_PATH_MAX];
    MPI_File seq;
    io_path(path, dir, "sequential");
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_SEQUENTIAL,
                           MPI_INFO_NULL, &seq));
    CHECK_CLASS("explicit offset on SEQUENTIAL", MPI_ERR_UNSUPPORTED_OPERATION,
                MPI_File_write_at(seq, 0, buf, 1, MPI_INT, &st));
    CHECK_CLASS("individual pointer on SEQUENTIAL", MPI_ERR_UNSUPPORTED_OPERATION,
                MPI_File_write(seq, buf, 1, MPI_INT, &st));
    CHECK_CLASS("seek on SEQUENTIAL", MPI_ERR_UNSUPPORTED_OPERATION, MPI_File_seek(seq, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_write_ordered(seq, buf, 1, MPI_INT, &st));
    CHECK_CLASS("read on WRONLY", MPI_ERR_ACCESS, MPI_File_read_shared(seq, buf, 1, MPI_INT, &st));
    CHECK_RC(MPI_File_set_view(seq, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset disp;
    MPI_Datatype e, f;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK_RC(MPI_File_get_view(seq, &disp, &e, &f, rep));
    CHECK_INT("MPI_DISPLACEMENT_CURRENT", (MPI_Offset)tu_size() * sizeof(int), disp);
    CHECK_RC(MPI_File_close(&seq));
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &seq));
    CHECK_CLASS("write on RDONLY", MPI_ERR_READ_ONLY, MPI_File_write_at(seq, 0, buf, 1, MPI_INT, &st));
    CHECK_RC(MPI_File_close(&seq));
    return errs;
}

static int large_count(MPI_File fh)
{
    int errs = 0;
    MPI_Count size, lb, extent;
    MPI_Datatype big, vec;
    MPI_Type_contiguous(1 << 20, MPI_DOUBLE, &vec);
    MPI_Type_contiguous(512, vec, &big);           /* 4 GiB: beyond an int */
    MPI_Type_commit(&big);
    CHECK_RC(MPI_Type_size_x(big, &size));
    CHECK_INT("Type_size_x", 4LL << 30, size);
    CHECK_RC(MPI_Type_get_extent_x(big, &lb, &extent));
    CHECK_INT("Type_get_extent_x", 4LL << 30, extent);
    CHECK_RC(MPI_Type_get_true_extent_x(big, &lb, &extent));
    CHECK_INT("Type_get_true_extent_x", 4LL << 30, extent);
    MPI_Status st;
    MPI_Count elements;
    CHECK_RC(MPI_Status_set_elements_x(&st, MPI_DOUBLE, 3LL << 30));
    CHECK_RC(MPI_Get_elements_x(&st, MPI_DOUBLE, &elements));
    CHECK_INT("Get_elements_x", 3LL << 30, elements);
    int version, subversion;
    MPI_Get_version(&version, &subversion);
    CHECK(IO_ROMIO_QUIRKS || (version == 2 && subversion == 2), "MPI_Get_version stays 2.2");
    MPI_Count c = 42, back = 0;
    int dummy[2];
    CHECK_RC(MPI_File_write_at(fh, 0, &c, 1, MPI_COUNT, &st));
    CHECK_RC(MPI_File_read_at(fh, 0, &back, 1, MPI_COUNT, &st));
    CHECK_INT("an MPI_COUNT through a file", 42, back);
    CHECK_RC(MPI_Get_elements_x(&st, MPI_COUNT, &elements));
    CHECK_INT("Get_elements_x of a read", 1, elements);
    (void)dummy;
    MPI_Type_free(&big);
    MPI_Type_free(&vec);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0;
    char dir[IO_PATH_MAX], path[IO_PATH_MAX], mine[IO_PATH_MAX], name[32];
    MPI_File fh;
    MPI_Init(&argc, &argv);
    io_tmpdir(dir);
    io_path(path, dir, "data");
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    errs += explicit_offsets(fh);
    errs += individual_pointers(fh);
    errs += strided_view(fh, path);
    errs += shared_pointer(fh, path);
    errs += atomic_mode(fh, path);
    errs += bad_input(fh, dir);
    CHECK_RC(MPI_File_close(&fh));
    errs += representations(dir);
    snprintf(name, sizeof name, "count.%d", tu_rank());
    io_path(mine, dir, name);
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    errs += large_count(fh);
    CHECK_RC(MPI_File_close(&fh));
    io_tmpdir_remove(dir);
    return tu_finish(errs);
}
