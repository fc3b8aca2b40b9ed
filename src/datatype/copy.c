/* The copy engine. A cursor walks `count` elements of a layout and yields
 * RUNS: `pieces` pieces of `len` contiguous bytes, `stride` apart. dt_copy
 * moves data between a source and a destination cursor a run at a time:
 *  - equal piece lengths on both sides: one strided loop over all pieces
 *    both runs still have (vector to vector);
 *  - small source pieces into a larger destination piece: a gather loop
 *    (vector to contiguous, i.e. packing), and the mirror scatter;
 *  - otherwise one memcpy of what both current pieces have left.
 * When one side is contiguous (pack, unpack, contiguous receive) or both
 * sides are the same type, a single cursor drives the copy.
 * Piece lengths of 1, 2, 4, 8 and 16 bytes get fixed-size copies. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../util/cache.h"
#include "../util/copy.h"
#include "datatype.h"

struct frame {
    const struct dt_op *body;
    uint32_t nbody, next;
    size_t iter, count;
    MPI_Aint stride;
    char *base;
};

struct cursor {
    char *piece;            /* current piece */
    size_t len, pieces, off;
    MPI_Aint stride;
    const struct dt_op *ops;
    int top;
    struct frame f[DT_MAX_DEPTH + 1];
};

static void cursor_init(struct cursor *c, const void *base, size_t count, MPI_Datatype t)
{
    const struct dt_layout *l = &t->layout;
    c->ops = l->ops;
    c->top = 0;
    c->pieces = 0;
    c->off = 0;
    struct frame *root = &c->f[0];
    *root = (struct frame){ .body = l->ops, .nbody = l->ntop, .next = 0, .iter = 0, .count = count,
                            .stride = dt_extent(t), .base = (char *)base };
    if (count == 0 || l->ntop != 1 || l->ops[0].nbody != 0)
        return;
    /* One strided block whose stride continues across elements (or a
     * single block): all `count` elements are one run. */
    const struct dt_op *b = &l->ops[0];
    MPI_Aint extent = dt_extent(t);
    if (b->count != 1 && (MPI_Aint)b->count * b->stride != extent)
        return;
    c->piece = (char *)base + b->disp;
    c->len = b->len;
    c->pieces = count * b->count;
    c->stride = b->count == 1 ? extent : b->stride;
    if (c->stride == (MPI_Aint)c->len) {
        c->len *= c->pieces;
        c->pieces = 1;
    }
    root->nbody = 0;
    root->count = 0;
}

/* Loads the next run; false at the end of the data. */
static bool cursor_next_run(struct cursor *c)
{
    for (;;) {
        struct frame *f = &c->f[c->top];
        if (f->next < f->nbody) {
            const struct dt_op *op = &f->body[f->next++];
            if (op->nbody == 0) {
                c->piece = f->base + op->disp;
                c->len = op->len;
                c->pieces = op->count;
                c->stride = op->stride;
                c->off = 0;
                return true;
            }
            struct frame *inner = &c->f[++c->top];
            *inner = (struct frame){ .body = &c->ops[op->body], .nbody = op->nbody, .next = 0, .iter = 0,
                                     .count = op->count, .stride = op->stride, .base = f->base + op->disp };
            continue;
        }
        if (++f->iter < f->count) {
            f->next = 0;
            f->base += f->stride;
            continue;
        }
        if (c->top == 0)
            return false;
        c->top--;
    }
}

static inline void advance_pieces(struct cursor *c, size_t n)
{
    c->piece += (MPI_Aint)n * c->stride;
    c->pieces -= n;
}

static inline void advance_bytes(struct cursor *c, size_t n)
{
    c->off += n;
    if (c->off == c->len) {
        c->off = 0;
        c->piece += c->stride;
        c->pieces--;
    }
}

#define FIXED_PIECES(N)                                              \
    case N:                                                          \
        for (size_t i = 0; i < n; i++, dst += dstride, src += sstride) \
            memcpy(dst, src, N);                                     \
        return;

/* Copies n pieces of len bytes between two strides. */
static void copy_pieces(char *dst, MPI_Aint dstride, const char *src, MPI_Aint sstride, size_t len, size_t n)
{
    switch (len) {
    FIXED_PIECES(1)
    FIXED_PIECES(2)
    FIXED_PIECES(4)
    FIXED_PIECES(8)
    FIXED_PIECES(16)
    default:
        if (len <= 64) {
            for (size_t i = 0; i < n; i++, dst += dstride, src += sstride)
                copy_small(dst, src, len);
            return;
        }
        for (size_t i = 0; i < n; i++, dst += dstride, src += sstride)
            copy_bulk(dst, src, len);
    }
}

static inline size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* One step of the two-cursor walk; returns the bytes moved. */
static size_t copy_step(struct cursor *out, struct cursor *in, size_t left)
{
    size_t src_left = in->len - in->off, dst_left = out->len - out->off;
    if (in->off == 0 && out->off == 0 && in->len == out->len) {
        size_t n = min3(in->pieces, out->pieces, left / in->len);
        if (n > 0) {
            copy_pieces(out->piece, out->stride, in->piece, in->stride, in->len, n);
            advance_pieces(in, n);
            advance_pieces(out, n);
            return n * in->len;
        }
    }
    if (in->off == 0 && in->len < dst_left) {
        size_t n = min3(in->pieces, dst_left / in->len, left / in->len);
        if (n > 1) {
            copy_pieces(out->piece + out->off, (MPI_Aint)in->len, in->piece, in->stride, in->len, n);
            advance_pieces(in, n);
            advance_bytes(out, n * in->len);
            return n * in->len;
        }
    }
    if (out->off == 0 && out->len < src_left) {
        size_t n = min3(out->pieces, src_left / out->len, left / out->len);
        if (n > 1) {
            copy_pieces(out->piece, out->stride, in->piece + in->off, (MPI_Aint)out->len, out->len, n);
            advance_pieces(out, n);
            advance_bytes(in, n * out->len);
            return n * out->len;
        }
    }
    size_t n = min3(src_left, dst_left, left);
    copy_bulk(out->piece + out->off, in->piece + in->off, n);
    advance_bytes(in, n);
    advance_bytes(out, n);
    return n;
}

/* One side contiguous (packing, unpacking, a contiguous receive): one
 * cursor walks the other side and each run is a gather or scatter loop. */
static void copy_with_contiguous(char *contig, bool into_layout, struct cursor *c, size_t bytes)
{
    while (bytes > 0) {
        if (c->pieces == 0)
            cursor_next_run(c);
        size_t n = c->pieces, len = c->len;
        if (c->off > 0 || len > bytes) {
            /* Part of one piece: the data ends inside it, or a stream
             * (dt_stream) stopped inside it last time. */
            size_t part = len - c->off < bytes ? len - c->off : bytes;
            if (into_layout)
                copy_bulk(c->piece + c->off, contig, part);
            else
                copy_bulk(contig, c->piece + c->off, part);
            contig += part;
            bytes -= part;
            advance_bytes(c, part);
            continue;
        }
        if (n * len > bytes)
            n = bytes / len;
        if (into_layout)
            copy_pieces(c->piece, c->stride, contig, (MPI_Aint)len, len, n);
        else
            copy_pieces(contig, (MPI_Aint)len, c->piece, c->stride, len, n);
        contig += n * len;
        bytes -= n * len;
        advance_pieces(c, n);
    }
}

/* Layouts of blocks only (no loops), e.g. structs: whole elements are
 * copied by a plain loop over the blocks, without cursor bookkeeping.
 * `layout` is the base of element 0; returns the elements done. */
static size_t copy_flat_elements(char *contig, bool into_layout, char *layout, size_t count, MPI_Datatype t)
{
    const struct dt_op *ops = t->layout.ops;
    uint32_t nops = t->layout.ntop;
    MPI_Aint extent = dt_extent(t);
    for (size_t e = 0; e < count; e++, layout += extent) {
        for (uint32_t i = 0; i < nops; i++) {
            const struct dt_op *op = &ops[i];
            if (into_layout)
                copy_pieces(layout + op->disp, op->stride, contig, (MPI_Aint)op->len, op->len, op->count);
            else
                copy_pieces(contig, (MPI_Aint)op->len, layout + op->disp, op->stride, op->len, op->count);
            contig += op->len * op->count;
        }
    }
    return count;
}

/* Whether two types place their data identically: the same object, or
 * (each rank builds its own type objects, so a message between ranks
 * nearly always has two) equal layouts, extents and sizes. Comparing is
 * linear in the number of layout ops, which each describe at least one
 * piece of the data copied. */
static bool dt_same_layout(MPI_Datatype a, MPI_Datatype b)
{
    if (a == b)
        return true;
    if (a->size != b->size || dt_extent(a) != dt_extent(b) || a->layout.nops != b->layout.nops ||
        a->layout.ntop != b->layout.ntop || a->layout.depth != b->layout.depth)
        return false;
    for (uint32_t i = 0; i < a->layout.nops; i++) {
        const struct dt_op *x = &a->layout.ops[i], *y = &b->layout.ops[i];
        if (x->disp != y->disp || x->stride != y->stride || x->count != y->count || x->len != y->len ||
            x->body != y->body || x->nbody != y->nbody)
            return false;
    }
    return true;
}

/* Both sides the same type: one cursor drives both buffers. */
static void copy_same_layout(char *dst, const char *src, size_t count, MPI_Datatype t)
{
    if (t->layout.depth == 0) {
        const struct dt_op *ops = t->layout.ops;
        MPI_Aint extent = dt_extent(t);
        for (size_t e = 0; e < count; e++, dst += extent, src += extent)
            for (uint32_t i = 0; i < t->layout.ntop; i++)
                copy_pieces(dst + ops[i].disp, ops[i].stride, src + ops[i].disp, ops[i].stride, ops[i].len,
                            ops[i].count);
        return;
    }
    struct cursor c;
    cursor_init(&c, src, count, t);
    MPI_Aint delta = (MPI_Aint)((uintptr_t)dst - (uintptr_t)src);
    for (;;) {
        if (c.pieces == 0 && !cursor_next_run(&c))
            return;
        copy_pieces(c.piece + delta, c.stride, c.piece, c.stride, c.len, c.pieces);
        c.pieces = 0;
    }
}

size_t dt_copy_streaming(void *dst, size_t dcount, MPI_Datatype dtype,
                         const void *src, size_t scount, MPI_Datatype stype)
{
    if (!dtype->contiguous || !stype->contiguous)
        return dt_copy(dst, dcount, dtype, src, scount, stype);
    size_t want = scount * stype->size, room = dcount * dtype->size;
    size_t bytes = want < room ? want : room;
    copy_streaming((char *)dst + dtype->true_lb, (const char *)src + stype->true_lb, bytes);
    return bytes;
}

size_t dt_copy(void *dst, size_t dcount, MPI_Datatype dtype,
               const void *src, size_t scount, MPI_Datatype stype)
{
    size_t want = scount * stype->size;
    size_t room = dcount * dtype->size;
    size_t bytes = want < room ? want : room;
    if (bytes == 0)
        return 0;
    if (STRAND_LIKELY(dtype->contiguous && stype->contiguous)) {
        copy_bulk((char *)dst + dtype->true_lb, (const char *)src + stype->true_lb, bytes);
        return bytes;
    }
    struct cursor in, out;
    if (dtype->contiguous || stype->contiguous) {
        bool into_layout = stype->contiguous;
        MPI_Datatype t = into_layout ? dtype : stype;
        char *layout = (char *)(into_layout ? dst : src);
        char *contig = into_layout ? (char *)src + stype->true_lb : (char *)dst + dtype->true_lb;
        size_t whole = 0;
        if (t->layout.depth == 0 && t->layout.ntop > 1) {
            whole = copy_flat_elements(contig, into_layout, layout, bytes / t->size, t);
            layout += (MPI_Aint)whole * dt_extent(t);
            contig += whole * t->size;
        }
        struct cursor *c = into_layout ? &out : &in;
        cursor_init(c, layout, (into_layout ? dcount : scount) - whole, t);
        copy_with_contiguous(contig, into_layout, c, bytes - whole * t->size);
        return bytes;
    }
    if (dt_same_layout(stype, dtype)) {
        copy_same_layout(dst, src, bytes / stype->size, stype);
        return bytes;
    }
    cursor_init(&in, src, scount, stype);
    cursor_init(&out, dst, dcount, dtype);
    size_t left = bytes;
    while (left > 0) {
        if (in.pieces == 0)
            cursor_next_run(&in);
        if (out.pieces == 0)
            cursor_next_run(&out);
        left -= copy_step(&out, &in, left);
    }
    return bytes;
}

size_t dt_pack(void *out, const void *src, size_t count, MPI_Datatype t)
{
    return dt_copy(out, count * t->size, MPI_BYTE, src, count, t);
}

size_t dt_unpack(void *dst, size_t count, MPI_Datatype t, const void *in, size_t bytes)
{
    return dt_copy(dst, count, t, in, bytes, MPI_BYTE);
}

/* ---- streams: a message packed or unpacked a part at a time ---- */

struct dt_stream {
    struct cursor c;
    size_t left;                /* bytes of the stream not yet moved */
    char *contig;               /* a contiguous type: its data, moved with memcpy */
};

struct dt_stream *dt_stream_new(const void *buf, size_t count, MPI_Datatype t)
{
    struct dt_stream *s = malloc(sizeof *s);
    if (s == NULL)
        return NULL;
    s->left = count * t->size;
    s->contig = t->contiguous ? (char *)buf + t->true_lb : NULL;
    if (s->contig == NULL)
        cursor_init(&s->c, buf, count, t);
    return s;
}

static size_t stream_move(struct dt_stream *s, char *contig, bool into_layout, size_t bytes)
{
    if (bytes > s->left)
        bytes = s->left;
    if (s->contig != NULL) {
        if (into_layout)
            copy_bulk(s->contig, contig, bytes);
        else
            copy_bulk(contig, s->contig, bytes);
        s->contig += bytes;
    } else {
        copy_with_contiguous(contig, into_layout, &s->c, bytes);
    }
    s->left -= bytes;
    return bytes;
}

size_t dt_stream_pack(struct dt_stream *s, void *out, size_t bytes)
{
    return stream_move(s, out, false, bytes);
}

size_t dt_stream_unpack(struct dt_stream *s, const void *in, size_t bytes)
{
    return stream_move(s, (char *)in, true, bytes);
}

void dt_stream_free(struct dt_stream *s)
{
    free(s);
}
