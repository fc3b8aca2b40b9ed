/* Files whose group spans node processes.
 *
 * Each node process holds its own `io_core` for its members of the file
 * (its own descriptor, meeting point and hints), keyed by the context id
 * of the file's private communicator, which all node processes agreed on.
 * Nothing is shared between node processes but the file system: no
 * pointer crosses a process. The members of a node process meet through
 * memory as before; their LEADER (lowest local file rank) speaks for them
 * to the other leaders with library-internal messages on the private
 * communicator (`span_send`/`span_recv`, tags SPAN_TAG_*), which user code
 * never sees. Member 0 is always the leader of node slot 0.
 *
 * - io_allgather: every member's few values everywhere (local deposit,
 *   leaders gather at member 0 and get the whole table back, local
 *   release): barriers, error agreement, ordered accesses.
 * - the shared file pointer: 8 bytes in a hidden file next to the file
 *   (".<name>.shfp.<job>.<context>", made by member 0 at open and removed
 *   at close), read and rewritten under an fcntl write lock, so it is
 *   right whichever processes access it and whether or not the others
 *   take part (as ROMIO does; no owner process must answer).
 * - open: members agree on the arguments; member 0 opens (creates) the
 *   file first, then the other leaders open it, and everyone leaves with
 *   the first error. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../comm/comm.h"
#include "../net/net.h"
#include "../pt2pt/pt2pt.h"
#include "../util/lock.h"
#include "io.h"

/* --- leaders' messages */

void span_send(struct strand_file *f, struct strand_request *req, const void *buf, size_t count,
               MPI_Datatype type, int dest, int tag)
{
    if (count > INT32_MAX)
        strand_job_abort(1, "Strand MPI: an MPI-IO exchange between node processes exceeds 2 GiB per message\n");
    pt2pt_isend_internal(req, f->comm, f->comm->core->context_id, buf, (int)count, type, dest, tag);
}

void span_recv(struct strand_file *f, void *buf, size_t count, MPI_Datatype type, int source, int tag)
{
    struct strand_request req;
    if (count > INT32_MAX)
        strand_job_abort(1, "Strand MPI: an MPI-IO exchange between node processes exceeds 2 GiB per message\n");
    pt2pt_irecv_internal(&req, f->comm, f->comm->core->context_id, buf, (int)count, type, source, tag);
    pt2pt_wait_internal(&req);
}

/* Member 0 gathers the other leaders' entries (each sends the whole table
 * with only its node's members filled in) and sends the table back. */
static void leaders_gather(struct strand_file *f, int64_t *table, int k)
{
    struct io_core *core = f->core;
    size_t n = (size_t)core->size * (size_t)k;
    struct strand_request req;
    if (f->rank != 0) {
        span_send(f, &req, table, n, MPI_INT64_T, 0, SPAN_TAG_GATHER);
        pt2pt_wait_internal(&req);
        span_recv(f, table, n, MPI_INT64_T, 0, SPAN_TAG_RELEASE);
        return;
    }
    int64_t *theirs = malloc(n * sizeof *theirs + 1);
    if (theirs == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in an MPI-IO collective\n");
    for (int j = 1; j < core->nnodes; j++) {
        span_recv(f, theirs, n, MPI_INT64_T, core->node_leader[j], SPAN_TAG_GATHER);
        for (int r = 0; r < core->size; r++)
            if (core->node_of[r] == j)
                memcpy(table + (size_t)r * k, theirs + (size_t)r * k, (size_t)k * sizeof *table);
    }
    free(theirs);
    struct strand_request *sends = malloc((size_t)core->nnodes * sizeof *sends);
    if (sends == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in an MPI-IO collective\n");
    for (int j = 1; j < core->nnodes; j++)
        span_send(f, &sends[j], table, n, MPI_INT64_T, core->node_leader[j], SPAN_TAG_RELEASE);
    for (int j = 1; j < core->nnodes; j++)
        pt2pt_wait_internal(&sends[j]);
    free(sends);
}

/* Two tables used in turn: a member writes call c + 1's entry only after
 * every local member arrived at call c + 1, so all have read call c's
 * table, and nobody reads call c - 1's any more. */
void io_allgather(struct strand_file *f, const int64_t *mine, int k, int64_t *all)
{
    struct io_core *core = f->core;
    int64_t *table = core->gather[f->gather_seq++ & 1];
    memcpy(table + (size_t)f->rank * k, mine, (size_t)k * sizeof *mine);
    io_barrier(core);
    if (core->spans && f->rank == core->leader)
        leaders_gather(f, table, k);
    io_barrier(core);
    memcpy(all, table, (size_t)core->size * (size_t)k * sizeof *all);
}

void io_sync_all(struct strand_file *f)
{
    if (!f->core->spans) {
        io_barrier(f->core);
        return;
    }
    int64_t none = 0;
    io_allgather(f, &none, 0, &none);
}

int io_agree_error_span(struct strand_file *f, int error)
{
    int n = f->core->size;
    int64_t mine = error, *all = malloc((size_t)n * sizeof *all);
    if (all == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in an MPI-IO collective\n");
    io_allgather(f, &mine, 1, all);
    int agreed = MPI_SUCCESS;
    for (int r = 0; r < n && agreed == MPI_SUCCESS; r++)
        agreed = (int)all[r];
    free(all);
    return agreed;
}

/* --- the shared file pointer */

static int shfp_locked(struct io_core *core, short type)
{
    struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = sizeof(int64_t) };
    while (fcntl(core->shfp_fd, F_OFD_SETLKW, &fl) != 0)
        if (errno != EINTR)
            return io_errno_class(errno);
    return MPI_SUCCESS;
}

static int shfp_update(struct io_core *core, MPI_Offset add, bool store, MPI_Offset *value)
{
    int64_t v = 0;
    if (!store) {
        ssize_t got = pread(core->shfp_fd, &v, sizeof v, 0);
        if (got < 0)
            return io_errno_class(errno);
        if (got != (ssize_t)sizeof v)
            return MPI_ERR_IO;
        if (add == 0) {
            *value = v;
            return MPI_SUCCESS;
        }
    }
    int64_t next = store ? *value : v + add;
    if (pwrite(core->shfp_fd, &next, sizeof next, 0) != (ssize_t)sizeof next)
        return errno != 0 ? io_errno_class(errno) : MPI_ERR_IO;
    if (!store)
        *value = v;
    return MPI_SUCCESS;
}

int shared_fp_access(struct strand_file *f, MPI_Offset add, bool store, MPI_Offset *value)
{
    struct io_core *core = f->core;
    if (!core->spans) {
        if (store)
            atomic_store(&core->shared_fp, *value);
        else
            *value = atomic_fetch_add(&core->shared_fp, add);
        return MPI_SUCCESS;
    }
    if (core->shfp_fd < 0)
        return MPI_ERR_ACCESS;      /* the hidden file could not be made (span_open) */
    /* One descriptor per node process, one owner for the kernel: the
     * process's members take turns on the mutex first. */
    pthread_mutex_lock(&core->shfp_mutex);
    int rc = shfp_locked(core, F_WRLCK);
    if (rc == MPI_SUCCESS) {
        rc = shfp_update(core, add, store, value);
        int unlocked = shfp_locked(core, F_UNLCK);
        if (rc == MPI_SUCCESS)
            rc = unlocked;
    }
    pthread_mutex_unlock(&core->shfp_mutex);
    return rc;
}

/* ".<name>.shfp.<job>.<context>" in the file's directory, <job> being the
 * job of the node process of the file's member 0: the same for every
 * member, also when the communicator joins two jobs. */
static char *shfp_name(const char *path, uint32_t context, const struct rank *member0)
{
    const char *slash = strrchr(path, '/');
    int dir = slash != NULL ? (int)(slash - path + 1) : 0;
    uint64_t job = member0->remote != NULL ? member0->remote->job_id : net_self_job_id();
    size_t len = strlen(path) + 64;
    char *name = malloc(len);
    if (name != NULL)
        snprintf(name, len, "%.*s.%s.shfp.%" PRIx64 ".%" PRIu32, dir, path, path + dir, job, context);
    return name;
}

/* --- the core of one node process */

/* Cores being handed to the local members of a new file: the first to
 * arrive builds, the last to take removes the entry. */
struct pending_core {
    uint32_t context;
    struct io_core *core;
    int untaken;
    struct pending_core *next;
};
static struct lite_lock pending_lock = LITE_LOCK_INIT;
static struct pending_core *pending;

static int node_index_of(const struct rank *r)
{
    if (r->remote != NULL)
        return r->remote->node;
    return net_active() ? net_job()->node : 0;
}

/* Node slots in order of their lowest file rank; the leaders. */
static bool span_layout(struct io_core *core)
{
    int n = core->size;
    int *node_ids = malloc((size_t)n * sizeof *node_ids);
    core->node_of = malloc((size_t)n * sizeof *core->node_of);
    core->node_leader = malloc((size_t)n * sizeof *core->node_leader);
    if (node_ids == NULL || core->node_of == NULL || core->node_leader == NULL) {
        free(node_ids);
        return false;
    }
    int me = node_index_of(strand_self);
    core->nnodes = 0;
    core->nlocal = 0;
    core->leader = -1;
    for (int r = 0; r < n; r++) {
        int id = node_index_of(core->members[r]), slot = 0;
        while (slot < core->nnodes && node_ids[slot] != id)
            slot++;
        if (slot == core->nnodes) {
            node_ids[core->nnodes] = id;
            core->node_leader[core->nnodes++] = r;
        }
        core->node_of[r] = slot;
        if (id == me) {
            core->nlocal++;
            if (core->leader < 0) {
                core->leader = r;
                core->my_node = slot;
            }
        }
    }
    free(node_ids);
    return true;
}

static struct io_core *span_core_create(struct comm_core *cc, const char *path, int amode)
{
    struct io_core *core = calloc(1, sizeof *core);
    if (core == NULL)
        return NULL;
    core->fd = -1;
    core->shfp_fd = -1;
    atomic_init(&core->unsynced, true);  /* the open may have created the file */
    core->spans = true;
    core->amode = amode;
    core->size = cc->size;
    core->members = cc->members;
    core->path = strdup(path);
    core->shfp_path = shfp_name(path, cc->context_id, cc->members[0]);
    core->slots = calloc((size_t)core->size, sizeof *core->slots);
    for (int i = 0; i < 2; i++)
        core->gather[i] = calloc((size_t)core->size * IO_GATHER_MAX, sizeof *core->gather[i]);
    pthread_mutex_init(&core->lock_mutex, NULL);
    pthread_cond_init(&core->lock_released, NULL);
    pthread_mutex_init(&core->shfp_mutex, NULL);
    if (core->path == NULL || core->shfp_path == NULL || core->slots == NULL || core->gather[0] == NULL ||
        core->gather[1] == NULL || !span_layout(core)) {
        io_core_free(core);
        return NULL;
    }
    /* One aggregator per node process unless cb_nodes asks for fewer. */
    hints_default(&core->hints, core->nnodes);
    core->hints.cb_nodes = core->nnodes;
    atomic_store(&core->refs, core->nlocal);
    return core;
}

static struct io_core *span_core_take(struct comm_core *cc, const char *path, int amode)
{
    lite_lock(&pending_lock);
    struct pending_core **link = &pending;
    while (*link != NULL && (*link)->context != cc->context_id)
        link = &(*link)->next;
    struct pending_core *e = *link;
    if (e == NULL) {
        struct io_core *made = span_core_create(cc, path, amode);
        if (made != NULL && (e = malloc(sizeof *e)) != NULL) {
            *e = (struct pending_core){ cc->context_id, made, made->nlocal, NULL };
            *link = e;
        }
    }
    /* Members of one node process could not go on without each other. */
    if (e == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in MPI_File_open\n");
    struct io_core *core = e->core;
    if (--e->untaken == 0) {
        *link = e->next;
        free(e);
    }
    lite_unlock(&pending_lock);
    return core;
}

/* --- open and close */

static int64_t path_hash(const char *path)
{
    uint64_t h = 1469598103934665603u;     /* FNV-1a */
    for (const char *p = path; *p != '\0'; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    return (int64_t)(h >> 1);
}

/* Every member's (argument error, amode, name): the first error, or
 * MPI_ERR_NOT_SAME when members passed different files or modes. */
static int arguments_agree(struct strand_file *f, int argerror, int amode, const char *path)
{
    int n = f->core->size;
    int64_t mine[3] = { argerror, amode, path_hash(path) };
    int64_t *all = malloc((size_t)n * 3 * sizeof *all);
    if (all == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in MPI_File_open\n");
    io_allgather(f, mine, 3, all);
    int error = MPI_SUCCESS;
    for (int r = 0; r < n && error == MPI_SUCCESS; r++)
        error = (int)all[3 * r];
    for (int r = 1; r < n && error == MPI_SUCCESS; r++)
        if (all[3 * r + 1] != all[1] || all[3 * r + 2] != all[2])
            error = MPI_ERR_NOT_SAME;
    free(all);
    return error;
}

/* Member 0: the file as the mode says (creating, exclusively), then the
 * hidden file holding the shared pointer (at the end of the file with
 * MPI_MODE_APPEND). Without a writable directory the shared pointer is
 * unavailable (its routines fail with MPI_ERR_ACCESS), as the file is
 * still usable otherwise. */
static int open_first(struct io_core *core, int amode)
{
    int rc = io_open_descriptor(core->path, amode, &core->fd);
    if (rc != MPI_SUCCESS)
        return rc;
    core->shfp_fd = open(core->shfp_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (core->shfp_fd >= 0) {
        struct stat st;
        int64_t start = amode & MPI_MODE_APPEND && fstat(core->fd, &st) == 0 ? st.st_size : 0;
        if (pwrite(core->shfp_fd, &start, sizeof start, 0) != (ssize_t)sizeof start) {
            close(core->shfp_fd);
            unlink(core->shfp_path);
            core->shfp_fd = -1;
        }
    }
    return MPI_SUCCESS;
}

/* The other leaders, once the file exists. */
static int open_others(struct io_core *core, int amode)
{
    int rc = io_open_descriptor(core->path, amode & ~(MPI_MODE_CREATE | MPI_MODE_EXCL), &core->fd);
    if (rc == MPI_SUCCESS)
        core->shfp_fd = open(core->shfp_path, O_RDWR | O_CLOEXEC);
    return rc;
}

int span_open(struct strand_comm *c, const char *path, int amode, MPI_Info info, int argerror,
              struct strand_file **out)
{
    /* The private communicator: a dup agreed on by every node process. */
    struct build_request req = { .expect_size = -1 };
    struct build_result res;
    int rc = comm_build(c, BUILD_DUP, &req, NULL, &res);
    if (rc != MPI_SUCCESS)
        return rc;
    struct io_core *core = span_core_take(res.core, path != NULL ? path : "", amode);
    struct strand_file *f = io_handle_create(core, res.rank);
    struct strand_comm *comm = f != NULL ? comm_handle_for(res.core, res.rank, c) : NULL;
    if (comm == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in MPI_File_open\n");
    f->comm = comm;
    int error = arguments_agree(f, argerror, amode, path != NULL ? path : "");
    if (error == MPI_SUCCESS)
        error = io_agree_error_span(f, f->rank == 0 ? open_first(core, amode) : MPI_SUCCESS);
    if (error == MPI_SUCCESS) {
        int mine = MPI_SUCCESS;
        if (f->rank == core->leader && f->rank != 0)
            mine = open_others(core, amode);
        if (f->rank == core->leader)
            hints_apply(&core->hints, info, core->nnodes);
        error = io_agree_error_span(f, mine);
    }
    if (error != MPI_SUCCESS) {
        if (f->rank == 0 && core->shfp_fd >= 0)
            unlink(core->shfp_path);
        io_handle_destroy(f);
        return error;
    }
    *out = f;
    return MPI_SUCCESS;
}

void io_close_remove(struct strand_file *f)
{
    struct io_core *core = f->core;
    if (f->rank != 0)
        return;
    if (core->shfp_fd >= 0)
        unlink(core->shfp_path);
    if (core->amode & MPI_MODE_DELETE_ON_CLOSE)
        unlink(core->path);
}
