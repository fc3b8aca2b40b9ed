/* Buffered sends: the attached buffer is carved into regions, each a
 * header followed by packed data. A buffered message is delivered as a
 * rendezvous from its region; the receiver's copy marks the region free.
 * Allocation is first fit, merging free neighbours on the way. */
#include <stdint.h>

#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "pt2pt.h"

enum { REGION_ALIGN = 16 };

struct bsend_region {
    size_t size;                 /* header + data, a multiple of REGION_ALIGN */
    struct completion done;      /* COMPLETION_DONE: the region is free */
};

static size_t align_up(size_t n)
{
    return (n + REGION_ALIGN - 1) & ~(size_t)(REGION_ALIGN - 1);
}

static const size_t region_header = (sizeof(struct bsend_region) + REGION_ALIGN - 1) & ~(size_t)(REGION_ALIGN - 1);

_Static_assert((sizeof(struct bsend_region) + 15) / 16 * 16 <= MPI_BSEND_OVERHEAD,
               "MPI_BSEND_OVERHEAD must cover a region header");

static struct bsend_region *region_at(struct bsend_buffer *b, size_t offset)
{
    return (struct bsend_region *)(b->base + offset);
}

static bool region_is_free(struct bsend_region *r)
{
    return completion_is_done(&r->done);
}

static struct bsend_region *region_take(struct bsend_buffer *b, size_t need, struct rank *owner)
{
    for (size_t off = 0; off + region_header <= b->size;) {
        struct bsend_region *r = region_at(b, off);
        if (region_is_free(r)) {
            while (off + r->size < b->size && region_is_free(region_at(b, off + r->size)))
                r->size += region_at(b, off + r->size)->size;
            if (r->size >= need) {
                if (r->size - need >= region_header + REGION_ALIGN) {
                    struct bsend_region *rest = region_at(b, off + need);
                    rest->size = r->size - need;
                    rest->done = (struct completion){ .owner = owner };
                    atomic_store(&rest->done.state, COMPLETION_DONE);
                    r->size = need;
                }
                r->done = (struct completion){ .owner = owner };
                return r;
            }
        }
        off += r->size;
    }
    return NULL;
}

int bsend_start(struct rank *self, const struct message *m, struct rank *dest, const char *where,
                MPI_Comm comm)
{
    struct bsend_buffer *b = &self->pt2pt.bsend;
    size_t need = region_header + align_up(m->bytes > 0 ? m->bytes : 1);
    lite_lock(&b->lock);
    struct bsend_region *r = b->base != NULL ? region_take(b, need, self) : NULL;
    lite_unlock(&b->lock);
    if (r == NULL)
        return error_report(comm, MPI_ERR_BUFFER, where,
                            "no room for %zu bytes in the attached buffer (%zu bytes attached; "
                            "each message needs its size + MPI_BSEND_OVERHEAD)",
                            m->bytes, b->size);
    char *data = (char *)r + region_header;
    dt_pack(data, m->buf, (size_t)m->count, m->type);
    struct message packed = *m;
    packed.buf = data;
    packed.count = (int)m->bytes;
    packed.type = MPI_BYTE;
    if (pt2pt_deliver(dest, &packed, true, &r->done) == DELIVERED)
        completion_signal(&r->done);
    return MPI_SUCCESS;
}

static bool all_regions_free(void *arg)
{
    struct bsend_buffer *b = arg;
    for (size_t off = 0; off + region_header <= b->size; off += region_at(b, off)->size)
        if (!region_is_free(region_at(b, off)))
            return false;
    return true;
}

void bsend_flush(struct rank *self)
{
    struct bsend_buffer *b = &self->pt2pt.bsend;
    if (b->base != NULL && !all_regions_free(b))
        rank_wait_until(self, all_regions_free, b);
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    int rc = error_check_initialized("MPI_Buffer_attach");
    if (rc != MPI_SUCCESS)
        return rc;
    struct bsend_buffer *b = &strand_self->pt2pt.bsend;
    if (size < 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_attach", "negative size %d", size);
    if (buffer == NULL && size > 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Buffer_attach", "NULL buffer");
    if (b->base != NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Buffer_attach",
                            "a buffer is already attached (detach it first)");
    /* Regions start aligned; the user's exact pointer and size are kept
     * for MPI_Buffer_detach. */
    uintptr_t start = ((uintptr_t)buffer + REGION_ALIGN - 1) & ~(uintptr_t)(REGION_ALIGN - 1);
    size_t skipped = start - (uintptr_t)buffer;
    size_t usable = (size_t)size > skipped ? ((size_t)size - skipped) & ~(size_t)(REGION_ALIGN - 1) : 0;
    lite_lock(&b->lock);
    b->user_base = buffer;
    b->user_size = size;
    b->base = (char *)start;
    b->size = usable;
    if (usable >= region_header) {
        struct bsend_region *r = region_at(b, 0);
        r->size = usable;
        r->done = (struct completion){ .owner = strand_self };
        atomic_store(&r->done.state, COMPLETION_DONE);
    } else {
        b->size = 0;
    }
    lite_unlock(&b->lock);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Buffer_attach);

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    int rc = error_check_initialized("MPI_Buffer_detach");
    if (rc != MPI_SUCCESS)
        return rc;
    if (buffer_addr == NULL || size == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_detach", "arguments must not be NULL");
    struct rank *self = strand_self;
    struct bsend_buffer *b = &self->pt2pt.bsend;
    if (b->base == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Buffer_detach", "no buffer is attached");
    /* Detach returns only when every buffered message has been delivered. */
    bsend_flush(self);
    lite_lock(&b->lock);
    *(void **)buffer_addr = b->user_base;
    *size = b->user_size;
    b->base = NULL;
    b->size = 0;
    b->user_base = NULL;
    b->user_size = 0;
    lite_unlock(&b->lock);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Buffer_detach);
