/* The copy engine against a naive reference: pair types with padding,
 * truncation, pack/unpack round trips, and hundreds of random nested derived
 * types (vector/hvector/indexed/struct/resized/subarray/darray, 1-4 deep)
 * checked byte for byte against tests/unit/datatype_reference.c, gaps and
 * padding included. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "datatype/datatype.h"
#include "util/copy.h"
#include "datatype_reference.h"
#include "unit_support.h"

struct double_int { double value; int index; };

static void test_pair_type_skips_padding(void)
{
    struct double_int src[3] = { { 1.5, 1 }, { 2.5, 2 }, { 3.5, 3 } };
    struct double_int dst[3];
    memset(dst, 0xee, sizeof dst);
    size_t n = dt_copy(dst, 3, MPI_DOUBLE_INT, src, 3, MPI_DOUBLE_INT);
    CU_ASSERT_EQUAL(n, 3 * (sizeof(double) + sizeof(int)));
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(dst[i].value, src[i].value);
        CU_ASSERT_EQUAL(dst[i].index, src[i].index);
        /* the 4 padding bytes after index are untouched */
        unsigned char *pad = (unsigned char *)&dst[i] + offsetof(struct double_int, index) + sizeof(int);
        CU_ASSERT_EQUAL(pad[0], 0xee);
        CU_ASSERT_EQUAL(pad[3], 0xee);
    }
}

static void test_pack_unpack_round_trip(void)
{
    struct double_int src[2] = { { -1.0, 7 }, { 9.0, -3 } }, back[2];
    unsigned char packed[24];
    CU_ASSERT_EQUAL(dt_pack(packed, src, 2, MPI_DOUBLE_INT), 24);
    double first;
    memcpy(&first, packed, sizeof first);
    CU_ASSERT_EQUAL(first, -1.0);
    CU_ASSERT_EQUAL(dt_unpack(back, 2, MPI_DOUBLE_INT, packed, 24), 24);
    CU_ASSERT_EQUAL(back[1].value, 9.0);
    CU_ASSERT_EQUAL(back[1].index, -3);
}

static void test_copy_truncates_to_destination(void)
{
    int src[10], dst[4] = { 0 };
    for (int i = 0; i < 10; i++)
        src[i] = i + 1;
    CU_ASSERT_EQUAL(dt_copy(dst, 3, MPI_INT, src, 10, MPI_INT), 3 * sizeof(int));
    CU_ASSERT_EQUAL(dst[2], 3);
    CU_ASSERT_EQUAL(dst[3], 0);
}

/* Streaming copies: every alignment of the destination and lengths around
 * the 64-byte loop, with guard bytes on both sides; non-contiguous types
 * fall back to dt_copy. */
static void test_copy_streaming(void)
{
    enum { MAX = 1000 };
    unsigned char src[MAX], dst[MAX + 64];
    for (int i = 0; i < MAX; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    static const int lengths[] = { 0, 1, 15, 16, 63, 64, 79, 80, 127, 128, 200, 511, 777, MAX - 16 };
    for (int shift = 0; shift < 16; shift++) {
        for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
            int n = lengths[k];
            memset(dst, 0xee, sizeof dst);
            CU_ASSERT_EQUAL(dt_copy_streaming(dst + shift + 8, (size_t)n, MPI_BYTE, src + 1, (size_t)n, MPI_BYTE),
                            (size_t)n);
            CU_ASSERT_EQUAL(memcmp(dst + shift + 8, src + 1, (size_t)n), 0);
            for (int i = 0; i < shift + 8; i++)
                CU_ASSERT_EQUAL(dst[i], 0xee);
            for (int i = shift + 8 + n; i < (int)sizeof dst; i++)
                CU_ASSERT_EQUAL(dst[i], 0xee);
        }
    }
    MPI_Datatype every_other;
    int ints[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, got[4] = { 0 };
    CU_ASSERT_EQUAL(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other), MPI_SUCCESS);
    MPI_Type_commit(&every_other);
    CU_ASSERT_EQUAL(dt_copy_streaming(got, 4, MPI_INT, ints, 1, every_other), 4 * sizeof(int));
    CU_ASSERT(got[0] == 1 && got[1] == 3 && got[2] == 5 && got[3] == 7);
    MPI_Type_free(&every_other);
}

/* copy_bulk (util/copy.h) at every distance it treats apart (the
 * destination 1-63 bytes ahead of the source modulo 4 KiB, from 2 KiB up:
 * vector moves) and around it, lengths not a multiple of the 32-byte
 * step, guard bytes on both sides; copy_by_vectors alone for short tails;
 * dt_copy of contiguous data at such a distance. */
static void check_bulk_copy(unsigned char *dst_page, const unsigned char *src_page, size_t src_at, size_t ahead,
                            size_t n, bool vectors_only)
{
    enum { AREA = 3 * 4096 };
    size_t dst_at = src_at + ahead;
    memset(dst_page, 0xee, AREA);
    if (vectors_only)
        copy_by_vectors(dst_page + dst_at, src_page + src_at, n);
    else
        copy_bulk(dst_page + dst_at, src_page + src_at, n);
    CU_ASSERT_EQUAL(memcmp(dst_page + dst_at, src_page + src_at, n), 0);
    for (size_t i = 0; i < dst_at; i++)
        if (dst_page[i] != 0xee) {
            CU_FAIL("copy_bulk wrote before its destination");
            break;
        }
    for (size_t i = dst_at + n; i < AREA; i++)
        if (dst_page[i] != 0xee) {
            CU_FAIL("copy_bulk wrote past its destination");
            break;
        }
}

static void test_copy_bulk(void)
{
    enum { AREA = 3 * 4096 };
    unsigned char *src = aligned_alloc(4096, AREA), *dst = aligned_alloc(4096, AREA);
    for (int i = 0; i < AREA; i++)
        src[i] = (unsigned char)(i * 13 + i / 251);
    static const size_t aheads[] = { 0, 1, 8, 16, 31, 32, 63, 64, 100 };
    static const size_t lengths[] = { 2047, 2048, 2049, 4096, 4111, 8191 };
    for (size_t a = 0; a < sizeof aheads / sizeof aheads[0]; a++)
        for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++)
            for (size_t src_at = 0; src_at < 8; src_at += 5)
                check_bulk_copy(dst, src, src_at + 16, aheads[a], lengths[k], false);
    for (size_t n = 0; n < 100; n++)
        check_bulk_copy(dst, src, 3, 16, n, true);
    /* Through dt_copy: 4 KiB of bytes with the destination 16 bytes ahead. */
    memset(dst, 0, AREA);
    CU_ASSERT_EQUAL(dt_copy(dst + 16, 4096, MPI_BYTE, src, 4096, MPI_BYTE), 4096);
    CU_ASSERT_EQUAL(memcmp(dst + 16, src, 4096), 0);
    free(src);
    free(dst);
}

/* A struct type built twice (as two ranks would): copies between the two
 * objects take the same-layout path and leave the gaps alone; a type of
 * equal size and extent but another placement must not. */
static MPI_Datatype int_double_char(MPI_Aint char_at)
{
    int lengths[3] = { 1, 1, 1 };
    MPI_Aint displs[3] = { 0, 8, char_at };
    MPI_Datatype types[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, raw, t;
    MPI_Type_create_struct(3, lengths, displs, types, &raw);
    MPI_Type_create_resized(raw, 0, 24, &t);
    MPI_Type_free(&raw);
    MPI_Type_commit(&t);
    return t;
}

static void test_copy_between_equal_layouts(void)
{
    enum { N = 5 };
    MPI_Datatype a = int_double_char(18), b = int_double_char(18), other = int_double_char(20);
    unsigned char src[24 * N], dst[24 * N];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i + 1);
    memset(dst, 0xee, sizeof dst);
    CU_ASSERT_EQUAL(dt_copy(dst, N, b, src, N, a), 13 * N);
    for (int e = 0; e < N; e++)
        for (int k = 0; k < 24; k++) {
            bool data = k < 4 || (k >= 8 && k < 16) || k == 18;
            CU_ASSERT_EQUAL(dst[24 * e + k], data ? src[24 * e + k] : 0xee);
        }
    /* The char at 20 instead of 18: same size, extent and number of pieces. */
    memset(dst, 0xee, sizeof dst);
    CU_ASSERT_EQUAL(dt_copy(dst, N, other, src, N, a), 13 * N);
    for (int e = 0; e < N; e++) {
        CU_ASSERT_EQUAL(memcmp(dst + 24 * e, src + 24 * e, 4), 0);
        CU_ASSERT_EQUAL(memcmp(dst + 24 * e + 8, src + 24 * e + 8, 8), 0);
        CU_ASSERT_EQUAL(dst[24 * e + 20], src[24 * e + 18]);
        CU_ASSERT_EQUAL(dst[24 * e + 18], 0xee);
    }
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    MPI_Type_free(&other);
}

static void test_counts_from_bytes(void)
{
    CU_ASSERT_EQUAL(dt_count_from_bytes(MPI_INT, 12), 3);
    CU_ASSERT_EQUAL(dt_count_from_bytes(MPI_INT, 5), MPI_UNDEFINED);
    CU_ASSERT_EQUAL(dt_elements_from_bytes(MPI_DOUBLE_INT, 12), 2);
    CU_ASSERT_EQUAL(dt_elements_from_bytes(MPI_DOUBLE_INT, 20), 3);
    CU_ASSERT_EQUAL(dt_elements_from_bytes(MPI_2INT, 8), 2);
    CU_ASSERT_EQUAL(dt_count_from_bytes(MPI_2INT, 8), 1);
}


/* ---- random nested types against the reference ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rng_state >> 33) % n);
}

static int rnd_range(int lo, int hi) { return lo + (int)rnd((unsigned)(hi - lo + 1)); }

static bool is_named(MPI_Datatype t)
{
    int ni, na, nt, c;
    MPI_Type_get_envelope(t, &ni, &na, &nt, &c);
    return c == MPI_COMBINER_NAMED;
}

static void drop(MPI_Datatype t)
{
    if (!is_named(t))
        MPI_Type_free(&t);
}

static MPI_Datatype random_named(void)
{
    static MPI_Datatype named[] = { MPI_CHAR, MPI_SHORT, MPI_INT, MPI_DOUBLE, MPI_DOUBLE_INT, MPI_SHORT_INT };
    return named[rnd(sizeof named / sizeof named[0])];
}

static MPI_Datatype random_type(int depth);

static MPI_Datatype random_struct(MPI_Datatype old, int depth)
{
    int n = rnd_range(1, 4), bl[4];
    MPI_Aint disp[4];
    MPI_Datatype types[4], t;
    for (int i = 0; i < n; i++) {
        unsigned pick = rnd(8);
        types[i] = i == 0 ? old : pick == 0 ? MPI_LB : pick == 1 ? MPI_UB : random_type(depth - 1);
        bl[i] = types[i] == MPI_LB || types[i] == MPI_UB ? 1 : rnd_range(0, 3);
        disp[i] = rnd_range(-32, 96);
    }
    MPI_Type_create_struct(n, bl, disp, types, &t);
    for (int i = 1; i < n; i++)
        drop(types[i]);
    return t;
}

static MPI_Datatype random_array(MPI_Datatype old)
{
    int n = rnd_range(1, 3), order = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    int sizes[3], subs[3], starts[3], dist[3], darg[3], psize[3], nprocs = 1;
    MPI_Datatype t;
    for (int d = 0; d < n; d++) {
        sizes[d] = rnd_range(1, 6);
        subs[d] = rnd_range(1, sizes[d]);
        starts[d] = rnd_range(0, sizes[d] - subs[d]);
        dist[d] = (int)rnd(3);
        psize[d] = dist[d] == MPI_DISTRIBUTE_NONE ? 1 : rnd_range(1, 3);
        darg[d] = rnd(2) ? MPI_DISTRIBUTE_DFLT_DARG
                         : dist[d] == MPI_DISTRIBUTE_BLOCK ? (sizes[d] + psize[d] - 1) / psize[d] + rnd_range(0, 1)
                                                           : rnd_range(1, 3);
        nprocs *= psize[d];
    }
    if (rnd(2))
        MPI_Type_create_subarray(n, sizes, subs, starts, order, old, &t);
    else
        MPI_Type_create_darray(nprocs, (int)rnd((unsigned)nprocs), n, sizes, dist, darg, psize, order, old, &t);
    return t;
}

/* A random type nested up to `depth` constructors deep (uncommitted). */
static MPI_Datatype random_type(int depth)
{
    if (depth == 0 || rnd(6) == 0)
        return random_named();
    MPI_Datatype old = random_type(depth - 1), t;
    int count = rnd_range(0, 4), bl = rnd_range(0, 3), n = rnd_range(0, 4), bls[4], disps[4];
    MPI_Aint hdisps[4];
    for (int i = 0; i < 4; i++) {
        bls[i] = rnd_range(0, 3);
        disps[i] = rnd_range(-4, 12);
        hdisps[i] = rnd_range(-64, 128);
    }
    switch (rnd(11)) {
    case 0: MPI_Type_contiguous(count, old, &t); break;
    case 1: MPI_Type_vector(count, bl, rnd_range(-4, 8), old, &t); break;
    case 2: MPI_Type_create_hvector(count, bl, rnd_range(-64, 128), old, &t); break;
    case 3: MPI_Type_indexed(n, bls, disps, old, &t); break;
    case 4: MPI_Type_create_hindexed(n, bls, hdisps, old, &t); break;
    case 5: MPI_Type_create_indexed_block(n, bl, disps, old, &t); break;
    case 6: t = random_struct(old, depth); break;
    case 7: MPI_Type_create_resized(old, rnd_range(-16, 16), rnd_range(1, 64), &t); break;
    case 8: MPI_Type_vector(rnd_range(20, 200), rnd_range(1, 2), rnd_range(2, 3), old, &t); break;
    case 9: t = random_array(old); break;
    default: MPI_Type_dup(old, &t); break;
    }
    drop(old);
    return t;
}

/* A buffer covering every byte a map touches, with slack around it. */
struct span_buf {
    unsigned char *alloc;
    size_t len;
    MPI_Aint origin;            /* offset of displacement 0 in alloc */
};

static void span_buf_init(struct span_buf *b, const struct ref_map *m, unsigned char fill)
{
    MPI_Aint lo = 0, hi = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (m->v[i].disp < lo)
            lo = m->v[i].disp;
        if (m->v[i].disp + (MPI_Aint)m->v[i].len > hi)
            hi = m->v[i].disp + (MPI_Aint)m->v[i].len;
    }
    b->len = (size_t)(hi - lo) + 64;
    b->alloc = malloc(b->len);
    b->origin = 32 - lo;
    memset(b->alloc, fill, b->len);
}

static void *span_base(struct span_buf *b) { return b->alloc + b->origin; }

static void fill_random(struct span_buf *b)
{
    for (size_t i = 0; i < b->len; i++)
        b->alloc[i] = (unsigned char)rnd(256);
}

/* Random committed type with data, bounded size and span. */
static MPI_Datatype random_committed(struct ref_map *m, size_t *count)
{
    for (;;) {
        MPI_Datatype t = random_type(rnd_range(1, 4));
        *count = (size_t)rnd_range(1, 3);
        int size;
        MPI_Aint lb, extent;
        MPI_Type_size(t, &size);
        MPI_Type_get_extent(t, &lb, &extent);
        if (size > 0 && size <= 1 << 15 && extent > -(1 << 16) && extent < 1 << 16) {
            MPI_Type_commit(&t);
            m->n = 0;
            ref_flatten(t, 0, *count, m);
            CU_ASSERT_EQUAL_FATAL(ref_bytes(m), *count * (size_t)size);
            return t;
        }
        drop(t);
    }
}

static int random_failures;

static void check_pack_unpack(MPI_Datatype t, size_t count, const struct ref_map *m)
{
    size_t bytes = ref_bytes(m);
    MPI_Aint *stream = ref_stream(m);
    struct span_buf src, got, want;
    span_buf_init(&src, m, 0);
    fill_random(&src);
    unsigned char *packed = malloc(bytes), *ref = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        ref[i] = ((unsigned char *)span_base(&src))[stream[i]];
    size_t n = dt_pack(packed, span_base(&src), count, t);
    bool ok = n == bytes && memcmp(packed, ref, bytes) == 0;
    /* Unpack into a poisoned buffer: only data bytes may change. */
    span_buf_init(&got, m, 0xee);
    span_buf_init(&want, m, 0xee);
    for (size_t i = 0; i < bytes; i++)
        ((unsigned char *)span_base(&want))[stream[i]] = ref[i];
    n = dt_unpack(span_base(&got), count, t, ref, bytes);
    ok = ok && n == bytes && memcmp(got.alloc, want.alloc, got.len) == 0;
    /* The same a random part at a time through streams (parts may end
     * inside a piece and the next begin there). */
    memset(packed, 0, bytes);
    memset(got.alloc, 0xee, got.len);
    struct dt_stream *in = dt_stream_new(span_base(&src), count, t), *out = dt_stream_new(span_base(&got), count, t);
    for (size_t at = 0; in != NULL && out != NULL && at < bytes;) {
        size_t part = (size_t)rnd_range(1, 40), moved = dt_stream_pack(in, packed + at, part);
        ok = ok && moved == (part < bytes - at ? part : bytes - at) &&
             dt_stream_unpack(out, packed + at, moved) == moved;
        at += moved;
    }
    ok = ok && in != NULL && out != NULL && dt_stream_pack(in, packed, 1) == 0 &&
         memcmp(packed, ref, bytes) == 0 && memcmp(got.alloc, want.alloc, got.len) == 0;
    dt_stream_free(in);
    dt_stream_free(out);
    CU_ASSERT(ok);
    if (!ok)
        random_failures++;
    free(packed);
    free(ref);
    free(stream);
    free(src.alloc);
    free(got.alloc);
    free(want.alloc);
}

/* dt_copy between two layouts (truncated to the smaller) against the
 * reference's byte streams; the destination starts poisoned. */
static void check_copy(MPI_Datatype st, size_t scount, const struct ref_map *sm, MPI_Datatype dt, size_t dcount,
                       const struct ref_map *dm)
{
    size_t sbytes = ref_bytes(sm), dbytes = ref_bytes(dm), bytes = sbytes < dbytes ? sbytes : dbytes;
    MPI_Aint *ss = ref_stream(sm), *ds = ref_stream(dm);
    struct span_buf src, got, want;
    span_buf_init(&src, sm, 0);
    fill_random(&src);
    span_buf_init(&got, dm, 0xee);
    span_buf_init(&want, dm, 0xee);
    for (size_t i = 0; i < bytes; i++)
        ((unsigned char *)span_base(&want))[ds[i]] = ((unsigned char *)span_base(&src))[ss[i]];
    size_t n = dt_copy(span_base(&got), dcount, dt, span_base(&src), scount, st);
    bool ok = n == bytes && memcmp(got.alloc, want.alloc, got.len) == 0;
    CU_ASSERT(ok);
    if (!ok)
        random_failures++;
    free(ss);
    free(ds);
    free(src.alloc);
    free(got.alloc);
    free(want.alloc);
}

/* A type with the same number of data bytes as `bytes` but another layout:
 * MPI_BYTE blocks of random lengths in a random permutation of disjoint
 * slots (so displacements go back and forth). */
static MPI_Datatype random_relayout(size_t bytes)
{
    int n = 0, cap = 64, *bl = malloc(sizeof(int) * (size_t)cap);
    for (size_t left = bytes; left > 0; n++) {
        if (n == cap) {
            cap *= 2;
            bl = realloc(bl, sizeof(int) * (size_t)cap);
        }
        size_t len = (size_t)rnd_range(1, 24);
        bl[n] = (int)(len < left ? len : left);
        left -= (size_t)bl[n];
    }
    MPI_Aint *disp = malloc(sizeof(MPI_Aint) * (size_t)n), slot = 32;
    int *perm = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rnd((unsigned)i + 1), k = perm[i];
        perm[i] = perm[j];
        perm[j] = k;
    }
    for (int i = 0; i < n; i++)
        disp[i] = (MPI_Aint)perm[i] * slot + rnd_range(0, 8);
    MPI_Datatype t;
    MPI_Type_create_hindexed(n, bl, disp, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    free(perm);
    free(bl);
    free(disp);
    return t;
}

static void check_elements(MPI_Datatype t, const struct ref_map *m)
{
    size_t bytes = ref_bytes(m);
    for (int k = 0; k < 4; k++) {
        size_t prefix = k == 0 ? bytes : (size_t)rnd((unsigned)bytes + 1);
        int want = ref_elements(m, prefix), got = dt_elements_from_bytes(t, prefix);
        CU_ASSERT_EQUAL(got, want);
        if (got != want)
            random_failures++;
    }
}

static void test_random_types(void)
{
    struct ref_map a = { 0 }, b = { 0 }, c = { 0 };
    for (int i = 0; i < 600 && random_failures < 5; i++) {
        size_t acount, bcount;
        MPI_Datatype ta = random_committed(&a, &acount);
        MPI_Datatype tb = random_committed(&b, &bcount);
        check_pack_unpack(ta, acount, &a);
        check_copy(ta, acount, &a, tb, bcount, &b);
        check_copy(tb, bcount, &b, ta, acount, &a);
        MPI_Datatype tc = random_relayout(ref_bytes(&a));
        c.n = 0;
        ref_flatten(tc, 0, 1, &c);
        check_copy(ta, acount, &a, tc, 1, &c);
        check_copy(tc, 1, &c, ta, acount, &a);
        a.n = 0;
        ref_flatten(ta, 0, 1, &a);
        check_elements(ta, &a);
        drop(ta);
        drop(tb);
        drop(tc);
    }
    ref_free(&a);
    ref_free(&b);
    ref_free(&c);
}

/* ---- layouts stay compact ---- */

static void test_vector_layout_is_one_op(void)
{
    MPI_Datatype v;
    MPI_Type_vector(1 << 20, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    CU_ASSERT_EQUAL(v->layout.nops, 1);
    CU_ASSERT_EQUAL(v->layout.ops[0].count, 1u << 20);
    CU_ASSERT_EQUAL(v->layout.ops[0].stride, 16);
    double *src = malloc(sizeof(double) << 21), *dst = malloc(sizeof(double) << 20);
    for (int i = 0; i < 1 << 21; i++)
        src[i] = i;
    CU_ASSERT_EQUAL(dt_copy(dst, 1 << 20, MPI_DOUBLE, src, 1, v), sizeof(double) << 20);
    CU_ASSERT_EQUAL(dst[0], 0.0);
    CU_ASSERT_EQUAL(dst[12345], 24690.0);
    CU_ASSERT_EQUAL(dst[(1 << 20) - 1], (double)((1 << 21) - 2));
    free(src);
    free(dst);
    MPI_Type_free(&v);
}

static void test_vector_of_struct_layout(void)
{
    /* {int at 0, double at 8} with a 16-byte extent, then a vector of 100000
     * of them every 3 extents: one loop over a two-block body. */
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { 0, 8 };
    MPI_Datatype types[2] = { MPI_INT, MPI_DOUBLE }, s, v;
    MPI_Type_create_struct(2, bl, disp, types, &s);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(s, &lb, &extent);
    CU_ASSERT_EQUAL(extent, 16);
    MPI_Type_vector(100000, 1, 3, s, &v);
    MPI_Type_commit(&v);
    CU_ASSERT(v->layout.nops <= 3);
    MPI_Type_free(&s);
    MPI_Type_free(&v);
}

static void test_regular_indexed_merges(void)
{
    int bl[5] = { 2, 2, 2, 2, 2 }, disp[5] = { 0, 5, 10, 15, 20 };
    MPI_Datatype t;
    MPI_Type_indexed(5, bl, disp, MPI_INT, &t);
    MPI_Type_commit(&t);
    CU_ASSERT_EQUAL(t->layout.nops, 1);
    CU_ASSERT_EQUAL(t->layout.ops[0].count, 5);
    CU_ASSERT_EQUAL(t->layout.ops[0].len, 8);
    MPI_Type_free(&t);
}

/* ---- bounds ---- */

static void test_struct_padding_and_markers(void)
{
    int bl[3] = { 1, 1, 1 };
    MPI_Aint disp[3] = { 0, 8, 0 };
    MPI_Datatype types[3] = { MPI_DOUBLE, MPI_CHAR, MPI_LB }, t;
    MPI_Aint lb, extent;
    MPI_Type_create_struct(2, bl, disp, types, &t);      /* {double, char}: padded to 16 */
    MPI_Type_get_extent(t, &lb, &extent);
    CU_ASSERT_EQUAL(lb, 0);
    CU_ASSERT_EQUAL(extent, 16);
    MPI_Type_free(&t);
    /* Sticky markers: an MPI_UB at 40 and an MPI_LB at -8 win over the data. */
    MPI_Datatype mtypes[3] = { MPI_INT, MPI_UB, MPI_LB };
    MPI_Aint mdisp[3] = { 4, 40, -8 };
    MPI_Type_struct(3, bl, mdisp, mtypes, &t);
    MPI_Type_get_extent(t, &lb, &extent);
    CU_ASSERT_EQUAL(lb, -8);
    CU_ASSERT_EQUAL(extent, 48);
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(t, &tlb, &text);
    CU_ASSERT_EQUAL(tlb, 4);
    CU_ASSERT_EQUAL(text, 4);
    /* Markers stay sticky through a contiguous of the type. */
    MPI_Datatype c;
    MPI_Type_contiguous(3, t, &c);
    MPI_Type_get_extent(c, &lb, &extent);
    CU_ASSERT_EQUAL(lb, -8);
    CU_ASSERT_EQUAL(extent, 144);
    MPI_Type_free(&c);
    MPI_Type_free(&t);
}

/* ---- envelope and contents ---- */

static void test_contents_round_trip(void)
{
    int bl[2] = { 2, 3 }, disp[2] = { 7, 1 };
    MPI_Datatype v, ix, out[2];
    MPI_Type_vector(4, 2, 5, MPI_INT, &v);
    MPI_Type_indexed(2, bl, disp, v, &ix);
    int ni, na, nt, combiner, ints[5];
    MPI_Aint addrs[1];
    MPI_Type_get_envelope(ix, &ni, &na, &nt, &combiner);
    CU_ASSERT(ni == 5 && na == 0 && nt == 1 && combiner == MPI_COMBINER_INDEXED);
    MPI_Type_get_contents(ix, 5, 0, 1, ints, addrs, out);
    CU_ASSERT(ints[0] == 2 && ints[1] == 2 && ints[2] == 3 && ints[3] == 7 && ints[4] == 1);
    CU_ASSERT_EQUAL(out[0], v);
    MPI_Type_free(&out[0]);         /* the returned handle is the caller's */
    MPI_Type_free(&v);
    MPI_Type_get_envelope(ix, &ni, &na, &nt, &combiner);      /* still alive through ix */
    MPI_Type_get_contents(ix, 5, 0, 1, ints, addrs, out);
    MPI_Type_get_envelope(out[0], &ni, &na, &nt, &combiner);
    CU_ASSERT(ni == 3 && nt == 1 && combiner == MPI_COMBINER_VECTOR);
    MPI_Type_free(&out[0]);
    MPI_Type_free(&ix);
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nt, &combiner);
    CU_ASSERT(ni == 0 && na == 0 && nt == 0 && combiner == MPI_COMBINER_NAMED);
}

/* ---- external32 ---- */

static void test_external32_bytes(void)
{
    struct { int i; double d; short s; long l; } x = { 0x01020304, -2.0, -2, -5 };
    int bl[4] = { 1, 1, 1, 1 };
    MPI_Aint disp[4] = { offsetof(__typeof__(x), i), offsetof(__typeof__(x), d), offsetof(__typeof__(x), s),
                         offsetof(__typeof__(x), l) };
    MPI_Datatype types[4] = { MPI_INT, MPI_DOUBLE, MPI_SHORT, MPI_LONG }, t;
    MPI_Type_create_struct(4, bl, disp, types, &t);
    MPI_Type_commit(&t);
    MPI_Aint size, pos = 0;
    MPI_Pack_external_size("external32", 1, t, &size);
    CU_ASSERT_EQUAL(size, 4 + 8 + 2 + 4);
    unsigned char buf[18];
    CU_ASSERT_EQUAL(MPI_Pack_external("external32", &x, 1, t, buf, sizeof buf, &pos), MPI_SUCCESS);
    CU_ASSERT_EQUAL(pos, 18);
    static const unsigned char want[18] = { 1, 2, 3, 4, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe,
                                            0xff, 0xff, 0xff, 0xfb };
    CU_ASSERT(memcmp(buf, want, sizeof want) == 0);
    __typeof__(x) y;
    memset(&y, 0, sizeof y);
    pos = 0;
    CU_ASSERT_EQUAL(MPI_Unpack_external("external32", buf, sizeof buf, &pos, &y, 1, t), MPI_SUCCESS);
    CU_ASSERT(y.i == x.i && y.d == x.d && y.s == x.s && y.l == x.l);
    MPI_Type_free(&t);
    /* long double: IEEE binary128, big-endian: 1.5 is 3fff 8000 0000 ... */
    long double ld = 1.5L;
    unsigned char q[16];
    pos = 0;
    CU_ASSERT_EQUAL(MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, q, 16, &pos), MPI_SUCCESS);
    CU_ASSERT(q[0] == 0x3f && q[1] == 0xff && q[2] == 0x80 && q[3] == 0 && q[15] == 0);
    long double back = 0;
    pos = 0;
    MPI_Unpack_external("external32", q, 16, &pos, &back, 1, MPI_LONG_DOUBLE);
    CU_ASSERT(back == 1.5L);
}

/* ---- bad input returns errors ---- */

static void test_bad_input(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t, v;
    int bl[1] = { -1 }, disp[1] = { 0 };
    CU_ASSERT_EQUAL(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    CU_ASSERT_EQUAL(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
    CU_ASSERT_EQUAL(MPI_Type_indexed(1, bl, disp, MPI_INT, &t), MPI_ERR_ARG);
    CU_ASSERT_EQUAL(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    CU_ASSERT_EQUAL(MPI_Type_free(&(MPI_Datatype){ MPI_INT }), MPI_ERR_TYPE);
    int ints[1];
    CU_ASSERT_EQUAL(MPI_Type_get_contents(MPI_INT, 1, 0, 0, ints, NULL, NULL), MPI_ERR_TYPE);
    /* Extents that overflow the address range. */
    CU_ASSERT_EQUAL(MPI_Type_create_hvector(1 << 10, 1, (MPI_Aint)1 << 40, MPI_INT, &v), MPI_SUCCESS);
    CU_ASSERT_EQUAL(MPI_Type_create_hvector(1 << 20, 1, (MPI_Aint)1 << 45, v, &t), MPI_ERR_ARG);
    CU_ASSERT_EQUAL(MPI_Type_contiguous(1 << 30, v, &t), MPI_ERR_ARG);
    MPI_Type_free(&v);
    /* Uncommitted types cannot carry data. */
    MPI_Type_contiguous(2, MPI_INT, &t);
    int buf[4] = { 0 }, pos = 0;
    CU_ASSERT_EQUAL(MPI_Pack(buf, 1, t, buf + 2, 8, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CU_ASSERT_EQUAL(MPI_Send(buf, 1, t, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Type_commit(&t);
    CU_ASSERT_EQUAL(MPI_Pack(buf, 2, t, buf + 2, 8, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    CU_ASSERT_EQUAL(MPI_Pack(buf, -1, t, buf + 2, 8, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MPI_Type_free(&t);
    CU_ASSERT_EQUAL(MPI_Type_create_f90_integer(40, &t), MPI_ERR_ARG);
    CU_ASSERT_EQUAL(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t), MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_f90_types(void)
{
    MPI_Datatype a, b;
    MPI_Type_create_f90_real(10, MPI_UNDEFINED, &a);
    MPI_Type_create_f90_real(10, MPI_UNDEFINED, &b);
    CU_ASSERT_EQUAL(a, b);
    CU_ASSERT_EQUAL(a->size, sizeof(double));
    int ni, na, nt, c, ints[2];
    MPI_Type_get_envelope(a, &ni, &na, &nt, &c);
    CU_ASSERT(c == MPI_COMBINER_F90_REAL && ni == 2 && na == 0 && nt == 0);
    MPI_Type_get_contents(a, 2, 0, 0, ints, NULL, NULL);
    CU_ASSERT(ints[0] == 10 && ints[1] == MPI_UNDEFINED);
    MPI_Type_create_f90_integer(5, &a);
    CU_ASSERT_EQUAL(a->size, 4);
    MPI_Type_create_f90_complex(3, 30, &a);
    CU_ASSERT_EQUAL(a->size, 8);
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &a);
    CU_ASSERT_EQUAL(a->size, 8);
}
int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("datatype", NULL, NULL);
    CU_add_test(s, "pair type skips padding", test_pair_type_skips_padding);
    CU_add_test(s, "pack/unpack round trip", test_pack_unpack_round_trip);
    CU_add_test(s, "copy truncates", test_copy_truncates_to_destination);
    CU_add_test(s, "streaming copy", test_copy_streaming);
    CU_add_test(s, "bulk copy (rep movsb distances)", test_copy_bulk);
    CU_add_test(s, "copy between equal layouts", test_copy_between_equal_layouts);
    CU_add_test(s, "counts from bytes", test_counts_from_bytes);
    CU_pSuite r = CU_add_suite("derived", NULL, NULL);
    CU_add_test(r, "random nested types vs reference", test_random_types);
    CU_add_test(r, "vector layout is one op", test_vector_layout_is_one_op);
    CU_add_test(r, "vector of struct layout", test_vector_of_struct_layout);
    CU_add_test(r, "regular indexed merges", test_regular_indexed_merges);
    CU_add_test(r, "struct padding and markers", test_struct_padding_and_markers);
    CU_add_test(r, "contents round trip", test_contents_round_trip);
    CU_add_test(r, "external32 bytes", test_external32_bytes);
    CU_add_test(r, "bad input", test_bad_input);
    CU_add_test(r, "f90 types", test_f90_types);
    unit_node_create(1, 4096);
    int rc = unit_run_registry();
    unit_node_destroy();
    return rc;
}
