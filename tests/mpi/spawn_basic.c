/* MPI_Comm_spawn / spawn_multiple (MPI-2.2 10.3): children's worlds,
 * argv passed exactly, APPNUM, UNIVERSE_SIZE, get_parent, errcodes,
 * intercommunicator operations (bcast, allreduce, merge, RMA on the merged
 * communicator), nested spawns, failed spawns (missing, not executable,
 * not a Strand program) that leave the parents able to spawn again, soft
 * spawns. Minimum 1 rank. Children: spawn_child, spawn_other. */
#include "testutil.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void sibling(char *out, size_t len, const char *argv0, const char *name)
{
    const char *slash = strrchr(argv0, '/');
    int dirlen = slash != NULL ? (int)(slash - argv0) : 1;
    snprintf(out, len, "%.*s/%s", dirlen, slash != NULL ? argv0 : ".", name);
}

/* Receives the "report" of n children and checks it. */
static int check_reports(MPI_Comm kids, int n, int world_size, int appnum, int nparents, char **args)
{
    int errs = 0, nargs = 0;
    while (args != NULL && args[nargs] != NULL)
        nargs++;
    for (int k = 0; k < n; k++) {
        int info[7];
        MPI_Recv(info, 7, MPI_INT, k, 1, kids, MPI_STATUS_IGNORE);
        CHECK_INT("child world rank", k, info[0]);
        CHECK_INT("child world size", world_size, info[1]);
        CHECK_INT("child APPNUM", appnum, info[2]);
        CHECK_INT("child argc", nargs + 1, info[3]);
        CHECK_INT("child's remote size", nparents, info[5]);
        CHECK_INT("child has MPI_UNIVERSE_SIZE", 1, info[6]);
        for (int i = 1; i < info[3]; i++) {
            char buf[256];
            MPI_Status st;
            int count;
            MPI_Recv(buf, 256, MPI_CHAR, k, 2, kids, &st);
            MPI_Get_count(&st, MPI_CHAR, &count);
            buf[count] = '\0';
            if (i - 1 < nargs)
                CHECK(strcmp(buf, args[i - 1]) == 0, "child %d argv[%d]: expected \"%s\", got \"%s\"", k, i,
                      args[i - 1], buf);
        }
    }
    return errs;
}

static int test_spawn_report(const char *child, int rank, int size)
{
    int errs = 0;
    char *args[] = { "report", "", "two words", "  spaces  ", "last", NULL };
    int codes[3] = { -1, -1, -1 };
    MPI_Comm kids;
    CHECK_RC(MPI_Comm_spawn((char *)child, args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, codes));
    for (int k = 0; k < 3; k++)
        CHECK_INT("errcode", MPI_SUCCESS, codes[k]);
    int inter = 0, rsize = 0, lsize = 0;
    MPI_Comm_test_inter(kids, &inter);
    MPI_Comm_remote_size(kids, &rsize);
    MPI_Comm_size(kids, &lsize);
    CHECK_INT("spawn result is an intercommunicator", 1, inter);
    CHECK_INT("remote size", 3, rsize);
    CHECK_INT("local size", size, lsize);
    if (rank == 0)
        errs += check_reports(kids, 3, 3, 0, size, args);
    MPI_Comm_disconnect(&kids);
    CHECK(kids == MPI_COMM_NULL, "disconnect must set the handle to MPI_COMM_NULL");
    return errs;
}

/* Many arguments, and MPI_ARGV_NULL with MPI_ERRCODES_IGNORE. */
static int test_many_args(const char *child, int rank, int size)
{
    int errs = 0;
    enum { N = 300 };
    char *args[N + 2], text[N][8];
    args[0] = "report";
    for (int i = 0; i < N; i++) {
        snprintf(text[i], sizeof text[i], "a%d", i);
        args[i + 1] = text[i];
    }
    args[N + 1] = NULL;
    MPI_Comm kids;
    CHECK_RC(MPI_Comm_spawn((char *)child, args, 1, MPI_INFO_NULL, size - 1, MPI_COMM_WORLD, &kids,
                            MPI_ERRCODES_IGNORE));
    if (rank == 0)
        errs += check_reports(kids, 1, 1, 0, size, args);
    MPI_Comm_disconnect(&kids);
    /* no arguments: the child runs its "quiet" mode */
    CHECK_RC(MPI_Comm_spawn((char *)child, MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids,
                            MPI_ERRCODES_IGNORE));
    MPI_Comm_disconnect(&kids);
    return errs;
}

static int test_multiple(const char *child, const char *other, int rank, int size)
{
    int errs = 0;
    char *cmds[2] = { (char *)child, (char *)other };
    char *args0[] = { "report", "first", NULL }, *args1[] = { "x", "y", "z", NULL };
    char **argvs[2] = { args0, args1 };
    int maxprocs[2] = { 2, 3 }, codes[5];
    MPI_Info infos[2] = { MPI_INFO_NULL, MPI_INFO_NULL };
    MPI_Comm kids;
    CHECK_RC(MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &kids, codes));
    int rsize = 0;
    MPI_Comm_remote_size(kids, &rsize);
    CHECK_INT("spawn_multiple remote size", 5, rsize);
    if (rank == 0) {
        errs += check_reports(kids, 2, 5, 0, size, args0);
        for (int k = 2; k < 5; k++) {
            int info[3];
            MPI_Recv(info, 3, MPI_INT, k, 6, kids, MPI_STATUS_IGNORE);
            CHECK_INT("second program's world rank", 1000 + k, info[0]);
            CHECK_INT("second program's APPNUM", 1, info[1]);
            CHECK_INT("second program's argc", 4, info[2]);
        }
    }
    MPI_Comm_disconnect(&kids);
    return errs;
}

static int test_ops(const char *child, int rank, int size)
{
    int errs = 0;
    char *args[] = { "ops", NULL };
    MPI_Comm kids;
    const int n = 3;
    CHECK_RC(MPI_Comm_spawn((char *)child, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, MPI_ERRCODES_IGNORE));
    int value = 1234, mine = rank, sum = -1;
    MPI_Bcast(&value, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, kids);
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, kids);
    CHECK_INT("allreduce over the intercommunicator", n * 1234 + n * (n - 1) / 2, sum);
    if (rank == 0)
        for (int k = 0; k < n; k++) {
            int theirs;
            MPI_Recv(&theirs, 1, MPI_INT, k, 5, kids, MPI_STATUS_IGNORE);
            CHECK_INT("children's allreduce", size * (size - 1) / 2, theirs);
        }
    MPI_Comm merged;
    MPI_Intercomm_merge(kids, 0, &merged);
    int mrank, msize, *base = NULL;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK_INT("merged size", size + n, msize);
    CHECK_INT("merged rank (parents low)", rank, mrank);
    MPI_Alloc_mem((MPI_Aint)msize * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &base);
    for (int i = 0; i < msize; i++)
        base[i] = -1;
    MPI_Win win;
    MPI_Win_create(base, (MPI_Aint)msize * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, merged, &win);
    MPI_Win_fence(0, win);
    MPI_Put(&mrank, 1, MPI_INT, 0, mrank, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    if (rank == 0)
        for (int i = 0; i < msize; i++)
            CHECK_INT("RMA put on the merged communicator", i, base[i]);
    MPI_Win_free(&win);
    MPI_Free_mem(base);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&kids);
    return errs;
}

static int test_nested(const char *child, int rank)
{
    int errs = 0;
    char *args[] = { "nest", NULL };
    MPI_Comm kids;
    CHECK_RC(MPI_Comm_spawn((char *)child, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, MPI_ERRCODES_IGNORE));
    if (rank == 0)
        for (int k = 0; k < 2; k++) {
            int e = -1;
            MPI_Recv(&e, 1, MPI_INT, k, 3, kids, MPI_STATUS_IGNORE);
            CHECK_INT("errors seen by a child about its grandchildren", 0, e);
        }
    MPI_Comm_disconnect(&kids);
    return errs;
}

static int expect_spawn_failure(const char *what, const char *command, int n)
{
    int errs = 0, codes[4] = { 0, 0, 0, 0 };
    MPI_Comm kids = (MPI_Comm)0;
    int rc = MPI_Comm_spawn((char *)command, MPI_ARGV_NULL, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, codes);
    CHECK(tu_class(rc) == MPI_ERR_SPAWN, "%s: expected MPI_ERR_SPAWN, got class %d", what, tu_class(rc));
    CHECK(kids == MPI_COMM_NULL, "%s: the intercommunicator must be MPI_COMM_NULL", what);
    for (int k = 0; k < n; k++)
        CHECK(codes[k] == MPI_ERR_SPAWN, "%s: errcode %d is %d", what, k, codes[k]);
    return errs;
}

static int test_failures(const char *child, int rank, int size)
{
    int errs = 0;
    char nonexec[256];
    snprintf(nonexec, sizeof nonexec, "/tmp/strand-spawn-noexec-%ld", (long)getpid());
    if (rank == 0) {
        FILE *f = fopen(nonexec, "w");
        if (f != NULL) {
            fputs("not a program\n", f);
            fclose(f);
        }
        chmod(nonexec, 0644);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errs += expect_spawn_failure("missing command", "/nonexistent/strand-no-such-program", 2);
    errs += expect_spawn_failure("missing command on PATH", "strand-no-such-program-anywhere", 1);
    errs += expect_spawn_failure("not executable", nonexec, 3);
    errs += expect_spawn_failure("a plain executable", "/bin/true", 2);
    errs += expect_spawn_failure("a directory", "/tmp", 1);
    /* soft: a missing command allowed to start 0, and a count from a stride */
    char *cmds[2] = { "/nonexistent/strand-no-such-program", (char *)child };
    char *args1[] = { "quiet", NULL };
    char **argvs[2] = { args1, args1 };
    int maxprocs[2] = { 2, 4 }, codes[6];
    MPI_Info infos[2];
    MPI_Info_create(&infos[0]);
    MPI_Info_create(&infos[1]);
    MPI_Info_set(infos[0], "soft", "0:2");
    MPI_Info_set(infos[1], "soft", "1:3:2");     /* 1 or 3: 3 */
    MPI_Info_set(infos[1], "strand_unknown_key", "ignored");
    MPI_Comm kids;
    CHECK_RC(MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &kids, codes));
    int rsize = 0;
    MPI_Comm_remote_size(kids, &rsize);
    CHECK_INT("soft spawn size", 3, rsize);
    int expect[6] = { MPI_ERR_SPAWN, MPI_ERR_SPAWN, MPI_SUCCESS, MPI_SUCCESS, MPI_SUCCESS, MPI_ERR_SPAWN };
    for (int k = 0; k < 6; k++)
        CHECK(codes[k] == expect[k], "soft spawn errcode %d: expected %d, got %d", k, expect[k], codes[k]);
    MPI_Comm_disconnect(&kids);
    /* wdir and path info keys: the child found by name in "path", under "wdir" */
    const char *slash = strrchr(child, '/');
    char dir[256];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - child), child);
    MPI_Info_set(infos[0], "wdir", dir);
    MPI_Info_set(infos[0], "path", ".");
    MPI_Info_delete(infos[0], "soft");
    MPI_Info_set(infos[0], "host", "localhost");
    char *cwd_args[] = { "cwd", NULL }, before[4096] = "", after[4096] = "", wanted[4096] = "";
    if (getcwd(before, sizeof before) == NULL || realpath(dir, wanted) == NULL)
        TU_ABORT("getcwd/realpath");
    CHECK_RC(MPI_Comm_spawn("spawn_child", cwd_args, 2, infos[0], 0, MPI_COMM_WORLD, &kids, MPI_ERRCODES_IGNORE));
    if (rank == 0)
        for (int k = 0; k < 2; k++) {
            char theirs[4096];
            MPI_Recv(theirs, sizeof theirs, MPI_CHAR, k, 12, kids, MPI_STATUS_IGNORE);
            CHECK(strcmp(theirs, wanted) == 0, "child %d works in %s, expected wdir %s", k, theirs, wanted);
        }
    MPI_Comm_disconnect(&kids);
    if (getcwd(after, sizeof after) == NULL)
        TU_ABORT("getcwd");
    CHECK(strcmp(before, after) == 0, "the parent's directory moved from %s to %s", before, after);
    MPI_Info_set(infos[0], "wdir", "/nonexistent/strand-no-such-dir");
    int rc0 = MPI_Comm_spawn("spawn_child", args1, 1, infos[0], 0, MPI_COMM_WORLD, &kids, MPI_ERRCODES_IGNORE);
    CHECK_INT("missing wdir", MPI_ERR_SPAWN, tu_class(rc0));
    MPI_Info_free(&infos[0]);
    MPI_Info_free(&infos[1]);
    /* bad arguments: the class, and nothing started */
    int rc = MPI_Comm_spawn((char *)child, args1, 1, MPI_INFO_NULL, size, MPI_COMM_WORLD, &kids, codes);
    CHECK_INT("bad root", MPI_ERR_ROOT, tu_class(rc));
    rc = MPI_Comm_spawn((char *)child, args1, -1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, codes);
    CHECK_INT("negative maxprocs", MPI_ERR_ARG, tu_class(rc));
    rc = MPI_Comm_spawn_multiple(0, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &kids, codes);
    CHECK_INT("count 0", MPI_ERR_ARG, tu_class(rc));
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "soft", "1:x");
    rc = MPI_Comm_spawn((char *)child, args1, 2, bad, 0, MPI_COMM_WORLD, &kids, codes);
    CHECK_INT("malformed soft", MPI_ERR_INFO, tu_class(rc));
    MPI_Info_set(bad, "soft", "5:9");
    rc = MPI_Comm_spawn((char *)child, args1, 2, bad, 0, MPI_COMM_WORLD, &kids, codes);
    CHECK_INT("soft allowing nothing up to maxprocs", MPI_ERR_SPAWN, tu_class(rc));
    MPI_Info_delete(bad, "soft");
    MPI_Info_set(bad, "host", "strand-no-such-host.invalid");
    rc = MPI_Comm_spawn((char *)child, args1, 1, bad, 0, MPI_COMM_WORLD, &kids, codes);
    CHECK_INT("another host", MPI_ERR_SPAWN, tu_class(rc));
    MPI_Info_free(&bad);
    rc = MPI_Comm_spawn((char *)child, args1, 1, MPI_INFO_NULL, 0, MPI_COMM_NULL, &kids, codes);
    CHECK_INT("MPI_COMM_NULL", MPI_ERR_COMM, tu_class(rc));
    CHECK_INT("get_parent(NULL)", MPI_ERR_ARG, tu_class(MPI_Comm_get_parent(NULL)));
    /* the parents can still spawn after all that */
    CHECK_RC(MPI_Comm_spawn((char *)child, args1, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, codes));
    CHECK_INT("errcode after failures", MPI_SUCCESS, codes[0]);
    MPI_Comm_disconnect(&kids);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rank == 0)
        unlink(nonexec);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = tu_rank(), size = tu_size(), errs = 0;
    char child[512], other[512];
    sibling(child, sizeof child, argv[0], "spawn_child");
    sibling(other, sizeof other, argv[0], "spawn_other");
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL, "a launched job has no parent");
    int flag = 0, *usize = NULL, *appnum = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    CHECK(flag && *usize >= size, "MPI_UNIVERSE_SIZE must be set and at least the world size");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    CHECK(flag && *appnum == 0, "MPI_APPNUM of the launched job must be 0");
    errs += test_spawn_report(child, rank, size);
    errs += test_many_args(child, rank, size);
    errs += test_multiple(child, other, rank, size);
    errs += test_ops(child, rank, size);
    errs += test_nested(child, rank);
    errs += test_failures(child, rank, size);
    return tu_finish(errs);
}
