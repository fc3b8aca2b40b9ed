/*
 * net_neighbours: connections open on the first message, so a job whose
 * ranks talk only to their ring neighbours opens O(neighbours) connections,
 * not one per pair of node processes. Run with one rank per node process
 * (mpiexec -n K --nodes K, K >= 3): after a ring exchange, each node process
 * holds at most 3 TCP sockets (listening, one it opened to its right
 * neighbour, one its left neighbour opened to it), counted in /proc/self/fd
 * among the TCP sockets on the job's ports (/proc/self/net/tcp{,6}). The
 * same holds over UCX (--net ucx with UCX_NET_DEVICES=lo): its tcp
 * transport listens once and connects only to the peers messages go to;
 * its ports are not the job's static ones, so there every TCP socket of
 * the process counts (its other sockets, local Unix ones, do not).
 * Minimum ranks: 2 (with one node process it checks the data only).
 */
#include <dirent.h>
#include <unistd.h>

#include "testutil.h"

/* Whether socket inode `inode` is one of the job's TCP sockets: in
 * /proc/self/net/tcp{,6} with a local or remote port among the job's
 * static ports (STRAND_NET_PORT .. + STRAND_NODES - 1), or, over UCX
 * (STRAND_NET=ucx), any. Other sockets (a PMI or PMIx connection under
 * srun) do not count over TCP. */
static int is_job_socket(unsigned long inode)
{
    static const char *const tables[] = { "/proc/self/net/tcp", "/proc/self/net/tcp6" };
    const char *base_text = getenv("STRAND_NET_PORT"), *nodes_text = getenv("STRAND_NODES");
    const char *net = getenv("STRAND_NET");
    int any_port = net != NULL && strcmp(net, "ucx") == 0;
    if (!any_port && (base_text == NULL || nodes_text == NULL))
        return 0;
    unsigned base = base_text ? (unsigned)atoi(base_text) : 0, nodes = nodes_text ? (unsigned)atoi(nodes_text) : 0;
    for (int t = 0; t < 2; t++) {
        FILE *f = fopen(tables[t], "r");
        char line[512];
        int found = 0;
        while (!found && f != NULL && fgets(line, sizeof line, f) != NULL) {
            unsigned long entry;
            unsigned local, remote;
            /* sl local:port remote:port st tx:rx tr:when retrnsmt uid timeout inode */
            found = sscanf(line, "%*s %*[0-9A-F]:%x %*[0-9A-F]:%x %*s %*s %*s %*s %*s %*s %lu", &local, &remote,
                           &entry) == 3 &&
                    entry == inode && (any_port || local - base < nodes || remote - base < nodes);
        }
        if (f != NULL)
            fclose(f);
        if (found)
            return 1;
    }
    return 0;
}

static int sockets_open(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[300], target[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        unsigned long inode;
        if (len > 0) {
            target[len] = '\0';
            n += sscanf(target, "socket:[%lu]", &inode) == 1 && is_job_socket(inode);
        }
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* A token twice around the ring: after it, every rank has passed this
 * point (the first round), and nobody has left before all did (the
 * second). Only ring neighbours talk, so no new connection opens. */
static void ring_barrier(int rank, int size)
{
    int token = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < 2; round++) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, right, 100 + round, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, left, 100 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, left, 100 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&token, 1, MPI_INT, right, 100 + round, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, got = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < 3; round++) {
        CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, right, round, &got, 1, MPI_INT, left, round, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
        CHECK(got == left, "round %d: got %d from the left neighbour %d", round, got, left);
    }
    /* Connections open in the background: give the last ones a moment. */
    tu_sleep_ms(50);
    int sockets = sockets_open();
    if (argc > 1 && strcmp(argv[1], "one-rank-per-node") == 0)
        CHECK(sockets >= 1 && sockets <= 3,
              "%d TCP sockets open after a ring exchange (expected 1 to 3: listening, right, left)", sockets);
    /* Collecting the results talks to rank 0: not before everyone counted. */
    ring_barrier(rank, size);
    return tu_finish(errs);
}
