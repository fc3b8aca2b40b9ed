/* MPI-IO internals: a view's mapping of data-stream ranges to file
 * extents (tiles, runs, merging, starts inside a run), byte offsets, and
 * the byte-range lock's conflict rule. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "io/io.h"
#include "unit_support.h"

/* A view of ints at displacement 100: per 32-byte tile, 4 bytes at 0 and
 * 8 bytes at 12 (12 data bytes per tile). */
static struct io_view sample_view(struct io_run runs[2])
{
    runs[0] = (struct io_run){ 0, 4, 0 };
    runs[1] = (struct io_run){ 12, 8, 4 };
    return (struct io_view){ .disp = 100, .etype = MPI_INT, .filetype = MPI_INT, .esize = 4, .runs = runs,
                             .nruns = 2, .tile_bytes = 12, .tile_extent = 32 };
}

static void test_extents(void)
{
    struct io_run runs[2];
    struct io_view v = sample_view(runs);
    struct io_extents e = { 0 };
    /* Stream bytes 6..30: the middle of run 1, all of tile 1, then tile 2's
     * first run and 2 bytes of its second. */
    CU_ASSERT_EQUAL_FATAL(view_extents(&v, 6, 24, &e), MPI_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(e.n, 5);
    CU_ASSERT(e.v[0].off == 100 + 14 && e.v[0].len == 6);
    CU_ASSERT(e.v[1].off == 100 + 32 && e.v[1].len == 4);
    CU_ASSERT(e.v[2].off == 100 + 44 && e.v[2].len == 8);
    CU_ASSERT(e.v[3].off == 100 + 64 && e.v[3].len == 4);
    CU_ASSERT(e.v[4].off == 100 + 76 && e.v[4].len == 2);
    extents_free(&e);
    CU_ASSERT_EQUAL(view_byte_offset(&v, 4), 112);
    CU_ASSERT_EQUAL(view_byte_offset(&v, 12), 132);
    CU_ASSERT_EQUAL(view_byte_offset(&v, 17), 145);
}

static void test_extents_merge(void)
{
    /* A filetype with no gap (runs 0..4 and 4..8, extent 8): one extent. */
    struct io_run runs[2] = { { 0, 4, 0 }, { 4, 4, 4 } };
    struct io_view v = { .disp = 0, .esize = 1, .runs = runs, .nruns = 2, .tile_bytes = 8, .tile_extent = 8 };
    struct io_extents e = { 0 };
    CU_ASSERT_EQUAL_FATAL(view_extents(&v, 3, 1000, &e), MPI_SUCCESS);
    CU_ASSERT_EQUAL(e.n, 1);
    CU_ASSERT(e.v[0].off == 3 && e.v[0].len == 1000);
    extents_free(&e);
    /* The identity view (no runs). */
    struct io_view id = { .disp = 0, .esize = 1, .runs = NULL, .nruns = 1, .tile_bytes = 1, .tile_extent = 1 };
    CU_ASSERT_EQUAL_FATAL(view_extents(&id, 50, 10, &e), MPI_SUCCESS);
    CU_ASSERT(e.n == 1 && e.v[0].off == 50 && e.v[0].len == 10);
    extents_free(&e);
}

struct locker {
    struct strand_file file;        /* its own handle: its own lock owner */
    MPI_Offset lo, hi;
    bool exclusive;
    atomic_int *inside;
    int seen_inside;
};

static void *take(void *arg)
{
    struct locker *l = arg;
    struct io_range r;
    CU_ASSERT_EQUAL(range_lock(&l->file, &r, l->lo, l->hi, l->exclusive), MPI_SUCCESS);
    l->seen_inside = atomic_fetch_add(l->inside, 1);
    atomic_fetch_sub(l->inside, 1);
    range_unlock(&l->file, &r);
    return NULL;
}

static struct strand_file handle_of(struct io_core *core)
{
    return (struct strand_file){ .core = core, .lock_fd = -1 };
}

/* The same scenario with the table of one node process and with the
 * fcntl locks used across node processes (each handle its own owner). */
static void range_lock_scenario(bool spans)
{
    struct io_core core;
    memset(&core, 0, sizeof core);
    pthread_mutex_init(&core.lock_mutex, NULL);
    pthread_cond_init(&core.lock_released, NULL);
    char path[] = "/tmp/strand-test-io-lock-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    core.spans = spans;
    core.path = path;
    core.amode = MPI_MODE_RDWR;
    atomic_int inside = 0;
    struct io_range a, b;
    struct strand_file fa = handle_of(&core), fb = handle_of(&core);
    /* Shared ranges coexist; a disjoint exclusive one too. */
    range_lock(&fa, &a, 0, 100, false);
    range_lock(&fb, &b, 50, 150, false);
    struct locker far = { handle_of(&core), 200, 300, true, &inside, -1 };
    pthread_t t;
    pthread_create(&t, NULL, take, &far);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(far.seen_inside, 0);
    /* An overlapping exclusive one waits until both are released. */
    struct locker near = { handle_of(&core), 90, 95, true, &inside, -1 };
    atomic_store(&inside, 1);       /* "we are inside" until we release */
    pthread_create(&t, NULL, take, &near);
    range_unlock(&fb, &b);
    usleep(20000);                  /* a wrong lock lets it in now, and it sees 1 */
    atomic_store(&inside, 0);
    range_unlock(&fa, &a);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(near.seen_inside, 0);
    CU_ASSERT_PTR_NULL(core.held);
    struct strand_file *handles[] = { &fa, &fb, &far.file, &near.file };
    for (int i = 0; i < 4; i++)
        if (handles[i]->lock_fd >= 0)
            close(handles[i]->lock_fd);
    unlink(path);
    pthread_mutex_destroy(&core.lock_mutex);
    pthread_cond_destroy(&core.lock_released);
}

static void test_range_locks(void)
{
    range_lock_scenario(false);
}

static void test_range_locks_fcntl(void)
{
    range_lock_scenario(true);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("io", NULL, NULL);
    CU_add_test(s, "view extents across runs and tiles", test_extents);
    CU_add_test(s, "adjacent runs merge; identity view", test_extents_merge);
    CU_add_test(s, "byte-range locks", test_range_locks);
    CU_add_test(s, "byte-range locks across node processes (fcntl)", test_range_locks_fcntl);
    return unit_run_registry();
}
