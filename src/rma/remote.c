/* One-sided operations on members in other node processes (remote.h).
 *
 * An operation becomes frames: the target buffer is described as a list
 * of blocks (byte offset from the target's base, length; for accumulate,
 * an element count), at most WIRE_RMA_MAX_BLOCKS blocks and
 * WIRE_RMA_MAX_DATA bytes of data per frame; larger operations are split.
 * Origin data travels packed (put), in operand layout of its element type
 * (accumulate), and comes back packed in block order (get). The target's
 * progress thread copies or combines in place, with the same atomics
 * local origins use (acc_apply), and answers every frame. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../datatype/datatype.h"
#include "../net/net.h"
#include "remote.h"
#include "rma.h"

/* ---- window ids ---- */

/* Unique in every process that may host a core of the window, whichever
 * job the members come from (windows of communicators joining jobs): the
 * creating process's job id and node index, mixed, plus a counter. */
uint64_t rma_window_id_new(void)
{
    static atomic_uint_fast64_t next;
    uint64_t x = net_self_job_id() ^ ((uint64_t)net_self_node() * 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
    return (x & ~0xffffffull) | ((atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) + 1) & 0xffffff);
}

/* ---- accumulate operations and element types on the wire ---- */

/* By enum op_kind (op.h), up to OP_USER. */
static MPI_Op const ops_by_kind[] = {
    MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
    MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE,
};
_Static_assert(sizeof ops_by_kind / sizeof ops_by_kind[0] == OP_USER, "one entry per predefined op kind");

/* The predefined types an accumulate may combine; the code is the index. */
static MPI_Datatype const element_types[] = {
    MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_WCHAR, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT,
    MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT,
    MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T,
    MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
    MPI_C_LONG_DOUBLE_COMPLEX, MPI_BYTE, MPI_AINT, MPI_OFFSET, MPI_FLOAT_INT, MPI_DOUBLE_INT,
    MPI_LONG_INT, MPI_SHORT_INT, MPI_2INT, MPI_LONG_DOUBLE_INT, MPI_INTEGER, MPI_REAL,
    MPI_DOUBLE_PRECISION, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL, MPI_CHARACTER, MPI_2REAL,
    MPI_2DOUBLE_PRECISION, MPI_2INTEGER, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8,
    MPI_REAL4, MPI_REAL8, MPI_REAL16, MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32,
};
enum { ELEMENT_TYPES = sizeof element_types / sizeof element_types[0] };

static MPI_Datatype element_type(uint32_t code)
{
    return code < ELEMENT_TYPES ? element_types[code] : NULL;
}

static bool element_code(MPI_Datatype t, uint32_t *code)
{
    for (uint32_t i = 0; i < ELEMENT_TYPES; i++)
        if (element_types[i] == t) {
            *code = i;
            return true;
        }
    return false;
}

/* The plan for (op, element) codes; false when they name no valid pair. */
static bool plan_of(uint32_t op, uint32_t element, struct op_plan *plan)
{
    MPI_Datatype t = element_type(element);
    const char *why;
    return op < OP_USER && t != NULL && op_plan_init(plan, ops_by_kind[op], t, true, &why) == MPI_SUCCESS;
}

bool rma_remote_acc_element(uint32_t op, uint32_t element, struct wire_element *out)
{
    struct op_plan plan;
    if (!plan_of(op, element, &plan))
        return false;
    *out = (struct wire_element){ (uint64_t)dt_extent(plan.element), (uint64_t)plan.element->true_ub };
    return true;
}

bool rma_remote_window(uint64_t id, uint32_t dest, uint32_t source, struct wire_window *out)
{
    struct win_core *core = win_registry_find(id);
    if (core == NULL || dest >= (uint32_t)core->size || source >= (uint32_t)core->size)
        return false;
    *out = (struct wire_window){
        .size = (uint32_t)core->size,
        .dest_local = !win_member_is_remote(core, (int)dest),
        .source_remote = win_member_is_remote(core, (int)source),
        .dest_bytes = (uint64_t)core->members[dest].size,
    };
    return true;
}

/* ---- get records: where the bytes of a get land (cookies, never pointers, on the wire) ---- */

struct get_record {
    struct win_core *core;
    int origin;                     /* its window rank */
    void *buf;
    int count;
    MPI_Datatype type;              /* retained until the data is in */
    char *stage;                    /* the packed stream: buf itself when contiguous, else malloc'd */
    size_t bytes;
    uint32_t nchunks, left;
    size_t *chunk_at;               /* stream offset of chunk i; chunk_at[nchunks] == bytes */
};

static struct {
    pthread_mutex_t lock;
    struct get_record **obj;
    uint32_t *gen;
    uint32_t cap;
} gets = { .lock = PTHREAD_MUTEX_INITIALIZER };

static _Noreturn void out_of_memory(void)
{
    strand_job_abort(1, "Strand MPI: out of memory for a one-sided operation between node processes\n");
}

static uint64_t get_cookie_new(struct get_record *g)
{
    pthread_mutex_lock(&gets.lock);
    uint32_t slot = 0;
    while (slot < gets.cap && gets.obj[slot] != NULL)
        slot++;
    if (slot == gets.cap) {
        uint32_t cap = gets.cap == 0 ? 16 : 2 * gets.cap;
        struct get_record **o = realloc(gets.obj, cap * sizeof *o);
        uint32_t *gen = realloc(gets.gen, cap * sizeof *gen);
        if (o == NULL || gen == NULL)
            out_of_memory();
        for (uint32_t i = gets.cap; i < cap; i++)
            o[i] = NULL, gen[i] = 1;
        gets.obj = o, gets.gen = gen, gets.cap = cap;
    }
    gets.obj[slot] = g;
    uint64_t cookie = ((uint64_t)gets.gen[slot] << 32) | (slot + 1);
    pthread_mutex_unlock(&gets.lock);
    return cookie;
}

/* The record a cookie names (NULL if none); removed when `take`. */
static struct get_record *get_cookie_find(uint64_t cookie, bool take)
{
    uint32_t slot = (uint32_t)cookie - 1;
    pthread_mutex_lock(&gets.lock);
    struct get_record *g = NULL;
    if ((uint32_t)cookie != 0 && slot < gets.cap && gets.gen[slot] == (uint32_t)(cookie >> 32))
        g = gets.obj[slot];
    if (g != NULL && take) {
        gets.obj[slot] = NULL;
        gets.gen[slot]++;
    }
    pthread_mutex_unlock(&gets.lock);
    return g;
}

/* ---- sending ---- */

static void frame_send(struct win_core *core, int to, struct net_rma *f, void *payload, size_t len)
{
    f->window = core->id;
    f->dest = (uint32_t)to;
    if (net_rma_send(core->members[to].rank->remote, f, payload, len) != MPI_SUCCESS)
        out_of_memory();
}

/* A request of the calling rank: counted until answered. */
static void request_send(struct strand_win *w, int to, struct net_rma f, void *payload, size_t len)
{
    f.source = (uint32_t)w->rank;
    atomic_fetch_add_explicit(&w->core->members[w->rank].remote_pending, 1, memory_order_relaxed);
    frame_send(w->core, to, &f, payload, len);
}

/* An answer from member `from` (here) to remote member `to`. */
static void reply_send(struct win_core *core, int from, int to, struct net_rma f, void *payload, size_t len)
{
    f.source = (uint32_t)from;
    frame_send(core, to, &f, payload, len);
}

struct pending_wait {
    atomic_uint *count;
};

static bool pending_zero(void *arg)
{
    return atomic_load_explicit(((struct pending_wait *)arg)->count, memory_order_acquire) == 0;
}

void rma_remote_drain(struct strand_win *w)
{
    struct pending_wait p = { &w->core->members[w->rank].remote_pending };
    if (!pending_zero(&p))
        rank_wait_until(strand_self, pending_zero, &p);
}

/* ---- block lists of a target buffer ---- */

struct block {
    uint64_t offset, len;
};

struct block_list {
    struct block *b;
    size_t n, cap;
    uint64_t total;                 /* bytes (or elements) listed */
    uint64_t limit;                 /* stop there */
    MPI_Aint stride;                /* accumulate: bytes per element (lengths count elements); 0: bytes */
    const char *anchor;             /* the address the walk started at */
    uint64_t base;                  /* its offset in the target's window */
};

static void block_add(struct block_list *l, uint64_t offset, uint64_t len)
{
    if (len > l->limit - l->total)
        len = l->limit - l->total;
    if (len == 0)
        return;
    l->total += len;
    uint64_t unit = l->stride > 0 ? (uint64_t)l->stride : 1;
    if (l->n > 0 && l->b[l->n - 1].offset + l->b[l->n - 1].len * unit == offset) {
        l->b[l->n - 1].len += len;
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap == 0 ? 16 : 2 * l->cap;
        l->b = realloc(l->b, l->cap * sizeof *l->b);
        if (l->b == NULL)
            out_of_memory();
    }
    l->b[l->n++] = (struct block){ offset, len };
}

/* dt_visit callback: `n` elements of `named` at `addr`. */
static int collect_run(MPI_Datatype named, char *addr, size_t n, void *arg)
{
    struct block_list *l = arg;
    uint64_t at = l->base + (uint64_t)(addr - l->anchor);
    if (l->stride > 0) {
        block_add(l, at, n);
    } else if (named->contiguous) {
        block_add(l, at, n * named->size);
    } else {
        /* A pair type with padding: its data blocks, element by element. */
        for (size_t i = 0; i < n; i++)
            for (uint32_t k = 0; k < named->layout.nops; k++)
                block_add(l, at + i * (uint64_t)dt_extent(named) + (uint64_t)named->layout.ops[k].disp,
                          named->layout.ops[k].len);
    }
    return l->total == l->limit;
}

/* The target buffer of `op`, up to `limit` bytes (or elements of `stride` bytes). */
static struct block_list target_blocks(const struct rma_op *op, uint64_t limit, MPI_Aint stride)
{
    static const char anchor_object[1];
    struct block_list l = { .limit = limit, .stride = stride, .anchor = anchor_object,
                            .base = (uint64_t)op->offset };
    if (limit > 0)
        dt_visit(op->target_type, (char *)anchor_object, (size_t)op->target_count, collect_run, &l);
    return l;
}

/* Splits a block list into frames of at most WIRE_RMA_MAX_BLOCKS blocks
 * and WIRE_RMA_MAX_DATA data bytes; `emit` gets each frame's blocks
 * (encoded) and where its data starts in the stream. */
struct chunker {
    const struct block_list *l;
    size_t next;                    /* block */
    uint64_t done;                  /* of that block (bytes or elements) */
    uint64_t stream;                /* data bytes before the next chunk */
};

/* The next chunk's blocks into `out` (room for WIRE_RMA_MAX_BLOCKS); returns their count. */
static uint64_t chunk_next(struct chunker *c, unsigned char *out, uint64_t *data_bytes)
{
    uint64_t unit = c->l->stride > 0 ? (uint64_t)c->l->stride : 1;
    uint64_t nblocks = 0, bytes = 0;
    while (c->next < c->l->n && nblocks < WIRE_RMA_MAX_BLOCKS) {
        const struct block *b = &c->l->b[c->next];
        uint64_t room = (WIRE_RMA_MAX_DATA - bytes) / unit;
        if (room == 0)
            break;
        uint64_t take = b->len - c->done < room ? b->len - c->done : room;
        wire_encode_block(out + nblocks * WIRE_RMA_BLOCK_BYTES, b->offset + c->done * unit, take);
        nblocks++;
        bytes += take * unit;
        c->done += take;
        if (c->done == b->len) {
            c->next++;
            c->done = 0;
        }
    }
    *data_bytes = bytes;
    c->stream += bytes;
    return nblocks;
}

static unsigned char *payload_alloc(size_t bytes)
{
    unsigned char *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL)
        out_of_memory();
    return p;
}

/* Room for the encoded blocks of one chunk (a chunk touches at most every block). */
static unsigned char *list_alloc(const struct block_list *l)
{
    return payload_alloc((l->n < WIRE_RMA_MAX_BLOCKS ? l->n : WIRE_RMA_MAX_BLOCKS) * WIRE_RMA_BLOCK_BYTES);
}

/* PUT and ACC: blocks, then the data from `stream` (contiguous). */
static void send_data_frames(struct strand_win *w, const struct rma_op *op, struct net_rma f,
                             const struct block_list *l, const char *stream)
{
    struct chunker c = { .l = l };
    unsigned char *list = list_alloc(l);
    while (c.next < l->n) {
        uint64_t at = c.stream, bytes;
        uint64_t nblocks = chunk_next(&c, list, &bytes);
        size_t list_bytes = nblocks * WIRE_RMA_BLOCK_BYTES;
        unsigned char *payload = payload_alloc(list_bytes + bytes);
        memcpy(payload, list, list_bytes);
        memcpy(payload + list_bytes, stream + at, bytes);
        f.b = nblocks;
        f.c = bytes;
        request_send(w, op->target, f, payload, list_bytes + bytes);
    }
    free(list);
}

/* ---- origin side: the operations ---- */

static int remote_put(struct strand_win *w, const struct rma_op *op)
{
    size_t bytes = (size_t)op->origin_count * op->origin_type->size;
    struct block_list l = target_blocks(op, bytes, 0);
    char *packed = NULL;
    const char *stream = (const char *)op->origin + op->origin_type->true_lb;
    if (!op->origin_type->contiguous) {
        packed = (char *)payload_alloc(bytes);
        dt_pack(packed, op->origin, (size_t)op->origin_count, op->origin_type);
        stream = packed;
    }
    send_data_frames(w, op, (struct net_rma){ .type = WIRE_RMA_PUT }, &l, stream);
    free(packed);
    free(l.b);
    return MPI_SUCCESS;
}

static int remote_accumulate(struct strand_win *w, const struct rma_op *op)
{
    const struct op_plan *plan = &op->plan;
    MPI_Datatype element = plan->element;
    uint32_t code;
    if (!element_code(element, &code))
        return MPI_ERR_TYPE;
    size_t n = (size_t)op->origin_count * (op->origin_type->size / element->size);
    MPI_Aint stride = dt_extent(element);
    struct block_list l = target_blocks(op, n, stride);
    /* The origin in operand layout (elements `stride` apart). */
    char *scratch = (char *)payload_alloc(n * (size_t)stride);
    dt_copy(scratch, n, element, op->origin, (size_t)op->origin_count, op->origin_type);
    struct net_rma f = { .type = WIRE_RMA_ACC, .flags = op->exclusive,
                         .code = (int32_t)((uint32_t)plan->op->kind | code << 8) };
    send_data_frames(w, op, f, &l, scratch - element->true_lb);
    free(scratch);
    free(l.b);
    return MPI_SUCCESS;
}

static int remote_get(struct strand_win *w, const struct rma_op *op)
{
    size_t bytes = (size_t)op->target_count * op->target_type->size;
    struct block_list l = target_blocks(op, bytes, 0);
    if (l.n == 0)
        return MPI_SUCCESS;
    struct get_record *g = calloc(1, sizeof *g);
    if (g == NULL)
        out_of_memory();
    *g = (struct get_record){ .core = w->core, .origin = w->rank, .buf = op->origin, .count = op->origin_count,
                              .type = op->origin_type, .bytes = l.total };
    dt_retain(g->type);
    g->stage = op->origin_type->contiguous ? (char *)op->origin + op->origin_type->true_lb
                                           : (char *)payload_alloc(l.total);
    /* Where each chunk lands, first: the record is whole before any reply can find it. */
    unsigned char *list = list_alloc(&l);
    uint64_t data;
    for (struct chunker c = { .l = &l }; c.next < l.n; g->nchunks++) {
        if (g->nchunks % 16 == 0 && (g->chunk_at = realloc(g->chunk_at, (g->nchunks + 17) * sizeof *g->chunk_at)) == NULL)
            out_of_memory();
        g->chunk_at[g->nchunks] = c.stream;
        chunk_next(&c, list, &data);
        g->chunk_at[g->nchunks + 1] = c.stream;
    }
    g->left = g->nchunks;
    /* Once registered, the record belongs to the progress thread: the
     * last reply frees it, possibly before this loop ends. */
    uint32_t nchunks = g->nchunks;
    uint64_t cookie = get_cookie_new(g);
    struct chunker c = { .l = &l };
    for (uint32_t k = 0; k < nchunks; k++) {
        uint64_t nblocks = chunk_next(&c, list, &data);
        size_t list_bytes = nblocks * WIRE_RMA_BLOCK_BYTES;
        unsigned char *payload = payload_alloc(list_bytes);
        memcpy(payload, list, list_bytes);
        struct net_rma f = { .type = WIRE_RMA_GET, .flags = k, .b = nblocks, .c = cookie };
        request_send(w, op->target, f, payload, list_bytes);
    }
    free(list);
    free(l.b);
    return MPI_SUCCESS;
}

const struct win_target_ops rma_remote_ops = {
    .put = remote_put,
    .get = remote_get,
    .accumulate = remote_accumulate,
};

/* ---- origin side: synchronization ---- */

/* The grant is the LOCK's answer: waited for with the others at unlock. */
void rma_remote_lock(struct strand_win *w, int target, bool exclusive)
{
    request_send(w, target, (struct net_rma){ .type = WIRE_RMA_LOCK, .flags = exclusive }, NULL, 0);
}

void rma_remote_unlock(struct strand_win *w, int target, bool exclusive)
{
    request_send(w, target, (struct net_rma){ .type = WIRE_RMA_UNLOCK, .flags = exclusive }, NULL, 0);
    rma_remote_drain(w);
}

void rma_remote_post(struct strand_win *w, int origin)
{
    request_send(w, origin, (struct net_rma){ .type = WIRE_RMA_POST }, NULL, 0);
}

void rma_remote_complete(struct strand_win *w, int target)
{
    request_send(w, target, (struct net_rma){ .type = WIRE_RMA_COMPLETE }, NULL, 0);
}

/* ---- target side (progress thread) ---- */

static void ack(struct win_core *core, const struct wire_frame *f)
{
    reply_send(core, (int)f->dest, f->source, (struct net_rma){ .type = WIRE_RMA_ACK, .flags = f->type }, NULL, 0);
}

/* ---- target side: frames held while their origin's lock request waits ---- */

struct held_frame {
    struct held_frame *next;
    struct wire_frame f;
    unsigned char payload[];
};

/* Rows whose held frames this thread is to serve, and whether it is
 * serving them already (further up its stack). */
static _Thread_local struct remote_lock *serve_list;
static _Thread_local bool serving_held;

/* Frames from an origin to a target (the kinds a lock epoch sends). */
static bool from_origin(enum wire_type t)
{
    return t == WIRE_RMA_PUT || t == WIRE_RMA_ACC || t == WIRE_RMA_GET || t == WIRE_RMA_LOCK ||
           t == WIRE_RMA_UNLOCK || t == WIRE_RMA_COMPLETE;
}

/* Progress thread: holds a copy of `f` when its origin's lock request on
 * the target is not granted yet (`pending` until the grant's bookkeeping
 * is done, a little after the request's waiting bit is claimed), or frames
 * of it are still held or being served (they go first). True when held. */
static bool frame_hold(struct win_core *core, const struct wire_frame *f, const unsigned char *payload)
{
    struct remote_lock *rows = atomic_load_explicit(&core->members[f->dest].remote_locks, memory_order_acquire);
    if (rows == NULL || !from_origin(f->type))
        return false;
    struct remote_lock *row = &rows[f->source];
    lite_lock(&row->hold_lock);
    bool hold = row->pending || row->head != NULL || row->draining;
    if (hold) {
        struct held_frame *h = malloc(sizeof *h + f->payload_len);
        if (h == NULL)
            out_of_memory();
        h->next = NULL;
        h->f = *f;
        if (f->payload_len > 0)
            memcpy(h->payload, payload, f->payload_len);
        if (row->tail != NULL)
            row->tail->next = h;
        else
            row->head = h;
        row->tail = h;
    }
    lite_unlock(&row->hold_lock);
    return hold;
}

void rma_remote_lock_request_pending(struct win_core *core, int target, int origin)
{
    struct remote_lock *row = &atomic_load_explicit(&core->members[target].remote_locks, memory_order_acquire)[origin];
    lite_lock(&row->hold_lock);
    row->pending = true;
    lite_unlock(&row->hold_lock);
}

void rma_remote_lock_granted(struct win_core *core, int target, int origin)
{
    reply_send(core, target, origin, (struct net_rma){ .type = WIRE_RMA_ACK, .flags = WIRE_RMA_LOCK }, NULL, 0);
    struct remote_lock *row = &atomic_load_explicit(&core->members[target].remote_locks, memory_order_acquire)[origin];
    lite_lock(&row->hold_lock);
    row->pending = false;
    bool schedule = row->head != NULL && !row->draining;
    row->draining |= schedule;
    lite_unlock(&row->hold_lock);
    if (schedule) {
        row->next_drain = serve_list;
        serve_list = row;
    }
}

static void frame_serve(struct net_peer *from, struct win_core *core, const struct wire_frame *f,
                        const unsigned char *payload);

/* Serves a row's held frames in order, until none is left or one (a
 * LOCK of the next epoch) made the origin wait again; frames arriving
 * meanwhile queue behind (`draining`). */
static void serve_row(struct remote_lock *row)
{
    for (;;) {
        lite_lock(&row->hold_lock);
        struct held_frame *h = row->pending ? NULL : row->head;
        if (h == NULL) {
            row->draining = false;
            lite_unlock(&row->hold_lock);
            return;
        }
        row->head = h->next;
        if (row->head == NULL)
            row->tail = NULL;
        lite_unlock(&row->hold_lock);
        frame_serve(NULL, row->core, &h->f, h->payload);
        free(h);
    }
}

void rma_remote_serve_held(void)
{
    if (serving_held)
        return;
    serving_held = true;
    while (serve_list != NULL) {
        struct remote_lock *row = serve_list;
        serve_list = row->next_drain;
        serve_row(row);
    }
    serving_held = false;
}

static void serve_put(struct win_core *core, const struct wire_frame *f, const unsigned char *payload)
{
    char *base = core->members[f->dest].base;
    const unsigned char *data = payload + f->b * WIRE_RMA_BLOCK_BYTES;
    for (uint64_t i = 0; i < f->b; i++) {
        uint64_t offset, len;
        wire_block(payload, i, &offset, &len);
        memcpy(base + offset, data, len);
        data += len;
    }
}

static void serve_accumulate(struct win_core *core, const struct wire_frame *f, const unsigned char *payload)
{
    struct op_plan plan;
    plan_of((uint32_t)f->tag & 0xff, (uint32_t)f->tag >> 8, &plan);    /* checked by the decoder */
    MPI_Aint stride = dt_extent(plan.element);
    char *base = core->members[f->dest].base;
    const unsigned char *data = payload + f->b * WIRE_RMA_BLOCK_BYTES;
    for (uint64_t i = 0; i < f->b; i++) {
        uint64_t offset, n;
        wire_block(payload, i, &offset, &n);
        acc_apply(&plan, base + offset, data, n, f->context_id != 0);
        data += n * (uint64_t)stride;
    }
}

static void serve_get(struct win_core *core, const struct wire_frame *f, const unsigned char *payload)
{
    const char *base = core->members[f->dest].base;
    uint64_t total = 0;
    for (uint64_t i = 0; i < f->b; i++) {
        uint64_t offset, len;
        wire_block(payload, i, &offset, &len);
        total += len;
    }
    unsigned char *reply = payload_alloc(total);
    unsigned char *at = reply;
    for (uint64_t i = 0; i < f->b; i++) {
        uint64_t offset, len;
        wire_block(payload, i, &offset, &len);
        memcpy(at, base + offset, len);
        at += len;
    }
    struct net_rma r = { .type = WIRE_RMA_GET_REPLY, .flags = f->context_id, .c = f->c };
    reply_send(core, (int)f->dest, f->source, r, reply, total);
}

/* A member here was answered: one frame fewer to wait for. */
static void answered(struct win_core *core, int member)
{
    atomic_fetch_sub_explicit(&core->members[member].remote_pending, 1, memory_order_release);
    rank_wake(core->members[member].rank);
}

static void serve_get_reply(struct net_peer *from, struct win_core *core, const struct wire_frame *f,
                            const unsigned char *payload)
{
    struct get_record *g = get_cookie_find(f->c, false);
    if (g == NULL || g->core != core || g->origin != (int)f->dest || f->context_id >= g->nchunks ||
        f->payload_len != g->chunk_at[f->context_id + 1] - g->chunk_at[f->context_id]) {
        /* net_peer_lost returns (the job ends after its grace): the frame
         * is dropped, nothing of it may be used. */
        net_peer_lost(from, "malformed frame: GET_REPLY for no get of this window, or of the wrong size");
        return;
    }
    if (f->payload_len > 0)     /* (UCX gives an empty frame's payload as NULL) */
        memcpy(g->stage + g->chunk_at[f->context_id], payload, f->payload_len);
    if (--g->left == 0) {
        get_cookie_find(f->c, true);
        if (!g->type->contiguous) {
            dt_unpack(g->buf, (size_t)g->count, g->type, g->stage, g->bytes);
            free(g->stage);
        }
        dt_release(g->type);
        free(g->chunk_at);
        free(g);
    }
    answered(core, (int)f->dest);
}

static void serve_pscw(struct win_core *core, const struct wire_frame *f)
{
    /* COMPLETE: `source` closed its access epoch to `dest` (the target here);
     * POST: `source` (the target) exposed itself to `dest` (an origin here). */
    bool complete = f->type == WIRE_RMA_COMPLETE;
    int target = complete ? (int)f->dest : f->source, origin = complete ? f->source : (int)f->dest;
    struct pscw_pair *row = pscw_row(core, target);
    if (row == NULL)
        out_of_memory();
    atomic_fetch_add_explicit(complete ? &row[origin].completed : &row[origin].posted, 1, memory_order_release);
    rank_wake(core->members[f->dest].rank);
}

void rma_remote_serve(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload)
{
    struct win_core *core = win_registry_find(f->a);     /* the decoder checked it exists */
    if (!frame_hold(core, f, payload))
        frame_serve(from, core, f, payload);
}

/* `from` is NULL for a held frame (only GET_REPLY, never held, uses it). */
static void frame_serve(struct net_peer *from, struct win_core *core, const struct wire_frame *f,
                        const unsigned char *payload)
{
    switch (f->type) {
    case WIRE_RMA_PUT:
        serve_put(core, f, payload);
        break;
    case WIRE_RMA_ACC:
        serve_accumulate(core, f, payload);
        break;
    case WIRE_RMA_GET:
        serve_get(core, f, payload);
        return;
    case WIRE_RMA_GET_REPLY:
        serve_get_reply(from, core, f, payload);
        return;
    case WIRE_RMA_LOCK:
        lock_request_remote(core, (int)f->dest, f->source, f->context_id != 0);
        return;                 /* answered when granted */
    case WIRE_RMA_UNLOCK:
        lock_release_core(core, (int)f->dest, f->context_id != 0);
        break;
    case WIRE_RMA_COMPLETE:
    case WIRE_RMA_POST:
        serve_pscw(core, f);
        break;
    case WIRE_RMA_ACK:
        answered(core, (int)f->dest);
        return;
    default:
        return;
    }
    ack(core, f);
}
