/* The data access routines (MPI-2.2 §13.4): every cell of the table
 * (explicit offsets, individual and shared file pointers; blocking,
 * nonblocking, collective and split collective) goes through `io_call`.
 *
 * Nonblocking and split collective operations move their data when they
 * start (the standard allows any time until completion): a nonblocking
 * call returns a request that is already complete, a generalized request
 * of the ordinary request engine, so MPI_Wait/Test and their array forms
 * complete it among message requests; a split collective keeps the status
 * for its _end call. */
#include <stdlib.h>
#include <string.h>

#include "../pt2pt/pt2pt.h"
#include "io.h"

enum io_pointer { AT_OFFSET, INDIVIDUAL, SHARED };

struct io_op {
    const char *where;
    enum io_pointer pointer;
    bool writing;
    bool collective;
};

static int pointer_check(struct strand_file *f, const struct io_op *op)
{
    if (op->pointer != SHARED && (f->core->amode & MPI_MODE_SEQUENTIAL))
        return file_error(f, MPI_ERR_UNSUPPORTED_OPERATION, op->where,
                          "a file opened MPI_MODE_SEQUENTIAL is accessed through the shared file pointer only");
    return MPI_SUCCESS;
}

/* The view position an access starts at; the shared pointer moves past it. */
static int access_position(struct strand_file *f, const struct io_op *op, MPI_Offset offset, void *buf, int count,
                           MPI_Datatype type, MPI_Offset *out)
{
    int rc = pointer_check(f, op);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Offset position = offset, etypes = 0;
    if (op->pointer == INDIVIDUAL) {
        position = f->fp;
    } else if (op->pointer == SHARED) {
        /* A failing access must not move the shared pointer. */
        const char *why;
        rc = access_check(f, op->writing, 0, buf, count, type, &why);
        if (rc != MPI_SUCCESS)
            return file_error(f, rc, op->where, "%s", why);
        if ((rc = access_etypes(f, op->where, count, type, &etypes)) != MPI_SUCCESS)
            return rc;
        if ((rc = shared_fp_access(f, etypes, false, &position)) != MPI_SUCCESS)
            return file_error(f, rc, op->where, "cannot update the shared file pointer");
    }
    *out = position;
    return MPI_SUCCESS;
}

/* One access from the position its file pointer kind gives. */
static int io_access_at(struct strand_file *f, const struct io_op *op, MPI_Offset offset, void *buf, int count,
                        MPI_Datatype type, MPI_Status *status)
{
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE || status == NULL)
        status = &local;
    MPI_Offset position;
    int rc = access_position(f, op, offset, buf, count, type, &position);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = io_transfer(f, op->where, op->writing, op->collective, position, buf, count, type, status);
    /* The individual pointer moves past the data accessed. */
    if (op->pointer == INDIVIDUAL)
        f->fp += (MPI_Offset)(access_file_bytes(f, type, (size_t)status->strand_count) / f->view.esize);
    return rc;
}

static int io_call(const struct io_op *op, MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                   MPI_Status *status)
{
    int rc;
    struct strand_file *f = file_checked(fh, op->where, &rc);
    if (f == NULL)
        return rc;
    if (op->collective && f->split.active)
        return file_error(f, MPI_ERR_OTHER, op->where, "a split collective is pending on this file");
    return io_access_at(f, op, offset, buf, count, type, status);
}

/* --- the ordered collectives: ranks in order from the shared pointer */

static int io_ordered(struct strand_file *f, const char *where, bool writing, void *buf, int count,
                      MPI_Datatype type, MPI_Status *status)
{
    int n = f->core->size;
    MPI_Offset etypes = 0;
    int own = access_etypes(f, where, count, type, &etypes);
    if (own != MPI_SUCCESS)
        etypes = 0;
    int64_t *all = malloc((size_t)n * 2 * sizeof *all), mine = etypes;
    if (all == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in an ordered MPI-IO access\n");
    /* Every member's count, then member 0 moves the shared pointer past
     * them all (every member is past its earlier shared accesses) and
     * tells everyone where it was. */
    io_allgather(f, &mine, 1, all);
    MPI_Offset total = 0, before = 0, base = 0;
    for (int r = 0; r < n; r++) {
        if (r < f->rank)
            before += all[r];
        total += all[r];
    }
    int64_t start[2] = { MPI_SUCCESS, 0 };
    if (f->rank == 0) {
        start[0] = shared_fp_access(f, total, false, &base);
        start[1] = base;
    }
    io_allgather(f, start, 2, all);
    int fp_error = (int)all[0];
    MPI_Offset position = all[1] + before;
    free(all);
    if (fp_error != MPI_SUCCESS)
        return own != MPI_SUCCESS ? own : file_error(f, fp_error, where, "cannot update the shared file pointer");
    if (own != MPI_SUCCESS) {
        /* Takes part with nothing so that nobody waits; everyone fails. */
        struct io_access none = { .writing = writing };
        size_t moved;
        access_collective(f, &none, own, &moved);
        return own;
    }
    return io_transfer(f, where, writing, true, position, buf, count, type, status);
}

static int ordered_call(const char *where, bool writing, MPI_File fh, void *buf, int count, MPI_Datatype type,
                        MPI_Status *status)
{
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    if (f->split.active)
        return file_error(f, MPI_ERR_OTHER, where, "a split collective is pending on this file");
    return io_ordered(f, where, writing, buf, count, type, status);
}

/* --- nonblocking: the data moves on the I/O thread (async.c) */

static int io_start(const struct io_op *op, MPI_File fh, MPI_Offset offset, void *buf, int count,
                    MPI_Datatype type, MPI_Request *request)
{
    int rc;
    struct strand_file *f = file_checked(fh, op->where, &rc);
    if (f == NULL)
        return rc;
    if (request == NULL)
        return file_error(f, MPI_ERR_REQUEST, op->where, "request is NULL");
    *request = MPI_REQUEST_NULL;
    MPI_Offset position;
    if ((rc = access_position(f, op, offset, buf, count, type, &position)) != MPI_SUCCESS)
        return rc;
    struct io_access a;
    if ((rc = access_prepare(f, op->where, op->writing, position, buf, count, type, &a)) != MPI_SUCCESS)
        return file_error(f, rc, op->where, "%s", a.why);
    /* The individual pointer moves past the whole access at the call. */
    if (op->pointer == INDIVIDUAL)
        f->fp += (MPI_Offset)(a.bytes / f->view.esize);
    if ((rc = io_async_start(f, &a, request)) != MPI_SUCCESS) {
        access_finish(f, &a, 0, rc, NULL);
        return file_error(f, rc, op->where, "cannot start the access");
    }
    return MPI_SUCCESS;
}

/* --- split collectives */

static int split_begin(struct strand_file *f, const char *where, const void *buf)
{
    if (f->split.active)
        return file_error(f, MPI_ERR_OTHER, where, "a split collective is already pending on this file");
    memset(&f->split, 0, sizeof f->split);
    f->split.buf = buf;
    return MPI_SUCCESS;
}

static int begin_call(const struct io_op *op, MPI_File fh, MPI_Offset offset, void *buf, int count,
                      MPI_Datatype type)
{
    int rc;
    struct strand_file *f = file_checked(fh, op->where, &rc);
    if (f == NULL)
        return rc;
    if ((rc = split_begin(f, op->where, buf)) != MPI_SUCCESS)
        return rc;
    f->split.error = io_access_at(f, op, offset, buf, count, type, &f->split.status);
    f->split.active = true;
    return f->split.error;
}

static int ordered_begin(const char *where, bool writing, MPI_File fh, void *buf, int count, MPI_Datatype type)
{
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    if ((rc = split_begin(f, where, buf)) != MPI_SUCCESS)
        return rc;
    f->split.error = io_ordered(f, where, writing, buf, count, type, &f->split.status);
    f->split.active = true;
    return f->split.error;
}

static int end_call(const char *where, MPI_File fh, void *buf, MPI_Status *status)
{
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    if (!f->split.active)
        return file_error(f, MPI_ERR_OTHER, where, "no split collective is pending on this file");
    if (buf != f->split.buf)
        return file_error(f, MPI_ERR_BUFFER, where, "not the buffer given to the _begin call");
    f->split.active = false;
    if (status != MPI_STATUS_IGNORE && status != NULL) {
        int kept = status->MPI_ERROR;
        *status = f->split.status;
        status->MPI_ERROR = kept;
    }
    return f->split.error;
}

/* --- entry points */

#define OP(name, ptr, wr, coll) \
    static const struct io_op op_##name = { "MPI_File_" #name, ptr, wr, coll }

OP(read_at, AT_OFFSET, false, false);
OP(write_at, AT_OFFSET, true, false);
OP(read_at_all, AT_OFFSET, false, true);
OP(write_at_all, AT_OFFSET, true, true);
OP(iread_at, AT_OFFSET, false, false);
OP(iwrite_at, AT_OFFSET, true, false);
OP(read_at_all_begin, AT_OFFSET, false, true);
OP(write_at_all_begin, AT_OFFSET, true, true);
OP(read, INDIVIDUAL, false, false);
OP(write, INDIVIDUAL, true, false);
OP(read_all, INDIVIDUAL, false, true);
OP(write_all, INDIVIDUAL, true, true);
OP(iread, INDIVIDUAL, false, false);
OP(iwrite, INDIVIDUAL, true, false);
OP(read_all_begin, INDIVIDUAL, false, true);
OP(write_all_begin, INDIVIDUAL, true, true);
OP(read_shared, SHARED, false, false);
OP(write_shared, SHARED, true, false);
OP(iread_shared, SHARED, false, false);
OP(iwrite_shared, SHARED, true, false);

int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return io_call(&op_read_at, fh, offset, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_read_at);

int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return io_call(&op_write_at, fh, offset, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_write_at);

int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return io_call(&op_read_at_all, fh, offset, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_read_at_all);

int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return io_call(&op_write_at_all, fh, offset, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_write_at_all);

int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                       MPI_Request *request)
{
    return io_start(&op_iread_at, fh, offset, buf, count, datatype, request);
}
STRAND_MPI_ALIAS(MPI_File_iread_at);

int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    return io_start(&op_iwrite_at, fh, offset, buf, count, datatype, request);
}
STRAND_MPI_ALIAS(MPI_File_iwrite_at);

int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return io_call(&op_read, fh, 0, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_read);

int PMPI_File_write(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return io_call(&op_write, fh, 0, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_write);

int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return io_call(&op_read_all, fh, 0, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_read_all);

int PMPI_File_write_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return io_call(&op_write_all, fh, 0, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_write_all);

int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return io_start(&op_iread, fh, 0, buf, count, datatype, request);
}
STRAND_MPI_ALIAS(MPI_File_iread);

int PMPI_File_iwrite(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return io_start(&op_iwrite, fh, 0, buf, count, datatype, request);
}
STRAND_MPI_ALIAS(MPI_File_iwrite);

int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return io_call(&op_read_shared, fh, 0, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_read_shared);

int PMPI_File_write_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return io_call(&op_write_shared, fh, 0, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_write_shared);

int PMPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return io_start(&op_iread_shared, fh, 0, buf, count, datatype, request);
}
STRAND_MPI_ALIAS(MPI_File_iread_shared);

int PMPI_File_iwrite_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return io_start(&op_iwrite_shared, fh, 0, buf, count, datatype, request);
}
STRAND_MPI_ALIAS(MPI_File_iwrite_shared);

int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ordered_call("MPI_File_read_ordered", false, fh, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_read_ordered);

int PMPI_File_write_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ordered_call("MPI_File_write_ordered", true, fh, buf, count, datatype, status);
}
STRAND_MPI_ALIAS(MPI_File_write_ordered);

int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype)
{
    return begin_call(&op_read_at_all_begin, fh, offset, buf, count, datatype);
}
STRAND_MPI_ALIAS(MPI_File_read_at_all_begin);

int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return end_call("MPI_File_read_at_all_end", fh, buf, status);
}
STRAND_MPI_ALIAS(MPI_File_read_at_all_end);

int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype)
{
    return begin_call(&op_write_at_all_begin, fh, offset, buf, count, datatype);
}
STRAND_MPI_ALIAS(MPI_File_write_at_all_begin);

int PMPI_File_write_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return end_call("MPI_File_write_at_all_end", fh, buf, status);
}
STRAND_MPI_ALIAS(MPI_File_write_at_all_end);

int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return begin_call(&op_read_all_begin, fh, 0, buf, count, datatype);
}
STRAND_MPI_ALIAS(MPI_File_read_all_begin);

int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return end_call("MPI_File_read_all_end", fh, buf, status);
}
STRAND_MPI_ALIAS(MPI_File_read_all_end);

int PMPI_File_write_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return begin_call(&op_write_all_begin, fh, 0, buf, count, datatype);
}
STRAND_MPI_ALIAS(MPI_File_write_all_begin);

int PMPI_File_write_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return end_call("MPI_File_write_all_end", fh, buf, status);
}
STRAND_MPI_ALIAS(MPI_File_write_all_end);

int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return ordered_begin("MPI_File_read_ordered_begin", false, fh, buf, count, datatype);
}
STRAND_MPI_ALIAS(MPI_File_read_ordered_begin);

int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return end_call("MPI_File_read_ordered_end", fh, buf, status);
}
STRAND_MPI_ALIAS(MPI_File_read_ordered_end);

int PMPI_File_write_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return ordered_begin("MPI_File_write_ordered_begin", true, fh, buf, count, datatype);
}
STRAND_MPI_ALIAS(MPI_File_write_ordered_begin);

int PMPI_File_write_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return end_call("MPI_File_write_ordered_end", fh, buf, status);
}
STRAND_MPI_ALIAS(MPI_File_write_ordered_end);
