/* Windows: creation and freeing (collective), the window's group, name,
 * attributes and error handler.
 *
 * Creation: the members exchange a process-independent description
 * (member 0's new window id; every member's base, size, displacement
 * unit and argument check) with library-internal messages, so that every
 * node process learns the same window. Then the local members of each
 * node process share one core, found by window id in this process's
 * registry (the first to come builds it from the description). The
 * network layer finds cores there too: a window spanning node processes
 * ends its creation with a barrier, so that no frame can arrive for it
 * before every node process registered it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../comm/attr.h"
#include "../comm/comm.h"
#include "../comm/info.h"
#include "../core/errhandler.h"
#include "../pt2pt/pt2pt.h"
#include "remote.h"
#include "rma.h"

struct strand_win *win_checked(MPI_Win win, const char *where, int *rc)
{
    *rc = error_check_initialized(where);
    if (*rc != MPI_SUCCESS)
        return NULL;
    struct strand_win *w = win_lookup(win);
    if (w == NULL)
        *rc = error_report(MPI_COMM_WORLD, MPI_ERR_WIN, where, "invalid window");
    return w;
}

void win_wake_members(struct win_core *core)
{
    /* One fence for all members: pairs with each sleeper's increment of
     * `sleepers` before its last check (as in rank_wake). */
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < core->size; i++) {
        struct rank *r = core->members[i].rank;
        if (r != strand_self && atomic_load_explicit(&r->waiter.sleepers, memory_order_relaxed) != 0)
            rank_wake_slow(r);
    }
}

struct counter_wait {
    atomic_uint *word;
    unsigned want;
};

static bool counter_reached(void *arg)
{
    const struct counter_wait *c = arg;
    return (int)(atomic_load_explicit(c->word, memory_order_acquire) - c->want) >= 0;
}

void win_wait_counter(atomic_uint *word, unsigned want)
{
    struct counter_wait c = { word, want };
    if (!counter_reached(&c))
        rank_wait_until(strand_self, counter_reached, &c);
}

static int index_compare(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct win_index_entry *)a)->rank;
    uintptr_t y = (uintptr_t)((const struct win_index_entry *)b)->rank;
    return x < y ? -1 : x > y;
}

int win_rank_of(const struct win_core *core, const struct rank *r)
{
    struct win_index_entry key = { (struct rank *)r, 0 };
    const struct win_index_entry *e = bsearch(&key, core->index, (size_t)core->size, sizeof key, index_compare);
    return e != NULL ? e->index : MPI_UNDEFINED;
}

/* --- the shared core */

static void core_free(struct win_core *core)
{
    for (int i = 0; i < core->size; i++) {
        free(atomic_load_explicit(&core->members[i].pscw, memory_order_relaxed));
        free(atomic_load_explicit(&core->members[i].lock.waiters, memory_order_relaxed));
        free(atomic_load_explicit(&core->members[i].remote_locks, memory_order_relaxed));
    }
    fence_spanning_free(core);
    free(core->index);
    free(core->ranks);
    free(core->members);
    free(core);
}

/* What every member tells the others at creation (no pointer is used
 * outside its own node process). */
struct member_record {
    uint64_t id;                    /* member 0: the window id */
    uint64_t base;
    int64_t size;
    int32_t disp_unit;
    int32_t error;                  /* its argument check */
};

static struct win_core *core_create(struct rank **ranks, int n, const struct member_record *all)
{
    struct win_core *core = aligned_alloc(64, (sizeof *core + 63) / 64 * 64);
    if (core == NULL)
        return NULL;
    memset(core, 0, sizeof *core);
    core->id = all[0].id;
    core->size = n;
    core->members = aligned_alloc(64, (size_t)n * sizeof *core->members);
    core->ranks = malloc((size_t)n * sizeof *core->ranks);
    core->index = malloc((size_t)n * sizeof *core->index);
    if (core->members == NULL || core->ranks == NULL || core->index == NULL) {
        free(core->index);
        free(core->ranks);
        free(core->members);
        free(core);
        return NULL;
    }
    memset(core->members, 0, (size_t)n * sizeof *core->members);
    int local = 0;
    for (int i = 0; i < n; i++) {
        struct win_member *m = &core->members[i];
        bool remote = ranks[i]->remote != NULL;
        core->ranks[i] = ranks[i];
        m->rank = ranks[i];
        m->ops = remote ? &rma_remote_ops : &rma_local_ops;
        m->base = remote ? NULL : (char *)(uintptr_t)all[i].base;
        m->size = (MPI_Aint)all[i].size;
        m->disp_unit = all[i].disp_unit;
        core->index[i] = (struct win_index_entry){ ranks[i], i };
        local += !remote;
    }
    core->spans = local < n;
    /* Polled words pay only while every rank has a core: oversubscribed,
     * each arrival would wake sleepers that cannot proceed yet. */
    core->fence_flags = !core->spans && n <= FENCE_FLAGS_MAX && strand_node.config.nranks <= strand_node.ncores;
    qsort(core->index, (size_t)n, sizeof *core->index, index_compare);
    atomic_store(&core->refs, local);
    if (core->spans && fence_spanning_setup(core) != MPI_SUCCESS) {
        core_free(core);
        return NULL;
    }
    return core;
}

/* --- the registry: this node process's cores by window id */

static struct {
    pthread_mutex_t lock;
    struct win_core **cores;
    int n, cap;
} registry = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int registry_index(uint64_t id)
{
    for (int i = 0; i < registry.n; i++)
        if (registry.cores[i]->id == id)
            return i;
    return -1;
}

struct win_core *win_registry_find(uint64_t id)
{
    pthread_mutex_lock(&registry.lock);
    int i = registry_index(id);
    struct win_core *core = i >= 0 ? registry.cores[i] : NULL;
    pthread_mutex_unlock(&registry.lock);
    return core;
}

/* The core of the window `all` describes; the first local member builds it. */
static struct win_core *registry_join(struct rank **ranks, int n, const struct member_record *all)
{
    pthread_mutex_lock(&registry.lock);
    int i = registry_index(all[0].id);
    struct win_core *core = i >= 0 ? registry.cores[i] : NULL;
    if (core == NULL && registry.n == registry.cap) {
        int cap = registry.cap == 0 ? 8 : 2 * registry.cap;
        struct win_core **cores = realloc(registry.cores, (size_t)cap * sizeof *cores);
        if (cores != NULL)
            registry.cores = cores, registry.cap = cap;
    }
    if (core == NULL && registry.n < registry.cap && (core = core_create(ranks, n, all)) != NULL)
        registry.cores[registry.n++] = core;
    pthread_mutex_unlock(&registry.lock);
    return core;
}

static void core_release(struct win_core *core)
{
    if (atomic_fetch_sub_explicit(&core->refs, 1, memory_order_acq_rel) != 1)
        return;
    pthread_mutex_lock(&registry.lock);
    int i = registry_index(core->id);
    registry.cores[i] = registry.cores[--registry.n];
    pthread_mutex_unlock(&registry.lock);
    core_free(core);
}

/* --- meetings of all members over library-internal messages on the
 * communicator's collective context (collectives use tag 0 there). */

/* Every member's `bytes` of `mine`, in rank order, into `all` (gathered
 * by member 0, which then sends the whole to everyone): also a barrier. */
void win_exchange(struct strand_comm *c, int tag, const void *mine, int bytes, void *all)
{
    int n = c->core->size;
    uint32_t context = c->core->context_id + 1;
    struct strand_request req;
    if (c->rank != 0) {
        pt2pt_isend_internal(&req, c, context, mine, bytes, MPI_BYTE, 0, tag);
        pt2pt_wait_internal(&req);
        pt2pt_irecv_internal(&req, c, context, all, n * bytes, MPI_BYTE, 0, tag);
        pt2pt_wait_internal(&req);
        return;
    }
    if (bytes > 0)
        memcpy(all, mine, (size_t)bytes);
    for (int i = 1; i < n; i++) {
        pt2pt_irecv_internal(&req, c, context, (char *)all + (size_t)i * (size_t)bytes, bytes, MPI_BYTE, i, tag);
        pt2pt_wait_internal(&req);
    }
    for (int i = 1; i < n; i++) {
        pt2pt_isend_internal(&req, c, context, all, n * bytes, MPI_BYTE, i, tag);
        pt2pt_wait_internal(&req);
    }
}

/* --- handles */

static struct strand_win *handle_create(struct win_core *core, int rank)
{
    struct strand_win *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->target_state = calloc((size_t)core->size, 1);
    w->fence_asserts = core->span_asserts;
    if (w->target_state == NULL) {
        free(w);
        return NULL;
    }
    w->magic = WIN_MAGIC;
    w->owner = strand_self;
    w->core = core;
    w->rank = rank;
    w->errhandler = MPI_ERRORS_ARE_FATAL;
    w->fence = FENCE_CLOSED;
    return w;
}

static void handle_destroy(struct strand_win *w)
{
    if (w == NULL)
        return;
    errhandler_release(w->errhandler);
    w->magic = 0;
    free(w->access_group);
    free(w->expose_group);
    free(w->target_state);
    free(w);
}

static int create_check(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Win *win, const char **why)
{
    if (win == NULL) {
        *why = "win must not be NULL";
        return MPI_ERR_ARG;
    }
    if (size < 0) {
        *why = "the window size must not be negative";
        return MPI_ERR_SIZE;
    }
    if (disp_unit <= 0) {
        *why = "disp_unit must be positive";
        return MPI_ERR_ARG;
    }
    if (base == NULL && size > 0) {
        *why = "a window of positive size needs a base address";
        return MPI_ERR_BASE;
    }
    if (info != MPI_INFO_NULL && info_lookup(info) == NULL) {
        *why = "invalid info object";
        return MPI_ERR_INFO;
    }
    return MPI_SUCCESS;
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    const char *where = "MPI_Win_create";
    int rc;
    struct strand_comm *c = comm_checked(comm, where, &rc);
    if (c == NULL)
        return rc;
    if (c->core->is_inter)
        return error_report(comm, MPI_ERR_COMM, where, "windows need an intracommunicator");
    const char *why = NULL;
    int local_error = create_check(base, size, disp_unit, info, win, &why);
    /* A member with bad arguments still takes part, so that nobody hangs: all fail. */
    int n = c->core->size;
    struct member_record mine = { .id = c->rank == 0 ? rma_window_id_new() : 0, .base = (uintptr_t)base,
                                  .size = size, .disp_unit = disp_unit, .error = local_error };
    struct member_record *all = malloc((size_t)n * sizeof *all);
    if (all == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in MPI_Win_create\n");
    win_exchange(c, WIN_TAG_CREATE, &mine, (int)sizeof mine, all);
    int error = MPI_SUCCESS;
    for (int i = 0; i < n && error == MPI_SUCCESS; i++)
        error = all[i].error;
    if (local_error != MPI_SUCCESS) {
        free(all);
        return error_report(comm, local_error, where, "%s", why);
    }
    if (error != MPI_SUCCESS) {
        free(all);
        return error_report(comm, error, where, "another member of the communicator passed invalid arguments");
    }
    struct win_core *core = registry_join(c->core->members, n, all);
    free(all);
    struct strand_win *w = core != NULL ? handle_create(core, c->rank) : NULL;
    if (w == NULL) {
        /* The others go on: this member cannot take part (out of memory). */
        if (core != NULL)
            core_release(core);
        return error_report(comm, MPI_ERR_NO_MEM, where, "cannot allocate the window");
    }
    if (core->spans) {
        comm_retain(c);
        w->comm = c;
        win_exchange(c, WIN_TAG_BARRIER, NULL, 0, NULL);
    }
    *win = w;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_create);

int PMPI_Win_free(MPI_Win *win)
{
    const char *where = "MPI_Win_free";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (win == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "win must not be NULL");
    struct strand_win *w = win_checked(*win, where, &rc);
    if (w == NULL)
        return rc;
    if (w->locks_held > 0 || w->access_active || w->expose_active)
        return win_error(w, MPI_ERR_RMA_SYNC, where, "an epoch is still open (%s)",
                         w->locks_held > 0 ? "a lock is held" : w->access_active ? "MPI_Win_start without MPI_Win_complete"
                                                                                  : "MPI_Win_post without MPI_Win_wait");
    struct attr_host host = { ATTR_WIN, w, &w->attrs };
    rc = attr_delete_all(&host);
    if (rc != MPI_SUCCESS)
        return win_error(w, rc, where, "an attribute delete callback failed with code %d", rc);
    /* Everyone's operations on every member's memory are done once all
     * members are here (this also completes a fence epoch left open);
     * across node processes, once every member's frames are answered. */
    struct win_core *core = w->core;
    if (core->spans) {
        fence_spanning(w, 0);
        comm_release(w->comm);
    } else {
        fence_pass(w, true);
    }
    handle_destroy(w);
    core_release(core);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_free);

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    const char *where = "MPI_Win_get_group";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if (group == NULL)
        return win_error(w, MPI_ERR_ARG, where, "group must not be NULL");
    struct strand_group *g = group_from_members(w->core->ranks, w->core->size);
    if (g == NULL)
        return win_error(w, MPI_ERR_NO_MEM, where, "cannot allocate the group");
    *group = g;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_get_group);

/* --- names */

int PMPI_Win_set_name(MPI_Win win, char *win_name)
{
    const char *where = "MPI_Win_set_name";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if (win_name == NULL)
        return win_error(w, MPI_ERR_ARG, where, "win_name must not be NULL");
    snprintf(w->name, sizeof w->name, "%s", win_name);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_set_name);

int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    const char *where = "MPI_Win_get_name";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if (win_name == NULL || resultlen == NULL)
        return win_error(w, MPI_ERR_ARG, where, "win_name and resultlen must not be NULL");
    size_t n = strnlen(w->name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(win_name, w->name, n);
    win_name[n] = '\0';
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_get_name);

/* --- attributes: user keyvals through the shared engine; the three
 * predefined ones describe the calling rank's own memory. */

static bool predefined_attr(struct strand_win *w, int keyval, void *value)
{
    const struct win_member *me = &w->core->members[w->rank];
    switch (keyval) {
    case MPI_WIN_BASE:
        *(void **)value = me->base;
        return true;
    case MPI_WIN_SIZE:
        w->attr_size = me->size;
        *(MPI_Aint **)value = &w->attr_size;
        return true;
    case MPI_WIN_DISP_UNIT:
        w->attr_disp_unit = me->disp_unit;
        *(int **)value = &w->attr_disp_unit;
        return true;
    default:
        return false;
    }
}

static int win_attr_call(const char *where, enum attr_op op, MPI_Win win, int keyval, void *value, int *flag)
{
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if (op == ATTR_OP_GET && (value == NULL || flag == NULL))
        return win_error(w, MPI_ERR_ARG, where, "attribute_val and flag must not be NULL");
    if (op == ATTR_OP_GET && predefined_attr(w, keyval, value)) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    struct attr_host host = { ATTR_WIN, w, &w->attrs };
    rc = attr_apply(&host, op, keyval, value, flag);
    if (rc == MPI_ERR_KEYVAL)
        return win_error(w, rc, where, "invalid window keyval %d", keyval);
    if (rc != MPI_SUCCESS)
        return win_error(w, rc, where, "an attribute callback failed with code %d", rc);
    return MPI_SUCCESS;
}

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    return win_attr_call("MPI_Win_set_attr", ATTR_OP_SET, win, win_keyval, attribute_val, NULL);
}
STRAND_MPI_ALIAS(MPI_Win_set_attr);

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    return win_attr_call("MPI_Win_get_attr", ATTR_OP_GET, win, win_keyval, attribute_val, flag);
}
STRAND_MPI_ALIAS(MPI_Win_get_attr);

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    return win_attr_call("MPI_Win_delete_attr", ATTR_OP_DELETE, win, win_keyval, NULL, NULL);
}
STRAND_MPI_ALIAS(MPI_Win_delete_attr);

/* --- error handlers */

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    const char *where = "MPI_Win_set_errhandler";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if (!errhandler_valid_for(errhandler, ERRHANDLER_WIN))
        return win_error(w, MPI_ERR_ARG, where, "not an error handler for windows");
    errhandler_retain(errhandler);
    errhandler_release(w->errhandler);
    w->errhandler = errhandler;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_set_errhandler);

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    const char *where = "MPI_Win_get_errhandler";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    if (errhandler == NULL)
        return win_error(w, MPI_ERR_ARG, where, "errhandler must not be NULL");
    errhandler_retain(w->errhandler);
    *errhandler = w->errhandler;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Win_get_errhandler);

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    const char *where = "MPI_Win_call_errhandler";
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    rc = win_error(w, errorcode, where, "error raised by the program");
    /* A user handler that returns has handled it (as MPI_Comm_call_errhandler). */
    return w->errhandler->kind == ERRHANDLER_WIN ? MPI_SUCCESS : rc;
}
STRAND_MPI_ALIAS(MPI_Win_call_errhandler);
