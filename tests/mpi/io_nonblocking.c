/* Nonblocking I/O moves its data in the background (src/io/async.c),
 * shown without timing: an MPI_File_iwrite_shared of 1 MiB into a FIFO
 * (MPI_MODE_SEQUENTIAL) cannot complete while nobody reads the FIFO (64
 * KiB of pipe buffer), so MPI_Test and MPI_Testall (mixed with a pending
 * receive) report it incomplete after the call returned; the test then
 * reads the FIFO through POSIX, checks every byte, and MPI_Wait completes
 * it with the full count. Also: MPI_Request_free of a running iwrite_at
 * (the close waits for it; the file is checked), an error raised on the
 * I/O thread (a user representation's read conversion failing) in the
 * request's status through MPI_Waitall among message requests, and every
 * rank's iwrite_at/iread_at pairs at once. */
#include <mpi.h>
#include <stdio.h>
#include <sys/stat.h>

#include "io_util.h"

enum { FIFO_BYTES = 1 << 20, BLOCK = 4096 };

static int fifo_overlap(const char *dir)
{
    int errs = 0;
    char path[IO_PATH_MAX];
    io_path(path, dir, "fifo");
    if (mkfifo(path, 0600) != 0)
        TU_ABORT("mkfifo");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh));
    unsigned char *out = tu_malloc(FIFO_BYTES), *in = tu_malloc(FIFO_BYTES);
    tu_fill(out, FIFO_BYTES, 7);
    MPI_Request reqs[2];
    CHECK_RC(MPI_File_iwrite_shared(fh, out, FIFO_BYTES, MPI_BYTE, &reqs[0]));
    int flag = 1, token = 0, got = -1;
    CHECK_RC(MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "the iwrite completed although nobody read the FIFO");
    CHECK_RC(MPI_Irecv(&got, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &reqs[1]));
    CHECK_RC(MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag, "MPI_Testall completed a stalled iwrite");
    /* Drain the FIFO: the I/O thread's write can now finish. */
    int fd = open(path, O_RDONLY);
    long total = 0;
    while (fd >= 0 && total < FIFO_BYTES) {
        ssize_t r = read(fd, in + total, (size_t)(FIFO_BYTES - total));
        if (r <= 0)
            break;
        total += r;
    }
    if (fd >= 0)
        close(fd);
    CHECK_INT("bytes read from the FIFO", FIFO_BYTES, total);
    CHECK(memcmp(in, out, FIFO_BYTES) == 0, "the FIFO carried other bytes than written");
    CHECK_RC(MPI_Send(&token, 1, MPI_INT, 0, 5, MPI_COMM_SELF));
    MPI_Status st[2];
    CHECK_RC(MPI_Waitall(2, reqs, st));
    int count = -1;
    MPI_Get_count(&st[0], MPI_BYTE, &count);
    CHECK_INT("iwrite_shared count", FIFO_BYTES, count);
    CHECK_INT("message received", 0, got);
    CHECK_RC(MPI_File_close(&fh));
    free(out);
    free(in);
    return errs;
}

static int failing_read(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position,
                        void *extra)
{
    (void)userbuf, (void)type, (void)count, (void)filebuf, (void)position, (void)extra;
    return MPI_ERR_OTHER;
}

static int same_extent(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    (void)extra;
    MPI_Aint lb;
    return MPI_Type_get_extent(type, &lb, extent);
}

/* A freed request still writes; an error on the I/O thread reaches the status. */
static int free_and_error(const char *dir)
{
    int errs = 0;
    char path[IO_PATH_MAX];
    io_path(path, dir, "freed");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    unsigned char *out = tu_malloc(FIFO_BYTES);
    tu_fill(out, FIFO_BYTES, 3);
    MPI_Request req;
    CHECK_RC(MPI_File_iwrite_at(fh, 0, out, FIFO_BYTES, MPI_BYTE, &req));
    CHECK_RC(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
    /* A read converted by a failing user function, among messages. */
    CHECK_RC(MPI_Register_datarep("strand_failing_read", failing_read, MPI_CONVERSION_FN_NULL, same_extent, NULL));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "strand_failing_read", MPI_INFO_NULL));
    int ints[4], token = 1, got = 0;
    MPI_Request reqs[3];
    MPI_Status st[3];
    CHECK_RC(MPI_Irecv(&got, 1, MPI_INT, 0, 6, MPI_COMM_SELF, &reqs[0]));
    CHECK_RC(MPI_File_iread_at(fh, 0, ints, 4, MPI_INT, &reqs[1]));
    CHECK_RC(MPI_Isend(&token, 1, MPI_INT, 0, 6, MPI_COMM_SELF, &reqs[2]));
    /* The request engine reports through the communicator's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int i = 0; i < 3; i++)
        st[i].MPI_ERROR = -1;
    int rc = MPI_Waitall(3, reqs, st);
    CHECK_INT("MPI_Waitall's class", MPI_ERR_IN_STATUS, tu_class(rc));
    CHECK_INT("the failed read's status", MPI_ERR_CONVERSION, tu_class(st[1].MPI_ERROR));
    CHECK_INT("the receive's status", MPI_SUCCESS, st[0].MPI_ERROR);
    CHECK_INT("message received", 1, got);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    CHECK_RC(MPI_File_close(&fh));
    long size;
    unsigned char *file = io_slurp(path, &size);
    CHECK_INT("size written by the freed request", FIFO_BYTES, size);
    CHECK(file != NULL && memcmp(file, out, FIFO_BYTES) == 0, "the freed request wrote other bytes");
    free(file);
    free(out);
    return errs;
}

/* Every rank: several iwrite_at in flight, then iread_at of them. */
static int many(const char *dir)
{
    enum { N = 8 };
    int errs = 0, rank = tu_rank();
    char path[IO_PATH_MAX];
    io_path(path, dir, "many");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    unsigned char *out = tu_malloc(N * BLOCK), *in = tu_malloc(N * BLOCK);
    tu_fill(out, N * BLOCK, 100 + (unsigned)rank);
    MPI_Request reqs[N];
    MPI_Offset base = (MPI_Offset)rank * N * BLOCK;
    for (int i = 0; i < N; i++)
        CHECK_RC(MPI_File_iwrite_at(fh, base + i * BLOCK, out + i * BLOCK, BLOCK, MPI_BYTE, &reqs[i]));
    CHECK_RC(MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK_RC(MPI_File_iread_at(fh, base + i * BLOCK, in + i * BLOCK, BLOCK, MPI_BYTE, &reqs[i]));
    for (int done = 0; done < N;) {
        int index;
        MPI_Status st;
        CHECK_RC(MPI_Waitany(N, reqs, &index, &st));
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK_INT("iread_at count", BLOCK, count);
        done++;
    }
    CHECK(memcmp(in, out, N * BLOCK) == 0, "iread_at gave other bytes than iwrite_at wrote");
    CHECK_RC(MPI_File_close(&fh));
    free(out);
    free(in);
    return errs;
}

int main(int argc, char **argv)
{
    const io_case alone[] = { fifo_overlap, free_and_error }, all[] = { many };
    return io_main(&argc, &argv, alone, 2, all, 1);
}
