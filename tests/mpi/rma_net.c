/*
 * rma_net: one-sided communication with every rank a target of local and
 * remote origins alike (written for mpiexec --nodes K, where neighbours
 * and rank 0 live in other node processes for some ranks; correct in one
 * node process too):
 *   - fence: put and get of every rank's slot in every window, asserts
 *     (NOPRECEDE, NOSTORE, NOSUCCEED), MPI_MODE_NOPUT reported as
 *     MPI_ERR_RMA_CONFLICT only where it was given;
 *   - large transfers split into several frames (3 MiB at up to 8 ranks)
 *     and a target layout of 20000 blocks, both ways;
 *   - derived datatypes at origin and target (vector, indexed, struct
 *     with a gap) for put, get and accumulate;
 *   - accumulate with every predefined op (MPI_REPLACE included) on
 *     integers, doubles and the padded pair MPI_DOUBLE_INT; every rank
 *     adding into one element of rank 0 under a shared lock (element-wise
 *     atomicity between local and remote origins);
 *   - exclusive locks: a read-modify-write counter on rank 0 from every
 *     rank (exclusion between local and remote origins), shared locks on
 *     every target, MPI_MODE_NOCHECK;
 *   - post/start/complete/wait over a ring, three epochs, MPI_Win_test;
 *   - under load: 100 puts per rank to pseudo-random targets per epoch;
 *   - attributes, the group, error handlers and errors (target rank out
 *     of the window, displacement outside it) under MPI_ERRORS_RETURN;
 *   - windows freed right after an unlock, again and again.
 * Minimum ranks: 2.
 */
#include <stdint.h>
#include <string.h>

#include "testutil.h"

enum { SLOTS_PER_RANK = 4, COUNTER_ROUNDS = 10, LOAD_PUTS = 100 };

static int value_of(int origin, int target, int i)
{
    return origin * 100000 + target * 100 + i;
}

/* Every rank puts SLOTS_PER_RANK ints into its slot of every window, then reads them back. */
static int fence_all_to_all(int rank, int size)
{
    int errs = 0;
    int n = size * SLOTS_PER_RANK;
    int *mem = tu_malloc((size_t)n * sizeof *mem), *got = tu_malloc((size_t)n * sizeof *got);
    int src[SLOTS_PER_RANK * 2];
    memset(mem, 0xff, (size_t)n * sizeof *mem);
    MPI_Win win;
    CHECK_RC(MPI_Win_create(mem, (MPI_Aint)n * (MPI_Aint)sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int t = 0; t < size; t++) {
        for (int i = 0; i < SLOTS_PER_RANK; i++)
            src[t % 2 * SLOTS_PER_RANK + i] = value_of(rank, t, i);
        CHECK_RC(MPI_Put(&src[t % 2 * SLOTS_PER_RANK], SLOTS_PER_RANK, MPI_INT, t, rank * SLOTS_PER_RANK,
                         SLOTS_PER_RANK, MPI_INT, win));
        if (t % 2 == 1) {
            /* The origin buffer may be reused only after the epoch: a fence per pair of targets. */
            CHECK_RC(MPI_Win_fence(0, win));
        }
    }
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSTORE, win));
    for (int o = 0; o < size; o++)
        for (int i = 0; i < SLOTS_PER_RANK; i++)
            CHECK(mem[o * SLOTS_PER_RANK + i] == value_of(o, rank, i), "fence put from %d slot %d: got %d", o, i,
                  mem[o * SLOTS_PER_RANK + i]);
    for (int t = 0; t < size; t++)
        CHECK_RC(MPI_Get(&got[t * SLOTS_PER_RANK], SLOTS_PER_RANK, MPI_INT, t, rank * SLOTS_PER_RANK, SLOTS_PER_RANK,
                         MPI_INT, win));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOPUT | MPI_MODE_NOSUCCEED, win));
    for (int t = 0; t < size; t++)
        for (int i = 0; i < SLOTS_PER_RANK; i++)
            CHECK(got[t * SLOTS_PER_RANK + i] == value_of(rank, t, i), "fence get from %d slot %d: got %d", t, i,
                  got[t * SLOTS_PER_RANK + i]);

    /* MPI_MODE_NOPUT is reported where it was given (odd ranks give it). */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_RC(MPI_Win_fence(rank % 2 ? MPI_MODE_NOPUT : 0, win));
    int right = (rank + 1) % size, v = 1;
    int rc = MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    int want = right % 2 ? MPI_ERR_RMA_CONFLICT : MPI_SUCCESS;
    CHECK(tu_class(rc) == want, "put to %d after its fence assert: class %d, expected %d", right, tu_class(rc), want);
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK_RC(MPI_Win_free(&win));
    free(mem);
    free(got);
    return errs;
}

/* Transfers larger than one frame, and a target layout of many blocks. */
static int large_transfers(int rank, int size)
{
    int errs = 0;
    size_t bytes = size <= 8 ? (3u << 20) + 12345 : 64u << 10;
    size_t ints = 40000;
    size_t mem_bytes = bytes > ints * sizeof(int) ? bytes : ints * sizeof(int);
    unsigned char *mem = tu_malloc(mem_bytes), *src = tu_malloc(bytes), *back = tu_malloc(bytes);
    memset(mem, 0, mem_bytes);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    tu_fill(src, bytes, (unsigned)rank + 1);
    MPI_Win win;
    CHECK_RC(MPI_Win_create(mem, (MPI_Aint)mem_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(src, (int)bytes, MPI_BYTE, right, 0, (int)bytes, MPI_BYTE, win));
    CHECK_RC(MPI_Win_fence(0, win));
    errs += tu_check_data(mem, bytes, bytes, (unsigned)left + 1, "large put");
    memset(back, 0, bytes);
    CHECK_RC(MPI_Get(back, (int)bytes, MPI_BYTE, right, 0, (int)bytes, MPI_BYTE, win));
    CHECK_RC(MPI_Win_fence(0, win));
    errs += tu_check_data(back, bytes, bytes, (unsigned)rank + 1, "large get");

    /* 20000 one-int blocks at the target (every other int), contiguous at the origin. */
    int nblocks = 20000;
    MPI_Datatype every_other;
    MPI_Type_vector(nblocks, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int *vals = tu_malloc((size_t)nblocks * sizeof *vals), *vback = tu_malloc((size_t)nblocks * sizeof *vback);
    for (int i = 0; i < nblocks; i++)
        vals[i] = rank * 1000000 + i;
    CHECK_RC(MPI_Win_fence(0, win));
    memset(mem, 0, mem_bytes);
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(vals, nblocks, MPI_INT, right, 0, 1, every_other, win));
    CHECK_RC(MPI_Win_fence(0, win));
    const int *imem = (const int *)mem;
    for (int i = 0; i < 2 * nblocks; i++) {
        int want = i % 2 ? 0 : left * 1000000 + i / 2;
        if (imem[i] != want) {
            CHECK(0, "many-block put: int %d is %d, expected %d", i, imem[i], want);
            break;
        }
    }
    CHECK_RC(MPI_Get(vback, nblocks, MPI_INT, right, 0, 1, every_other, win));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < nblocks; i++)
        if (vback[i] != vals[i]) {
            CHECK(0, "many-block get: int %d is %d, expected %d", i, vback[i], vals[i]);
            break;
        }
    MPI_Type_free(&every_other);
    CHECK_RC(MPI_Win_free(&win));
    free(vals);
    free(vback);
    free(mem);
    free(src);
    free(back);
    return errs;
}

struct gap {
    double d;
    char pad[8];
    int i;
};

/* Derived types on both sides: struct with a gap at the origin, vector and indexed at the target. */
static int derived_types(int rank, int size)
{
    int errs = 0;
    enum { N = 6 };
    double mem[4 * N];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win win;
    for (int i = 0; i < 4 * N; i++)
        mem[i] = -1.0;
    CHECK_RC(MPI_Win_create(mem, sizeof mem, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));

    /* Origin: N doubles spread over structs (skipping pad and int). Target: every third double. */
    struct gap src[N];
    for (int i = 0; i < N; i++)
        src[i] = (struct gap){ .d = rank + i * 0.5, .i = -7 };
    MPI_Datatype gap_type, gap_resized, third;
    int one = 1;
    MPI_Aint disp = 0;
    MPI_Datatype dbl = MPI_DOUBLE;
    MPI_Type_create_struct(1, &one, &disp, &dbl, &gap_type);
    MPI_Type_create_resized(gap_type, 0, sizeof(struct gap), &gap_resized);
    MPI_Type_commit(&gap_resized);
    MPI_Type_vector(N, 1, 3, MPI_DOUBLE, &third);
    MPI_Type_commit(&third);
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(src, N, gap_resized, right, 1, 1, third, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int i = 0; i < 4 * N; i++) {
        double want = i >= 1 && (i - 1) % 3 == 0 && (i - 1) / 3 < N ? left + (i - 1) / 3 * 0.5 : -1.0;
        CHECK(mem[i] == want, "derived put: double %d is %g, expected %g", i, mem[i], want);
    }
    /* Accumulate through the same layouts (once everyone checked), then get through an indexed origin layout. */
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Accumulate(src, N, gap_resized, right, 1, 1, third, MPI_SUM, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        CHECK(mem[1 + 3 * i] == 2 * (left + i * 0.5), "derived accumulate: element %d is %g", i, mem[1 + 3 * i]);
    int lens[2] = { 2, N - 2 }, displs[2] = { 0, 10 };
    MPI_Datatype split;
    MPI_Type_indexed(2, lens, displs, MPI_DOUBLE, &split);
    MPI_Type_commit(&split);
    double back[10 + N];
    for (int i = 0; i < 10 + N; i++)
        back[i] = 42.0;
    CHECK_RC(MPI_Get(back, 1, split, right, 1, 1, third, win));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < 10 + N; i++) {
        int k = i < 2 ? i : i >= 10 && i < 8 + N ? i - 8 : -1;
        double want = k < 0 ? 42.0 : 2 * (rank + k * 0.5);
        CHECK(back[i] == want, "derived get: double %d is %g, expected %g", i, back[i], want);
    }
    MPI_Type_free(&split);
    MPI_Type_free(&third);
    MPI_Type_free(&gap_type);
    MPI_Type_free(&gap_resized);
    CHECK_RC(MPI_Win_free(&win));
    return errs;
}

struct dint {
    double v;
    int i;
};

/* Every predefined operation, applied by every rank to every target under fences. */
static int accumulate_ops(int rank, int size)
{
    int errs = 0;
    enum { NI = 10 };
    int imem[NI];
    double dmem[2];
    struct dint pmem[2];
    MPI_Win iwin, dwin, pwin;
    CHECK_RC(MPI_Win_create(imem, sizeof imem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &iwin));
    CHECK_RC(MPI_Win_create(dmem, sizeof dmem, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &dwin));
    CHECK_RC(MPI_Win_create(pmem, sizeof pmem, sizeof(struct dint), MPI_INFO_NULL, MPI_COMM_WORLD, &pwin));
    int init[NI] = { 0, 1000000, 0, 1, 0, 0, 1, 0, 0, -5 };
    memcpy(imem, init, sizeof imem);
    dmem[0] = 0.0, dmem[1] = 1.0;
    pmem[0] = (struct dint){ -1.0, -1 };
    pmem[1] = (struct dint){ 1e9, -1 };
    MPI_Op const ops[NI] = { MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR,
                             MPI_REPLACE };
    CHECK_RC(MPI_Win_fence(0, iwin));
    CHECK_RC(MPI_Win_fence(0, dwin));
    CHECK_RC(MPI_Win_fence(0, pwin));
    for (int t = 0; t < size; t++) {
        int v[NI] = { rank, rank, rank, rank < 3 ? 2 : 1, 1 << (rank % 30), 1 << (rank % 30), rank != t, rank == 1,
                      1, rank };
        for (int k = 0; k < NI; k++)
            if (ops[k] != MPI_REPLACE || rank == size - 1)
                CHECK_RC(MPI_Accumulate(&v[k], 1, MPI_INT, t, k, 1, MPI_INT, ops[k], iwin));
        double dv[2] = { rank + 0.25, 1.0 };
        CHECK_RC(MPI_Accumulate(dv, 2, MPI_DOUBLE, t, 0, 2, MPI_DOUBLE, MPI_SUM, dwin));
        struct dint pv[2] = { { (double)(rank % 3), rank }, { (double)(rank % 3), rank } };
        CHECK_RC(MPI_Accumulate(&pv[0], 1, MPI_DOUBLE_INT, t, 0, 1, MPI_DOUBLE_INT, MPI_MAXLOC, pwin));
        CHECK_RC(MPI_Accumulate(&pv[1], 1, MPI_DOUBLE_INT, t, 1, 1, MPI_DOUBLE_INT, MPI_MINLOC, pwin));
        /* The origin values must stay until the epoch ends. */
        CHECK_RC(MPI_Win_fence(0, iwin));
        CHECK_RC(MPI_Win_fence(0, dwin));
        CHECK_RC(MPI_Win_fence(0, pwin));
    }
    int bits = 0;
    for (int r = 0; r < size; r++)
        bits |= 1 << (r % 30);
    int xbits = 0;
    for (int r = 0; r < size; r++)
        xbits ^= 1 << (r % 30);
    int prod = 1;
    for (int r = 0; r < size && r < 3; r++)
        prod *= 2;
    int want[NI] = { size - 1, 0, size * (size - 1) / 2, prod, bits, xbits, size == 1, size > 1, size % 2,
                     size - 1 };
    for (int k = 0; k < NI; k++)
        CHECK(imem[k] == want[k], "accumulate op %d on an int: %d, expected %d", k, imem[k], want[k]);
    double dsum = 0;
    for (int r = 0; r < size; r++)
        dsum += r + 0.25;
    CHECK(dmem[0] == dsum && dmem[1] == 1.0 + size, "accumulate on doubles: %g %g", dmem[0], dmem[1]);
    /* MAXLOC: the largest value (2, or less with few ranks), lowest rank holding it; MINLOC: value 0, rank 0. */
    int top = size >= 3 ? 2 : size - 1;
    CHECK(pmem[0].v == top && pmem[0].i == top, "MAXLOC on MPI_DOUBLE_INT: (%g, %d)", pmem[0].v, pmem[0].i);
    CHECK(pmem[1].v == 0.0 && pmem[1].i == 0, "MINLOC on MPI_DOUBLE_INT: (%g, %d)", pmem[1].v, pmem[1].i);
    CHECK_RC(MPI_Win_free(&iwin));
    CHECK_RC(MPI_Win_free(&dwin));
    CHECK_RC(MPI_Win_free(&pwin));
    return errs;
}

/* Passive target on rank 0: exclusive-lock accumulates (combined without
 * atomics at the target: only exclusion keeps the sum exact), shared-lock
 * accumulates (element-wise atomic), reads under shared locks of every
 * target, and MPI_MODE_NOCHECK. */
static int locks(int rank, int size)
{
    int errs = 0;
    long mem[3] = { 0, 0, rank };
    MPI_Win win;
    CHECK_RC(MPI_Win_create(mem, sizeof mem, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    long one = 1;
    for (int k = 0; k < COUNTER_ROUNDS; k++) {
        CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_RC(MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
        CHECK_RC(MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
        CHECK_RC(MPI_Win_unlock(0, win));
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_RC(MPI_Accumulate(&one, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, win));
        CHECK_RC(MPI_Win_unlock(0, win));
    }
    for (int t = 0; t < size; t++) {
        long seen = -1;
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        CHECK_RC(MPI_Get(&seen, 1, MPI_LONG, t, 2, 1, MPI_LONG, win));
        CHECK_RC(MPI_Win_unlock(t, win));
        CHECK(seen == t, "shared-lock get from %d: %ld", t, seen);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(mem[0] == 2L * size * COUNTER_ROUNDS, "exclusive-lock accumulates: %ld, expected %ld", mem[0],
              2L * size * COUNTER_ROUNDS);
        CHECK(mem[1] == (long)size * COUNTER_ROUNDS, "shared-lock accumulates: %ld, expected %ld", mem[1],
              (long)size * COUNTER_ROUNDS);
    }
    /* NOCHECK: nobody else locks the right neighbour's third slot meanwhile. */
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long mine = 1000 + rank;
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, MPI_MODE_NOCHECK, win));
    CHECK_RC(MPI_Put(&mine, 1, MPI_LONG, right, 2, 1, MPI_LONG, win));
    CHECK_RC(MPI_Win_unlock(right, win));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[2] == 1000 + left, "NOCHECK lock put from %d: %ld", left, mem[2]);
    CHECK_RC(MPI_Win_free(&win));
    return errs;
}

/* Post/start/complete/wait over a ring: each rank exposes itself to its
 * left neighbour and accesses its right one, three epochs in a row. */
static int pscw_ring(int rank, int size)
{
    int errs = 0;
    int mem[3] = { -1, -1, -1 };
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win win;
    MPI_Group world, to_right, from_left;
    CHECK_RC(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &right, &to_right);
    MPI_Group_incl(world, 1, &left, &from_left);
    for (int epoch = 0; epoch < 3; epoch++) {
        int v = rank * 10 + epoch;
        CHECK_RC(MPI_Win_post(from_left, epoch == 1 ? MPI_MODE_NOSTORE : 0, win));
        CHECK_RC(MPI_Win_start(to_right, 0, win));
        CHECK_RC(MPI_Put(&v, 1, MPI_INT, right, epoch, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_complete(win));
        if (epoch == 2) {
            int flag = 0;
            while (!flag)
                CHECK_RC(MPI_Win_test(win, &flag));
        } else {
            CHECK_RC(MPI_Win_wait(win));
        }
        CHECK(mem[epoch] == left * 10 + epoch, "PSCW epoch %d: got %d from %d", epoch, mem[epoch], left);
    }
    MPI_Group_free(&to_right);
    MPI_Group_free(&from_left);
    MPI_Group_free(&world);
    CHECK_RC(MPI_Win_free(&win));
    return errs;
}

/* Many small puts per rank to pseudo-random targets in each fence epoch. */
static int under_load(int rank, int size)
{
    int errs = 0;
    int n = size * LOAD_PUTS;
    int *mem = tu_malloc((size_t)n * sizeof *mem);
    int *vals = tu_malloc(LOAD_PUTS * sizeof *vals);
    MPI_Win win;
    CHECK_RC(MPI_Win_create(mem, (MPI_Aint)n * (MPI_Aint)sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD,
                            &win));
    for (int round = 0; round < 3; round++) {
        memset(mem, 0, (size_t)n * sizeof *mem);
        CHECK_RC(MPI_Win_fence(0, win));
        for (int k = 0; k < LOAD_PUTS; k++) {
            int t = (rank * 7 + k * 13 + round) % size;
            vals[k] = rank * 1000 + k + round;
            CHECK_RC(MPI_Put(&vals[k], 1, MPI_INT, t, rank * LOAD_PUTS + k, 1, MPI_INT, win));
        }
        CHECK_RC(MPI_Win_fence(0, win));
        for (int o = 0; o < size; o++)
            for (int k = 0; k < LOAD_PUTS; k++) {
                int t = (o * 7 + k * 13 + round) % size;
                int want = t == rank ? o * 1000 + k + round : 0;
                if (mem[o * LOAD_PUTS + k] != want) {
                    CHECK(0, "under load, round %d: slot of %d/%d is %d, expected %d", round, o, k,
                          mem[o * LOAD_PUTS + k], want);
                    o = size;
                    break;
                }
            }
    }
    CHECK_RC(MPI_Win_free(&win));
    free(mem);
    free(vals);
    return errs;
}

/* Attributes, the group, error handlers and errors under MPI_ERRORS_RETURN. */
static int attributes_and_errors(int rank, int size)
{
    int errs = 0;
    int mem[4] = { 0 };
    MPI_Win win;
    CHECK_RC(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    void *base;
    MPI_Aint *wsize;
    int *unit, flag;
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == mem, "MPI_WIN_BASE");
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
    CHECK(flag && *wsize == (MPI_Aint)sizeof mem, "MPI_WIN_SIZE");
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == (int)sizeof(int), "MPI_WIN_DISP_UNIT");
    MPI_Group g;
    int gsize, grank;
    CHECK_RC(MPI_Win_get_group(win, &g));
    MPI_Group_size(g, &gsize);
    MPI_Group_rank(g, &grank);
    CHECK(gsize == size && grank == rank, "window group: size %d rank %d", gsize, grank);
    MPI_Group_free(&g);
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int right = (rank + 1) % size, v = 5;
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK(tu_class(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win)) == MPI_ERR_RANK, "put to rank %d", size);
    CHECK(tu_class(MPI_Put(&v, 1, MPI_INT, right, 4, 1, MPI_INT, win)) == MPI_ERR_DISP, "put past the window");
    CHECK(tu_class(MPI_Get(&v, 2, MPI_INT, right, 3, 2, MPI_INT, win)) == MPI_ERR_DISP, "get across the end");
    CHECK(tu_class(MPI_Accumulate(&v, 1, MPI_INT, right, -1, 1, MPI_INT, MPI_SUM, win)) == MPI_ERR_DISP,
          "accumulate at a negative displacement");
    CHECK_RC(MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK(mem[3] == 5 && mem[0] == 0, "after the failed calls: %d %d", mem[0], mem[3]);
    CHECK(tu_class(MPI_Win_lock(MPI_LOCK_SHARED, size + 3, 0, win)) == MPI_ERR_RANK, "lock of a bad rank");
    CHECK_RC(MPI_Win_free(&win));
    return errs;
}

/* Windows freed right after an unlock of a remote target: no frame may
 * reach a freed window. */
static int free_after_unlock(int rank, int size)
{
    int errs = 0;
    for (int k = 0; k < 20; k++) {
        int mem[2] = { 0, 0 };
        MPI_Win win;
        CHECK_RC(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        int t = (rank + 1 + k) % size, v = k + 1;
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        CHECK_RC(MPI_Accumulate(&v, 1, MPI_INT, t, 1, 1, MPI_INT, MPI_SUM, win));
        CHECK_RC(MPI_Win_unlock(t, win));
        CHECK_RC(MPI_Win_free(&win));
        CHECK(mem[1] == k + 1, "window %d: %d", k, mem[1]);
    }
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    errs += fence_all_to_all(rank, size);
    errs += large_transfers(rank, size);
    errs += derived_types(rank, size);
    errs += accumulate_ops(rank, size);
    errs += locks(rank, size);
    errs += pscw_ring(rank, size);
    errs += under_load(rank, size);
    errs += attributes_and_errors(rank, size);
    errs += free_after_unlock(rank, size);
    return tu_finish(errs);
}
