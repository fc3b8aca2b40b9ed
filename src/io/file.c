/* Files: open and close (collective), the shared core, the members'
 * meeting point, size, group, mode, hints, atomicity, sync, error
 * handlers. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../comm/comm.h"
#include "../comm/info.h"
#include "../core/errhandler.h"
#include "../datatype/datatype.h"
#include "../util/lock.h"
#include "io.h"

/* --- errors */

/* MPI_FILE_NULL's error handler, per rank (MPI_ERRORS_RETURN until set). */
static struct lite_lock null_handlers_lock = LITE_LOCK_INIT;
static MPI_Errhandler *null_handlers;
static int null_handlers_size;

static MPI_Errhandler *null_handler_slot(void)
{
    int me = strand_self != NULL ? strand_self->world_rank : 0;
    lite_lock(&null_handlers_lock);
    if (me >= null_handlers_size) {
        int n = me + 1 > strand_node.config.nranks ? me + 1 : strand_node.config.nranks;
        MPI_Errhandler *v = realloc(null_handlers, (size_t)n * sizeof *v);
        if (v != NULL) {
            for (int i = null_handlers_size; i < n; i++)
                v[i] = MPI_ERRORS_RETURN;
            null_handlers = v;
            null_handlers_size = n;
        }
    }
    MPI_Errhandler *slot = me < null_handlers_size ? &null_handlers[me] : NULL;
    lite_unlock(&null_handlers_lock);
    return slot;
}

static MPI_Errhandler null_handler(void)
{
    MPI_Errhandler *slot = null_handler_slot();
    return slot != NULL ? *slot : MPI_ERRORS_RETURN;
}

int file_error(struct strand_file *f, int code, const char *where, const char *fmt, ...)
{
    char message[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (f == NULL)
        return error_report_object(null_handler(), MPI_FILE_NULL, code, where, "%s", message);
    return error_report_object(f->errhandler, f, code, where, "%s", message);
}

int io_errno_class(int err)
{
    switch (err) {
    case ENOENT: case ENOTDIR: return MPI_ERR_NO_SUCH_FILE;
    case EACCES: case EPERM: return MPI_ERR_ACCESS;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EISDIR: case ENAMETOOLONG: case ELOOP: return MPI_ERR_BAD_FILE;
    case EROFS: return MPI_ERR_READ_ONLY;
    /* EFBIG: the file may not grow (RLIMIT_FSIZE or the file system's limit). */
    case ENOSPC: case EFBIG: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case ETXTBSY: case EBUSY: return MPI_ERR_FILE_IN_USE;
    case ENOMEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_IO;
    }
}

struct strand_file *file_checked(MPI_File fh, const char *where, int *rc)
{
    *rc = error_check_initialized(where);
    if (*rc != MPI_SUCCESS)
        return NULL;
    struct strand_file *f = file_lookup(fh);
    if (f == NULL || f->core->members[f->rank] != strand_self)
        *rc = file_error(NULL, MPI_ERR_FILE, where, "invalid file handle");
    return f == NULL || *rc != MPI_SUCCESS ? NULL : f;
}

struct strand_file *file_query(MPI_File fh, const char *where, const void *out, int *rc)
{
    struct strand_file *f = file_checked(fh, where, rc);
    if (f != NULL && out == NULL) {
        *rc = file_error(f, MPI_ERR_ARG, where, "the output argument is NULL");
        return NULL;
    }
    return f;
}

/* --- meetings */

struct generation_wait {
    atomic_uint *generation;
    unsigned seen;
};

static bool generation_changed(void *arg)
{
    const struct generation_wait *w = arg;
    return atomic_load_explicit(w->generation, memory_order_acquire) != w->seen;
}

void io_barrier(struct io_core *core)
{
    if (core->nlocal == 1)
        return;
    unsigned gen = atomic_load_explicit(&core->generation, memory_order_acquire);
    if (atomic_fetch_add_explicit(&core->arrived, 1, memory_order_acq_rel) + 1 == (unsigned)core->nlocal) {
        atomic_store_explicit(&core->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&core->generation, gen + 1, memory_order_release);
        atomic_thread_fence(memory_order_seq_cst);
        for (int i = 0; i < core->size; i++)
            if (core->members[i] != strand_self && core->members[i]->remote == NULL)
                rank_wake(core->members[i]);
        return;
    }
    struct generation_wait w = { &core->generation, gen };
    /* Oversubscribed, the awaited member is usually runnable but not
     * running: yielding hands it the core without a futex sleep and wake
     * (as the collectives' waits do, src/coll/sync.c). */
    if (strand_node.config.nranks > strand_node.ncores)
        for (int i = 0; i < OVERSUBSCRIBED_YIELDS && !generation_changed(&w); i++)
            sched_yield();
    rank_wait_until(strand_self, generation_changed, &w);
}

/* One barrier: collective k uses slot k % 3. After the barrier of k,
 * member 0 clears slot (k + 2) % 3: its readers (collective k - 1) read it
 * before arriving at this barrier, and its writers (collective k + 2) come
 * after the next barrier, which member 0 has not reached yet. */
int io_agree_error(struct strand_file *f, int error)
{
    struct io_core *core = f->core;
    if (core->spans)
        return io_agree_error_span(f, error);
    unsigned seq = f->coll_seq++;
    atomic_int *mine = &core->coll_error[seq % IO_ERROR_SLOTS];
    if (error != MPI_SUCCESS) {
        int none = MPI_SUCCESS;
        atomic_compare_exchange_strong(mine, &none, error);
    }
    io_barrier(core);
    int agreed = atomic_load(mine);
    if (f->rank == 0)
        atomic_store(&core->coll_error[(seq + 2) % IO_ERROR_SLOTS], MPI_SUCCESS);
    return agreed;
}

/* --- open and close */

static int amode_check(int amode)
{
    const int known = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL |
                      MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;
    if (amode & ~known)
        return MPI_ERR_AMODE;
    int access = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_RDWR ? 1 : 0) +
                 (amode & MPI_MODE_WRONLY ? 1 : 0);
    if (access != 1)
        return MPI_ERR_AMODE;
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return MPI_ERR_AMODE;
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return MPI_ERR_AMODE;
    return MPI_SUCCESS;
}

/* A "prefix:" naming the file system (as ROMIO's "ufs:" or "nfs:") is
 * accepted and skipped. */
static const char *strip_fs_prefix(const char *name)
{
    const char *colon = strchr(name, ':');
    if (colon == NULL || colon - name < 2)
        return name;
    for (const char *p = name; p < colon; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return name;
    return colon + 1;
}

struct open_input {
    const char *path;
    int amode;
    MPI_Info info;
};

void io_core_free(struct io_core *core)
{
    if (core->fd >= 0)
        close(core->fd);
    if (core->shfp_fd >= 0)
        close(core->shfp_fd);
    pthread_mutex_destroy(&core->lock_mutex);
    pthread_cond_destroy(&core->lock_released);
    pthread_mutex_destroy(&core->shfp_mutex);
    hints_free(&core->hints);
    free(core->slots);
    free(core->gather[0]);
    free(core->gather[1]);
    free(core->node_of);
    free(core->node_leader);
    free(core->shfp_path);
    free(core->path);
    free(core);
}

int io_open_descriptor(const char *path, int amode, int *fd)
{
    int flags = (amode & MPI_MODE_CREATE ? O_CREAT : 0) | (amode & MPI_MODE_EXCL ? O_EXCL : 0) | O_CLOEXEC;
    if (amode & MPI_MODE_RDONLY) {
        *fd = open(path, flags | O_RDONLY);
    } else {
        /* Write-only files are opened for reading too when allowed:
         * collective writes with holes read what lies between pieces. */
        *fd = open(path, flags | O_RDWR, 0666);
        if (*fd < 0 && (errno == EACCES || errno == EPERM) && (amode & MPI_MODE_WRONLY))
            *fd = open(path, flags | O_WRONLY, 0666);
    }
    if (*fd < 0)
        return io_errno_class(errno);
    struct stat st;
    if (fstat(*fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(*fd);
        *fd = -1;
        return MPI_ERR_BAD_FILE;
    }
    return MPI_SUCCESS;
}

/* Run once, by the last member to arrive, for everyone. */
static int open_exchange(int n, void *const *inputs, void **outputs)
{
    const struct open_input *first = inputs[0];
    for (int i = 1; i < n; i++) {
        const struct open_input *in = inputs[i];
        if (in->amode != first->amode || strcmp(in->path, first->path) != 0)
            return MPI_ERR_NOT_SAME;
    }
    struct io_core *core = calloc(1, sizeof *core);
    if (core == NULL)
        return MPI_ERR_NO_MEM;
    core->fd = -1;
    core->shfp_fd = -1;
    atomic_init(&core->unsynced, true);  /* the open may have created the file */
    core->path = strdup(first->path);
    core->slots = calloc((size_t)n, sizeof *core->slots);
    for (int i = 0; i < 2; i++)
        core->gather[i] = calloc((size_t)n * IO_GATHER_MAX, sizeof *core->gather[i]);
    pthread_mutex_init(&core->lock_mutex, NULL);
    pthread_cond_init(&core->lock_released, NULL);
    pthread_mutex_init(&core->shfp_mutex, NULL);
    if (core->path == NULL || core->slots == NULL || core->gather[0] == NULL || core->gather[1] == NULL) {
        io_core_free(core);
        return MPI_ERR_NO_MEM;
    }
    int rc = io_open_descriptor(first->path, first->amode, &core->fd);
    if (rc != MPI_SUCCESS) {
        io_core_free(core);
        return rc;
    }
    core->amode = first->amode;
    core->size = n;
    core->nlocal = n;
    core->nnodes = 1;
    hints_default(&core->hints, n);
    hints_apply(&core->hints, first->info, n);
    atomic_store(&core->refs, n);
    for (int i = 0; i < n; i++)
        outputs[i] = core;
    return MPI_SUCCESS;
}

static int open_arguments(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh,
                          struct strand_comm *c)
{
    if (c->core->is_inter)
        return MPI_ERR_COMM;
    if (fh == NULL)
        return MPI_ERR_ARG;
    if (filename == NULL || filename[0] == '\0')
        return MPI_ERR_BAD_FILE;
    if (info != MPI_INFO_NULL && info_lookup(info) == NULL)
        return MPI_ERR_INFO;
    (void)comm;
    return amode_check(amode);
}

struct strand_file *io_handle_create(struct io_core *core, int rank)
{
    struct strand_file *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    f->magic = FILE_MAGIC;
    f->core = core;
    f->rank = rank;
    f->lock_fd = -1;
    f->errhandler = null_handler();
    errhandler_retain(f->errhandler);
    view_set_default(&f->view);
    return f;
}

/* A spanning group's members hold their private communicator through
 * handles. */
static void core_release(struct io_core *core)
{
    if (atomic_fetch_sub_explicit(&core->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (!core->spans)
        comm_core_release(core->comm_core);
    io_core_free(core);
}

void io_handle_destroy(struct strand_file *f)
{
    struct io_core *core = f->core;
    view_clear(&f->view);
    free(f->cb_buffer);
    if (f->lock_fd >= 0)
        close(f->lock_fd);
    if (f->comm != NULL)
        comm_handle_discard(f->comm);
    errhandler_release(f->errhandler);
    handle_magic_clear(&f->magic);
    free(f);
    core_release(core);
}

/* MPI_MODE_APPEND: the individual pointers start at the end of the file. */
static int file_opened(struct strand_file *f, MPI_File *fh)
{
    struct stat st;
    if ((f->core->amode & MPI_MODE_APPEND) && fstat(f->core->fd, &st) == 0)
        f->fp = st.st_size;
    *fh = f;
    return MPI_SUCCESS;
}

static int local_opened(const struct build_result *res, const char *where, MPI_File *fh)
{
    struct io_core *core = res->output;
    /* Every member stores the same pointers before the barrier below
     * (whose last arriver reads `members`). */
    __atomic_store_n(&core->comm_core, res->core, __ATOMIC_RELAXED);
    __atomic_store_n(&core->members, res->core->local_members, __ATOMIC_RELAXED);
    struct strand_file *f = io_handle_create(core, res->rank);
    if (f == NULL) {
        core_release(core);
        *fh = MPI_FILE_NULL;
        return file_error(NULL, MPI_ERR_NO_MEM, where, "out of memory");
    }
    struct stat st;
    if ((core->amode & MPI_MODE_APPEND) && res->rank == 0 && fstat(core->fd, &st) == 0)
        atomic_store(&core->shared_fp, st.st_size);
    /* Nobody uses the file before every member has its handle. */
    io_barrier(core);
    return file_opened(f, fh);
}

int PMPI_File_open(MPI_Comm comm, char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    const char *where = "MPI_File_open";
    int rc;
    struct strand_comm *c = comm_checked(comm, where, &rc);
    if (c == NULL)
        return rc;
    const char *path = filename != NULL ? strip_fs_prefix(filename) : NULL;
    struct open_input in = { path, amode, info };
    struct build_request req = { .expect_size = -1, .input = &in };
    req.error = open_arguments(comm, path, amode, info, fh, c);
    if (!c->core->is_inter && comm_members_span_nodes(c->core->members, c->core->size)) {
        struct strand_file *f = NULL;
        rc = span_open(c, path, amode, info, req.error, &f);
        if (rc == MPI_SUCCESS)
            return file_opened(f, fh);
    } else {
        struct build_result res;
        rc = comm_build(c, BUILD_DUP, &req, open_exchange, &res);
        if (rc == MPI_SUCCESS)
            return local_opened(&res, where, fh);
    }
    if (fh != NULL)
        *fh = MPI_FILE_NULL;
    return file_error(NULL, rc, where, "cannot open \"%s\": %s", filename != NULL ? filename : "(null)",
                      error_class_name(rc));
}
STRAND_MPI_ALIAS(MPI_File_open);

int PMPI_File_close(MPI_File *fh)
{
    const char *where = "MPI_File_close";
    int rc;
    if (fh == NULL)
        return file_error(NULL, MPI_ERR_ARG, where, "fh is NULL");
    struct strand_file *f = file_checked(*fh, where, &rc);
    if (f == NULL)
        return rc;
    if (f->split.active)
        return file_error(f, MPI_ERR_OTHER, where, "a split collective is still pending");
    /* Nonblocking accesses still running finish first (the program
     * should have completed them; their data is not lost). */
    io_async_drain(f);
    io_sync_all(f);
    io_close_remove(f);
    /* Nobody returns before a DELETE_ON_CLOSE file is gone. */
    if (f->core->amode & MPI_MODE_DELETE_ON_CLOSE)
        io_sync_all(f);
    io_handle_destroy(f);
    *fh = MPI_FILE_NULL;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_close);

int PMPI_File_delete(char *filename, MPI_Info info)
{
    const char *where = "MPI_File_delete";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (filename == NULL)
        return file_error(NULL, MPI_ERR_BAD_FILE, where, "filename is NULL");
    if (info != MPI_INFO_NULL && info_lookup(info) == NULL)
        return file_error(NULL, MPI_ERR_INFO, where, "invalid info object");
    filename = (char *)strip_fs_prefix(filename);
    struct stat st;
    if (stat(filename, &st) == 0 && S_ISDIR(st.st_mode))
        return file_error(NULL, MPI_ERR_BAD_FILE, where, "\"%s\" is a directory", filename);
    if (unlink(filename) != 0)
        return file_error(NULL, io_errno_class(errno), where, "cannot delete \"%s\": %s", filename,
                          strerror(errno));
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_delete);

/* --- size */

static int size_argument(struct strand_file *f, const char *where, MPI_Offset size)
{
    if (size < 0)
        return file_error(f, MPI_ERR_ARG, where, "negative size %lld", size);
    if (f->core->amode & MPI_MODE_SEQUENTIAL)
        return file_error(f, MPI_ERR_UNSUPPORTED_OPERATION, where, "not on a file opened MPI_MODE_SEQUENTIAL");
    if (f->core->amode & MPI_MODE_RDONLY)
        return file_error(f, MPI_ERR_READ_ONLY, where, "the file is open read-only");
    return MPI_SUCCESS;
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    const char *where = "MPI_File_set_size";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    rc = size_argument(f, where, size);
    int error = rc;
    /* Every member is done with the old size before it changes. */
    io_sync_all(f);
    if (error == MPI_SUCCESS && f->rank == 0) {
        io_note_unsynced(f->core);
        if (ftruncate(f->core->fd, size) != 0)
            error = io_errno_class(errno);
    }
    error = io_agree_error(f, error);
    if (rc != MPI_SUCCESS)
        return rc;
    if (error != MPI_SUCCESS)
        return file_error(f, error, where, "cannot resize the file");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_set_size);

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    const char *where = "MPI_File_preallocate";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    rc = size_argument(f, where, size);
    int error = rc;
    io_sync_all(f);
    if (error == MPI_SUCCESS && f->rank == 0 && size > 0) {
        io_note_unsynced(f->core);
        int e = posix_fallocate(f->core->fd, 0, size);
        if (e == EOPNOTSUPP || e == EINVAL) {
            /* The file system cannot reserve: write zeros where the file is short. */
            struct stat st;
            e = fstat(f->core->fd, &st) == 0 && st.st_size < size && ftruncate(f->core->fd, size) != 0 ? errno : 0;
        }
        if (e != 0)
            error = io_errno_class(e);
    }
    error = io_agree_error(f, error);
    if (rc != MPI_SUCCESS)
        return rc;
    if (error != MPI_SUCCESS)
        return file_error(f, error, where, "cannot preallocate %lld bytes", size);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_preallocate);

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    const char *where = "MPI_File_get_size";
    int rc;
    struct strand_file *f = file_query(fh, where, size, &rc);
    if (f == NULL)
        return rc;
    struct stat st;
    if (fstat(f->core->fd, &st) != 0)
        return file_error(f, io_errno_class(errno), where, "%s", strerror(errno));
    *size = st.st_size;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_get_size);

/* --- group, mode, hints */

int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    const char *where = "MPI_File_get_group";
    int rc;
    struct strand_file *f = file_query(fh, where, group, &rc);
    if (f == NULL)
        return rc;
    struct strand_group *g = group_from_members(f->core->members, f->core->size);
    if (g == NULL)
        return file_error(f, MPI_ERR_NO_MEM, where, "out of memory");
    *group = g;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_get_group);

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    const char *where = "MPI_File_get_amode";
    int rc;
    struct strand_file *f = file_query(fh, where, amode, &rc);
    if (f == NULL)
        return rc;
    *amode = f->core->amode;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_get_amode);

int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    const char *where = "MPI_File_set_info";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    int error = info != MPI_INFO_NULL && info_lookup(info) == NULL ? MPI_ERR_INFO : MPI_SUCCESS;
    /* Members pass the same hints; each node process's leader applies
     * them for its members. */
    io_sync_all(f);
    if (f->rank == f->core->leader && error == MPI_SUCCESS)
        hints_apply(&f->core->hints, info, f->core->spans ? f->core->nnodes : f->core->size);
    error = io_agree_error(f, error);
    if (error != MPI_SUCCESS)
        return file_error(f, error, where, "invalid info object");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_set_info);

int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    const char *where = "MPI_File_get_info";
    int rc;
    struct strand_file *f = file_query(fh, where, info_used, &rc);
    if (f == NULL)
        return rc;
    rc = hints_to_info(&f->core->hints, info_used);
    if (rc != MPI_SUCCESS)
        return file_error(f, rc, where, "out of memory");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_get_info);

/* --- consistency */

int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    const char *where = "MPI_File_set_atomicity";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    io_sync_all(f);
    if (f->rank == f->core->leader)
        f->core->atomic = flag != 0;
    io_sync_all(f);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_set_atomicity);

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    const char *where = "MPI_File_get_atomicity";
    int rc;
    struct strand_file *f = file_query(fh, where, flag, &rc);
    if (f == NULL)
        return rc;
    *flag = f->core->atomic;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_get_atomicity);

int PMPI_File_sync(MPI_File fh)
{
    const char *where = "MPI_File_sync";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    if (f->split.active)
        return file_error(f, MPI_ERR_OTHER, where, "a split collective is pending");
    /* One descriptor serves the members of a node process: one fsync per
     * node process after all arrived, and none when nothing was written
     * through it since the last (MPI-2.2 §13.6.1: the caller's previous
     * writes reach the storage device; they already did). An fsync costs
     * even a clean file a disk round trip (doc/performance.md §36). */
    io_sync_all(f);
    int error = MPI_SUCCESS;
    if (f->rank == f->core->leader && !(f->core->amode & MPI_MODE_RDONLY) &&
        atomic_exchange_explicit(&f->core->unsynced, false, memory_order_acq_rel) &&
        fsync(f->core->fd) != 0) {
        error = io_errno_class(errno);
        io_note_unsynced(f->core);      /* the next sync tries again */
    }
    error = io_agree_error(f, error);
    if (error != MPI_SUCCESS)
        return file_error(f, error, where, "fsync failed");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_sync);

/* --- error handlers */

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    const char *where = "MPI_File_set_errhandler";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    struct strand_file *f = NULL;
    if (file != MPI_FILE_NULL && (f = file_checked(file, where, &rc)) == NULL)
        return rc;
    if (!errhandler_valid_for(errhandler, ERRHANDLER_FILE))
        return file_error(f, MPI_ERR_ARG, where, "not an error handler for files");
    MPI_Errhandler *slot = f != NULL ? &f->errhandler : null_handler_slot();
    if (slot == NULL)
        return file_error(f, MPI_ERR_NO_MEM, where, "out of memory");
    errhandler_retain(errhandler);
    errhandler_release(*slot);
    *slot = errhandler;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_set_errhandler);

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    const char *where = "MPI_File_get_errhandler";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    struct strand_file *f = NULL;
    if (file != MPI_FILE_NULL && (f = file_checked(file, where, &rc)) == NULL)
        return rc;
    if (errhandler == NULL)
        return file_error(f, MPI_ERR_ARG, where, "errhandler is NULL");
    MPI_Errhandler e = f != NULL ? f->errhandler : null_handler();
    errhandler_retain(e);
    *errhandler = e;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_get_errhandler);

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    const char *where = "MPI_File_call_errhandler";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    struct strand_file *f = NULL;
    if (fh != MPI_FILE_NULL && (f = file_checked(fh, where, &rc)) == NULL)
        return rc;
    /* MPI-2.2 §8.3.5: MPI_SUCCESS once the handler returned (also MPI_ERRORS_RETURN). */
    file_error(f, errorcode, where, "error raised by the program");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_call_errhandler);
