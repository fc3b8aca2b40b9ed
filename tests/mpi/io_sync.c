/* MPI_File_sync between writes, resizes and nothing: each rank writes its
 * block, syncs three times, writes again and syncs, rank 0's set_size
 * grows the file and all sync twice; then every byte is checked through
 * POSIX, and the same through a file reopened read-only (whose sync must
 * succeed and write nothing). tests/tools/io-sync.sh runs it under strace
 * and counts the fsyncs a node process makes: one per sync that follows a
 * write or resize through it (3 here), none for the others. Minimum 1
 * rank. */
#include "io_util.h"

#define BLOCK 4096

static unsigned char expected(int rank, int pass, int i)
{
    return (unsigned char)(rank * 31 + pass * 7 + i);
}

static int write_block(MPI_File fh, int rank, int pass)
{
    int errs = 0;
    unsigned char buf[BLOCK];
    for (int i = 0; i < BLOCK; i++)
        buf[i] = expected(rank, pass, i);
    MPI_Status st;
    CHECK_RC(MPI_File_write_at(fh, (MPI_Offset)rank * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    return errs;
}

static int check_file(const char *path, int size, long want_len)
{
    int errs = 0;
    long len = 0;
    unsigned char *data = io_slurp(path, &len);
    CHECK(data != NULL, "cannot read %s back", path);
    if (data == NULL)
        return errs;
    CHECK(len == want_len, "file length %ld, expected %ld", len, want_len);
    for (int r = 0; r < size && len >= (long)(r + 1) * BLOCK; r++)
        for (int i = 0; i < BLOCK; i++)
            if (data[(long)r * BLOCK + i] != expected(r, 1, i)) {
                CHECK(0, "byte %d of rank %d's block: %d, expected %d", i, r, data[(long)r * BLOCK + i],
                      expected(r, 1, i));
                break;
            }
    for (long i = (long)size * BLOCK; i < len; i++)
        if (data[i] != 0) {
            CHECK(0, "byte %ld past the blocks is %d, expected 0", i, data[i]);
            break;
        }
    free(data);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    char dir[IO_PATH_MAX], path[IO_PATH_MAX];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_tmpdir(dir);
    io_path(path, dir, "synced");

    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    errs += write_block(fh, rank, 0);
    CHECK_RC(MPI_File_sync(fh));        /* flushes the writes */
    CHECK_RC(MPI_File_sync(fh));        /* nothing new */
    CHECK_RC(MPI_File_sync(fh));        /* nothing new */
    errs += write_block(fh, rank, 1);
    CHECK_RC(MPI_File_sync(fh));        /* flushes the second writes */
    long grown = (long)size * BLOCK + BLOCK / 2;
    CHECK_RC(MPI_File_set_size(fh, grown));
    CHECK_RC(MPI_File_sync(fh));        /* flushes the resize */
    CHECK_RC(MPI_File_sync(fh));        /* nothing new */
    MPI_Offset got = -1;
    CHECK_RC(MPI_File_get_size(fh, &got));
    CHECK(got == grown, "size after set_size: %lld, expected %ld", (long long)got, grown);
    CHECK_RC(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        errs += check_file(path, size, grown);

    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_sync(fh));        /* read-only: nothing to flush */
    unsigned char back[BLOCK];
    MPI_Status st;
    CHECK_RC(MPI_File_read_at(fh, (MPI_Offset)rank * BLOCK, back, BLOCK, MPI_BYTE, &st));
    for (int i = 0; i < BLOCK; i++)
        if (back[i] != expected(rank, 1, i)) {
            CHECK(0, "read back byte %d: %d, expected %d", i, back[i], expected(rank, 1, i));
            break;
        }
    CHECK_RC(MPI_File_close(&fh));

    io_tmpdir_remove(dir);
    return tu_finish(errs);
}
