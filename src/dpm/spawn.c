/* MPI_Comm_spawn, MPI_Comm_spawn_multiple, MPI_Comm_get_parent.
 *
 * The root resolves each command like execvp (relative to the `wdir` and
 * `path` info keys) and reads it as a Strand program (privatize/), which
 * checks it before anything is created, then places the children on node
 * processes of its job (the `host` key, Strand's `nodes` and `ppn` keys,
 * by default all of them: see spawn_place).
 *
 * All onto this node process: the root makes a new world
 * (src/core/world.c) of all the children, the intercommunicator between
 * the parents' group and that world, each child's parent handle, and
 * starts one rank thread per child, which loads its own copy of its
 * command and runs its main. Some onto others: the spawn service
 * (service.c) does the same in every node process that hosts children.
 * The other parents take their side of the intercommunicator (or the
 * error) from the root (outcome.c). Nothing is created when a command
 * fails, unless the `soft` info key allows it to start no process. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../privatize/privatize.h"
#include "../comm/info.h"
#include "../net/layout.h"
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
    struct node_program *program;   /* opened for nprocs ranks; NULL when none start */
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

/* Whether `host` names this machine. */
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

int dpm_command_open(const char *command, const char *wdir, const char *path_key, char *const *args, int nprocs,
                     struct node_program **program, char *why, size_t len)
{
    char path[PATH_MAX], reason[1024];
    struct stat st;
    *program = NULL;
    if (wdir != NULL && (stat(wdir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        snprintf(why, len, "wdir %.300s is not a directory", wdir);
        return -1;
    }
    int rc = resolve_command(command, wdir, path_key, path, sizeof path);
    if (rc != 0) {
        snprintf(why, len, "%.900s: %s", path,
                 rc == ENOENT ? "no such file (searched the path info key, PATH and the working directory)"
                 : rc == EACCES ? "not an executable file (permission denied)" : strerror(rc));
        return -1;
    }
    if (nprocs == 0)
        return 0;
    /* argv[0] is the command as given, as execvp passes it */
    *program = privatize_program_open(path, command, args, nprocs, wdir, reason, sizeof reason);
    if (*program != NULL)
        return 0;
    snprintf(why, len, "%s", reason);
    return -1;
}

/* Command i's process count (maxprocs, or the soft choice). With `soft`,
 * whether it can start decides the count, so it is opened here for all
 * its processes (0 when it cannot start and soft allows 0); otherwise it
 * is opened once it is placed (command_open_share). On failure writes why
 * into o->message and returns MPI_ERR_SPAWN (or MPI_ERR_INFO for a bad
 * soft value). */
static int command_count(const struct spawn_request *rq, int i, struct spawn_command *cmd, struct dpm_outcome *o)
{
    const char *command = rq->commands[i];
    MPI_Info info = rq->infos[i];
    cmd->nprocs = rq->maxprocs[i];
    cmd->program = NULL;
    const char *soft = info_value(info, "soft");
    if (soft == NULL)
        return MPI_SUCCESS;
    int soft_nprocs = soft_best(soft, rq->maxprocs[i]);
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
    char why[1024];
    char *const *args = rq->argvs != NULL ? rq->argvs[i] : NULL;
    if (dpm_command_open(command, info_value(info, "wdir"), info_value(info, "path"), args, cmd->nprocs,
                         &cmd->program, why, sizeof why) == 0)
        return MPI_SUCCESS;
    /* A soft spawn that allows 0 processes of this command goes on. */
    if (soft_best(soft, 0) == 0) {
        cmd->nprocs = 0;
        return MPI_SUCCESS;
    }
    snprintf(o->message, sizeof o->message, "cannot spawn %.100s: %.380s", command, why);
    return MPI_ERR_SPAWN;
}

/* Command i placed, `here` of its processes in this node process: its
 * program for them (the node processes of the others check and open it
 * for theirs). */
static int command_open_share(const struct spawn_request *rq, int i, struct spawn_command *cmd, int here,
                              struct dpm_outcome *o)
{
    if (cmd->program != NULL) {     /* soft: opened for all already */
        if (cmd->nprocs > here)
            privatize_program_release(cmd->program, cmd->nprocs - here);
        if (here == 0)
            cmd->program = NULL;
        return MPI_SUCCESS;
    }
    if (here == 0)
        return MPI_SUCCESS;
    char why[1024];
    char *const *args = rq->argvs != NULL ? rq->argvs[i] : NULL;
    if (dpm_command_open(rq->commands[i], info_value(rq->infos[i], "wdir"), info_value(rq->infos[i], "path"), args,
                         here, &cmd->program, why, sizeof why) == 0)
        return MPI_SUCCESS;
    snprintf(o->message, sizeof o->message, "cannot spawn %.100s: %.380s", rq->commands[i], why);
    return o->error = MPI_ERR_SPAWN;
}

/* The programs' shares of a spawn that does not happen: `here` of each
 * command's processes, or all (here NULL). */
static void commands_release(struct spawn_command *cmds, int count, const int *here)
{
    for (int i = 0; i < count; i++)
        if (cmds[i].program != NULL)
            privatize_program_release(cmds[i].program, here != NULL ? here[i] : cmds[i].nprocs);
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
        commands_release(cmds, rq->count, NULL);
        if (w != NULL)
            world_release(w);
    }
    free(appnums);
    free(args);
    return rc;
}

/* ---- placement over the node processes of the job
 *
 * A command's children go, in blocks of consecutive ranks, to:
 *  - `nodes` (Strand): the listed node indices of this job ("0,2", "1-3");
 *  - else `host`: the job's node processes on that host; when the root's
 *    is one of them, the root's alone;
 *  - else the node processes of the parents (the spawning communicator's
 *    members of this job), the root's first, then the following ones:
 *    parents of one node process spawn there; and a node process whose
 *    parent takes part in the spawn cannot end meanwhile.
 * Over those, `ppn` (Strand) children each in order, else balanced blocks
 * (as mpiexec places launched ranks). */

static int job_nodes(void) { return net_active() ? net_job()->nnodes : 1; }
static int self_node(void) { return net_active() ? net_job()->node : 0; }

static const char *node_host(int node)
{
    const char *host;
    int port;
    if (node == self_node())
        return net_active() ? net_job()->hosts[node] : net_self_host();
    net_peer_contact(&net_job()->peers[node], &host, &port);
    return host;
}

/* "a,b,c-d": node indices into nodes[] (at most job_nodes() of them,
 * repeats dropped); their count, or -1 when malformed or out of range. */
static int nodes_parse(const char *text, int *nodes)
{
    int n = 0, k = job_nodes();
    const char *p = text;
    while (*p != '\0') {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p)
            return -1;
        if (*end == '-') {
            p = end + 1;
            hi = strtol(p, &end, 10);
            if (end == p)
                return -1;
        }
        if (lo < 0 || hi < lo || hi >= k)
            return -1;
        for (long j = lo; j <= hi; j++) {
            bool seen = false;
            for (int i = 0; i < n; i++)
                seen |= nodes[i] == (int)j;
            if (!seen)
                nodes[n++] = (int)j;
        }
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    return n;
}

/* Whether node process j of this job hosts a member of `parent`. */
static bool hosts_a_parent(const struct strand_comm *parent, int j)
{
    const struct comm_core *c = parent->core;
    for (int i = 0; i < c->local_size; i++) {
        const struct net_peer *p = c->local_members[i]->remote;
        if (p == NULL ? j == self_node() : !p->foreign && p->job_node == j)
            return true;
    }
    return false;
}

/* The node processes command `command`'s children may go to; their
 * count, or -1 with the error in o. */
static int place_candidates(MPI_Info info, const char *command, const struct strand_comm *parent, int *nodes,
                            struct dpm_outcome *o)
{
    const char *list = info_value(info, "nodes"), *host = info_value(info, "host");
    int k = job_nodes(), me = self_node(), n = 0;
    if (list != NULL) {
        n = nodes_parse(list, nodes);
        if (n > 0)
            return n;
        o->error = MPI_ERR_INFO;
        snprintf(o->message, sizeof o->message,
                 "invalid nodes info value \"%.100s\" for %.100s (node indices from 0 to %d, e.g. \"0,2-3\")", list,
                 command, k - 1);
        return -1;
    }
    if (host != NULL) {
        bool here = host_is_here(host);
        for (int j = 0; j < k; j++) {
            const char *h = node_host(j);
            if (here ? host_is_here(h) : strcmp(h, host) == 0) {
                if (j == me)
                    return nodes[0] = me, 1;
                nodes[n++] = j;
            }
        }
        if (n > 0)
            return n;
        o->error = MPI_ERR_SPAWN;
        snprintf(o->message, sizeof o->message,
                 "cannot start %.100s on host %.100s: no node process of this job runs there (mpiexec -hosts "
                 "names the hosts of a job)", command, host);
        return -1;
    }
    for (int j = 0; j < k; j++)
        if (j == 0 || hosts_a_parent(parent, (me + j) % k))
            nodes[n++] = (me + j) % k;
    return n;
}

/* Appends the blocks of command i's `nprocs` children, from world rank
 * *next on; MPI_SUCCESS or the error in o. */
static int place_command(MPI_Info info, const char *command, const struct strand_comm *parent, int i, int nprocs,
                         struct spawn_plan *plan, int *next, struct dpm_outcome *o)
{
    int *nodes = malloc((size_t)job_nodes() * sizeof *nodes);
    if (nodes == NULL)
        return o->error = MPI_ERR_NO_MEM;
    int n = place_candidates(info, command, parent, nodes, o);
    const char *ppn_text = info_value(info, "ppn");
    long ppn = 0;
    if (n > 0 && ppn_text != NULL) {
        char *end;
        ppn = strtol(ppn_text, &end, 10);
        if (end == ppn_text || *end != '\0' || ppn < 1) {
            o->error = MPI_ERR_INFO;
            snprintf(o->message, sizeof o->message, "invalid ppn info value \"%.100s\" for %.100s", ppn_text, command);
        } else if (ppn * n < nprocs) {
            o->error = MPI_ERR_SPAWN;
            snprintf(o->message, sizeof o->message,
                     "cannot start %d processes of %.100s: ppn %ld on %d node processes holds only %ld", nprocs,
                     command, ppn, n, ppn * n);
        }
    }
    for (int b = 0; b < n && o->error == MPI_SUCCESS; b++) {
        int first = ppn > 0 ? (int)(ppn * b < nprocs ? ppn * b : nprocs) : net_node_first_rank(nprocs, n, 0, b);
        int end = ppn > 0 ? (int)(ppn * (b + 1) < nprocs ? ppn * (b + 1) : nprocs) : net_node_first_rank(nprocs, n, 0, b + 1);
        if (end > first)
            plan->blocks[plan->nblocks++] = (struct spawn_block){ nodes[b], *next + first, end - first, i };
    }
    *next += nprocs;
    free(nodes);
    return o->error;
}

/* Children of command i in this node process. */
static int local_share(const struct spawn_plan *plan, int i)
{
    int n = 0;
    for (int b = 0; b < plan->nblocks; b++)
        if (plan->blocks[b].command == i && plan->blocks[b].node == self_node())
            n += plan->blocks[b].count;
    return n;
}

/* The plan of the children's world: where each command's children run. */
static int plan_make(const struct spawn_request *rq, struct spawn_command *cmds, int total,
                     const struct strand_comm *parent, struct spawn_plan *plan, struct dpm_outcome *o)
{
    *plan = (struct spawn_plan){ .gid = net_new_world_id(), .size = total, .ncommands = rq->count,
                                 .commands = (const char **)rq->commands };
    plan->blocks = calloc((size_t)rq->count * (size_t)job_nodes(), sizeof *plan->blocks);
    plan->wdirs = calloc((size_t)rq->count, sizeof *plan->wdirs);
    plan->paths = calloc((size_t)rq->count, sizeof *plan->paths);
    plan->argvs = calloc((size_t)rq->count, sizeof *plan->argvs);
    plan->programs = calloc((size_t)rq->count, sizeof *plan->programs);
    if (plan->blocks == NULL || plan->wdirs == NULL || plan->paths == NULL || plan->argvs == NULL ||
        plan->programs == NULL)
        return o->error = MPI_ERR_NO_MEM;
    int next = 0;
    for (int i = 0; i < rq->count && o->error == MPI_SUCCESS; i++) {
        plan->wdirs[i] = info_value(rq->infos[i], "wdir");
        plan->paths[i] = info_value(rq->infos[i], "path");
        plan->argvs[i] = rq->argvs != NULL ? rq->argvs[i] : NULL;
        place_command(rq->infos[i], rq->commands[i], parent, i, cmds[i].nprocs, plan, &next, o);
    }
    return o->error;
}

static void plan_free(struct spawn_plan *plan)
{
    free(plan->blocks);
    free(plan->wdirs);
    free(plan->paths);
    free((void *)plan->argvs);
    free(plan->programs);
}

/* Children in other node processes: the spawn service (service.c). */
static void spawn_elsewhere(struct spawn_plan *plan, struct spawn_command *cmds, const struct strand_comm *parent,
                            const struct dpm_root_context *ctx, struct dpm_outcome *o)
{
    for (int i = 0; i < plan->ncommands; i++) {
        plan->programs[i] = cmds[i].program;
        cmds[i].program = NULL;
    }
    dpm_spawn_remote(plan, parent, ctx, o);
}

/* The programs of each command for its processes in this node process;
 * the shares of the others are released. */
static int commands_open_here(const struct spawn_request *rq, struct spawn_command *cmds, const struct spawn_plan *plan,
                              struct dpm_outcome *o)
{
    int *here = calloc(rq->count > 0 ? (size_t)rq->count : 1, sizeof *here);
    if (here == NULL)
        return o->error = MPI_ERR_NO_MEM;
    for (int i = 0; i < rq->count; i++)
        here[i] = local_share(plan, i);
    /* the soft ones first: then every program holds exactly here[i] shares */
    for (int i = 0; i < rq->count; i++)
        if (cmds[i].program != NULL)
            command_open_share(rq, i, &cmds[i], here[i], o);
    for (int i = 0; i < rq->count && o->error == MPI_SUCCESS; i++)
        if (cmds[i].program == NULL)
            command_open_share(rq, i, &cmds[i], here[i], o);
    if (o->error != MPI_SUCCESS)
        commands_release(cmds, rq->count, here);
    free(here);
    return o->error;
}

/* The root's part: fills in the outcome. */
static void spawn_at_root(const struct spawn_request *rq, const struct strand_comm *parent,
                          const struct dpm_root_context *ctx, struct dpm_outcome *o)
{
    struct spawn_command *cmds = calloc((size_t)rq->count, sizeof *cmds);
    struct spawn_plan plan = { 0 };
    if (cmds == NULL) {
        o->error = MPI_ERR_NO_MEM;
        return;
    }
    int total = 0, next = 0;
    for (int i = 0; i < rq->count && o->error == MPI_SUCCESS; i++) {
        o->error = command_count(rq, i, &cmds[i], o);
        total += cmds[i].nprocs;
    }
    if (o->error == MPI_SUCCESS)
        plan_make(rq, cmds, total, parent, &plan, o);
    if (o->error == MPI_SUCCESS)
        commands_open_here(rq, cmds, &plan, o);     /* releases what it cannot use */
    else
        commands_release(cmds, rq->count, NULL);    /* the soft commands opened so far */
    /* errcodes: one per requested process, in command order */
    for (int i = 0; i < rq->count; i++)
        for (int k = 0; k < rq->maxprocs[i]; k++, next++)
            o->errcodes[next] = o->error == MPI_SUCCESS && k < cmds[i].nprocs ? MPI_SUCCESS : MPI_ERR_SPAWN;
    bool all_here = true;
    for (int b = 0; b < plan.nblocks; b++)
        all_here &= plan.blocks[b].node == self_node();
    if (o->error == MPI_SUCCESS && total > 0 && all_here)
        o->error = spawn_world(rq, cmds, total, parent, ctx, o);
    else if (o->error == MPI_SUCCESS && total > 0)
        spawn_elsewhere(&plan, cmds, parent, ctx, o);
    if (o->error != MPI_SUCCESS)
        for (int k = 0; k < o->nerrcodes; k++)
            o->errcodes[k] = MPI_ERR_SPAWN;
    plan_free(&plan);
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
