/* Child program for the spawn tests (spawn_basic, spawn_cycles,
 * dpm_ports); never run on its own. argv[1] says what to do:
 *   report      send to parent rank 0 (tag 1): {world rank, world size,
 *               APPNUM, argc, total argv bytes, remote size, has universe},
 *               then each argument (tag 2, one message each)
 *   ops         intercommunicator operations with the parents (see
 *               spawn_basic: bcast, allreduce, merge + RMA)
 *   nest        spawn 2 grandchildren ("report"), check them, tell the
 *               parent how many errors (tag 3)
 *   connect P   connect to port P over MPI_COMM_WORLD, send 42+rank (tag 4)
 *   quiet       only disconnect
 *   cwd         send getcwd() to parent rank 0 (tag 12)
 *   place       send to parent rank 0 (tag 21): {world rank, world size,
 *               APPNUM, getpid(), allreduce over MPI_COMM_WORLD of rank+1,
 *               bcast over MPI_COMM_WORLD from rank 0 of 777}, then (tag
 *               22) an allreduce of 1 over the merged communicator with
 *               the parents (spawn_nodes: where children run)
 *   leave       finalize without freeing the parent communicator
 *   exit        register an atexit handler that prints a line, disconnect,
 *               finalize, return 3 (the job's status must count it)
 * Every other mode ends with MPI_Comm_disconnect of the parent communicator. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int report(MPI_Comm parent, int argc, char **argv)
{
    int info[7], flag = 0, *appnum = NULL, *usize = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &info[0]);
    MPI_Comm_size(MPI_COMM_WORLD, &info[1]);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    info[2] = flag ? *appnum : -1;
    info[3] = argc;
    info[4] = 0;
    for (int i = 1; i < argc; i++)
        info[4] += (int)strlen(argv[i]);
    MPI_Comm_remote_size(parent, &info[5]);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    info[6] = flag && *usize > 0;
    MPI_Send(info, 7, MPI_INT, 0, 1, parent);
    for (int i = 1; i < argc; i++)
        MPI_Send(argv[i], (int)strlen(argv[i]), MPI_CHAR, 0, 2, parent);
    return 0;
}

static int ops(MPI_Comm parent)
{
    int rank, size, value = 0, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* parents' root 0 broadcasts 1234 */
    MPI_Bcast(&value, 1, MPI_INT, 0, parent);
    int mine = value + rank;
    /* intercomm allreduce: each side gets the other side's sum */
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, parent);
    MPI_Send(&sum, 1, MPI_INT, 0, 5, parent);
    /* merged: children high; RMA fence put of my merged rank into rank 0's window */
    MPI_Comm merged;
    MPI_Intercomm_merge(parent, 1, &merged);
    int mrank, msize, *base = NULL;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    MPI_Alloc_mem((MPI_Aint)msize * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &base);
    MPI_Win win;
    MPI_Win_create(base, (MPI_Aint)msize * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, merged, &win);
    MPI_Win_fence(0, win);
    MPI_Put(&mrank, 1, MPI_INT, 0, mrank, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Free_mem(base);
    MPI_Comm_free(&merged);
    return 0;
}

static int place(MPI_Comm parent)
{
    int info[6], flag = 0, *appnum = NULL, one = 1, all = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &info[0]);
    MPI_Comm_size(MPI_COMM_WORLD, &info[1]);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    info[2] = flag ? *appnum : -1;
    info[3] = (int)getpid();
    int mine = info[0] + 1;
    MPI_Allreduce(&mine, &info[4], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    info[5] = info[0] == 0 ? 777 : -1;
    MPI_Bcast(&info[5], 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Send(info, 6, MPI_INT, 0, 21, parent);
    MPI_Comm merged;
    MPI_Intercomm_merge(parent, 1, &merged);
    MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, merged);
    MPI_Comm_free(&merged);
    MPI_Send(&all, 1, MPI_INT, 0, 22, parent);
    return 0;
}

static int nest(MPI_Comm parent, char *self)
{
    MPI_Comm kids;
    char *args[] = { "report", "grand", NULL };
    int errs = 0, rank, codes[2];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, codes);
    if (rank == 0) {
        for (int k = 0; k < 2; k++) {
            int info[7];
            char buf[64];
            MPI_Recv(info, 7, MPI_INT, k, 1, kids, MPI_STATUS_IGNORE);
            errs += info[0] != k || info[1] != 2 || info[3] != 3 || info[5] != 2;
            for (int i = 1; i < info[3]; i++)
                MPI_Recv(buf, 64, MPI_CHAR, k, 2, kids, MPI_STATUS_IGNORE);
        }
    }
    errs += codes[0] != MPI_SUCCESS || codes[1] != MPI_SUCCESS;
    MPI_Comm_disconnect(&kids);
    MPI_Send(&errs, 1, MPI_INT, 0, 3, parent);
    return 0;
}

static void say_atexit(void)
{
    printf("spawn_child: atexit handler ran\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        printf("spawn_child: started without a parent\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char *mode = argc > 1 ? argv[1] : "quiet";
    if (strcmp(mode, "report") == 0)
        report(parent, argc, argv);
    else if (strcmp(mode, "ops") == 0)
        ops(parent);
    else if (strcmp(mode, "nest") == 0)
        nest(parent, argv[0]);
    else if (strcmp(mode, "place") == 0)
        place(parent);
    else if (strcmp(mode, "cwd") == 0) {
        char dir[4096] = "";
        if (getcwd(dir, sizeof dir) == NULL)
            strcpy(dir, "(getcwd failed)");
        MPI_Send(dir, (int)strlen(dir) + 1, MPI_CHAR, 0, 12, parent);
    } else if (strcmp(mode, "connect") == 0 && argc > 2) {
        MPI_Comm server;
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_connect(argv[2], MPI_INFO_NULL, 0, MPI_COMM_WORLD, &server);
        int v = 42 + rank;
        MPI_Send(&v, 1, MPI_INT, 0, 4, server);
        MPI_Comm_disconnect(&server);
    }
    if (strcmp(mode, "leave") == 0) {
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_disconnect(&parent);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        printf("spawn_child: MPI_Comm_get_parent after disconnect is not MPI_COMM_NULL\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    if (strcmp(mode, "exit") == 0) {
        atexit(say_atexit);
        return 3;
    }
    return 0;
}
