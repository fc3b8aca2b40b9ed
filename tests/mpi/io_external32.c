/* external32 views of types whose file size differs from their memory
 * size (MPI-2.2 §13.5.2): MPI_LONG and MPI_UNSIGNED_LONG are 4 bytes in
 * the file. Checked against bytes written by hand (POSIX reads): a plain
 * MPI_LONG view (offsets, extents, pointers, counts), a portable vector
 * filetype (displacements scaled to the file sizes), an hvector filetype
 * (byte displacements taken as they are), a collective write in which
 * every rank owns its slice, reading back, and a value that does not fit
 * (MPI_ERR_CONVERSION). Then the same for a representation the program
 * registers: "wide" stores every MPI_INT as 8 little-endian bytes. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "io_util.h"

/* The 4-byte big-endian external32 form of `v`. */
static void be32(unsigned char *out, long v)
{
    uint32_t u = (uint32_t)(int32_t)v;
    out[0] = (unsigned char)(u >> 24);
    out[1] = (unsigned char)(u >> 16);
    out[2] = (unsigned char)(u >> 8);
    out[3] = (unsigned char)u;
}

static int expect_bytes(const char *what, const char *path, const unsigned char *want, long n)
{
    int errs = 0;
    long got;
    unsigned char *file = io_slurp(path, &got);
    CHECK_INT(what, n, got);
    for (long i = 0; file != NULL && i < n && i < got; i++)
        if (file[i] != want[i]) {
            errs += TU_FAIL("%s: byte %ld is 0x%02x, expected 0x%02x", what, i, file[i], want[i]);
            break;
        }
    free(file);
    return errs;
}

/* One rank: a plain MPI_LONG view. */
static int plain_long(const char *dir)
{
    int errs = 0;
    char path[IO_PATH_MAX];
    io_path(path, dir, "plain");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_view(fh, 4, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    MPI_Aint extent = 0;
    CHECK_RC(MPI_File_get_type_extent(fh, MPI_LONG, &extent));
    CHECK_INT("external32 extent of MPI_LONG", 4, extent);
    long values[3] = { 1, -2, 0x12345678 };
    MPI_Status st;
    int count = -1;
    CHECK_RC(MPI_File_write(fh, values, 3, MPI_LONG, &st));
    MPI_Get_count(&st, MPI_LONG, &count);
    CHECK_INT("write count", 3, count);
    MPI_Offset pos = -1, byte = -1;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT("position after 3 longs", 3, pos);
    CHECK_RC(MPI_File_get_byte_offset(fh, 2, &byte));
    CHECK_INT("byte offset of long 2", 4 + 2 * 4, byte);
    unsigned long u = 0xfedcba98ul;
    CHECK_RC(MPI_File_write(fh, &u, 1, MPI_UNSIGNED_LONG, MPI_STATUS_IGNORE));
    long back[3] = { 0, 0, 0 };
    CHECK_RC(MPI_File_read_at(fh, 0, back, 3, MPI_LONG, &st));
    MPI_Get_count(&st, MPI_LONG, &count);
    CHECK_INT("read count", 3, count);
    for (int i = 0; i < 3; i++)
        CHECK_INT("long read back", values[i], back[i]);
    long big = 1L << 40;
    CHECK_CLASS("a long that does not fit 4 bytes", MPI_ERR_CONVERSION,
                MPI_File_write_at(fh, 10, &big, 1, MPI_LONG, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_close(&fh));
    unsigned char want[20] = { 0 };
    for (int i = 0; i < 3; i++)
        be32(want + 4 + 4 * i, values[i]);
    want[16] = 0xfe, want[17] = 0xdc, want[18] = 0xba, want[19] = 0x98;
    errs += expect_bytes("plain MPI_LONG view", path, want, 20);
    return errs;
}

/* A portable vector filetype (scaled: longs at 0 and 8, tiles 12 apart)
 * and an hvector (byte displacements as they are: longs at 0 and 6). */
static int filetypes(const char *dir)
{
    int errs = 0;
    char path[IO_PATH_MAX];
    io_path(path, dir, "filetypes");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Datatype vec, hvec;
    MPI_Type_vector(2, 1, 2, MPI_LONG, &vec);
    MPI_Type_commit(&vec);
    MPI_Aint extent = 0;
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_LONG, vec, "external32", MPI_INFO_NULL));
    CHECK_RC(MPI_File_get_type_extent(fh, vec, &extent));
    CHECK_INT("external32 extent of vector(2, 1, 2, MPI_LONG)", 12, extent);
    long v[4] = { 10, 11, 12, 13 };
    CHECK_RC(MPI_File_write(fh, v, 4, MPI_LONG, MPI_STATUS_IGNORE));
    long back[4] = { 0 };
    CHECK_RC(MPI_File_read_at(fh, 0, back, 4, MPI_LONG, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK_INT("vector view read back", v[i], back[i]);
    unsigned char want[40] = { 0 };
    be32(want + 0, 10), be32(want + 8, 11), be32(want + 12, 12), be32(want + 20, 13);
    errs += expect_bytes("portable vector view", path, want, 24);
    /* hvector: stride 6 bytes in the file as given; tile extent 6 + 8 = 14. */
    MPI_Type_create_hvector(2, 1, 6, MPI_LONG, &hvec);
    MPI_Type_commit(&hvec);
    CHECK_RC(MPI_File_set_view(fh, 24, MPI_LONG, hvec, "external32", MPI_INFO_NULL));
    long h[2] = { 20, 21 };
    CHECK_RC(MPI_File_write(fh, h, 2, MPI_LONG, MPI_STATUS_IGNORE));
    be32(want + 24, 20), be32(want + 30, 21);
    errs += expect_bytes("hvector view", path, want, 34);
    CHECK_RC(MPI_File_close(&fh));
    MPI_Type_free(&vec);
    MPI_Type_free(&hvec);
    return errs;
}

/* ---- a registered representation that changes sizes ---- */

/* "wide": an int is 8 little-endian bytes in the file; other types have
 * no file form (the extent function fails). */
static int wide_extent(MPI_Datatype type, MPI_Aint *extent, void *state)
{
    (void)state;
    if (type != MPI_INT)
        return MPI_ERR_TYPE;
    *extent = 8;
    return MPI_SUCCESS;
}

/* The conversion functions get the user's type and count; the tests use
 * contiguous ints only. */
static int ints_in(MPI_Datatype type, int count)
{
    int size;
    MPI_Type_size(type, &size);
    return count * (size / (int)sizeof(int));
}

static int wide_write(void *user, MPI_Datatype type, int count, void *file, MPI_Offset position, void *state)
{
    (void)position;
    ++*(int *)state;
    const int *in = user;
    unsigned char *out = file;
    for (int i = 0; i < ints_in(type, count); i++) {
        uint64_t u = (uint64_t)(int64_t)in[i];
        for (int b = 0; b < 8; b++)
            out[8 * i + b] = (unsigned char)(u >> (8 * b));
    }
    return MPI_SUCCESS;
}

static int wide_read(void *user, MPI_Datatype type, int count, void *file, MPI_Offset position, void *state)
{
    (void)position;
    ++*(int *)state;
    int *out = user;
    const unsigned char *in = file;
    for (int i = 0; i < ints_in(type, count); i++) {
        uint64_t u = 0;
        for (int b = 0; b < 8; b++)
            u |= (uint64_t)in[8 * i + b] << (8 * b);
        out[i] = (int)(int64_t)u;
    }
    return MPI_SUCCESS;
}

static void le64(unsigned char *out, long v)
{
    for (int b = 0; b < 8; b++)
        out[b] = (unsigned char)((uint64_t)v >> (8 * b));
}

/* One rank: a plain MPI_INT view and a portable vector filetype through
 * "wide" (displacements scaled to 8-byte ints), the extents, an access
 * with a type the representation cannot size (MPI_ERR_CONVERSION), and a
 * size-changing representation without conversion functions
 * (MPI_ERR_UNSUPPORTED_DATAREP). */
static int registered(const char *dir)
{
    static int calls; /* conversions run; registered once per rank */
    int errs = 0;
    char path[IO_PATH_MAX];
    io_path(path, dir, "wide");
    CHECK_RC(MPI_Register_datarep("wide", wide_read, wide_write, wide_extent, &calls));
    CHECK_RC(MPI_Register_datarep("wide-unconverted", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                  wide_extent, NULL));
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "wide", MPI_INFO_NULL));
    MPI_Aint extent = 0;
    CHECK_RC(MPI_File_get_type_extent(fh, MPI_INT, &extent));
    CHECK_INT("wide extent of MPI_INT", 8, extent);
    int v[3] = { 7, -8, 0x7fffffff };
    MPI_Status st;
    int count = -1;
    CHECK_RC(MPI_File_write(fh, v, 3, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT("wide write count", 3, count);
    MPI_Offset pos = -1, byte = -1;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT("position after 3 wide ints", 3, pos);
    CHECK_RC(MPI_File_get_byte_offset(fh, 2, &byte));
    CHECK_INT("byte offset of wide int 2", 16, byte);
    int back[4] = { 0 };
    CHECK_RC(MPI_File_read_at(fh, 0, back, 3, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT("wide read count", 3, count);
    for (int i = 0; i < 3; i++)
        CHECK_INT("wide int read back", v[i], back[i]);
    double d = 1.5;
    CHECK_CLASS("a double through a representation that has no size for it", MPI_ERR_CONVERSION,
                MPI_File_write_at(fh, 3, &d, 1, MPI_DOUBLE, MPI_STATUS_IGNORE));
    /* vector(2, 1, 2, MPI_INT): ints at 0 and 16, tiles 24 apart, from byte 24 */
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    CHECK_RC(MPI_File_set_view(fh, 24, MPI_INT, vec, "wide", MPI_INFO_NULL));
    CHECK_RC(MPI_File_get_type_extent(fh, vec, &extent));
    CHECK_INT("wide extent of vector(2, 1, 2, MPI_INT)", 24, extent);
    int w[4] = { 100, 101, 102, -103 };
    CHECK_RC(MPI_File_write(fh, w, 4, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_read_at(fh, 0, back, 4, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK_INT("wide vector view read back", w[i], back[i]);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "wide-unconverted", MPI_INFO_NULL));
    CHECK_CLASS("a size-changing representation without conversion functions", MPI_ERR_UNSUPPORTED_DATAREP,
                MPI_File_write_at(fh, 0, v, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_close(&fh));
    MPI_Type_free(&vec);
    if (calls < 4)
        errs += TU_FAIL("the conversion functions ran %d times, expected at least 4", calls);
    unsigned char want[72] = { 0 };
    le64(want + 0, 7), le64(want + 8, -8), le64(want + 16, 0x7fffffff);
    le64(want + 24, 100), le64(want + 40, 101), le64(want + 48, 102), le64(want + 64, -103);
    errs += expect_bytes("wide views", path, want, 72);
    return errs;
}

enum { PER_RANK = 5 };

/* Every rank writes its slice of longs collectively; read back by all. */
static int collective(const char *dir)
{
    int errs = 0, rank = tu_rank(), size = tu_size();
    char path[IO_PATH_MAX];
    io_path(path, dir, "collective");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Datatype mine;
    MPI_Type_vector(PER_RANK, 1, size, MPI_LONG, &mine);
    MPI_Type_commit(&mine);
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)4 * rank, MPI_LONG, mine, "external32", MPI_INFO_NULL));
    long v[PER_RANK];
    for (int i = 0; i < PER_RANK; i++)
        v[i] = 1000 * rank + i;
    CHECK_RC(MPI_File_write_all(fh, v, PER_RANK, MPI_LONG, MPI_STATUS_IGNORE));
    long back[PER_RANK] = { 0 };
    CHECK_RC(MPI_File_read_at_all(fh, 0, back, PER_RANK, MPI_LONG, MPI_STATUS_IGNORE));
    for (int i = 0; i < PER_RANK; i++)
        CHECK_INT("collective read back", v[i], back[i]);
    CHECK_RC(MPI_File_close(&fh));
    MPI_Type_free(&mine);
    if (rank == 0) {
        unsigned char *want = calloc((size_t)4 * PER_RANK * size, 1);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < PER_RANK; i++)
                be32(want + 4 * ((long)i * size + r), 1000L * r + i);
        /* The last rank's last long ends the file. */
        errs += expect_bytes("collective slices", path, want, 4L * PER_RANK * size);
        free(want);
    }
    return errs;
}

int main(int argc, char **argv)
{
    const io_case alone[] = { plain_long, filetypes, registered }, all[] = { collective };
    return io_main(&argc, &argv, alone, 3, all, 1);
}
