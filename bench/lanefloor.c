/*
 * lanefloor.c - what a lane costs with no MPI around it (not an MPI program).
 *
 * Two threads, pinned to CPUs 0 and 1, pass messages through rings laid
 * out as Strand's lanes are (src/pt2pt/lane.h): 32-byte slots, a 24-byte
 * header whose first word is the sequence number, the data after it, the
 * successor slot's sequence word cleared before the release store that
 * publishes. Nothing else: no matching, no requests, no waiting policy.
 *
 *   pingpong   one ring each way; thread 0 sends a message of --size bytes,
 *              thread 1 answers each with one of the same size. One-way
 *              time in ns: the floor of a ping-pong between two ranks for
 *              any design with a channel per direction (the cache-line
 *              figure of bench/cacheline, one line for both directions,
 *              is lower still).
 *   stream     one ring of 32 KiB; thread 0 sends --size-byte messages as
 *              fast as the ring has room, thread 1 copies each out. MB/s:
 *              the floor of a streaming rate where every message's bytes
 *              cross between the cores through a buffer (eager, two copies).
 *
 * Output: "lanefloor_pingpong SIZE NANOSECONDS ns" or
 *         "lanefloor_stream SIZE MBPS MB/s" (median of --reps runs).
 * Build:  cc -O2 -pthread -o bench/lanefloor bench/lanefloor.c
 * Run:    bench/lanefloor pingpong|stream [--size B] [--reps N] [--iters N]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SLOTS = 1024, SLOT_BYTES = 32, HEADER_BYTES = 24, MAX_SIZE = 1024 };

struct ring {
    _Alignas(64) _Atomic uint64_t head;   /* consumer's position, published */
    _Alignas(64) unsigned char slots[SLOTS * SLOT_BYTES];
};

static struct ring rings[2];
static size_t size = 8;
static long iters = 1000000;
static unsigned char src[2][MAX_SIZE], dst[2][MAX_SIZE];

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t slots_per_message(void)
{
    return (HEADER_BYTES + size + SLOT_BYTES - 1) / SLOT_BYTES;
}

static _Atomic uint64_t *seq_at(struct ring *r, uint64_t pos)
{
    return (_Atomic uint64_t *)&r->slots[pos % SLOTS * SLOT_BYTES];
}

/* A message never wraps: both sides skip to the ring's start alike. */
static uint64_t message_start(uint64_t pos)
{
    uint64_t k = slots_per_message();
    return pos % SLOTS + k > SLOTS ? pos + (SLOTS - pos % SLOTS) : pos;
}

/* Producer: waits for room (the message and its successor slot), writes,
 * clears the successor's sequence word, publishes. Returns the new tail. */
static uint64_t put(struct ring *r, uint64_t tail, uint64_t *room_end, const unsigned char *data)
{
    uint64_t k = slots_per_message(), start = message_start(tail);
    while (start + k + 1 > *room_end) {
        *room_end = atomic_load_explicit(&r->head, memory_order_acquire) + SLOTS;
        if (start + k + 1 > *room_end)
            __builtin_ia32_pause();
    }
    memcpy(&r->slots[start % SLOTS * SLOT_BYTES + HEADER_BYTES], data, size);
    atomic_store_explicit(seq_at(r, start + k), 0, memory_order_relaxed);
    atomic_store_explicit(seq_at(r, start), start + 1, memory_order_release);
    return start + k;
}

/* Consumer: polls the message's sequence word, copies the data out, and
 * gives the slots back if `publish` (a drain publishes once at its end). */
static uint64_t get(struct ring *r, uint64_t head, unsigned char *out, bool publish)
{
    uint64_t start = message_start(head);
    while (atomic_load_explicit(seq_at(r, start), memory_order_acquire) != start + 1)
        __builtin_ia32_pause();
    memcpy(out, &r->slots[start % SLOTS * SLOT_BYTES + HEADER_BYTES], size);
    head = start + slots_per_message();
    if (publish)
        atomic_store_explicit(&r->head, head, memory_order_release);
    return head;
}

static bool mode_pingpong;

static void *answer(void *arg)
{
    (void)arg;
    pin(1);
    uint64_t head = 0, tail = 0, room_end = SLOTS;
    for (long i = 0; i < iters; i++) {
        /* streaming, a drain takes 8 messages at a time */
        head = get(&rings[0], head, dst[1], mode_pingpong || i % 8 == 7);
        if (mode_pingpong)
            tail = put(&rings[1], tail, &room_end, src[1]);
    }
    return NULL;
}

/* One run: ns per one-way message (pingpong) or MB/s (stream). */
static double run(void)
{
    memset(rings, 0, sizeof rings);
    pthread_t t;
    pthread_create(&t, NULL, answer, NULL);
    pin(0);
    uint64_t head = 0, tail = 0, room_end = SLOTS;
    double start = now();
    for (long i = 0; i < iters; i++) {
        tail = put(&rings[0], tail, &room_end, src[0]);
        if (mode_pingpong)
            head = get(&rings[1], head, dst[0], true);
    }
    pthread_join(t, NULL);
    double elapsed = now() - start;
    if (mode_pingpong)
        return elapsed / (double)iters / 2 * 1e9;
    return (double)iters * (double)size / elapsed / 1e6;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int reps = 5;
    if (argc < 2 || (strcmp(argv[1], "pingpong") != 0 && strcmp(argv[1], "stream") != 0)) {
        fprintf(stderr, "usage: lanefloor pingpong|stream [--size B] [--reps N] [--iters N]\n");
        return 1;
    }
    mode_pingpong = strcmp(argv[1], "pingpong") == 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--size") == 0)
            size = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--iters") == 0)
            iters = atol(argv[i + 1]);
    }
    if (reps < 1 || reps > 100 || iters < 1 || size > MAX_SIZE) {
        fprintf(stderr, "lanefloor: --reps 1..100, --iters >= 1, --size <= %d\n", MAX_SIZE);
        return 1;
    }
    double results[100];
    for (int r = 0; r < reps; r++)
        results[r] = run();
    qsort(results, (size_t)reps, sizeof *results, compare);
    if (mode_pingpong)
        printf("lanefloor_pingpong %zu %.1f ns\n", size, results[reps / 2]);
    else
        printf("lanefloor_stream %zu %.0f MB/s\n", size, results[reps / 2]);
    return 0;
}
