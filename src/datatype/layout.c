/* Building a type's layout at commit: the constructor tree is turned into a
 * small tree of strided blocks and loops, normalized as it is built:
 *  - loops of one iteration are inlined, empty pieces dropped;
 *  - a loop over one block becomes a strided block (a vector of a million
 *    doubles is one op), and a loop over a strided block or loop whose
 *    stride continues evenly is folded into it;
 *  - adjacent blocks merge, and equal blocks at a constant stride (indexed
 *    types with regular displacements) merge into one strided block.
 * The tree is then laid out in one array, each loop body contiguous. */
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "datatype.h"
#include "typemap.h"

struct bnode;
struct bseq {
    struct bnode *v;
    size_t n, cap;
};
struct bnode {
    MPI_Aint disp, stride;
    size_t count, len;      /* len: block bytes; 0 for loops */
    struct bseq body;       /* loops only */
};

static void seq_free(struct bseq *s)
{
    for (size_t i = 0; i < s->n; i++)
        seq_free(&s->v[i].body);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static bool seq_push(struct bseq *s, const struct bnode *node)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4;
        struct bnode *v = realloc(s->v, cap * sizeof *v);
        if (v == NULL)
            return false;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = *node;
    return true;
}

static void block_normalize(struct bnode *b)
{
    if (b->count > 1 && b->stride == (MPI_Aint)b->len) {
        b->len *= b->count;
        b->count = 1;
        b->stride = 0;
    }
    if (b->count == 1)
        b->stride = 0;
}

/* Tries to extend the previous block with `count` pieces of `len` at `disp`. */
static bool block_merge(struct bnode *prev, MPI_Aint disp, size_t len, size_t count, MPI_Aint stride)
{
    if (prev->body.n != 0)
        return false;
    if (prev->count == 1 && count == 1 && prev->disp + (MPI_Aint)prev->len == disp) {
        prev->len += len;
        return true;
    }
    if (prev->len != len)
        return false;
    if (prev->count == 1 && count == 1) {
        prev->count = 2;
        prev->stride = disp - prev->disp;
        return true;
    }
    if (prev->count == 1 && disp - prev->disp == stride) {
        prev->count += count;
        prev->stride = stride;
        return true;
    }
    MPI_Aint next = prev->disp + (MPI_Aint)prev->count * prev->stride;
    if (disp == next && (count == 1 || stride == prev->stride)) {
        prev->count += count;
        return true;
    }
    return false;
}

static bool push_block(struct bseq *s, MPI_Aint disp, size_t len, size_t count, MPI_Aint stride)
{
    if (len == 0 || count == 0)
        return true;
    struct bnode b = { .disp = disp, .stride = count > 1 ? stride : 0, .count = count, .len = len };
    block_normalize(&b);
    if (s->n > 0 && block_merge(&s->v[s->n - 1], b.disp, b.len, b.count, b.stride)) {
        block_normalize(&s->v[s->n - 1]);
        return true;
    }
    return seq_push(s, &b);
}

static bool seq_clone_shifted(struct bseq *out, const struct bseq *in, MPI_Aint shift);

static bool push_loop(struct bseq *s, MPI_Aint disp, size_t count, MPI_Aint stride, const struct bseq *body)
{
    struct bnode l = { .disp = disp, .stride = stride, .count = count, .len = 0 };
    if (!seq_clone_shifted(&l.body, body, 0))
        return false;
    if (!seq_push(s, &l)) {
        seq_free(&l.body);
        return false;
    }
    return true;
}

static bool seq_clone_shifted(struct bseq *out, const struct bseq *in, MPI_Aint shift)
{
    for (size_t i = 0; i < in->n; i++) {
        const struct bnode *b = &in->v[i];
        bool ok = b->body.n == 0 ? push_block(out, b->disp + shift, b->len, b->count, b->stride)
                                 : push_loop(out, b->disp + shift, b->count, b->stride, &b->body);
        if (!ok)
            return false;
    }
    return true;
}

/* Appends `count` copies of `body`, `stride` apart, at `disp`. */
static bool seq_repeat(struct bseq *out, const struct bseq *body, size_t count, MPI_Aint stride, MPI_Aint disp)
{
    if (count == 0 || body->n == 0)
        return true;
    if (count == 1)
        return seq_clone_shifted(out, body, disp);
    if (body->n == 1) {
        const struct bnode *b = &body->v[0];
        bool continues = (MPI_Aint)b->count * b->stride == stride;
        if (b->body.n == 0 && b->count == 1)
            return push_block(out, disp + b->disp, b->len, count, stride);
        if (b->body.n == 0 && continues)
            return push_block(out, disp + b->disp, b->len, count * b->count, b->stride);
        if (b->body.n != 0 && continues)
            return push_loop(out, disp + b->disp, count * b->count, b->stride, &b->body);
    }
    return push_loop(out, disp, count, stride, body);
}

/* A committed layout back into builder form (reused by types built on it). */
static bool seq_from_ops(struct bseq *out, const struct dt_op *ops, const struct dt_op *first, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const struct dt_op *op = &first[i];
        if (op->nbody == 0) {
            if (!push_block(out, op->disp, op->len, op->count, op->stride))
                return false;
            continue;
        }
        struct bnode l = { .disp = op->disp, .stride = op->stride, .count = op->count, .len = 0 };
        if (!seq_from_ops(&l.body, ops, &ops[op->body], op->nbody) || !seq_push(out, &l)) {
            seq_free(&l.body);
            return false;
        }
    }
    return true;
}

/* One element of t at displacement 0. */
static bool build_one(struct bseq *out, MPI_Datatype t)
{
    if (t->predefined || t->committed)
        return seq_from_ops(out, t->layout.ops, t->layout.ops, t->layout.ntop);
    size_t nblocks = typemap_nblocks(t);
    if (nblocks == 0)
        return true;
    struct typemap_block b;
    typemap_block(t, 0, &b);
    struct bseq child = { 0 };
    bool ok = build_one(&child, b.type);
    if (ok && typemap_is_vector(t)) {
        struct bseq block = { 0 };
        ok = seq_repeat(&block, &child, b.n, dt_extent(b.type), 0) &&
             seq_repeat(out, &block, nblocks, typemap_vector_stride(t), 0);
        seq_free(&block);
        seq_free(&child);
        return ok;
    }
    MPI_Datatype child_type = b.type;
    for (size_t i = 0; ok && i < nblocks; i++) {
        typemap_block(t, i, &b);
        if (b.type != child_type) {     /* struct: each member type in turn */
            seq_free(&child);
            child_type = b.type;
            ok = build_one(&child, child_type);
        }
        ok = ok && seq_repeat(out, &child, b.n, dt_extent(b.type), b.disp);
    }
    seq_free(&child);
    return ok;
}

static size_t seq_total(const struct bseq *s)
{
    size_t n = s->n;
    for (size_t i = 0; i < s->n; i++)
        n += seq_total(&s->v[i].body);
    return n;
}

static size_t seq_bytes(const struct bseq *s)
{
    size_t bytes = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct bnode *b = &s->v[i];
        bytes += b->count * (b->body.n == 0 ? b->len : seq_bytes(&b->body));
    }
    return bytes;
}

/* Writes s at ops[at ..], bodies after `*next`; returns the depth. */
static int emit(struct dt_op *ops, uint32_t at, uint32_t *next, const struct bseq *s)
{
    int depth = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct bnode *b = &s->v[i];
        struct dt_op *op = &ops[at + i];
        op->disp = b->disp;
        op->stride = b->stride;
        op->count = b->count;
        op->len = b->len;
        op->body = 0;
        op->nbody = (uint32_t)b->body.n;
        if (b->body.n == 0)
            continue;
        op->len = seq_bytes(&b->body);
        op->body = *next;
        *next += (uint32_t)b->body.n;
        int d = 1 + emit(ops, op->body, next, &b->body);
        if (d > depth)
            depth = d;
    }
    return depth;
}

void dt_layout_free(struct dt_layout *l)
{
    free(l->ops);
    l->ops = NULL;
    l->nops = l->ntop = 0;
}

int dt_layout_build(MPI_Datatype t)
{
    struct bseq s = { 0 };
    if (!build_one(&s, t)) {
        seq_free(&s);
        return MPI_ERR_NO_MEM;
    }
    size_t total = seq_total(&s);
    if (total > UINT32_MAX) {
        seq_free(&s);
        return MPI_ERR_NO_MEM;
    }
    struct dt_op *ops = total > 0 ? malloc(total * sizeof *ops) : NULL;
    if (total > 0 && ops == NULL) {
        seq_free(&s);
        return MPI_ERR_NO_MEM;
    }
    uint32_t ntop = (uint32_t)s.n, next = ntop;
    int depth = emit(ops, 0, &next, &s);
    seq_free(&s);
    if (depth > DT_MAX_DEPTH) {
        free(ops);
        return MPI_ERR_TYPE;
    }
    dt_layout_free(&t->layout);
    t->layout = (struct dt_layout){ .ops = ops, .nops = (uint32_t)total, .ntop = ntop, .depth = depth };
    t->contiguous = t->size == 0 ||
                    (t->layout.ntop == 1 && ops[0].nbody == 0 && ops[0].count == 1 && ops[0].disp == t->lb &&
                     ops[0].len == t->size && (MPI_Aint)t->size == dt_extent(t));
    return MPI_SUCCESS;
}
