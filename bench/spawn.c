/* Dynamic processes: time of MPI_Comm_spawn of N children (until every
 * child has reached MPI_Init and answered a barrier over the
 * intercommunicator twice, then disconnect), time of MPI_Comm_accept/connect
 * between the job and one spawned child, and (Strand, in-process) the
 * memory each spawned rank adds (VmRSS while 256 children wait).
 *
 *   mpiexec -n 1 ./spawn [--counts 1,16,256] [--reps 5] [--connects 200] [--rss-count 256]
 *
 * Output: "spawn N us" (median of reps), "connect_accept 1 us" (mean),
 * "spawn_rss_per_rank 256 KiB". The program is its own child. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static double spawn_once(char *self, int n, long *rss_alive)
{
    char *args[] = { "wait", NULL };
    MPI_Comm kids;
    double t0 = MPI_Wtime();
    MPI_Comm_spawn(self, args, n, MPI_INFO_NULL, 0, MPI_COMM_SELF, &kids, MPI_ERRCODES_IGNORE);
    MPI_Barrier(kids);
    if (rss_alive != NULL)
        *rss_alive = rss_kib();     /* children loaded, waiting in the second barrier */
    MPI_Barrier(kids);
    MPI_Comm_disconnect(&kids);
    return MPI_Wtime() - t0;
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
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--counts") == 0)
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
    printf("# MPI_Comm_spawn of N children from MPI_COMM_SELF, until a barrier with them, + disconnect; median of %d\n",
           reps);
    double times[100];
    for (char *tok = strtok(counts_text, ","); tok != NULL; tok = strtok(NULL, ",")) {
        int n = atoi(tok);
        if (n < 1)
            continue;
        spawn_once(argv[0], n, NULL); /* warm-up: page cache, allocator */
        for (int r = 0; r < reps; r++)
            times[r] = spawn_once(argv[0], n, NULL);
        qsort(times, (size_t)reps, sizeof times[0], cmp_double);
        printf("spawn %d %.1f us\n", n, times[reps / 2] * 1e6);
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
        spawn_once(argv[0], rss_count, &alive);
        printf("# VmRSS %ld KiB idle, %ld KiB with %d spawned ranks alive\n", before, alive, rss_count);
        printf("spawn_rss_per_rank %d %.1f KiB\n", rss_count, (double)(alive - before) / rss_count);
    }
    MPI_Finalize();
    return 0;
}
