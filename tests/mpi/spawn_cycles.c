/* Spawn/disconnect cycles (default 200, argv[1]) must not grow the
 * process: after a warm-up, the thread count (Threads in /proc/self/status)
 * must come back to its level and VmRSS may grow by at most a few MiB.
 * Minimum 1 rank; every rank of the job spawns together (root 0). */
#include "testutil.h"

#include <unistd.h>

static long status_field(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long value = -1;
    size_t n = strlen(key);
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, key, n) == 0 && line[n] == ':')
            value = strtol(line + n + 1, NULL, 10);
    if (f != NULL)
        fclose(f);
    return value;
}

/* Spawned threads end after their MPI_Finalize: wait (bounded) until the
 * count is back to `expect`. */
static long threads_settled(long expect)
{
    long t = status_field("Threads");
    for (int i = 0; i < 2000 && t > expect; i++) {
        tu_sleep_ms(1);
        t = status_field("Threads");
    }
    return t;
}

/* Odd cycles: the children finalize without freeing their parent
 * communicator, the parents free (not disconnect) theirs. */
static void cycle(const char *child, int nkids, int i)
{
    char *args[] = { i % 2 ? "leave" : "quiet", NULL };
    MPI_Comm kids;
    MPI_Comm_spawn((char *)child, args, nkids, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, MPI_ERRCODES_IGNORE);
    if (i % 2)
        MPI_Comm_free(&kids);
    else
        MPI_Comm_disconnect(&kids);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = tu_rank(), size = tu_size(), errs = 0;
    int cycles = argc > 1 ? atoi(argv[1]) : 200;
    char child[512];
    const char *slash = strrchr(argv[0], '/');
    snprintf(child, sizeof child, "%.*s/spawn_child", slash != NULL ? (int)(slash - argv[0]) : 1,
             slash != NULL ? argv[0] : ".");
    const int warmup = 20;
    for (int i = 0; i < warmup; i++)
        cycle(child, 2, i);
    tu_barrier();
    long threads0 = threads_settled(size + 1), rss0 = status_field("VmRSS");
    for (int i = warmup; i < cycles; i++)
        cycle(child, 2, i);
    tu_barrier();
    long threads1 = threads_settled(threads0), rss1 = status_field("VmRSS");
    if (rank == 0) {
        CHECK(threads1 <= threads0, "threads grew from %ld to %ld over %d spawn cycles", threads0, threads1,
              cycles - warmup);
        /* 360 children of a few hundred KiB each would be ~100 MiB */
        CHECK(rss1 - rss0 < 8192, "VmRSS grew from %ld to %ld KiB over %d spawn cycles", rss0, rss1,
              cycles - warmup);
    }
    return tu_finish(errs);
}
