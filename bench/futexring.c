/*
 * futexring.c - the kernel's floor of an oversubscribed hand-off (not an
 * MPI program).
 *
 * N threads pass a token around a ring the way ranks that outnumber the
 * cores do in bench/ring.c, with nothing but an atomic word per thread and
 * the futex system call: thread i waits until its word reaches the lap
 * number (futex_wait while it does not), then raises the word of thread
 * i+1 and wakes it if it announced itself asleep. No spinning, no
 * sched_yield, no pinning: every hop is one futex_wake and one futex_wait,
 * the least any design that sleeps between hand-offs pays. Run beside
 * `mpiexec -n N bench/ring` (same N, same moment): the gap between the two
 * is what the MPI layer adds; both grow together with the machine's load.
 *
 * Checked: every thread sees each lap number exactly once, in order (the
 * word only ever grows by one per lap), and thread 0 finds the token back
 * after a lap.
 *
 * With --pages K, each thread also writes one word in each of K pages of
 * its own per hop (the pages of all threads interleaved in one block, so
 * no two share a page): the floor of a hand-off whose every hop touches K
 * pages last used a lap ago, as a rank's stack, request, mailbox and
 * program copy are (doc/performance.md §25).
 *
 * With --sharers S, each thread also reads a word of a page mapped at an
 * address of its own, S threads' mappings backed by one physical page (a
 * memfd's), as the code of S program copies is: a hypervisor that shadows
 * page tables makes that dear past about 1000 (doc/performance.md §29).
 *
 * Output: "futexring N US_PER_HOP us" (median of --reps runs).
 * Build:  cc -O2 -pthread -o bench/futexring bench/futexring.c
 * Run:    bench/futexring [--threads N] [--laps L] [--reps R] [--pages K] [--sharers S]
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* One thread's mailbox: the last lap it was handed, and whether it sleeps. */
struct seat {
    _Alignas(64) atomic_uint lap;
    atomic_int sleeping;
};

/* --sharers: the threads' mappings lie this far apart, as program copies
 * of a few pages do (with the mappings adjacent, the cost past 1000
 * sharers mostly disappears: neighbouring entries are refilled together). */
enum { PAGE_BYTES = 4096, SHARED_STRIDE = 8 * PAGE_BYTES };

struct ring {
    struct seat *seats;
    int threads;
    unsigned laps;
    int pages;                      /* touched per thread per hop */
    unsigned char *touched;         /* pages * threads pages; thread i's page k is k * threads + i */
    volatile const unsigned **shared_words; /* per thread, in a page S threads share, or NULL */
    atomic_int failed;
};

struct member {
    struct ring *ring;
    int index;
};

static void futex_wait(atomic_uint *word, unsigned expected)
{
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(atomic_uint *word)
{
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Sleeps until seat's lap reaches `lap`. seq_cst on both sides (announce,
 * then re-check; raise, then read `sleeping`): no lost wake-up. */
static void wait_for_lap(struct seat *s, unsigned lap)
{
    for (;;) {
        unsigned seen = atomic_load(&s->lap);
        if (seen >= lap)
            return;
        atomic_fetch_add(&s->sleeping, 1);
        if (atomic_load(&s->lap) == seen)
            futex_wait(&s->lap, seen);
        atomic_fetch_sub(&s->sleeping, 1);
    }
}

static void hand_lap(struct seat *s)
{
    atomic_fetch_add(&s->lap, 1);
    if (atomic_load(&s->sleeping) != 0)
        futex_wake(&s->lap);
}

/* Writes a word in each of this thread's pages (they were last written a
 * lap ago). */
static void touch_pages(const struct ring *r, int index, unsigned lap)
{
    for (int k = 0; k < r->pages; k++) {
        volatile unsigned *word = (volatile unsigned *)(r->touched + ((size_t)k * r->threads + index) * PAGE_BYTES);
        *word = lap;
    }
}

static void *member_run(void *arg)
{
    struct member *m = arg;
    struct ring *r = m->ring;
    struct seat *mine = &r->seats[m->index], *next = &r->seats[(m->index + 1) % r->threads];
    for (unsigned lap = 1; lap <= r->laps; lap++) {
        if (m->index == 0)
            hand_lap(next);
        wait_for_lap(mine, lap);
        /* the token is here: nobody can raise our word again before we pass it */
        if (atomic_load(&mine->lap) != lap)
            atomic_store(&r->failed, 1);
        touch_pages(r, m->index, lap);
        if (r->shared_words != NULL && *r->shared_words[m->index] != 0)
            atomic_store(&r->failed, 1);
        if (m->index != 0)
            hand_lap(next);
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Maps, for each thread, a page of a memfd at an address of its own,
 * `sharers` threads per memfd page.  The mappings stay until exit. */
static volatile const unsigned **map_shared_pages(int threads, int sharers)
{
    size_t pages = ((size_t)threads + (size_t)sharers - 1) / (size_t)sharers;
    volatile const unsigned **words = calloc((size_t)threads, sizeof *words);
    int fd = memfd_create("futexring-shared", MFD_CLOEXEC);
    unsigned char *area = mmap(NULL, (size_t)threads * SHARED_STRIDE, PROT_NONE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (words == NULL || fd < 0 || ftruncate(fd, (off_t)(pages * PAGE_BYTES)) != 0 ||
        area == MAP_FAILED) {
        fprintf(stderr, "futexring: cannot set up the shared pages\n");
        exit(1);
    }
    for (int i = 0; i < threads; i++) {
        void *at = area + (size_t)i * SHARED_STRIDE;
        if (mmap(at, PAGE_BYTES, PROT_READ, MAP_SHARED | MAP_FIXED, fd,
                 (off_t)((size_t)i / (size_t)sharers * PAGE_BYTES)) != at) {
            fprintf(stderr, "futexring: cannot map a shared page (vm.max_map_count?)\n");
            exit(1);
        }
        words[i] = at;
    }
    close(fd);
    return words;
}

/* One run: microseconds per hop, or a negative value if the ring broke. */
static double run(int threads, unsigned laps, int pages, volatile const unsigned **shared_words)
{
    struct ring r = { .threads = threads, .laps = laps, .pages = pages, .shared_words = shared_words };
    r.seats = aligned_alloc(64, sizeof *r.seats * (size_t)threads);
    size_t touched_bytes = (size_t)pages * (size_t)threads * PAGE_BYTES;
    r.touched = pages > 0 ? aligned_alloc(PAGE_BYTES, touched_bytes) : NULL;
    if (pages > 0 && r.touched != NULL)
        memset(r.touched, 0, touched_bytes);
    struct member *members = calloc((size_t)threads, sizeof *members);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    if (r.seats == NULL || members == NULL || ids == NULL || (pages > 0 && r.touched == NULL)) {
        fprintf(stderr, "futexring: out of memory\n");
        exit(1);
    }
    memset(r.seats, 0, sizeof *r.seats * (size_t)threads);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < threads; i++)
        members[i] = (struct member){ .ring = &r, .index = i };
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&ids[i], &attr, member_run, &members[i]) != 0) {
            fprintf(stderr, "futexring: cannot start thread %d\n", i);
            exit(1);
        }
    }
    usleep(100000); /* let every thread reach its first futex_wait */
    double start = now();
    member_run(&members[0]);
    double elapsed = now() - start;
    for (int i = 1; i < threads; i++)
        pthread_join(ids[i], NULL);
    pthread_attr_destroy(&attr);
    bool ok = !atomic_load(&r.failed) && atomic_load(&r.seats[0].lap) == laps;
    free(ids);
    free(members);
    free(r.seats);
    free(r.touched);
    return ok ? elapsed / ((double)laps * threads) * 1e6 : -1.0;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int threads = 1024, reps = 3, pages = 0, sharers = 0;
    long laps = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--laps") == 0)
            laps = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--pages") == 0)
            pages = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--sharers") == 0)
            sharers = atoi(argv[i + 1]);
    }
    if (laps == 0)
        laps = threads < 200000 ? 200000 / threads : 1; /* about 200000 hops */
    if (threads < 2 || threads > 65536 || laps < 1 || laps > INT_MAX || reps < 1 || reps > 100 || pages < 0 ||
        pages > 64 || sharers < 0) {
        fprintf(stderr, "usage: futexring [--threads 2..65536] [--laps N] [--reps 1..100] [--pages 0..64]"
                " [--sharers S]\n");
        return 1;
    }
    volatile const unsigned **shared_words = sharers > 0 ? map_shared_pages(threads, sharers) : NULL;
    double results[100];
    for (int r = 0; r < reps; r++) {
        results[r] = run(threads, (unsigned)laps, pages, shared_words);
        if (results[r] < 0) {
            fprintf(stderr, "futexring: a thread missed or repeated a lap\n");
            return 1;
        }
    }
    qsort(results, (size_t)reps, sizeof *results, compare);
    printf("# futexring: us per hop of a token passed around %d threads with futex wait/wake only"
           " (and %d pages of its own written per hop; %d threads per shared page read, 0: none)\n",
           threads, pages, sharers);
    printf("futexring %d %.3f us\n", threads, results[reps / 2]);
    return 0;
}
