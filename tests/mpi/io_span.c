/* MPI-IO on files whose group spans node processes (net.testlist,
 * nodes=2 and 3; also run within one node process): a strided two-phase
 * collective write and read with several aggregator domains and windows
 * (default hints, cb_nodes=1, small cb_buffer_size), the shared file
 * pointer (write_shared records each exactly once, ordered accesses in
 * rank order, seek_shared), atomic mode (concurrent overlapping
 * non-contiguous writes and reads never mix), size/preallocate/sync,
 * EXCL and mismatched modes failing on every member, DELETE_ON_CLOSE.
 * Files are checked by collective reads and through plain POSIX. */
#include <mpi.h>
#include <stdio.h>

#include "io_util.h"

enum { BLOCK = 1000, BLOCKS = 8, RECORDS = 3 };

static unsigned char strided_byte(int rank, int block, int i)
{
    return (unsigned char)(rank * 7 + block * 13 + i);
}

static MPI_Datatype strided_filetype(int size)
{
    MPI_Datatype vec, tile;
    MPI_Type_vector(BLOCKS, BLOCK, BLOCK * size, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)BLOCK * BLOCKS * size, &tile);
    MPI_Type_free(&vec);
    MPI_Type_commit(&tile);
    return tile;
}

/* Each rank owns every size-th block; written collectively, read back
 * collectively into a memory type with gaps, and checked through POSIX. */
static int strided(const char *dir, const char *name, MPI_Info info, const char *expect_cb_nodes)
{
    int errs = 0, rank = tu_rank(), size = tu_size();
    char path[IO_PATH_MAX];
    io_path(path, dir, name);
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Datatype tile = strided_filetype(size);
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, tile, "native", info));
    if (expect_cb_nodes != NULL) {
        MPI_Info used;
        char value[MPI_MAX_INFO_VAL + 1] = "";
        int flag = 0;
        CHECK_RC(MPI_File_get_info(fh, &used));
        MPI_Info_get(used, "cb_nodes", MPI_MAX_INFO_VAL, value, &flag);
        CHECK(flag && strcmp(value, expect_cb_nodes) == 0, "cb_nodes reported \"%s\", expected \"%s\"", value,
              expect_cb_nodes);
        MPI_Info_free(&used);
    }
    unsigned char *out = tu_malloc(BLOCK * BLOCKS), *in = tu_malloc(2 * BLOCK * BLOCKS);
    for (int b = 0; b < BLOCKS; b++)
        for (int i = 0; i < BLOCK; i++)
            out[b * BLOCK + i] = strided_byte(rank, b, i);
    MPI_Status st;
    CHECK_RC(MPI_File_write_all(fh, out, BLOCK * BLOCKS, MPI_BYTE, &st));
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK_INT("write_all count", BLOCK * BLOCKS, count);
    /* Read back into every other byte. */
    MPI_Datatype gaps;
    MPI_Type_vector(BLOCK * BLOCKS, 1, 2, MPI_BYTE, &gaps);
    MPI_Type_commit(&gaps);
    memset(in, 0, 2 * BLOCK * BLOCKS);
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_read_all(fh, in, 1, gaps, &st));
    for (int k = 0; k < BLOCK * BLOCKS; k++)
        if (in[2 * k] != out[k]) {
            errs += TU_FAIL("%s: read_all byte %d: expected %d, got %d", name, k, out[k], in[2 * k]);
            break;
        }
    MPI_Type_free(&gaps);
    CHECK_RC(MPI_File_close(&fh));
    MPI_Type_free(&tile);
    if (rank == 0) {
        long got;
        unsigned char *file = io_slurp(path, &got);
        CHECK_INT("strided file size", (long)BLOCK * BLOCKS * size, got);
        for (long off = 0; file != NULL && off < got; off++) {
            int block = (int)(off / BLOCK), owner = block % size, i = (int)(off % BLOCK);
            if (file[off] != strided_byte(owner, block / size, i)) {
                errs += TU_FAIL("%s: file byte %ld (rank %d's): got %d", name, off, owner, file[off]);
                break;
            }
        }
        free(file);
    }
    free(out);
    free(in);
    return errs;
}

/* write_shared: every record once; ordered accesses in rank order. */
static int shared_pointer(const char *dir)
{
    int errs = 0, rank = tu_rank(), size = tu_size();
    char path[IO_PATH_MAX];
    io_path(path, dir, "shared");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int k = 0; k < RECORDS; k++) {
        int record[2] = { rank, k };
        CHECK_RC(MPI_File_write_shared(fh, record, 2, MPI_INT, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos = -1;
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT("shared position after write_shared", 2 * RECORDS * size, pos);
    /* Rank r writes r + 1 ints of value 1000 + r, in rank order. */
    int *mine = tu_malloc((size_t)(rank + 1) * sizeof *mine);
    for (int i = 0; i <= rank; i++)
        mine[i] = 1000 + rank;
    CHECK_RC(MPI_File_write_ordered(fh, mine, rank + 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT("shared position after write_ordered", 2 * RECORDS * size + size * (size + 1) / 2, pos);
    /* read_ordered from the start: rank r gets the r-th record. */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int got[2] = { -1, -1 };
    CHECK_RC(MPI_File_read_ordered(fh, got, 2, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_sync(fh));
    long fsize;
    int *file = (int *)io_slurp(path, &fsize);
    CHECK(file != NULL && got[0] == file[2 * rank] && got[1] == file[2 * rank + 1],
          "read_ordered gave (%d, %d), the file has (%d, %d)", got[0], got[1], file ? file[2 * rank] : -1,
          file ? file[2 * rank + 1] : -1);
    if (rank == 0 && file != NULL) {
        CHECK_INT("shared file size", (long)sizeof(int) * (2 * RECORDS * size + size * (size + 1) / 2), fsize);
        int *seen = calloc((size_t)size * RECORDS, sizeof *seen);
        for (int i = 0; i < RECORDS * size; i++) {
            int r = file[2 * i], k = file[2 * i + 1];
            if (r < 0 || r >= size || k < 0 || k >= RECORDS || seen[r * RECORDS + k]++)
                errs += TU_FAIL("record %d is (%d, %d): out of range or seen twice", i, r, k);
        }
        free(seen);
        const int *ordered = file + 2 * RECORDS * size;
        for (int r = 0, at = 0; r < size; r++)
            for (int i = 0; i <= r; i++, at++)
                if (ordered[at] != 1000 + r) {
                    errs += TU_FAIL("ordered int %d: expected %d, got %d", at, 1000 + r, ordered[at]);
                    r = size;
                    break;
                }
    }
    free(file);
    free(mine);
    CHECK_RC(MPI_File_close(&fh));
    return errs;
}

enum { ATOMIC_PIECE = 512, ATOMIC_PIECES = 16, ATOMIC_ROUNDS = 4 };

/* Every rank writes its byte over the same non-contiguous pieces while
 * others read them: in atomic mode a read sees one writer's bytes. */
static int atomic_mode(const char *dir)
{
    int errs = 0, rank = tu_rank();
    char path[IO_PATH_MAX];
    io_path(path, dir, "atomic");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_atomicity(fh, 1));
    int flag = 0;
    CHECK_RC(MPI_File_get_atomicity(fh, &flag));
    CHECK_INT("atomicity", 1, flag);
    MPI_Datatype vec;
    MPI_Type_vector(ATOMIC_PIECES, ATOMIC_PIECE, 2 * ATOMIC_PIECE, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, vec, "native", MPI_INFO_NULL));
    unsigned char *buf = tu_malloc(ATOMIC_PIECE * ATOMIC_PIECES);
    for (int round = 0; round < ATOMIC_ROUNDS; round++) {
        if ((rank + round) % 2 == 0) {
            memset(buf, rank + 1, ATOMIC_PIECE * ATOMIC_PIECES);
            CHECK_RC(MPI_File_write_at(fh, 0, buf, ATOMIC_PIECE * ATOMIC_PIECES, MPI_BYTE, MPI_STATUS_IGNORE));
        } else {
            MPI_Status st;
            int count = 0;
            CHECK_RC(MPI_File_read_at(fh, 0, buf, ATOMIC_PIECE * ATOMIC_PIECES, MPI_BYTE, &st));
            MPI_Get_count(&st, MPI_BYTE, &count);
            for (int i = 1; i < count; i++)
                if (buf[i] != buf[0]) {
                    errs += TU_FAIL("atomic read saw a mixture: byte %d is %d, byte 0 is %d", i, buf[i], buf[0]);
                    break;
                }
        }
    }
    CHECK_RC(MPI_File_close(&fh));
    MPI_Type_free(&vec);
    free(buf);
    return errs;
}

static int sizes_and_sync(const char *dir)
{
    int errs = 0, rank = tu_rank(), size = tu_size();
    char path[IO_PATH_MAX];
    io_path(path, dir, "sizes");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN,
                           MPI_INFO_NULL, &fh));
    MPI_Offset fsize = -1;
    CHECK_RC(MPI_File_set_size(fh, 12345));
    CHECK_RC(MPI_File_get_size(fh, &fsize));
    CHECK_INT("size after set_size", 12345, fsize);
    CHECK_RC(MPI_File_preallocate(fh, 20000));
    CHECK_RC(MPI_File_get_size(fh, &fsize));
    CHECK_INT("size after preallocate", 20000, fsize);
    /* The last rank writes, everyone syncs, rank 0 reads (sync-barrier-sync). */
    int value = 4242 + size;
    if (rank == size - 1)
        CHECK_RC(MPI_File_write_at(fh, 100, &value, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_sync(fh));
    int got = 0;
    CHECK_RC(MPI_File_read_at(fh, 100, &got, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_INT("value read after sync", value, got);
    CHECK_RC(MPI_File_close(&fh));
    return errs;
}

/* The same error class on every member, and an error at all. */
static int same_failure(const char *what, int rc, int expected)
{
    int errs = 0, class = tu_class(rc), lo, hi;
    MPI_Allreduce(&class, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&class, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi, "%s: members got different classes (%d..%d)", what, lo, hi);
    if (expected >= 0)
        CHECK_INT(what, expected, class);
    CHECK(class != MPI_SUCCESS, "%s: succeeded", what);
    return errs;
}

static int open_errors(const char *dir)
{
    int errs = 0, rank = tu_rank();
    char path[IO_PATH_MAX], gone[IO_PATH_MAX];
    io_path(path, dir, "sizes");
    MPI_File fh = MPI_FILE_NULL;
    errs += same_failure("EXCL on an existing file",
                         MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                                       MPI_INFO_NULL, &fh),
                         MPI_ERR_FILE_EXISTS);
    CHECK(fh == MPI_FILE_NULL, "a failed open returned a handle");
    int amode = rank == 0 ? MPI_MODE_RDWR : MPI_MODE_RDONLY;
    if (tu_size() > 1)
        errs += same_failure("different modes", MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh),
                             -1);
    io_path(gone, dir, "missing");
    errs += same_failure("a missing file", MPI_File_open(MPI_COMM_WORLD, gone, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                         MPI_ERR_NO_SUCH_FILE);
    /* DELETE_ON_CLOSE: gone for every node process after the close. */
    io_path(gone, dir, "temporary");
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, gone, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_write_at_all(fh, rank, &rank, 1, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_close(&fh));
    CHECK(access(gone, F_OK) != 0, "the DELETE_ON_CLOSE file still exists after the close");
    return errs;
}

/* No hidden file of the shared pointer is left behind. */
static int no_leftovers(const char *dir)
{
    int errs = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank() != 0)
        return 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        CHECK(strstr(e->d_name, ".shfp.") == NULL, "hidden file %s left behind", e->d_name);
    if (d != NULL)
        closedir(d);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    int errs = 0;
    char dir[IO_PATH_MAX];
    io_tmpdir(dir);
    MPI_Info small;
    MPI_Info_create(&small);
    MPI_Info_set(small, "cb_buffer_size", "8192");
    MPI_Info_set(small, "romio_cb_write", "enable");
    MPI_Info_set(small, "romio_cb_read", "enable");
    errs += strided(dir, "strided-default", MPI_INFO_NULL, NULL);
    errs += strided(dir, "strided-windows", small, NULL);
    MPI_Info_set(small, "cb_nodes", "1");
    errs += strided(dir, "strided-one-aggregator", small, "1");
    MPI_Info_free(&small);
    errs += shared_pointer(dir);
    errs += atomic_mode(dir);
    errs += sizes_and_sync(dir);
    errs += open_errors(dir);
    errs += no_leftovers(dir);
    io_tmpdir_remove(dir);
    return tu_finish(errs);
}
