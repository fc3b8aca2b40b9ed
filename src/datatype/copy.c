/* The copy engine: walks typed layouts as streams of byte blocks. */
#include <string.h>

#include "../core/core.h"
#include "datatype.h"

/* Position in `count` repetitions of a type's block list. */
struct dt_cursor {
    char *base;
    MPI_Datatype type;
    size_t count;
    size_t element;
    int block;
    size_t offset;      /* bytes already consumed of the current block */
};

static void cursor_init(struct dt_cursor *c, const void *base, size_t count, MPI_Datatype t)
{
    c->base = (char *)base;
    c->type = t;
    c->count = t->nblocks > 0 ? count : 0;
    c->element = 0;
    c->block = 0;
    c->offset = 0;
}

/* Returns the next contiguous piece, at most `max` bytes; 0 at the end. */
static size_t cursor_next(struct dt_cursor *c, size_t max, char **where)
{
    if (c->element >= c->count)
        return 0;
    const struct dt_block *b = &c->type->blocks[c->block];
    size_t avail = b->len - c->offset;
    size_t take = avail < max ? avail : max;
    *where = c->base + (MPI_Aint)c->element * dt_extent(c->type) + b->disp + (MPI_Aint)c->offset;
    c->offset += take;
    if (c->offset == b->len) {
        c->offset = 0;
        if (++c->block == c->type->nblocks) {
            c->block = 0;
            c->element++;
        }
    }
    return take;
}

static size_t cursor_total(size_t count, MPI_Datatype t)
{
    return (size_t)count * t->size;
}

size_t dt_copy(void *dst, size_t dcount, MPI_Datatype dtype,
               const void *src, size_t scount, MPI_Datatype stype)
{
    size_t want = cursor_total(scount, stype);
    size_t room = cursor_total(dcount, dtype);
    size_t bytes = want < room ? want : room;
    if (bytes == 0)
        return 0;
    if (STRAND_LIKELY(dtype->contiguous && stype->contiguous)) {
        memcpy((char *)dst + dtype->true_lb, (const char *)src + stype->true_lb, bytes);
        return bytes;
    }
    struct dt_cursor in, out;
    cursor_init(&in, src, scount, stype);
    cursor_init(&out, dst, dcount, dtype);
    size_t done = 0;
    char *from = NULL, *to = NULL;
    size_t from_left = 0;
    while (done < bytes) {
        if (from_left == 0)
            from_left = cursor_next(&in, bytes - done, &from);
        size_t n = cursor_next(&out, from_left, &to);
        memcpy(to, from, n);
        from += n;
        from_left -= n;
        done += n;
    }
    return bytes;
}

size_t dt_pack(void *out, const void *src, size_t count, MPI_Datatype t)
{
    return dt_copy(out, cursor_total(count, t), MPI_BYTE, src, count, t);
}

size_t dt_unpack(void *dst, size_t count, MPI_Datatype t, const void *in, size_t bytes)
{
    return dt_copy(dst, count, t, in, bytes, MPI_BYTE);
}
