/*
 * cacheline.c - the cross-core cache-line round trip (not an MPI program).
 *
 * Two threads, pinned to CPUs 0 and 1, pass a token through one atomic word
 * on its own cache line: thread 0 writes an odd value and spins until it
 * sees the next even one, thread 1 answers each odd value with the next
 * even one. One round trip is two cache-line transfers; it is the floor of
 * any two-party synchronization (a 2-rank fence or barrier, a ping-pong)
 * between ranks on different cores.
 *
 * Output: "cacheline_roundtrip 64 NANOSECONDS ns" (median of --reps runs).
 * Build:  cc -O2 -pthread -o bench/cacheline bench/cacheline.c
 * Run:    bench/cacheline [--reps N] [--iters N]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Alignas(64) atomic_ulong token;
static long iters = 1000000;

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *answer(void *arg)
{
    (void)arg;
    pin(1);
    for (unsigned long v = 1; v < 2 * (unsigned long)iters; v += 2) {
        while (atomic_load_explicit(&token, memory_order_acquire) != v)
            __builtin_ia32_pause();
        atomic_store_explicit(&token, v + 1, memory_order_release);
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One run: nanoseconds per round trip. */
static double run(void)
{
    atomic_store(&token, 0);
    pthread_t t;
    pthread_create(&t, NULL, answer, NULL);
    pin(0);
    double start = now();
    for (unsigned long v = 1; v < 2 * (unsigned long)iters; v += 2) {
        atomic_store_explicit(&token, v, memory_order_release);
        while (atomic_load_explicit(&token, memory_order_acquire) != v + 1)
            __builtin_ia32_pause();
    }
    double elapsed = now() - start;
    pthread_join(t, NULL);
    return elapsed / (double)iters * 1e9;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--iters") == 0)
            iters = atol(argv[i + 1]);
    }
    if (reps < 1 || reps > 100 || iters < 1) {
        fprintf(stderr, "usage: cacheline [--reps 1..100] [--iters N]\n");
        return 1;
    }
    double results[100];
    for (int r = 0; r < reps; r++)
        results[r] = run();
    qsort(results, (size_t)reps, sizeof *results, compare);
    printf("# cacheline: token round trip between CPU 0 and CPU 1 through one cache line\n");
    printf("cacheline_roundtrip 64 %.1f ns\n", results[reps / 2]);
    return 0;
}
