/* Dynamic processes: time of MPI_Comm_spawn of N children (until every
 * child has reached MPI_Init and answered a barrier over the
 * intercommunicator twice, then disconnect), time of MPI_Comm_accept/connect
 * between the job and one spawned child, and (Strand, in-process) the
 * memory each spawned rank adds (VmRSS while 256 children wait).
 *
 *   mpiexec -n 1 ./spawn [--counts 1,16,256] [--reps 5] [--connects 200] [--rss-count 256]
 *                        [--info KEY=VALUE]
 *   mpiexec -n 2 --nodes 2 ./spawn --info nodes=1 --rss-count 0    (Strand: onto node process 1)
 *
 * Output: "spawn N us" (median of reps), "connect_accept 1 us" (mean),
 * "spawn_rss_per_rank 256 KiB". The program is its own child. --info puts
 * a key into the spawns' info (Strand: --info nodes=1 in a job of two node
 * processes spawns onto the other one; the output then says
 * "spawn_remote").
 *
 * Two jobs started by separate commands, meeting through the name
 * service (Strand: strand-nameserver and mpiexec --nameserver; Open MPI:
 * ompi-server and mpirun --ompi-server):
 *
 *   mpiexec -n 1 ./spawn --jobs server SERVICE [--connects 200]
 *   mpiexec -n 1 ./spawn --jobs client SERVICE [--connects 200]
 *
 * The server publishes a port and accepts, the client looks it up and
 * connects; output (client): "connect_accept_jobs 1 us", the mean time of
 * a connect + disconnect pair, and "pingpong_jobs 8 us", the one-way
 * latency of an 8-byte message over the connected intercommunicator.
 * In a job of several ranks (mpiexec -n 2 --nodes 2 --net ucx: a job
 * whose node processes talk over UCX, and meet other jobs over tcp) rank
 * 0 does it all, the others wait in a barrier. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0)
            v = strtol(line + 6, NULL, 10);
    if (f != NULL)
        fclose(f);
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int child(MPI_Comm parent, int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "connect") == 0) {
        int n = atoi(argv[3]);
        for (int i = 0; i < n; i++) {
            MPI_Comm c;
            MPI_Comm_connect(argv[2], MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
            MPI_Comm_disconnect(&c);
        }
    }
    MPI_Barrier(parent);            /* loaded and in MPI */
    MPI_Barrier(parent);            /* the parent has measured */
    MPI_Comm_disconnect(&parent);
    return 0;
}

static double spawn_once(char *self, int n, MPI_Info info, long *rss_alive)
{
    char *args[] = { "wait", NULL };
    MPI_Comm kids;
    double t0 = MPI_Wtime();
    MPI_Comm_spawn(self, args, n, info, 0, MPI_COMM_SELF, &kids, MPI_ERRCODES_IGNORE);
    MPI_Barrier(kids);
    if (rss_alive != NULL)
        *rss_alive = rss_kib();     /* children loaded, waiting in the second barrier */
    MPI_Barrier(kids);
    MPI_Comm_disconnect(&kids);
    return MPI_Wtime() - t0;
}

enum { PINGPONG_ROUNDS = 2000 };

/* One round trip of 8 bytes: the client sends first. */
static void bounce(MPI_Comm c, int server, long long *v)
{
    if (server) {
        MPI_Recv(v, 1, MPI_LONG_LONG, 0, 1, c, MPI_STATUS_IGNORE);
        MPI_Send(v, 1, MPI_LONG_LONG, 0, 1, c);
    } else {
        MPI_Send(v, 1, MPI_LONG_LONG, 0, 1, c);
        MPI_Recv(v, 1, MPI_LONG_LONG, 0, 1, c, MPI_STATUS_IGNORE);
    }
}

/* Two separately started jobs: see the header. */
static int jobs(const char *role, char *service, int connects)
{
    char port[MPI_MAX_PORT_NAME];
    int server = strcmp(role, "server") == 0;
    long long v = 0;
    if (server) {
        MPI_Open_port(MPI_INFO_NULL, port);
        MPI_Publish_name(service, MPI_INFO_NULL, port);
    } else {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        while (MPI_Lookup_name(service, MPI_INFO_NULL, port) != MPI_SUCCESS) {
            struct timespec ts = { 0, 50000000 };
            nanosleep(&ts, NULL);
        }
    }
    double t0 = 0;
    for (int i = 0; i <= connects; i++) {       /* the first one warms up */
        MPI_Comm c;
        if (i == 1)
            t0 = MPI_Wtime();
        if (server)
            MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
        else
            MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
        if (i < connects) {
            MPI_Comm_disconnect(&c);
            continue;
        }
        double per_connect = (MPI_Wtime() - t0) / connects;
        /* the last connection stays for the ping-pong */
        for (int r = 0; r < 10; r++)
            bounce(c, server, &v);
        double p0 = MPI_Wtime();
        for (int r = 0; r < PINGPONG_ROUNDS; r++)
            bounce(c, server, &v);
        double one_way = (MPI_Wtime() - p0) / PINGPONG_ROUNDS / 2;
        MPI_Comm_disconnect(&c);
        if (!server) {
            printf("# two jobs of separate commands meeting through the name service\n");
            printf("connect_accept_jobs 1 %.1f us\n", per_connect * 1e6);
            printf("pingpong_jobs 8 %.2f us\n", one_way * 1e6);
        }
    }
    if (server) {
        MPI_Unpublish_name(service, MPI_INFO_NULL, port);
        MPI_Close_port(port);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        child(parent, argc, argv);
        MPI_Finalize();
        return 0;
    }
    char counts_text[256] = "1,16,256";
    int reps = 5, connects = 200, rss_count = 256;
    MPI_Info info = MPI_INFO_NULL;
    const char *role = NULL;
    char *service = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--jobs") == 0 && i + 2 < argc) {
            role = argv[i + 1];
            service = argv[i + 2];
            i++;
        } else if (strcmp(argv[i], "--info") == 0 && strchr(argv[i + 1], '=') != NULL) {
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(strchr(argv[i + 1], '=') - argv[i + 1]), argv[i + 1]);
            if (info == MPI_INFO_NULL)
                MPI_Info_create(&info);
            MPI_Info_set(info, key, strchr(argv[i + 1], '=') + 1);
        } else if (strcmp(argv[i], "--counts") == 0)
            snprintf(counts_text, sizeof counts_text, "%s", argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--connects") == 0)
            connects = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--rss-count") == 0)
            rss_count = atoi(argv[i + 1]);
    }
    if (reps < 1 || reps > 100)
        reps = 5;
    /* Only rank 0 measures; the others keep their node processes (hosts
     * of --info nodes=... spawns) alive until it is done. */
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (role != NULL && rank == 0)
        return jobs(role, service, connects);
    if (rank != 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    const char *label = info != MPI_INFO_NULL ? "spawn_remote" : "spawn";
    printf("# MPI_Comm_spawn of N children from MPI_COMM_SELF, until a barrier with them, + disconnect; median of %d\n",
           reps);
    double times[100];
    for (char *tok = strtok(counts_text, ","); tok != NULL; tok = strtok(NULL, ",")) {
        int n = atoi(tok);
        if (n < 1)
            continue;
        spawn_once(argv[0], n, info, NULL); /* warm-up: page cache, allocator */
        for (int r = 0; r < reps; r++)
            times[r] = spawn_once(argv[0], n, info, NULL);
        qsort(times, (size_t)reps, sizeof times[0], cmp_double);
        printf("%s %d %.1f us\n", label, n, times[reps / 2] * 1e6);
        fflush(stdout);
    }
    /* connect/accept: one spawned child connects `connects` times */
    char port[MPI_MAX_PORT_NAME], count[16];
    MPI_Open_port(MPI_INFO_NULL, port);
    snprintf(count, sizeof count, "%d", connects);
    char *args[] = { "connect", port, count, NULL };
    MPI_Comm kid;
    MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &kid, MPI_ERRCODES_IGNORE);
    double t0 = MPI_Wtime();
    for (int i = 0; i < connects; i++) {
        MPI_Comm c;
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
        MPI_Comm_disconnect(&c);
    }
    double t = MPI_Wtime() - t0;
    MPI_Barrier(kid);
    MPI_Barrier(kid);
    MPI_Comm_disconnect(&kid);
    MPI_Close_port(port);
    printf("connect_accept 1 %.1f us\n", t / connects * 1e6);
    /* memory: VmRSS while the children are alive, over the idle process
     * (meaningful only where children are threads of this process) */
    if (rss_count > 0) {
        long before = rss_kib(), alive = 0;
        spawn_once(argv[0], rss_count, MPI_INFO_NULL, &alive);
        printf("# VmRSS %ld KiB idle, %ld KiB with %d spawned ranks alive\n", before, alive, rss_count);
        printf("spawn_rss_per_rank %d %.1f KiB\n", rss_count, (double)(alive - before) / rss_count);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
