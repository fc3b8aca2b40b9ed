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
 *   interleaved  pingpong, with the two rings of the pair interleaved line
 *              by line: slot k of each direction shares cache line k, so
 *              an answer goes into the line its question came in. The
 *              successor's sequence word is cleared only when that slot
 *              last held the tail of an older message (the producer keeps
 *              one bit per slot), so a message of one slot writes one line.
 *   pairline   pingpong through one cache line shared by the pair, a half
 *              per direction (sequence word, data up to 24 bytes): one
 *              message in flight per direction, no ring. The floor of any
 *              design where an answer goes into the line just read.
 *
 * Output: "lanefloor_MODE SIZE NANOSECONDS ns" or
 *         "lanefloor_stream SIZE MBPS MB/s" (median of --reps runs).
 * Build:  cc -O2 -pthread -o bench/lanefloor bench/lanefloor.c
 * Run:    bench/lanefloor pingpong|stream|interleaved|pairline [--size B]
 *                         [--reps N] [--iters N]
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

/* interleaved: line k holds slot k of direction 0, then of direction 1. */
static _Alignas(64) unsigned char pair_lines[SLOTS][2 * SLOT_BYTES];
/* interleaved, per producer: slots that hold an older message's tail
 * (whose first word is data, not a sequence number). */
static _Alignas(64) uint64_t tail_slots[2][SLOTS / 64];

/* pairline: a half per direction. */
struct half {
    _Atomic uint64_t seq;
    unsigned char data[SLOT_BYTES - sizeof(uint64_t)];
};
static _Alignas(64) struct half pair_line[2];

enum mode { PINGPONG, STREAM, INTERLEAVED, PAIRLINE };
static enum mode mode;
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

/* ---- interleaved: the pair's two rings share their lines. In a
 * ping-pong the rings never fill (one message in flight), so no head. */

static unsigned char *pair_slot(int dir, uint64_t pos)
{
    return &pair_lines[pos % SLOTS][dir * SLOT_BYTES];
}

static bool holds_tail(int dir, uint64_t pos)
{
    return tail_slots[dir][pos % SLOTS / 64] >> (pos % 64) & 1;
}

static void mark_tail(int dir, uint64_t pos, bool tail)
{
    uint64_t bit = (uint64_t)1 << (pos % 64), *word = &tail_slots[dir][pos % SLOTS / 64];
    *word = tail ? *word | bit : *word & ~bit;
}

/* The data of a message spans slots, a slot's worth per line. */
static void pair_copy(int dir, uint64_t start, unsigned char *out, const unsigned char *in)
{
    size_t done = 0;
    for (uint64_t pos = start; done < size; pos++) {
        size_t offset = pos == start ? HEADER_BYTES : 0, n = SLOT_BYTES - offset;
        n = n < size - done ? n : size - done;
        if (in != NULL)
            memcpy(pair_slot(dir, pos) + offset, in + done, n);
        else
            memcpy(out + done, pair_slot(dir, pos) + offset, n);
        done += n;
    }
}

static uint64_t pair_put(int dir, uint64_t tail, const unsigned char *data)
{
    uint64_t k = slots_per_message(), start = message_start(tail);
    pair_copy(dir, start, NULL, data);
    for (uint64_t pos = start + 1; pos < start + k; pos++)
        mark_tail(dir, pos, true);
    mark_tail(dir, start, false);
    if (holds_tail(dir, start + k))
        atomic_store_explicit((_Atomic uint64_t *)pair_slot(dir, start + k), 0, memory_order_relaxed);
    mark_tail(dir, start + k, false);
    atomic_store_explicit((_Atomic uint64_t *)pair_slot(dir, start), start + 1, memory_order_release);
    return start + k;
}

static uint64_t pair_get(int dir, uint64_t head, unsigned char *out)
{
    uint64_t start = message_start(head);
    while (atomic_load_explicit((_Atomic uint64_t *)pair_slot(dir, start), memory_order_acquire) != start + 1)
        __builtin_ia32_pause();
    pair_copy(dir, start, out, NULL);
    return start + slots_per_message();
}

/* ---- pairline: one message in flight per direction, in its half. */

static void half_put(int dir, uint64_t n, const unsigned char *data)
{
    memcpy(pair_line[dir].data, data, size);
    atomic_store_explicit(&pair_line[dir].seq, n + 1, memory_order_release);
}

static void half_get(int dir, uint64_t n, unsigned char *out)
{
    while (atomic_load_explicit(&pair_line[dir].seq, memory_order_acquire) != n + 1)
        __builtin_ia32_pause();
    memcpy(out, pair_line[dir].data, size);
}

/* Thread `me` sends message i (thread 0) or answers it (thread 1). */
static void exchange(int me, long i, uint64_t *head, uint64_t *tail, uint64_t *room_end)
{
    int out = me, in = 1 - me;
    if (me == 1) {
        switch (mode) {
        case PINGPONG: case STREAM:
            /* streaming, a drain takes 8 messages at a time */
            *head = get(&rings[0], *head, dst[1], mode == PINGPONG || i % 8 == 7);
            break;
        case INTERLEAVED: *head = pair_get(in, *head, dst[1]); break;
        case PAIRLINE: half_get(in, (uint64_t)i, dst[1]); break;
        }
        if (mode == STREAM)
            return;
    }
    switch (mode) {
    case PINGPONG: case STREAM: *tail = put(&rings[out], *tail, room_end, src[out]); break;
    case INTERLEAVED: *tail = pair_put(out, *tail, src[out]); break;
    case PAIRLINE: half_put(out, (uint64_t)i, src[out]); break;
    }
    if (me == 1 || mode == STREAM)
        return;
    switch (mode) {
    case PINGPONG: *head = get(&rings[1], *head, dst[0], true); break;
    case INTERLEAVED: *head = pair_get(in, *head, dst[0]); break;
    case PAIRLINE: half_get(in, (uint64_t)i, dst[0]); break;
    case STREAM: break;
    }
}

static void *answer(void *arg)
{
    (void)arg;
    pin(1);
    uint64_t head = 0, tail = 0, room_end = SLOTS;
    for (long i = 0; i < iters; i++)
        exchange(1, i, &head, &tail, &room_end);
    return NULL;
}

/* One run: ns per one-way message (pingpong) or MB/s (stream). */
static double run(void)
{
    memset(rings, 0, sizeof rings);
    memset(pair_lines, 0, sizeof pair_lines);
    memset(tail_slots, 0, sizeof tail_slots);
    memset(pair_line, 0, sizeof pair_line);
    pthread_t t;
    pthread_create(&t, NULL, answer, NULL);
    pin(0);
    uint64_t head = 0, tail = 0, room_end = SLOTS;
    double start = now();
    for (long i = 0; i < iters; i++)
        exchange(0, i, &head, &tail, &room_end);
    pthread_join(t, NULL);
    double elapsed = now() - start;
    if (mode != STREAM)
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
    static const char *const names[] = { "pingpong", "stream", "interleaved", "pairline" };
    int reps = 5, m = 0;
    while (argc >= 2 && m < 4 && strcmp(argv[1], names[m]) != 0)
        m++;
    if (m == 4) {
        fprintf(stderr, "usage: lanefloor pingpong|stream|interleaved|pairline [--size B] [--reps N] [--iters N]\n");
        return 1;
    }
    mode = (enum mode)m;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--size") == 0)
            size = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--iters") == 0)
            iters = atol(argv[i + 1]);
    }
    size_t max = mode == PAIRLINE ? sizeof pair_line[0].data : MAX_SIZE;
    if (reps < 1 || reps > 100 || iters < 1 || size > max) {
        fprintf(stderr, "lanefloor: --reps 1..100, --iters >= 1, --size <= %zu\n", max);
        return 1;
    }
    double results[100];
    for (int r = 0; r < reps; r++)
        results[r] = run();
    qsort(results, (size_t)reps, sizeof *results, compare);
    if (mode == STREAM)
        printf("lanefloor_stream %zu %.0f MB/s\n", size, results[reps / 2]);
    else
        printf("lanefloor_%s %zu %.1f ns\n", names[m], size, results[reps / 2]);
    return 0;
}
