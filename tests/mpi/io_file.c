/* MPI-IO file manipulation: open with every access mode and the
 * MPI_ERR_AMODE combinations, close, delete, set_size, preallocate,
 * get_size, get_group, get_amode, hints through set_info/get_info, file
 * error handlers (default MPI_ERRORS_RETURN on files and MPI_FILE_NULL;
 * create/set/get/call), c2f/f2c, atomicity, sync, and the faults: missing
 * file, a directory, an existing file with EXCL, no permission, disk full
 * (/dev/full), DELETE_ON_CLOSE, APPEND. Minimum 1 rank. */
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include "io_util.h"

static void count_calls(MPI_File *fh, int *code, ...)
{
    (void)fh;
    (void)code;
}

static void comm_calls(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}

static int hint_is(MPI_Info info, const char *key, const char *value)
{
    char got[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_get(info, (char *)key, MPI_MAX_INFO_VAL, got, &flag);
    return flag && strcmp(got, value) == 0;
}

static int check_modes(const char *dir)
{
    int errs = 0;
    char path[IO_PATH_MAX];
    MPI_File fh;
    io_path(path, dir, "modes");
    CHECK_CLASS("no access mode", MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    CHECK_CLASS("two access modes", MPI_ERR_AMODE,
                MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    CHECK_CLASS("RDONLY|CREATE", MPI_ERR_AMODE,
                MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    CHECK_CLASS("RDONLY|EXCL", MPI_ERR_AMODE,
                MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_EXCL, MPI_INFO_NULL, &fh));
    CHECK_CLASS("RDWR|SEQUENTIAL", MPI_ERR_AMODE,
                MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    CHECK_CLASS("missing file", MPI_ERR_NO_SUCH_FILE,
                MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    if (!IO_ROMIO_QUIRKS) {
        CHECK_CLASS("a directory", MPI_ERR_BAD_FILE, MPI_File_open(MPI_COMM_WORLD, (char *)dir, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        CHECK(fh == MPI_FILE_NULL, "a failed open leaves MPI_FILE_NULL");
    }

    /* Every valid mode: created, then reopened with each access mode. */
    int amode = 0;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_UNIQUE_OPEN,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_get_amode(fh, &amode));
    CHECK_INT("amode", MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_UNIQUE_OPEN, amode);
    CHECK_RC(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close sets MPI_FILE_NULL");
    CHECK_CLASS("EXCL on an existing file", MPI_ERR_FILE_EXISTS,
                MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL, &fh));
    const int modes[] = { MPI_MODE_RDONLY, MPI_MODE_RDWR, MPI_MODE_WRONLY, MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL,
                          MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_MODE_RDWR | MPI_MODE_APPEND };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, modes[i], MPI_INFO_NULL, &fh));
        CHECK_RC(MPI_File_get_amode(fh, &amode));
        CHECK_INT("amode", modes[i], amode);
        CHECK_RC(MPI_File_close(&fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank() == 0)
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(path, F_OK) != 0, "deleted file still exists");
    if (tu_rank() == 0)
        CHECK_CLASS("delete a missing file", MPI_ERR_NO_SUCH_FILE, MPI_File_delete(path, MPI_INFO_NULL));

    /* DELETE_ON_CLOSE removes the file once every member closed. */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK(access(path, F_OK) == 0, "file missing while open");
    CHECK_RC(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(path, F_OK) != 0, "DELETE_ON_CLOSE left the file");
    return errs;
}

static int check_sizes(const char *dir)
{
    int errs = 0, rank = tu_rank(), size = tu_size();
    char path[IO_PATH_MAX];
    MPI_File fh;
    MPI_Offset got;
    io_path(path, dir, "sizes");
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_get_size(fh, &got));
    CHECK_INT("new file size", 0, got);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_set_size(fh, 12345));
    CHECK_RC(MPI_File_get_size(fh, &got));
    CHECK_INT("size after set_size", 12345, got);
    CHECK_RC(MPI_File_preallocate(fh, 100000));
    CHECK_RC(MPI_File_get_size(fh, &got));
    CHECK_INT("size after preallocate", 100000, got);
    CHECK_RC(MPI_File_preallocate(fh, 10));
    CHECK_RC(MPI_File_get_size(fh, &got));
    CHECK_INT("preallocate never shrinks", 100000, got);
    CHECK_RC(MPI_File_set_size(fh, 77));
    CHECK_RC(MPI_File_get_size(fh, &got));
    CHECK_INT("set_size shrinks", 77, got);
    CHECK_CLASS("negative size", MPI_ERR_ARG, MPI_File_set_size(fh, -1));

    /* The group is the opening communicator's. */
    MPI_Group g, world;
    int result, gsize, grank;
    CHECK_RC(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_compare(g, world, &result);
    CHECK_INT("group compare", MPI_IDENT, result);
    MPI_Group_size(g, &gsize);
    MPI_Group_rank(g, &grank);
    CHECK_INT("group size", size, gsize);
    CHECK_INT("group rank", rank, grank);
    MPI_Group_free(&g);
    MPI_Group_free(&world);

    /* Atomicity, sync. */
    int flag = -1;
    CHECK_RC(MPI_File_get_atomicity(fh, &flag));
    CHECK_INT("default atomicity", 0, flag);
    CHECK_RC(MPI_File_set_atomicity(fh, 1));
    CHECK_RC(MPI_File_get_atomicity(fh, &flag));
    CHECK_INT("atomicity", 1, flag);
    CHECK_RC(MPI_File_sync(fh));
    CHECK_RC(MPI_File_close(&fh));

    /* A file opened on MPI_COMM_SELF has a group of one. */
    char mine[IO_PATH_MAX], name[32];
    snprintf(name, sizeof name, "self.%d", rank);
    io_path(mine, dir, name);
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_get_group(fh, &g));
    MPI_Group_size(g, &gsize);
    CHECK_INT("self group size", 1, gsize);
    MPI_Group_free(&g);
    CHECK_RC(MPI_File_close(&fh));
    return errs;
}

static int check_hints(const char *dir)
{
    int errs = 0;
    char path[IO_PATH_MAX];
    MPI_File fh;
    MPI_Info info, used;
    io_path(path, dir, "hints");
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "cb_nodes", "1");
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "disable");
    MPI_Info_set(info, "striping_unit", "65536");
    MPI_Info_set(info, "access_style", "write_once");
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, info, &fh));
    CHECK_RC(MPI_File_get_info(fh, &used));
    CHECK(hint_is(used, "cb_buffer_size", "1048576"), "cb_buffer_size not reported");
    CHECK(hint_is(used, "cb_nodes", "1"), "cb_nodes not reported");
    CHECK(hint_is(used, "romio_cb_write", "enable"), "romio_cb_write not reported");
    CHECK(hint_is(used, "romio_cb_read", "disable"), "romio_cb_read not reported");
    CHECK(hint_is(used, "striping_unit", "65536"), "striping_unit not reported");
    CHECK(IO_ROMIO_QUIRKS || hint_is(used, "access_style", "write_once"), "access_style not reported");
    MPI_Info_free(&used);
    MPI_Info_set(info, "romio_cb_write", "automatic");
    MPI_Info_set(info, "cb_buffer_size", "4194304");
    CHECK_RC(MPI_File_set_info(fh, info));
    CHECK_RC(MPI_File_get_info(fh, &used));
    CHECK(hint_is(used, "romio_cb_write", "automatic"), "romio_cb_write after set_info");
    CHECK(hint_is(used, "cb_buffer_size", "4194304"), "cb_buffer_size after set_info");
    MPI_Info_free(&used);
    MPI_Info_free(&info);
    CHECK_RC(MPI_File_close(&fh));
    return errs;
}

static int check_errhandlers(const char *dir)
{
    int errs = 0;
    char path[IO_PATH_MAX];
    MPI_File fh;
    MPI_Errhandler eh, got;
    io_path(path, dir, "errh");
    /* MPI_FILE_NULL's handler is MPI_ERRORS_RETURN until changed. */
    CHECK_RC(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == MPI_ERRORS_RETURN, "MPI_FILE_NULL's default handler");
    MPI_Errhandler_free(&got);
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_get_errhandler(fh, &got));
    CHECK(got == MPI_ERRORS_RETURN, "a file's default handler");
    MPI_Errhandler_free(&got);
    CHECK_RC(MPI_File_create_errhandler(count_calls, &eh));
    CHECK_RC(MPI_File_set_errhandler(fh, eh));
    CHECK_RC(MPI_File_get_errhandler(fh, &got));
    CHECK(got == eh, "get_errhandler returns the handler set");
    MPI_Errhandler_free(&got);
    CHECK_RC(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK_RC(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    /* MPI-2.2 8.3.5: MPI_SUCCESS once the handler returned. */
    CHECK_RC(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    /* A handler for communicators is refused. */
    if (!IO_ROMIO_QUIRKS) {
        MPI_Errhandler comm_eh;
        MPI_Comm_create_errhandler(comm_calls, &comm_eh);
        CHECK_CLASS("comm handler on a file", MPI_ERR_ARG, MPI_File_set_errhandler(fh, comm_eh));
        MPI_Errhandler_free(&comm_eh);
    }
    MPI_Errhandler_free(&eh);
    /* c2f/f2c round trip. */
    MPI_Fint f = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(f) == fh, "File_f2c(File_c2f(fh))");
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL, "MPI_FILE_NULL round trip");
    CHECK_RC(MPI_File_close(&fh));
    CHECK_CLASS("closed handle", MPI_ERR_FILE, MPI_File_close(&fh));
    return errs;
}

static int check_faults(const char *dir)
{
    int errs = 0;
    MPI_File fh;
    MPI_Status st;
    char buf[4096] = { 1 };
    /* Disk full: every write to /dev/full fails with ENOSPC. */
    if (!IO_ROMIO_QUIRKS && access("/dev/full", W_OK) == 0) {
        CHECK_RC(MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
        CHECK_CLASS("write to a full device", MPI_ERR_NO_SPACE, MPI_File_write_at(fh, 0, buf, 4096, MPI_BYTE, &st));
        CHECK_CLASS("collective write to a full device", MPI_ERR_NO_SPACE,
                    MPI_File_write_at_all(fh, 0, buf, 4096, MPI_BYTE, &st));
        CHECK_RC(MPI_File_close(&fh));
    }
    /* A file that may not grow (RLIMIT_FSIZE, process-wide: rank 0 alone
     * while the others wait; SIGXFSZ ignored so the write fails instead). */
    if (!IO_ROMIO_QUIRKS) {
        if (tu_rank() == 0) {
            char small[IO_PATH_MAX];
            struct rlimit old, lim;
            io_path(small, dir, "fsize");
            signal(SIGXFSZ, SIG_IGN);
            getrlimit(RLIMIT_FSIZE, &old);
            lim = old;
            lim.rlim_cur = 4096;
            if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
                CHECK_RC(MPI_File_open(MPI_COMM_SELF, small, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                                       MPI_INFO_NULL, &fh));
                CHECK_RC(MPI_File_write_at(fh, 0, buf, 4096, MPI_BYTE, &st));
                CHECK_CLASS("write past RLIMIT_FSIZE", MPI_ERR_NO_SPACE, MPI_File_write_at(fh, 4096, buf, 4096, MPI_BYTE, &st));
                setrlimit(RLIMIT_FSIZE, &old);
                CHECK_RC(MPI_File_close(&fh));
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* No permission: a read-only file (or, for root, a read-only sysfs attribute). */
    char path[IO_PATH_MAX];
    const char *denied = NULL;
    if (geteuid() != 0) {
        io_path(path, dir, "readonly");
        if (tu_rank() == 0) {
            int fd = open(path, O_CREAT | O_WRONLY, 0400);
            close(fd);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        denied = path;
    } else if (access("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", R_OK) == 0) {
        denied = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size";
    }
    if (denied != NULL)
        CHECK_CLASS("no permission", MPI_ERR_ACCESS,
                    MPI_File_open(MPI_COMM_WORLD, (char *)denied, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    else if (tu_rank() == 0)
        printf("no file without write permission for this user: permission check skipped\n");
    /* APPEND: both file pointers start at the end. */
    io_path(path, dir, "append");
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_size(fh, 100));
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    MPI_Offset pos = -1;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT("APPEND individual pointer", 100, pos);
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT("APPEND shared pointer", 100, pos);
    CHECK_RC(MPI_File_close(&fh));
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0;
    char dir[IO_PATH_MAX];
    MPI_Init(&argc, &argv);
    io_tmpdir(dir);
    errs += check_modes(dir);
    errs += check_sizes(dir);
    errs += check_hints(dir);
    errs += check_errhandlers(dir);
    errs += check_faults(dir);
    io_tmpdir_remove(dir);
    return tu_finish(errs);
}
