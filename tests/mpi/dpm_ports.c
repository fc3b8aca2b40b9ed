/* Ports, names and connections within one node process (MPI-2.2 10.4):
 * publish/lookup/unpublish and their errors, accept/connect between the
 * two halves of the job and between the job and a spawned job, connect to
 * a bogus or closed port (MPI_ERR_PORT), MPI_Comm_join over a socketpair,
 * concurrent spawns from two communicators. Minimum 1 rank (the parts
 * between halves need 2). Child: spawn_child. */
#include "testutil.h"

#include <sys/socket.h>
#include <unistd.h>

static int test_names(int rank)
{
    int errs = 0;
    char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME];
    char service[64];
    snprintf(service, sizeof service, "dpm-ports-names-%d", rank);
    CHECK_RC(MPI_Open_port(MPI_INFO_NULL, port));
    CHECK(strncmp(port, "strand-port:", 12) == 0 || strlen(port) > 0, "port name \"%s\"", port);
    CHECK_RC(MPI_Publish_name(service, MPI_INFO_NULL, port));
    CHECK_INT("publish twice", MPI_ERR_SERVICE, tu_class(MPI_Publish_name(service, MPI_INFO_NULL, port)));
    CHECK_RC(MPI_Lookup_name(service, MPI_INFO_NULL, found));
    CHECK(strcmp(found, port) == 0, "lookup: expected \"%s\", got \"%s\"", port, found);
    CHECK_RC(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
    CHECK_INT("lookup after unpublish", MPI_ERR_NAME, tu_class(MPI_Lookup_name(service, MPI_INFO_NULL, found)));
    CHECK_INT("unpublish unknown", MPI_ERR_SERVICE, tu_class(MPI_Unpublish_name(service, MPI_INFO_NULL, port)));
    MPI_Comm c = MPI_COMM_NULL;
    CHECK_INT("connect to a bogus port", MPI_ERR_PORT,
              tu_class(MPI_Comm_connect("no-such-port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &c)));
    CHECK(c == MPI_COMM_NULL, "failed connect must give MPI_COMM_NULL");
    CHECK_RC(MPI_Close_port(port));
    CHECK_INT("connect to a closed port", MPI_ERR_PORT,
              tu_class(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c)));
    CHECK_INT("close a closed port", MPI_ERR_PORT, tu_class(MPI_Close_port(port)));
    return errs;
}

/* Even ranks serve, odd ranks connect, through a published name. */
static int test_halves(int rank, int size)
{
    int errs = 0;
    MPI_Comm half, inter;
    int server = rank % 2 == 0;
    MPI_Comm_split(MPI_COMM_WORLD, server, rank, &half);
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0) {
        CHECK_RC(MPI_Open_port(MPI_INFO_NULL, port));
        CHECK_RC(MPI_Publish_name("dpm-ports-halves", MPI_INFO_NULL, port));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (server) {
        CHECK_RC(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
    } else {
        if (rank == 1)
            CHECK_RC(MPI_Lookup_name("dpm-ports-halves", MPI_INFO_NULL, port));
        CHECK_RC(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
    }
    int lsize, rsize, hrank;
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(half, &hrank);
    CHECK_INT("remote size", server ? size / 2 : (size + 1) / 2, rsize);
    /* each client rank sends to server (hrank % rsize); servers receive from all theirs */
    if (!server) {
        int v = 100 + hrank;
        MPI_Send(&v, 1, MPI_INT, hrank % rsize, 7, inter);
    } else {
        for (int c = hrank; c < rsize; c += lsize) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, c, 7, inter, MPI_STATUS_IGNORE);
            CHECK_INT("message over accept/connect", 100 + c, v);
        }
    }
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter);
    CHECK_INT("allreduce over accept/connect", rsize, sum);
    /* disconnect completes a freed send first: its buffer is cleared after */
    enum { BIG = 16384 };
    int *big = tu_malloc(BIG * sizeof *big);
    if (!server) {
        MPI_Request req;
        for (int i = 0; i < BIG; i++)
            big[i] = i + hrank;
        MPI_Isend(big, BIG, MPI_INT, hrank % rsize, 11, inter, &req);
        MPI_Request_free(&req);
        MPI_Comm_disconnect(&inter);
        memset(big, 0, BIG * sizeof *big);
    } else {
        for (int c = hrank; c < rsize; c += lsize) {
            tu_sleep_ms(20);
            MPI_Recv(big, BIG, MPI_INT, c, 11, inter, MPI_STATUS_IGNORE);
            for (int i = 0; i < BIG; i++)
                if (big[i] != i + c) {
                    errs += TU_FAIL("freed send before disconnect: element %d is %d, expected %d", i, big[i], i + c);
                    break;
                }
        }
        MPI_Comm_disconnect(&inter);
    }
    free(big);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_RC(MPI_Unpublish_name("dpm-ports-halves", MPI_INFO_NULL, port));
        CHECK_RC(MPI_Close_port(port));
    }
    MPI_Comm_free(&half);
    return errs;
}

/* A spawned job connects back to a port of its parents. */
static int test_spawned_connect(const char *child, int rank)
{
    int errs = 0;
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0)
        CHECK_RC(MPI_Open_port(MPI_INFO_NULL, port));
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    char *args[] = { "connect", port, NULL };
    MPI_Comm kids, server;
    CHECK_RC(MPI_Comm_spawn((char *)child, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, MPI_ERRCODES_IGNORE));
    CHECK_RC(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &server));
    if (rank == 0)
        for (int k = 0; k < 2; k++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, k, 4, server, MPI_STATUS_IGNORE);
            CHECK_INT("value from a connected child", 42 + k, v);
        }
    MPI_Comm_disconnect(&server);
    MPI_Comm_disconnect(&kids);
    if (rank == 0)
        CHECK_RC(MPI_Close_port(port));
    return errs;
}

static int test_join(int rank)
{
    int errs = 0, fd = -1;
    /* The socketpair's fd is valid in rank 1 only when both ranks are
     * threads of one node process (across processes: dpm-jobs.sh). */
    long pid = (long)getpid(), other = -1;
    MPI_Sendrecv(&pid, 1, MPI_LONG, 1 - rank, 7, &other, 1, MPI_LONG, 1 - rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (other != pid)
        return 0;
    if (rank == 0) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
            TU_ABORT("socketpair");
        fd = sv[0];
        MPI_Send(&sv[1], 1, MPI_INT, 1, 8, MPI_COMM_WORLD);   /* one process: the fd is valid in rank 1 */
    } else {
        MPI_Recv(&fd, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Comm inter;
    CHECK_RC(MPI_Comm_join(fd, &inter));
    int rsize = 0, v = rank;
    MPI_Comm_remote_size(inter, &rsize);
    CHECK_INT("join remote size", 1, rsize);
    MPI_Sendrecv_replace(&v, 1, MPI_INT, 0, 9, 0, 9, inter, MPI_STATUS_IGNORE);
    CHECK_INT("message over a joined communicator", 1 - rank, v);
    MPI_Comm_disconnect(&inter);
    close(fd);
    /* not a socket: an error, not a hang */
    int devnull[2];
    if (pipe(devnull) == 0) {
        close(devnull[1]);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        CHECK(MPI_Comm_join(devnull[0], &inter) != MPI_SUCCESS, "join over a pipe must fail");
        close(devnull[0]);
    }
    return errs;
}

/* Two communicators spawn at the same time. */
static int test_concurrent(const char *child, int rank)
{
    int errs = 0;
    MPI_Comm half, kids;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    char tag[16];
    snprintf(tag, sizeof tag, "half%d", rank % 2);
    char *args[] = { "report", tag, NULL };
    CHECK_RC(MPI_Comm_spawn((char *)child, args, 3, MPI_INFO_NULL, 0, half, &kids, MPI_ERRCODES_IGNORE));
    int hrank;
    MPI_Comm_rank(half, &hrank);
    if (hrank == 0)
        for (int k = 0; k < 3; k++) {
            int info[7];
            char buf[32];
            MPI_Status st;
            int n;
            MPI_Recv(info, 7, MPI_INT, k, 1, kids, MPI_STATUS_IGNORE);
            CHECK_INT("concurrent spawn: child rank", k, info[0]);
            CHECK_INT("concurrent spawn: child world size", 3, info[1]);
            MPI_Recv(buf, 32, MPI_CHAR, k, 2, kids, &st);    /* argv[1]: "report" */
            MPI_Recv(buf, 32, MPI_CHAR, k, 2, kids, &st);
            MPI_Get_count(&st, MPI_CHAR, &n);
            buf[n] = '\0';
            CHECK(strcmp(buf, tag) == 0, "concurrent spawn: argument \"%s\", expected \"%s\"", buf, tag);
        }
    MPI_Comm_disconnect(&kids);
    MPI_Comm_free(&half);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = tu_rank(), size = tu_size(), errs = 0;
    char child[512];
    const char *slash = strrchr(argv[0], '/');
    snprintf(child, sizeof child, "%.*s/spawn_child", slash != NULL ? (int)(slash - argv[0]) : 1,
             slash != NULL ? argv[0] : ".");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errs += test_names(rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    errs += test_spawned_connect(child, rank);
    errs += test_concurrent(child, rank);
    if (size >= 2) {
        errs += test_halves(rank, size);
        if (rank < 2)
            errs += test_join(rank);
    }
    return tu_finish(errs);
}
