/* Helpers of the MPI-IO tests: a temporary directory per run (made by
 * rank 0, named to all), file names in it, its removal, and byte checks of
 * a file through plain POSIX reads. Uses testutil.h's CHECK conventions. */
#ifndef IO_UTIL_H
#define IO_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#define IO_PATH_MAX 256

/* ROMIO (in MPICH 4.0.2 and Open MPI 4.1) differs from MPI-2.2 in places
 * the tests step around only when built against them: no user data
 * representations (MPI_Register_datarep fails), other error classes for a
 * split collective _end without _begin and a filetype not built from the
 * etype, a comm error handler on a file aborts, MPI_Get_version is not 2.2,
 * MPI_File_get_position_shared gave 0 after shared writes, a directory
 * opens read-only, ENOSPC is MPI_ERR_IO, access_style is not reported. */
#if defined(MPICH_VERSION) || defined(OPEN_MPI)
#define IO_ROMIO_QUIRKS 1
#else
#define IO_ROMIO_QUIRKS 0
#endif

/* Rank 0 makes a fresh directory under TMPDIR (or /tmp); every rank gets its name. */
static inline void io_tmpdir(char dir[IO_PATH_MAX])
{
    if (tu_rank() == 0) {
        const char *base = getenv("TMPDIR");
        snprintf(dir, IO_PATH_MAX, "%s/strand-io-XXXXXX", base != NULL && base[0] ? base : "/tmp");
        if (mkdtemp(dir) == NULL)
            TU_ABORT("mkdtemp");
    }
    MPI_Bcast(dir, IO_PATH_MAX, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static inline void io_path(char out[IO_PATH_MAX], const char *dir, const char *name)
{
    snprintf(out, IO_PATH_MAX, "%.180s/%.60s", dir, name);
}

/* Removes the directory and the files in it (after every rank is done). */
static inline void io_tmpdir_remove(const char *dir)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank() != 0)
        return;
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        char path[IO_PATH_MAX + 256];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* The whole file through POSIX (malloc'd; *size gets its length). */
static inline unsigned char *io_slurp(const char *path, long *size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        *size = -1;
        return NULL;
    }
    struct stat st;
    fstat(fd, &st);
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    long got = 0;
    while (got < st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)(st.st_size - got));
        if (r <= 0)
            break;
        got += r;
    }
    close(fd);
    *size = got;
    return buf;
}

/* A test case over the run's directory: its error count. */
typedef int (*io_case)(const char *dir);

/* A whole test program: MPI_Init, a fresh directory, the cases rank 0
 * runs alone (on files of MPI_COMM_SELF), then those all ranks run, the
 * directory's removal and the result. */
static inline int io_main(int *argc, char ***argv, const io_case *alone, int nalone, const io_case *all, int nall)
{
    MPI_Init(argc, argv);
    int errs = 0;
    char dir[IO_PATH_MAX];
    io_tmpdir(dir);
    for (int i = 0; i < nalone && tu_rank() == 0; i++)
        errs += alone[i](dir);
    for (int i = 0; i < nall; i++)
        errs += all[i](dir);
    io_tmpdir_remove(dir);
    return tu_finish(errs);
}

/* The error class of a call expected to fail. */
#define CHECK_CLASS(what, expected, call)                                    \
    do {                                                                     \
        int c_ = tu_class(call);                                             \
        if (c_ != (expected))                                                \
            errs += TU_FAIL("%s: expected error class %d, got %d", (what),   \
                            (expected), c_);                                 \
    } while (0)

#endif
