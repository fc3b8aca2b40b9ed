/* MPI_Comm_spawn, MPI_Comm_spawn_multiple, MPI_Comm_get_parent.
 *
 * Spawning onto this node process: the root resolves each command like
 * execvp (relative to the `wdir` and `path` info keys), reads it as a
 * Strand program (privatize/), makes a new world (src/core/world.c) of all
 * the children, the intercommunicator between the parents' group and that
 * world, each child's parent handle, and starts one rank thread per child,
 * which loads its own copy of its command and runs its main. The other
 * parents take their side of the intercommunicator (or the error) from the
 * root (outcome.c). Nothing is created when a command fails, unless the
 * `soft` info key allows it to start no process. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../privatize/privatize.h"
#include "../comm/info.h"
#include "../net/net.h"
#include "dpm.h"

/* What the root was asked for (arguments significant at the root only). */
struct spawn_request {
    int count;
    char **commands;
    char ***argvs;                  /* NULL: no arguments for any command */
    const int *maxprocs;
    const MPI_Info *infos;
};

/* One command as the root understood it. */
struct spawn_command {
    int nprocs;                     /* to start: maxprocs, or the soft choice */
    struct node_program *program;   /* NULL when the command cannot start */
};

/* ---- info keys */

/* The `soft` value: a comma-separated list of a, a:b, a:b:c (stride c).
 * Returns the largest allowed count <= maxprocs, or -1 (none allowed), or
 * -2 when the value is malformed. */
static int soft_best(const char *text, int maxprocs)
{
    int best = -1;
    const char *p = text;
    while (*p != '\0') {
        long v[3] = { 0, 0, 1 };
        int n = 0;
        for (;;) {
            char *end;
            errno = 0;
            long x = strtol(p, &end, 10);
            if (end == p || errno != 0 || x < 0 || x > INT_MAX || n == 3)
                return -2;
            v[n++] = x;
            p = end;
            while (*p == ' ')
                p++;
            if (*p != ':')
                break;
            p++;
        }
        long lo = v[0], hi = n >= 2 ? v[1] : v[0], stride = n == 3 ? v[2] : 1;
        if (stride <= 0 || hi < lo)
            return -2;
        for (long x = lo; x <= hi && x <= maxprocs; x += stride)
            if (x > best)
                best = (int)x;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return -2;
        while (*p == ' ')
            p++;
    }
    return best;
}

/* The `host` key may only name this machine until spawn reaches other
 * node processes (the network layer). */
static bool host_is_here(const char *host)
{
    char name[256];
    if (strcmp(host, "localhost") == 0 || strcmp(host, "127.0.0.1") == 0)
        return true;
    if (gethostname(name, sizeof name) != 0)
        return false;
    name[sizeof name - 1] = '\0';
    size_t n = strlen(host);
    return strcmp(host, name) == 0 || (strncmp(name, host, n) == 0 && name[n] == '.');
}

/* ---- finding the program */

/* Returns false when the result does not fit. */
static bool join_path(char *out, size_t len, const char *dir, const char *name)
{
    int n = dir == NULL || *dir == '\0' || name[0] == '/' ? snprintf(out, len, "%s", name)
                                                        : snprintf(out, len, "%s/%s", dir, name);
    return n >= 0 && (size_t)n < len;
}

/* 0 if `path` is an executable regular file, else an errno value. */
static int executable_file(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    if (!S_ISREG(st.st_mode))
        return EACCES;
    return access(path, X_OK) == 0 ? 0 : errno;
}

/* Tries each directory of a colon-separated list (relative ones under
 * wdir). Returns 0 when found, else the most telling errno seen. */
static int search_dirs(const char *dirs, const char *wdir, const char *name, char *out, size_t len)
{
    int seen = ENOENT;
    while (dirs != NULL && *dirs != '\0') {
        const char *colon = strchr(dirs, ':');
        size_t n = colon != NULL ? (size_t)(colon - dirs) : strlen(dirs);
        char dir[PATH_MAX], in_wdir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)n, n > 0 ? dirs : ".");
        join_path(in_wdir, sizeof in_wdir, wdir, dir);
        join_path(out, len, in_wdir, name);
        int rc = executable_file(out);
        if (rc == 0)
            return 0;
        if (rc != ENOENT)
            seen = rc;
        dirs = colon != NULL ? colon + 1 : NULL;
    }
    return seen;
}

/* Like execvp: a name with a slash is a path (relative to wdir), other
 * names are looked up in the `path` info key, then $PATH, then (as Open
 * MPI and MPICH do for spawned commands) the working directory. */
static int resolve_command(const char *command, const char *wdir, const char *path_key, char *out, size_t len)
{
    if (strchr(command, '/') != NULL) {
        join_path(out, len, wdir, command);
        return executable_file(out);
    }
    int rc = search_dirs(path_key, wdir, command, out, len);
    if (rc == 0)
        return 0;
    int rc2 = search_dirs(getenv("PATH"), NULL, command, out, len);
    if (rc2 == 0)
        return 0;
    join_path(out, len, wdir, command);
    int rc3 = executable_file(out);
    return rc3 == 0 ? 0 : rc != ENOENT ? rc : rc2 != ENOENT ? rc2 : rc3;
}

/* Reads command i; on failure writes why into o->message and returns
 * MPI_ERR_SPAWN (or MPI_ERR_INFO / MPI_ERR_ARG for bad keys). */
static int command_prepare(const struct spawn_request *rq, int i, struct spawn_command *cmd,
                           struct dpm_outcome *o)
{
    const char *command = rq->commands[i];
    MPI_Info info = rq->infos[i];
    cmd->nprocs = rq->maxprocs[i];
    cmd->program = NULL;
    const char *host = info_value(info, "host");
    if (host != NULL && !host_is_here(host)) {
        snprintf(o->message, sizeof o->message,
                 "cannot start %s on host %s: this job's node process is the only one it can spawn "
                 "onto (spawning on other hosts needs the network layer)", command, host);
        return MPI_ERR_SPAWN;
    }
    const char *soft = info_value(info, "soft");
    int soft_nprocs = soft != NULL ? soft_best(soft, rq->maxprocs[i]) : rq->maxprocs[i];
    if (soft_nprocs == -2) {
        snprintf(o->message, sizeof o->message, "invalid soft info value \"%s\" for %s", soft, command);
        return MPI_ERR_INFO;
    }
    if (soft_nprocs < 0) {
        snprintf(o->message, sizeof o->message,
                 "the soft info value \"%s\" allows no process count up to maxprocs %d for %s", soft,
                 rq->maxprocs[i], command);
        return MPI_ERR_SPAWN;
    }
    cmd->nprocs = soft_nprocs;
    char path[PATH_MAX], why[1024];
    const char *wdir = info_value(info, "wdir");
    struct stat st;
    if (wdir != NULL && (stat(wdir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        snprintf(o->message, sizeof o->message, "cannot spawn %.100s: wdir %.300s is not a directory", command, wdir);
        return MPI_ERR_SPAWN;
    }
    int rc = resolve_command(command, wdir, info_value(info, "path"), path, sizeof path);
    if (rc == 0 && cmd->nprocs > 0) {
        char *const *args = rq->argvs != NULL ? rq->argvs[i] : NULL;
        /* argv[0] is the command as given, as execvp passes it */
        cmd->program = privatize_program_open(path, command, args, cmd->nprocs, wdir, why, sizeof why);
        if (cmd->program != NULL)
            return MPI_SUCCESS;
    } else if (rc == 0) {
        return MPI_SUCCESS;
    } else {
        snprintf(why, sizeof why, "%.900s: %s", path,
                 rc == ENOENT ? "no such file (searched the path info key, PATH and the working directory)"
                 : rc == EACCES ? "not an executable file (permission denied)" : strerror(rc));
    }
    /* A soft spawn that allows 0 processes of this command goes on. */
    if (soft != NULL && soft_best(soft, 0) == 0) {
        cmd->nprocs = 0;
        return MPI_SUCCESS;
    }
    snprintf(o->message, sizeof o->message, "cannot spawn %.100s: %.380s", command, why);
    return MPI_ERR_SPAWN;
}

static void commands_release(struct spawn_command *cmds, int count)
{
    for (int i = 0; i < count; i++)
        if (cmds[i].program != NULL)
            privatize_program_release(cmds[i].program, cmds[i].nprocs);
}

/* The children's world, the intercommunicator, their threads. */
/* The intercommunicator between the parents and the children (all in
 * this node process): built here with a fresh id when the parents are all
 * here too; otherwise with the agreed id, described for the parents'
 * node processes (the children's side built here for the children). */
static struct comm_core *parents_children_core(const struct strand_comm *parent, struct world *w,
                                               const struct dpm_root_context *ctx, struct dpm_outcome *o)
{
    struct comm_core *lc = parent->core;
    if (!ctx->spans)
        return comm_intercomm_pair_create(lc->local_members, lc->local_size, w->ranks, w->size);
    struct bytes_out children = { 0 };
    identity_encode(w->ranks, w->size, &children);
    struct comm_core *core0 = NULL;
    if (!children.failed) {
        dpm_outcome_describe(o, ctx->proposal, 0, children.data, children.len);
        core0 = comm_shared_core_take(ctx->proposal, lc->local_members, lc->local_size, w->ranks, w->size, w->size);
    }
    free(children.data);
    return core0;
}

static int spawn_world(const struct spawn_request *rq, struct spawn_command *cmds, int total,
                       const struct strand_comm *parent, const struct dpm_root_context *ctx, struct dpm_outcome *o)
{
    int *appnums = malloc((size_t)total * sizeof *appnums);
    void **args = malloc((size_t)total * sizeof *args);
    struct world *w = NULL;
    int rc = MPI_ERR_NO_MEM;
    if (appnums == NULL || args == NULL)
        goto done;
    for (int i = 0, j = 0; i < rq->count; i++)
        for (int k = 0; k < cmds[i].nprocs; k++, j++) {
            appnums[j] = i;
            args[j] = cmds[i].program;
        }
    w = world_create(net_new_world_id(), total, appnums, CONTEXT_ID_NONE, NULL, 0);
    if (w == NULL)
        goto done;
    struct comm_core *core0 = parents_children_core(parent, w, ctx, o);
    if (core0 == NULL)
        goto done;
    if (!ctx->spans)
        o->core = core0;
    for (int j = 0; j < total; j++) {
        w->parents[j] = comm_handle_for(core0->peer, j, NULL);
        if (w->parents[j] == NULL)
            strand_job_abort(1, "Strand MPI: out of memory while spawning\n");
        snprintf(w->parents[j]->name, sizeof w->parents[j]->name, "MPI_COMM_PARENT"); /* MPI-2.2 10.3.2 */
    }
    /* The ranks now own the programs' shares; a thread that cannot be
     * created ends the job, as for launched ranks. */
    if (world_start_ranks(w, privatize_spawned_rank_main, args) != 0)
        strand_job_abort(1, "Strand MPI: cannot create the threads of spawned ranks "
                            "(see doc/limits.md: ulimit -u, vm.max_map_count)\n");
    world_release(w);       /* the rank threads and the communicators hold it now */
    w = NULL;
    rc = MPI_SUCCESS;
done:
    if (rc != MPI_SUCCESS) {
        snprintf(o->message, sizeof o->message, "out of memory while spawning %d processes", total);
        commands_release(cmds, rq->count);
        if (w != NULL)
            world_release(w);
    }
    free(appnums);
    free(args);
    return rc;
}

/* The root's part: fills in the outcome. */
static void spawn_at_root(const struct spawn_request *rq, const struct strand_comm *parent,
                          const struct dpm_root_context *ctx, struct dpm_outcome *o)
{
    struct spawn_command *cmds = calloc((size_t)rq->count, sizeof *cmds);
    if (cmds == NULL) {
        o->error = MPI_ERR_NO_MEM;
        return;
    }
    int total = 0, next = 0;
    for (int i = 0; i < rq->count && o->error == MPI_SUCCESS; i++) {
        o->error = command_prepare(rq, i, &cmds[i], o);
        total += cmds[i].nprocs;
    }
    /* errcodes: one per requested process, in command order */
    for (int i = 0; i < rq->count; i++)
        for (int k = 0; k < rq->maxprocs[i]; k++, next++)
            o->errcodes[next] = o->error == MPI_SUCCESS && k < cmds[i].nprocs ? MPI_SUCCESS : MPI_ERR_SPAWN;
    if (o->error != MPI_SUCCESS)
        commands_release(cmds, rq->count);
    else if (total > 0)
        o->error = spawn_world(rq, cmds, total, parent, ctx, o);
    if (o->error != MPI_SUCCESS)
        for (int k = 0; k < o->nerrcodes; k++)
            o->errcodes[k] = MPI_ERR_SPAWN;
    free(cmds);
}

/* Arguments checked at the root; MPI_SUCCESS or the class, with why. */
static int request_check(const struct spawn_request *rq, char *why, size_t len, int *nerrcodes)
{
    *nerrcodes = 0;
    if (rq->count <= 0) {
        snprintf(why, len, "count must be positive, got %d", rq->count);
        return MPI_ERR_ARG;
    }
    if (rq->commands == NULL || rq->maxprocs == NULL) {
        snprintf(why, len, "the commands and maxprocs arrays must not be NULL");
        return MPI_ERR_ARG;
    }
    for (int i = 0; i < rq->count; i++) {
        if (rq->commands[i] == NULL || rq->commands[i][0] == '\0') {
            snprintf(why, len, "command %d is empty", i);
            return MPI_ERR_SPAWN;
        }
        if (rq->maxprocs[i] < 0) {
            snprintf(why, len, "maxprocs must not be negative, got %d for %s", rq->maxprocs[i], rq->commands[i]);
            return MPI_ERR_ARG;
        }
        if (rq->infos[i] != MPI_INFO_NULL && info_lookup(rq->infos[i]) == NULL) {
            snprintf(why, len, "invalid info object for %s", rq->commands[i]);
            return MPI_ERR_INFO;
        }
        if (*nerrcodes > INT_MAX - rq->maxprocs[i]) {
            snprintf(why, len, "too many processes requested");
            return MPI_ERR_ARG;
        }
        *nerrcodes += rq->maxprocs[i];
    }
    return MPI_SUCCESS;
}

/* The root's part of a spawn (dpm_root_fn). */
static struct dpm_outcome *spawn_root(struct strand_comm *c, void *arg, const struct dpm_root_context *ctx)
{
    const struct spawn_request *rq = arg;
    char why[256] = "";
    int nerrcodes;
    int check = request_check(rq, why, sizeof why, &nerrcodes);
    struct dpm_outcome *o = dpm_outcome_alloc(c->core->local_size, nerrcodes);
    if (o == NULL)
        return NULL;
    if (check == MPI_SUCCESS) {
        spawn_at_root(rq, c, ctx, o);
        return o;
    }
    o->error = check;
    snprintf(o->message, sizeof o->message, "%s", why);
    for (int k = 0; k < nerrcodes; k++)
        o->errcodes[k] = MPI_ERR_SPAWN;
    return o;
}

int PMPI_Comm_spawn(char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *intercomm, int array_of_errcodes[])
{
    char **argvs[1] = { argv };
    struct spawn_request rq = { 1, &command, argv == MPI_ARGV_NULL ? NULL : argvs, &maxprocs, &info };
    return dpm_rooted_collective("MPI_Comm_spawn", comm, root, spawn_root, &rq, intercomm, array_of_errcodes);
}
STRAND_MPI_ALIAS(MPI_Comm_spawn);

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             int array_of_maxprocs[], MPI_Info array_of_info[], int root, MPI_Comm comm,
                             MPI_Comm *intercomm, int array_of_errcodes[])
{
    struct spawn_request rq = { count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info };
    MPI_Info *null_infos = NULL;
    if (array_of_info == NULL && count > 0) {
        null_infos = calloc((size_t)count, sizeof *null_infos);
        rq.infos = null_infos;
    }
    int rc = rq.infos != NULL || count <= 0
                 ? dpm_rooted_collective("MPI_Comm_spawn_multiple", comm, root, spawn_root, &rq, intercomm,
                                         array_of_errcodes)
                 : error_report(comm, MPI_ERR_NO_MEM, "MPI_Comm_spawn_multiple", "out of memory");
    free(null_infos);
    return rc;
}
STRAND_MPI_ALIAS(MPI_Comm_spawn_multiple);

int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    int rc = error_check_initialized("MPI_Comm_get_parent");
    if (rc != MPI_SUCCESS)
        return rc;
    if (parent == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_get_parent", "parent must not be NULL");
    struct strand_comm *p = strand_self->world->parents[strand_self->world_rank];
    *parent = p != NULL ? (MPI_Comm)p : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_get_parent);

void dpm_parent_forget(const struct strand_comm *c)
{
    struct strand_comm **mine = &strand_self->world->parents[strand_self->world_rank];
    if (*mine == c)
        *mine = NULL;
}
