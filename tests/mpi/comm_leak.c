/* Create/free loops must not leak: 100,000 MPI_Comm_dup/MPI_Comm_free (and
 * split/free, create/free) cycles, with the resident set size compared
 * before and after (from /proc/self/statm: all ranks share one process). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>
#include "comm_check.h"

static long rss_kib(void)
{
    long pages_total = 0, pages_resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2)
        pages_resident = -1;
    fclose(f);
    return pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Everyone has finished the previous phase: a split needs every member's
 * color, so nobody leaves it before all have arrived (no collectives
 * needed). */
static void sync_all(void)
{
    MPI_Comm d;
    MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &d);
    MPI_Comm_free(&d);
}

static double dup_free_loop(int n)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Comm_free(&d);
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int cycles = argc > 1 ? atoi(argv[1]) : 100000;

    /* Warm up the allocator's per-thread caches, then measure in ten chunks: the last
     * ones must not be much slower than the first ones. Each side is the fastest of
     * three chunks, so one chunk slowed by a loaded machine cannot fail the test, while
     * work that grows with every cycle slows all of the last three. */
    dup_free_loop(cycles / 10);
    for (int i = 0; i < cycles / 100; i++) {
        MPI_Comm s;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 4, -rank, &s);
        MPI_Comm_free(&s);
    }
    sync_all();
    long before = rss_kib();
    double dup_time = 0, first = 1e30, last = 1e30;
    for (int chunk = 0; chunk < 10; chunk++) {
        double t = dup_free_loop(cycles / 10);
        dup_time += t;
        if (chunk < 3 && t < first)
            first = t;
        if (chunk >= 7 && t < last)
            last = t;
    }
    sync_all();
    long after_dup = rss_kib();
    for (int i = 0; i < cycles / 10; i++) {
        MPI_Comm s;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 4, -rank, &s);
        MPI_Comm_free(&s);
    }
    sync_all();
    long after = rss_kib();
    /* Bound: 4 MiB of allocator noise, whatever the rank count. Under
     * AddressSanitizer (preloaded for a --enable-sanitizers build) freed
     * memory stays in its quarantine, so RSS says nothing there; ASan
     * reports real leaks itself. */
    int rss_meaningful = dlsym(RTLD_DEFAULT, "__asan_init") == NULL;
    if (rank == 0) {
        printf("%d ranks: %d dup/free cycles in %.2f s (%.1f us each; fastest early tenth %.3f s, fastest late tenth %.3f s); "
               "RSS %ld KiB -> %ld KiB after dups -> %ld KiB after splits\n", size, cycles, dup_time,
               1e6 * dup_time / cycles, first, last, before, after_dup, after);
        CHECK(errs, !rss_meaningful || after - before < 4096, "RSS grew by %ld KiB", after - before);
        CHECK(errs, last < 3 * first + 0.05, "the late tenths took at least %.3f s, the early ones %.3f s", last, first);
    }
    return check_finish(errs);
}
