/* Moving data between a data stream and file extents: preparing an
 * access (checks, packing, conversion, extents), independent movement
 * (one system call per extent, or data sieving when extents are small and
 * dense), two-phase collective movement, and finishing (unpacking,
 * status). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../datatype/datatype.h"
#include "io.h"

/* Sieve when pieces average less than this, or cover at least half their span. */
enum { SIEVE_SMALL_PIECE = 1024 };

/* --- system calls, whole or to end of file */

/* Reads up to `len` bytes at `off`; `*got` < len only at end of file. */
static int read_fully(int fd, char *buf, size_t len, MPI_Offset off, size_t *got)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, buf + done, len - done, off + (MPI_Offset)done);
        if (r < 0 && errno == ESPIPE)   /* a pipe or FIFO (MPI_MODE_SEQUENTIAL) */
            r = read(fd, buf + done, len - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return io_errno_class(errno);
        if (r == 0)
            break;
        done += (size_t)r;
    }
    *got = done;
    return MPI_SUCCESS;
}

static int write_fully(struct io_core *core, const char *buf, size_t len, MPI_Offset off)
{
    int fd = core->fd;
    size_t done = 0;
    io_note_unsynced(core);
    while (done < len) {
        ssize_t r = pwrite(fd, buf + done, len - done, off + (MPI_Offset)done);
        if (r < 0 && errno == ESPIPE)
            r = write(fd, buf + done, len - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return io_errno_class(errno);
        if (r == 0)
            return MPI_ERR_NO_SPACE;
        done += (size_t)r;
    }
    return MPI_SUCCESS;
}

/* --- preparing and finishing */

/* Bytes in the file of `memory_bytes` of data of `type` (whole elements
 * when the representation changes sizes). */
size_t access_file_bytes(const struct strand_file *f, MPI_Datatype type, size_t memory_bytes)
{
    size_t fsize = datarep_size(f->view.rep, type);
    if (fsize == type->size || type->size == 0)
        return memory_bytes;
    return memory_bytes / type->size * fsize;
}

/* The converse: the memory bytes of `file_bytes` of data of an access. */
static size_t memory_bytes_of(const struct io_access *a, size_t file_bytes)
{
    size_t fsize = a->element_file_bytes;
    if (fsize == a->type->size || fsize == 0)
        return file_bytes;
    return file_bytes / fsize * a->type->size;
}

int access_check(struct strand_file *f, bool writing, MPI_Offset position, void *buf, int count,
                         MPI_Datatype type, const char **why)
{
    int amode = f->core->amode;
    if (writing && (amode & MPI_MODE_RDONLY)) {
        *why = "the file is open read-only";
        return MPI_ERR_READ_ONLY;
    }
    if (!writing && (amode & MPI_MODE_WRONLY)) {
        *why = "the file is open write-only";
        return MPI_ERR_ACCESS;
    }
    if (count < 0) {
        *why = "negative count";
        return MPI_ERR_COUNT;
    }
    int rc = dt_check_usable(type, why);
    if (rc != MPI_SUCCESS)
        return rc;
    if (dt_buffer_is_invalid(buf, count, type)) {
        *why = "NULL buffer";
        return MPI_ERR_BUFFER;
    }
    if (position < 0) {
        *why = "negative offset";
        return MPI_ERR_ARG;
    }
    if (count >= 0 && access_file_bytes(f, type, (size_t)count * type->size) % f->view.esize != 0) {
        *why = "the data is not a whole number of etypes";
        return MPI_ERR_ARG;
    }
    if (count > 0 && type->size > 0 && f->view.tile_bytes == 0) {
        *why = "the view holds no data";
        return MPI_ERR_ARG;
    }
    return datarep_check_type(f->view.rep, type, why);
}

int access_prepare(struct strand_file *f, const char *where, bool writing, MPI_Offset position, void *buf,
                   int count, MPI_Datatype type, struct io_access *a)
{
    (void)where;
    *a = (struct io_access){ .buf = buf, .count = count, .type = type, .writing = writing, .position = position };
    int rc = access_check(f, writing, position, buf, count, type, &a->why);
    if (rc != MPI_SUCCESS)
        return rc;
    a->element_file_bytes = datarep_size(f->view.rep, type);
    a->bytes = access_file_bytes(f, type, (size_t)count * type->size);
    if (a->bytes == 0)
        return MPI_SUCCESS;
    if (f->view.rep == NULL && type->contiguous) {
        a->stream = (char *)buf + type->lb;
    } else {
        a->staging = malloc(a->bytes);
        if (a->staging == NULL) {
            a->why = "out of memory for the staging buffer";
            return MPI_ERR_NO_MEM;
        }
        a->stream = a->staging;
        if (writing) {
            if (f->view.rep != NULL)
                rc = datarep_convert(f->view.rep, true, buf, count, type, a->staging, position);
            else
                dt_pack(a->staging, buf, (size_t)count, type);
            if (rc != MPI_SUCCESS) {
                a->why = "the data representation's conversion failed";
                free(a->staging);
                a->staging = NULL;
                return rc;
            }
        }
    }
    rc = view_extents(&f->view, position * (MPI_Offset)f->view.esize, a->bytes, &a->ext);
    if (rc != MPI_SUCCESS) {
        a->why = "out of memory";
        free(a->staging);
        a->staging = NULL;
    }
    return rc;
}

int access_finish(struct strand_file *f, struct io_access *a, size_t moved, int error, MPI_Status *status)
{
    if (error == MPI_SUCCESS && !a->writing && a->staging != NULL && moved > 0) {
        if (f->view.rep != NULL) {
            /* Converted element by element: whole elements only. */
            size_t fsize = a->element_file_bytes;
            int whole = fsize > 0 ? (int)(moved / fsize) : 0;
            moved = (size_t)whole * fsize;
            error = datarep_convert(f->view.rep, false, a->buf, whole, a->type, a->staging, a->position);
        } else {
            dt_unpack(a->buf, (size_t)a->count, a->type, a->staging, moved);
        }
    }
    free(a->staging);
    extents_free(&a->ext);
    a->staging = NULL;
    if (status != MPI_STATUS_IGNORE && status != NULL) {
        status->MPI_SOURCE = MPI_ANY_SOURCE;
        status->MPI_TAG = MPI_ANY_TAG;
        status->strand_cancelled = 0;
        bool counted = error == MPI_SUCCESS || !a->writing;
        status->strand_count = counted ? (long long)memory_bytes_of(a, moved) : 0;
    }
    return error;
}

/* --- independent movement */

/* A run of consecutive extents [first, last) moved together. */
struct group {
    size_t first, last;
    MPI_Offset lo, hi;
    size_t stream_off;              /* stream bytes before `first` */
};

static size_t sieve_limit(const struct strand_file *f)
{
    return (size_t)f->core->hints.ind_rd_buffer_size;
}

/* Extends `g` over the following extents while they fit one sieve buffer
 * and are small or dense enough to be worth it. */
static void group_next(const struct strand_file *f, const struct io_access *a, struct group *g)
{
    const struct io_extent *e = a->ext.v;
    size_t i = g->first, limit = sieve_limit(f);
    g->lo = e[i].off;
    g->hi = e[i].off + (MPI_Offset)e[i].len;
    size_t data = e[i].len;
    bool sieve_allowed = a->writing || f->core->hints.ds_read != IO_DISABLE;
    for (i++; sieve_allowed && i < a->ext.n; i++) {
        MPI_Offset hi = e[i].off + (MPI_Offset)e[i].len;
        if (e[i].off < g->hi || (size_t)(hi - g->lo) > limit)
            break;
        size_t n = i - g->first + 1;
        bool small = (data + e[i].len) / n < SIEVE_SMALL_PIECE;
        bool dense = 2 * (data + e[i].len) >= (size_t)(hi - g->lo);
        if (!small && !dense)
            break;
        data += e[i].len;
        g->hi = hi;
    }
    g->last = i;
}

/* Reads a group; returns stream bytes delivered before end of file. */
static int group_read(struct strand_file *f, struct io_access *a, const struct group *g, char *sieve,
                      size_t *delivered, bool *eof)
{
    const struct io_extent *e = a->ext.v;
    size_t got;
    int rc;
    *delivered = 0;
    if (g->last - g->first == 1) {
        rc = read_fully(f->core->fd, a->stream + g->stream_off, e[g->first].len, e[g->first].off, &got);
        *delivered = got;
        *eof = got < e[g->first].len;
        return rc;
    }
    size_t span = (size_t)(g->hi - g->lo);
    rc = read_fully(f->core->fd, sieve, span, g->lo, &got);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Offset end = g->lo + (MPI_Offset)got;
    size_t at = g->stream_off;
    for (size_t i = g->first; i < g->last; i++) {
        MPI_Offset avail = end - e[i].off;
        size_t n = avail <= 0 ? 0 : (size_t)avail < e[i].len ? (size_t)avail : e[i].len;
        memcpy(a->stream + at, sieve + (e[i].off - g->lo), n);
        at += n;
        *delivered += n;
        if (n < e[i].len) {
            *eof = true;
            break;
        }
    }
    return MPI_SUCCESS;
}

/* Writes a group: one extent directly, several by read-modify-write of
 * their span under an exclusive lock. */
static int group_write(struct strand_file *f, struct io_access *a, const struct group *g, char *sieve, bool locked)
{
    const struct io_extent *e = a->ext.v;
    struct io_core *core = f->core;
    struct io_range held;
    int rc;
    bool sieving = g->last - g->first > 1;
    if (!locked && (rc = range_lock(f, &held, g->lo, g->hi, sieving)) != MPI_SUCCESS)
        return rc;
    if (!sieving) {
        rc = write_fully(core, a->stream + g->stream_off, e[g->first].len, e[g->first].off);
        if (!locked)
            range_unlock(f, &held);
        return rc;
    }
    size_t span = (size_t)(g->hi - g->lo), got;
    rc = read_fully(core->fd, sieve, span, g->lo, &got);
    if (rc == MPI_SUCCESS) {
        memset(sieve + got, 0, span - got);
        size_t at = g->stream_off;
        for (size_t i = g->first; i < g->last; i++) {
            memcpy(sieve + (e[i].off - g->lo), a->stream + at, e[i].len);
            at += e[i].len;
        }
        rc = write_fully(core, sieve, span, g->lo);
    }
    if (!locked)
        range_unlock(f, &held);
    return rc;
}

int access_independent(struct strand_file *f, struct io_access *a, size_t *moved)
{
    *moved = 0;
    if (a->ext.n == 0)
        return MPI_SUCCESS;
    struct io_core *core = f->core;
    char *sieve = NULL;
    if (a->ext.n > 1 && (sieve = malloc(sieve_limit(f))) == NULL)
        return MPI_ERR_NO_MEM;
    /* Atomic mode: the whole access under one lock, so that no other
     * access sees it half done (writes exclusive, reads shared). */
    struct io_range whole;
    bool atomic = core->atomic;
    int rc = MPI_SUCCESS;
    if (atomic)
        rc = range_lock(f, &whole, a->ext.v[0].off,
                        a->ext.v[a->ext.n - 1].off + (MPI_Offset)a->ext.v[a->ext.n - 1].len, a->writing);
    struct group g = { 0 };
    while (g.first < a->ext.n && rc == MPI_SUCCESS) {
        group_next(f, a, &g);
        size_t group_bytes = 0;
        for (size_t i = g.first; i < g.last; i++)
            group_bytes += a->ext.v[i].len;
        if (a->writing) {
            rc = group_write(f, a, &g, sieve, atomic);
            if (rc == MPI_SUCCESS)
                *moved += group_bytes;
        } else {
            size_t delivered;
            bool eof = false;
            rc = group_read(f, a, &g, sieve, &delivered, &eof);
            *moved += delivered;
            if (eof)
                break;
        }
        g.stream_off += group_bytes;
        g.first = g.last;
    }
    if (atomic)
        range_unlock(f, &whole);
    free(sieve);
    return rc;
}

/* --- two-phase collective movement */

/* A piece of one member's extent inside an aggregator's window. */
struct piece {
    MPI_Offset off;
    size_t len;
    char *data;                     /* in the member's stream */
};

static int piece_compare(const void *pa, const void *pb)
{
    const struct piece *a = pa, *b = pb;
    return a->off < b->off ? -1 : a->off > b->off;
}

struct pieces {
    struct piece *v;
    size_t n, cap;
};

static int pieces_add(struct pieces *p, MPI_Offset off, size_t len, char *data)
{
    void *grown = io_grow(p->v, p->n, &p->cap, sizeof *p->v);
    if (grown == NULL)
        return MPI_ERR_NO_MEM;
    p->v = grown;
    p->v[p->n++] = (struct piece){ off, len, data };
    return MPI_SUCCESS;
}

/* First extent of `part` that ends after `off` (extents are in file order). */
size_t coll_part_first_after(const struct coll_part *part, MPI_Offset off)
{
    size_t lo = 0, hi = part->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (part->ext[mid].off + (MPI_Offset)part->ext[mid].len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The pieces of every member inside [w0, w1), advancing the cursors. */
static int window_pieces(struct coll_part **parts, int nparts, size_t *cursor, MPI_Offset w0, MPI_Offset w1,
                         struct pieces *out)
{
    out->n = 0;
    for (int r = 0; r < nparts; r++) {
        const struct coll_part *p = parts[r];
        for (size_t i = cursor[r]; i < p->n && p->ext[i].off < w1; i++) {
            MPI_Offset lo = p->ext[i].off > w0 ? p->ext[i].off : w0;
            MPI_Offset end = p->ext[i].off + (MPI_Offset)p->ext[i].len;
            MPI_Offset hi = end < w1 ? end : w1;
            int rc = pieces_add(out, lo, (size_t)(hi - lo), p->stream + p->stream_at[i] + (lo - p->ext[i].off));
            if (rc != MPI_SUCCESS)
                return rc;
            if (end > w1)
                break;
            cursor[r] = i + 1;
        }
    }
    return MPI_SUCCESS;
}

/* Covered bytes of sorted pieces (overlaps counted once). */
static size_t pieces_covered(const struct pieces *p)
{
    size_t covered = 0;
    MPI_Offset reach = p->n > 0 ? p->v[0].off : 0;
    for (size_t i = 0; i < p->n; i++) {
        MPI_Offset end = p->v[i].off + (MPI_Offset)p->v[i].len;
        if (end > reach) {
            covered += (size_t)(end - (p->v[i].off > reach ? p->v[i].off : reach));
            reach = end;
        }
    }
    return covered;
}

/* One window of an aggregator: one read and/or one write of its span. */
static int window_move(struct strand_file *f, bool writing, struct pieces *p, char *buf)
{
    if (p->n == 0)
        return MPI_SUCCESS;
    qsort(p->v, p->n, sizeof *p->v, piece_compare);
    MPI_Offset lo = p->v[0].off, hi = lo;
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].off + (MPI_Offset)p->v[i].len > hi)
            hi = p->v[i].off + (MPI_Offset)p->v[i].len;
    size_t span = (size_t)(hi - lo), got = 0;
    struct io_core *core = f->core;
    int rc = MPI_SUCCESS;
    if (!writing || pieces_covered(p) < span) {
        /* Reading, or writing with holes: the holes keep what the file has. */
        rc = read_fully(core->fd, buf, span, lo, &got);
        if (writing && rc == MPI_SUCCESS)
            memset(buf + got, 0, span - got);
    }
    if (rc == MPI_SUCCESS && writing) {
        for (size_t i = 0; i < p->n; i++)
            memcpy(buf + (p->v[i].off - lo), p->v[i].data, p->v[i].len);
        rc = write_fully(core, buf, span, lo);
    } else if (rc == MPI_SUCCESS) {
        for (size_t i = 0; i < p->n; i++) {
            MPI_Offset avail = (MPI_Offset)got - (p->v[i].off - lo);
            size_t n = avail <= 0 ? 0 : (size_t)avail < p->v[i].len ? (size_t)avail : p->v[i].len;
            memcpy(p->v[i].data, buf + (p->v[i].off - lo), n);
        }
    }
    return rc;
}

/* The aggregator's part of the work: its file domain, window by window. */
int aggregate_domain(struct strand_file *f, struct coll_part **parts, int nparts, bool writing, MPI_Offset d0,
                     MPI_Offset d1)
{
    size_t window = (size_t)f->core->hints.cb_buffer_size;
    if (f->cb_buffer_size != window) {
        free(f->cb_buffer);
        f->cb_buffer = malloc(window);
        f->cb_buffer_size = f->cb_buffer != NULL ? window : 0;
        if (f->cb_buffer == NULL)
            return MPI_ERR_NO_MEM;
    }
    size_t *cursor = malloc((size_t)nparts * sizeof *cursor);
    if (cursor == NULL)
        return MPI_ERR_NO_MEM;
    for (int r = 0; r < nparts; r++)
        cursor[r] = coll_part_first_after(parts[r], d0);
    struct pieces p = { 0 };
    int rc = MPI_SUCCESS;
    for (MPI_Offset w0 = d0; w0 < d1 && rc == MPI_SUCCESS; w0 += (MPI_Offset)window) {
        MPI_Offset w1 = d1 - w0 < (MPI_Offset)window ? d1 : w0 + (MPI_Offset)window;
        rc = window_pieces(parts, nparts, cursor, w0, w1, &p);
        if (rc == MPI_SUCCESS)
            rc = window_move(f, writing, &p, f->cb_buffer);
    }
    free(p.v);
    free(cursor);
    return rc;
}

/* True when no two members' accesses interleave and each is one extent:
 * every member then moves its own data with one system call. */
static bool members_contiguous(struct coll_part **parts, int n)
{
    for (int r = 0; r < n; r++)
        if (parts[r]->n > 1)
            return false;
    return true;
}

static void global_range(struct coll_part **parts, int n, MPI_Offset *lo, MPI_Offset *hi)
{
    *lo = -1;
    *hi = -1;
    for (int r = 0; r < n; r++) {
        const struct coll_part *p = parts[r];
        if (p->n == 0)
            continue;
        MPI_Offset a = p->ext[0].off, b = p->ext[p->n - 1].off + (MPI_Offset)p->ext[p->n - 1].len;
        if (*lo < 0 || a < *lo)
            *lo = a;
        if (b > *hi)
            *hi = b;
    }
}

/* Stream bytes before end of file (what a read delivered). */
static size_t bytes_before_eof(const struct io_access *a, MPI_Offset file_size)
{
    size_t n = 0;
    for (size_t i = 0; i < a->ext.n; i++) {
        MPI_Offset avail = file_size - a->ext.v[i].off;
        if (avail <= 0)
            break;
        if ((size_t)avail < a->ext.v[i].len)
            return n + (size_t)avail;
        n += a->ext.v[i].len;
    }
    return n;
}

/* Aggregator k's share of [lo, hi): equal, aligned. */
void io_domain(int k, int naggr, MPI_Offset lo, MPI_Offset hi, MPI_Offset *d0, MPI_Offset *d1)
{
    MPI_Offset per = ((hi - lo + naggr - 1) / naggr + IO_ALIGN - 1) / IO_ALIGN * IO_ALIGN;
    *d0 = lo + per * k;
    if (*d0 > hi)
        *d0 = hi;
    *d1 = *d0 + per < hi ? *d0 + per : hi;
}

/* The collective within one node process: every member's part is in
 * its slot; aggregators spread over the members. */
static int local_collective(struct strand_file *f, struct io_access *a, int error, size_t *moved)
{
    struct io_core *core = f->core;
    struct coll_part **parts = (struct coll_part **)core->slots;
    int n = core->size;
    bool writing = a->writing;
    /* A member that failed its checks fails the whole collective, before
     * any data moves: every member sees the same slots. */
    for (int r = 0; r < n && error == MPI_SUCCESS; r++)
        error = parts[r]->error;
    enum io_switch cb = writing ? core->hints.cb_write : core->hints.cb_read;
    if (error != MPI_SUCCESS)
        return error;
    if (cb == IO_DISABLE || (cb == IO_AUTOMATIC && members_contiguous(parts, n)))
        return access_independent(f, a, moved);
    MPI_Offset lo, hi;
    global_range(parts, n, &lo, &hi);
    int naggr = core->hints.cb_nodes < n ? core->hints.cb_nodes : n;
    /* Aggregators spread over the members; domains split evenly, aligned. */
    int index = -1;
    for (int k = 0; k < naggr; k++)
        if ((int)((long)k * n / naggr) == f->rank)
            index = k;
    *moved = a->bytes;
    if (index >= 0 && lo >= 0) {
        MPI_Offset d0, d1;
        io_domain(index, naggr, lo, hi, &d0, &d1);
        if (d0 < d1)
            return aggregate_domain(f, parts, n, writing, d0, d1);
    }
    return MPI_SUCCESS;
}

int access_collective(struct strand_file *f, struct io_access *a, int error, size_t *moved)
{
    struct io_core *core = f->core;
    *moved = 0;
    struct coll_part me = { a->ext.v, NULL, a->ext.n, a->stream, error };
    if (me.n > 0 && (me.stream_at = malloc(me.n * sizeof *me.stream_at)) == NULL) {
        me.error = error = MPI_ERR_NO_MEM;
        me.n = 0;
    }
    for (size_t i = 0, at = 0; i < me.n; at += me.ext[i++].len)
        me.stream_at[i] = at;
    core->slots[f->rank] = &me;
    bool writing = a->writing;
    if (core->spans) {
        error = span_collective(f, a, &me, moved);
    } else {
        io_barrier(core);
        error = local_collective(f, a, error, moved);
    }
    /* Every member gets the first error; aggregators are done after it. */
    error = io_agree_error(f, error);
    free(me.stream_at);
    if (error == MPI_SUCCESS && !writing && *moved > 0) {
        struct stat st;
        if (fstat(core->fd, &st) == 0)
            *moved = bytes_before_eof(a, st.st_size);
    }
    return error;
}

int io_transfer(struct strand_file *f, const char *where, bool writing, bool collective, MPI_Offset position,
                void *buf, int count, MPI_Datatype type, MPI_Status *status)
{
    struct io_access a;
    int rc = access_prepare(f, where, writing, position, buf, count, type, &a);
    int own = rc;
    size_t moved = 0;
    if (collective)
        rc = access_collective(f, &a, rc, &moved);
    else if (rc == MPI_SUCCESS)
        rc = access_independent(f, &a, &moved);
    rc = access_finish(f, &a, moved, rc, status);
    if (own != MPI_SUCCESS)
        return file_error(f, own, where, "%s", a.why);
    if (rc != MPI_SUCCESS)
        return file_error(f, rc, where, collective ? "the collective access failed (on this or another member)"
                                                   : "the access failed");
    return MPI_SUCCESS;
}

int access_etypes(struct strand_file *f, const char *where, int count, MPI_Datatype type, MPI_Offset *n)
{
    const char *why;
    if (count < 0)
        return file_error(f, MPI_ERR_COUNT, where, "negative count %d", count);
    if (dt_check_usable(type, &why) != MPI_SUCCESS)
        return file_error(f, MPI_ERR_TYPE, where, "%s", why);
    *n = (MPI_Offset)(access_file_bytes(f, type, (size_t)count * type->size) / f->view.esize);
    return MPI_SUCCESS;
}
