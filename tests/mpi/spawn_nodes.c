/* MPI_Comm_spawn onto other node processes of the job (mpiexec --nodes
 * K): where the children run, checked by their process ids (a child runs
 * in the node process of the parents whose pid it reports), and that
 * they work there (their MPI_COMM_WORLD spans node processes; the merged
 * communicator with the parents).
 *  - default placement from MPI_COMM_WORLD: balanced blocks over the
 *    parents' node processes, the root's first (max(size, 4) children:
 *    64 at 64 ranks);
 *  - Strand's `nodes` key from MPI_COMM_SELF: all on the last node process;
 *  - `host` = localhost: on the root's node process;
 *  - `nodes` "0,1" with `ppn` 2: 2 + 1;
 *  - spawn_multiple, its commands on different node processes (APPNUM);
 *  - failures: `nodes` out of range (MPI_ERR_INFO), an unknown `host`
 *    (MPI_ERR_SPAWN), a missing command placed on another node process
 *    (MPI_ERR_SPAWN from that node process, every errcode
 *    MPI_ERR_SPAWN), and a spawn that works afterwards.
 * With one node process only what needs none is run. Child: spawn_child
 * ("place").
 *   spawn_nodes ended   the other node processes' ranks end first; rank 0
 *                       then spawns onto node process 1: MPI_ERR_SPAWN
 *                       (it ended) or, if it has not quite ended yet,
 *                       children that work; never a hang. */
#include "testutil.h"

#include <unistd.h>

struct job {
    int rank, size, nnodes;
    int *pids;                      /* each parent's process id, by world rank */
    int *node_pid;                  /* each node process's pid, nodes numbered by their lowest rank */
    char child[512];
};

/* The parents' side of a "place" child set: rank 0 of `spawner` checks
 * what each child reports, every parent merges with the children and
 * takes part in an allreduce, rank 0 checks the children's sum of it;
 * then disconnect. */
static int run_children(MPI_Comm spawner, MPI_Comm kids, int n, const int *want_pid, const int *want_appnum,
                        const char *what)
{
    int errs = 0, prank, psize, one = 1, all = 0, rsize = -1;
    MPI_Comm_rank(spawner, &prank);
    MPI_Comm_size(spawner, &psize);
    MPI_Comm_remote_size(kids, &rsize);
    CHECK_INT(what, n, rsize);
    for (int k = 0; prank == 0 && k < n && rsize == n; k++) {
        int info[6];
        MPI_Recv(info, 6, MPI_INT, k, 21, kids, MPI_STATUS_IGNORE);
        CHECK(info[0] == k && info[1] == n, "%s: child %d says rank %d of %d", what, k, info[0], info[1]);
        CHECK(info[2] == want_appnum[k], "%s: child %d APPNUM %d, expected %d", what, k, info[2], want_appnum[k]);
        CHECK(info[3] == want_pid[k], "%s: child %d runs in process %d, expected %d", what, k, info[3], want_pid[k]);
        CHECK(info[4] == n * (n + 1) / 2, "%s: child %d: allreduce over the children gave %d", what, k, info[4]);
        CHECK(info[5] == 777, "%s: child %d: bcast over the children gave %d", what, k, info[5]);
    }
    MPI_Comm merged;
    MPI_Intercomm_merge(kids, 0, &merged);
    MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, merged);
    CHECK(all == psize + n, "%s: parents' merged allreduce %d", what, all);
    MPI_Comm_free(&merged);
    for (int k = 0; prank == 0 && k < n && rsize == n; k++) {
        MPI_Recv(&all, 1, MPI_INT, k, 22, kids, MPI_STATUS_IGNORE);
        CHECK(all == psize + n, "%s: child %d: merged allreduce %d, expected %d", what, k, all, psize + n);
    }
    MPI_Comm_disconnect(&kids);
    return errs;
}

static int spawn_placed(const struct job *j, MPI_Comm spawner, MPI_Info info, int n, const int *want_node,
                        const char *what)
{
    int errs = 0, *pid = tu_malloc((size_t)n * sizeof *pid), *appnum = calloc((size_t)n, sizeof *appnum);
    for (int k = 0; k < n; k++)
        pid[k] = j->node_pid[want_node[k]];
    char *args[] = { "place", NULL };
    MPI_Comm kids;
    int *codes = tu_malloc((size_t)n * sizeof *codes);
    CHECK_RC(MPI_Comm_spawn((char *)j->child, args, n, info, 0, spawner, &kids, codes));
    for (int k = 0; k < n; k++)
        CHECK(codes[k] == MPI_SUCCESS, "%s: errcode %d is %d", what, k, codes[k]);
    errs += run_children(spawner, kids, n, pid, appnum, what);
    free(pid);
    free(appnum);
    free(codes);
    return errs;
}

/* Default placement: balanced blocks over the node processes. */
static int test_default(const struct job *j)
{
    int n = j->size > 4 ? j->size : 4;
    int *node = tu_malloc((size_t)n * sizeof *node);
    for (int b = 0; b < j->nnodes; b++)
        for (int k = n * b / j->nnodes; k < n * (b + 1) / j->nnodes; k++)
            node[k] = b;
    int errs = spawn_placed(j, MPI_COMM_WORLD, MPI_INFO_NULL, n, node, "default placement");
    free(node);
    return errs;
}

static int test_keys(const struct job *j)
{
    int errs = 0;
    MPI_Info info;
    char text[32];
    int node[3];
    if (j->rank != 0)
        return 0;
    MPI_Info_create(&info);
    snprintf(text, sizeof text, "%d", j->nnodes - 1);
    MPI_Info_set(info, "nodes", text);
    node[0] = node[1] = node[2] = j->nnodes - 1;
    errs += spawn_placed(j, MPI_COMM_SELF, info, 3, node, "nodes key, from MPI_COMM_SELF");
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", "localhost");
    node[0] = node[1] = 0;
    errs += spawn_placed(j, MPI_COMM_SELF, info, 2, node, "host key: this machine");
    MPI_Info_free(&info);
    if (j->nnodes >= 2) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "nodes", "0,1");
        MPI_Info_set(info, "ppn", "2");
        node[0] = node[1] = 0;
        node[2] = 1;
        errs += spawn_placed(j, MPI_COMM_SELF, info, 3, node, "nodes and ppn keys");
        MPI_Info_free(&info);
    }
    return errs;
}

/* Two commands, each on its own node process: APPNUM by command. */
static int test_multiple(const struct job *j)
{
    int errs = 0;
    if (j->rank != 0 || j->nnodes < 2)
        return 0;
    char *cmds[2] = { (char *)j->child, (char *)j->child }, *args[] = { "place", NULL }, **argvs[2] = { args, args };
    int maxprocs[2] = { 2, 1 }, codes[3];
    MPI_Info infos[2];
    MPI_Info_create(&infos[0]);
    MPI_Info_create(&infos[1]);
    MPI_Info_set(infos[0], "nodes", "1");
    MPI_Info_set(infos[1], "nodes", "0");
    MPI_Comm kids;
    CHECK_RC(MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_SELF, &kids, codes));
    int pid[3] = { j->node_pid[1], j->node_pid[1], j->node_pid[0] }, appnum[3] = { 0, 0, 1 };
    errs += run_children(MPI_COMM_SELF, kids, 3, pid, appnum, "spawn_multiple over node processes");
    MPI_Info_free(&infos[0]);
    MPI_Info_free(&infos[1]);
    return errs;
}

static int expect_failure(const struct job *j, MPI_Info info, const char *command, int cls, const char *what)
{
    int errs = 0, codes[2] = { -1, -1 }, got = MPI_SUCCESS;
    char *args[] = { "place", NULL };
    MPI_Comm kids = MPI_COMM_WORLD;
    int rc = MPI_Comm_spawn((char *)command, args, 2, info, 0, MPI_COMM_SELF, &kids, codes);
    MPI_Error_class(rc, &got);
    CHECK(got == cls, "%s: error class %d, expected %d", what, got, cls);
    CHECK(kids == MPI_COMM_NULL, "%s: the intercommunicator must be MPI_COMM_NULL", what);
    CHECK(codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN, "%s: errcodes %d %d", what, codes[0], codes[1]);
    (void)j;
    return errs;
}

static int test_failures(const struct job *j)
{
    int errs = 0;
    char text[32];
    MPI_Info info;
    if (j->rank != 0)
        return 0;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Info_create(&info);
    snprintf(text, sizeof text, "%d", j->nnodes);
    MPI_Info_set(info, "nodes", text);
    errs += expect_failure(j, info, j->child, MPI_ERR_INFO, "nodes key out of range");
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", "no-such-host.invalid");
    errs += expect_failure(j, info, j->child, MPI_ERR_SPAWN, "host key naming no node process of the job");
    MPI_Info_free(&info);
    if (j->nnodes >= 2) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "nodes", "1");
        errs += expect_failure(j, info, "/nonexistent/strand-no-such-program", MPI_ERR_SPAWN,
                               "a missing command on another node process");
        /* the parents are unharmed: the same placement works */
        int node[2] = { 1, 1 };
        errs += spawn_placed(j, MPI_COMM_SELF, info, 2, node, "spawn after a failed one");
        MPI_Info_free(&info);
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    return errs;
}

static int test_ended(const struct job *j)
{
    int errs = 0;
    if (j->rank != 0 || j->nnodes < 2)
        return 0;
    tu_sleep_ms(1500);      /* the other node processes' ranks ended by now */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "nodes", "1");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char *args[] = { "place", NULL };
    MPI_Comm kids;
    int codes[2], cls = MPI_SUCCESS;
    MPI_Error_class(MPI_Comm_spawn((char *)j->child, args, 2, info, 0, MPI_COMM_SELF, &kids, codes), &cls);
    if (cls == MPI_SUCCESS) {
        int pid[2] = { j->node_pid[1], j->node_pid[1] }, appnum[2] = { 0, 0 };
        errs += run_children(MPI_COMM_SELF, kids, 2, pid, appnum, "spawn onto a node process that is ending");
    } else {
        CHECK(cls == MPI_ERR_SPAWN && codes[0] == MPI_ERR_SPAWN, "spawn onto an ended node process: class %d", cls);
    }
    MPI_Info_free(&info);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct job j = { .rank = tu_rank(), .size = tu_size() };
    const char *slash = strrchr(argv[0], '/');
    snprintf(j.child, sizeof j.child, "%.*s/spawn_child", slash != NULL ? (int)(slash - argv[0]) : 1,
             slash != NULL ? argv[0] : ".");
    int errs = 0, me = (int)getpid();
    j.pids = tu_malloc((size_t)j.size * sizeof *j.pids);
    j.node_pid = tu_malloc((size_t)j.size * sizeof *j.node_pid);
    MPI_Allgather(&me, 1, MPI_INT, j.pids, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < j.size; r++) {
        int known = 0;
        for (int b = 0; b < j.nnodes; b++)
            known |= j.node_pid[b] == j.pids[r];
        if (!known)
            j.node_pid[j.nnodes++] = j.pids[r];
    }
    if (argc > 1 && strcmp(argv[1], "ended") == 0) {
        errs += test_ended(&j);
    } else {
        errs += test_default(&j);
        errs += test_keys(&j);
        errs += test_multiple(&j);
        errs += test_failures(&j);
        /* Rank 0 spawned onto every node process: they stay until it is done. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(j.pids);
    free(j.node_pid);
    return tu_finish(errs);
}
