/* The reduction engine. After a gate, the result vector is split among the
 * computing ranks; each combines its part of every input in place (no
 * messages, no tree) and writes the result straight into the output
 * buffers; a second gate ends the call. Operands are combined from the
 * highest input rank down (acc = x_j op acc), so the result is
 * x_0 op x_1 op ... op x_{n-1} in rank order, as MPI requires for
 * non-commutative operations. Scan and exscan split the vector the same
 * way and walk the inputs upward, writing each prefix as it forms. */
#include <stdlib.h>
#include <string.h>

#include "../datatype/datatype.h"
#include "coll_impl.h"

enum {
    SCRATCH_BYTES = 16384,          /* per operand buffer, on the stack */
    MIN_SLICE_BYTES = 16384,        /* smaller parts are not worth another rank */
};

enum emit_kind {
    EMIT_GROUP,                     /* every slot of [out_base, out_base + out_count) */
    EMIT_SLOT,                      /* slot out_base */
    EMIT_OWN_BLOCK,                 /* my output, at element g - first */
    EMIT_TEMP,                      /* my operand-layout temporary, at element g - first */
    EMIT_PREFIX,                    /* input j's own output */
};

struct reduce_work {
    const struct coll_ctx *ctx;
    const struct op_plan *plan;     /* the op this rank applies */
    int in_base, in_count;          /* input slots, in rank order */
    bool staged;                    /* the others' inputs are eager deposits */
    size_t deposit_bytes;           /* staged: the size of each deposit (the whole vector) */
    size_t first, count;            /* the part of the result this rank computes */
    enum emit_kind emit;
    int out_base, out_count;
    char *temp;                     /* EMIT_TEMP */
    char *a, *b;                    /* operand scratch, `chunk` elements each */
    size_t chunk;
};

static const struct coll_args *slot_args(const struct reduce_work *w, int slot)
{
    return coll_peer_args(w->ctx, slot);
}

static char *element_at(const struct op_plan *plan, const char *buf, size_t g)
{
    return (char *)buf + (MPI_Aint)g * dt_extent(plan->type);
}

/* Input j as a user-layout buffer and the plan that describes it: a staged
 * deposit (contiguous type, packed = user layout shifted by lb) or the
 * member's own input buffer. */
static const char *input_buffer(const struct reduce_work *w, int j, const struct op_plan **plan)
{
    int slot = w->in_base + j;
    if (w->staged && slot != w->ctx->self) {
        *plan = w->plan;
        return coll_eager_peek(w->ctx, slot, w->deposit_bytes) - w->plan->type->lb;
    }
    const struct coll_args *in = slot_args(w, slot);
    *plan = &in->plan;
    return in->input;
}

/* Operand-layout view of input j's elements [g, g + n): in place when the
 * layout allows and the caller does not modify it, else loaded into `into`. */
static const char *input_operand(const struct reduce_work *w, int j, size_t g, size_t n, char *into,
                                 bool writable)
{
    const struct op_plan *plan;
    const char *buf = input_buffer(w, j, &plan);
    const char *user = element_at(plan, buf, g);
    if (plan->direct && !writable)
        return op_plan_view(plan, user);
    op_plan_load(plan, into, user, n);
    return into;
}

static void store_to_slot(const struct reduce_work *w, int slot, const char *operand, size_t g, size_t n)
{
    const struct coll_args *out = slot_args(w, slot);
    op_plan_store(&out->plan, element_at(&out->plan, out->output, g), operand, n);
}

static void emit(const struct reduce_work *w, const char *operand, size_t g, size_t n, int j)
{
    switch (w->emit) {
    case EMIT_GROUP:
        for (int k = 0; k < w->out_count; k++)
            store_to_slot(w, w->out_base + k, operand, g, n);
        break;
    case EMIT_SLOT:
        store_to_slot(w, w->out_base, operand, g, n);
        break;
    case EMIT_OWN_BLOCK: {
        const struct coll_args *me = slot_args(w, w->ctx->self);
        op_plan_store(&me->plan, element_at(&me->plan, me->output, g - w->first), operand, n);
        break;
    }
    case EMIT_TEMP: {
        size_t offset = (g - w->first) * w->plan->per_elem * (size_t)dt_extent(w->plan->element);
        memcpy(w->temp + offset + op_plan_operand_shift(w->plan), operand + op_plan_operand_shift(w->plan),
               op_plan_operand_bytes(w->plan, n));
        break;
    }
    case EMIT_PREFIX:
        store_to_slot(w, w->in_base + j, operand, g, n);
        break;
    }
}

/* acc = x_0 op (x_1 op (... op x_{n-1})) over [g, g + n), then emitted. */
static void combine_total(struct reduce_work *w, size_t g, size_t n)
{
    char *acc = w->a;
    input_operand(w, w->in_count - 1, g, n, acc, true);
    for (int j = w->in_count - 2; j >= 0; j--)
        op_plan_apply(w->plan, input_operand(w, j, g, n, w->b, false), acc, n);
    emit(w, acc, g, n, -1);
}

/* Inclusive or exclusive prefixes over [g, g + n). Input j is loaded
 * before result j is written, so in-place buffers work. */
static void combine_prefix(struct reduce_work *w, size_t g, size_t n, bool exclusive)
{
    char *acc = w->a, *cur = w->b;
    input_operand(w, 0, g, n, acc, true);
    if (!exclusive)
        emit(w, acc, g, n, 0);
    for (int j = 1; j < w->in_count; j++) {
        input_operand(w, j, g, n, cur, true);
        if (exclusive)
            emit(w, acc, g, n, j);
        if (exclusive && j == w->in_count - 1)
            break;
        op_plan_apply(w->plan, acc, cur, n);     /* cur = prefix op x_j */
        if (!exclusive)
            emit(w, cur, g, n, j);
        char *t = acc;
        acc = cur;
        cur = t;
    }
}

enum combine_mode { COMBINE_TOTAL, COMBINE_PREFIX, COMBINE_EXCLUSIVE };

/* Runs the combination over [first, first + count) in scratch-sized chunks. */
static int work_run(struct reduce_work *w, enum combine_mode mode)
{
    if (w->count == 0 || w->in_count == 0)
        return MPI_SUCCESS;
    _Alignas(64) char scratch[2][SCRATCH_BYTES];
    size_t one = op_plan_operand_bytes(w->plan, 1);
    w->chunk = one >= SCRATCH_BYTES ? 1 : SCRATCH_BYTES / one;
    while (w->chunk > 1 && op_plan_operand_bytes(w->plan, w->chunk) > SCRATCH_BYTES)
        w->chunk--;
    size_t bytes = op_plan_operand_bytes(w->plan, w->chunk);
    char *heap = NULL;
    w->a = scratch[0];
    w->b = scratch[1];
    if (bytes > SCRATCH_BYTES) {
        heap = malloc(2 * bytes);
        if (heap == NULL)
            return MPI_ERR_NO_MEM;
        w->a = heap;
        w->b = heap + bytes;
    }
    w->a -= op_plan_operand_shift(w->plan);
    w->b -= op_plan_operand_shift(w->plan);
    for (size_t done = 0; done < w->count; done += w->chunk) {
        size_t n = w->count - done < w->chunk ? w->count - done : w->chunk;
        if (mode == COMBINE_TOTAL)
            combine_total(w, w->first + done, n);
        else
            combine_prefix(w, w->first + done, n, mode == COMBINE_EXCLUSIVE);
    }
    free(heap);
    return MPI_SUCCESS;
}

/* Into how many parts `total` elements are split among `nworkers`. */
static size_t split_parts(const struct op_plan *plan, size_t total, int nworkers)
{
    size_t parts = total * plan->type->size / MIN_SLICE_BYTES;
    if (parts < 1)
        parts = 1;
    return parts > (size_t)nworkers ? (size_t)nworkers : parts;
}

/* My share of `total` elements when `nworkers` ranks split them. */
static void split_range(struct reduce_work *w, size_t total, int nworkers, int index)
{
    size_t parts = split_parts(w->plan, total, nworkers);
    if ((size_t)index >= parts) {
        w->first = w->count = 0;
        return;
    }
    w->first = total * (size_t)index / parts;
    w->count = total * (size_t)(index + 1) / parts - w->first;
}

static size_t block_start(const int *recvcounts, int rank)
{
    size_t start = 0;
    for (int i = 0; i < rank; i++)
        start += (size_t)recvcounts[i];
    return start;
}

/* A vector too short to split: the last member to arrive combines all
 * inputs in place and writes the outputs before it opens the gate, so
 * nobody waits for a particular rank and each sleeps at most once. */
static int reduce_by_last(struct coll_ctx *ctx, struct coll_args *args)
{
    ctx->me->args = args;
    if (!coll_gate_enter(ctx)) {
        coll_gate_wait(ctx);
        return MPI_SUCCESS;
    }
    struct reduce_work w = { .ctx = ctx, .plan = &args->plan, .in_base = ctx->local_base,
                             .in_count = ctx->local_size, .first = 0, .count = args->count };
    if (args->kind == COLL_REDUCE) {
        w.emit = EMIT_SLOT;
        w.out_base = coll_root_slot(ctx, args->root);
    } else {
        w.emit = EMIT_GROUP;
        w.out_base = ctx->local_base;
        w.out_count = ctx->local_size;
    }
    int rc = work_run(&w, COMBINE_TOTAL);
    coll_gate_open(ctx);
    return rc;
}

/* Elements of the whole input vector of a reduction. */
static size_t vector_elements(const struct coll_ctx *ctx, const struct coll_args *args)
{
    switch (args->kind) {
    case COLL_REDUCE_SCATTER_BLOCK:
        return args->count * (size_t)ctx->local_size;
    case COLL_REDUCE_SCATTER:
        return block_start(args->recvcounts, ctx->local_size);
    default:
        return args->count;
    }
}

/* Small reductions on a contiguous type go through staging: a member
 * that needs no result (reduce) packs its input into its ring entry and
 * returns; the root combines the deposits in rank order. A small group's
 * allreduce (when each member has a core) and reduce_scatter do the same
 * on every member: each deposits its input and combines all deposits (its block of
 * them) itself, so nobody waits for a second round (8-byte
 * reduce_scatter_block at 2 ranks: 1.72 -> 0.12 us). Oversubscribed, an
 * allreduce that waits for n deposits in turn costs more than the gate's
 * one wait, and the last arriver wins (16 and 64 ranks on 2 cores: 32 vs
 * 41 and 176 vs 228 us; at 4 ranks staging would win, 4.2 vs 5.7 us); a
 * reduce_scatter stages anyway, its other path has two gates (4, 16, 64
 * ranks: 5.4 vs 10.6, 36 vs 55, 224 vs 282 us). */
static bool reduce_stages(const struct coll_ctx *ctx, const struct coll_args *args)
{
    MPI_Datatype t = args->plan.type;
    if (ctx->inter || !t->contiguous ||
        vector_elements(ctx, args) > COLL_EAGER_BYTES / (t->size > 0 ? t->size : 1))
        return false;
    if (args->kind == COLL_REDUCE)
        return true;
    if (ctx->local_size > COLL_ALLREDUCE_READ_ALL_MAX)
        return false;
    return args->kind != COLL_ALLREDUCE || strand_node.config.nranks <= strand_node.ncores;
}

static int reduce_staged(struct coll_ctx *ctx, struct coll_args *args)
{
    size_t elements = vector_elements(ctx, args);
    size_t bytes = elements * args->plan.type->size;
    if (bytes == 0)
        return MPI_SUCCESS;
    bool rooted = args->kind == COLL_REDUCE;
    bool combines = !rooted || ctx->rank == args->root;
    bool deposits = rooted ? ctx->rank != args->root : ctx->local_size > 1;
    if (deposits) {
        dt_pack(coll_eager_claim(ctx, bytes), args->input, elements, args->plan.type);
        coll_eager_publish(ctx);
    }
    if (!combines)
        return MPI_SUCCESS;
    ctx->me->args = args;
    for (int j = 0; j < ctx->local_size; j++)
        if (j != ctx->rank)
            coll_eager_open(ctx, ctx->local_base + j, bytes);
    struct reduce_work w = { .ctx = ctx, .plan = &args->plan, .in_base = ctx->local_base,
                             .in_count = ctx->local_size, .staged = true, .deposit_bytes = bytes,
                             .first = 0, .count = args->count, .emit = EMIT_SLOT, .out_base = ctx->self };
    if (args->kind == COLL_REDUCE_SCATTER || args->kind == COLL_REDUCE_SCATTER_BLOCK) {
        /* In place, my output (the start of my buffer) lies at or before
         * the part of my input I read, and each chunk is read before it is
         * written: nothing is overwritten before it is used. */
        w.first = args->recvcounts != NULL ? block_start(args->recvcounts, ctx->rank)
                                           : (size_t)ctx->rank * args->count;
        w.emit = EMIT_OWN_BLOCK;
    }
    return work_run(&w, COMBINE_TOTAL);
}

/* Reduce, allreduce, reduce_scatter(_block); intra- and intercommunicators. */
int coll_reduce_engine(struct coll_ctx *ctx, struct coll_args *args)
{
    if (reduce_stages(ctx, args))
        return reduce_staged(ctx, args);
    if (!ctx->inter && (args->kind == COLL_REDUCE || args->kind == COLL_ALLREDUCE) &&
        split_parts(&args->plan, args->count, ctx->local_size) == 1)
        return reduce_by_last(ctx, args);
    struct reduce_work w = { .ctx = ctx, .plan = &args->plan, .in_base = ctx->local_base,
                             .in_count = ctx->local_size };
    bool computes = true;
    switch (args->kind) {
    case COLL_ALLREDUCE:
        /* Intercommunicator: each group computes the other group's reduction into itself. */
        w.in_base = ctx->peer_base;
        w.in_count = ctx->peer_size;
        split_range(&w, args->count, ctx->local_size, ctx->rank);
        w.emit = EMIT_GROUP;
        w.out_base = ctx->local_base;
        w.out_count = ctx->local_size;
        break;
    case COLL_REDUCE:
        /* The group that provides the inputs computes into the root. */
        computes = coll_role_of(ctx, args->root) == ROLE_MEMBER || !ctx->inter;
        split_range(&w, args->count, ctx->local_size, ctx->rank);
        w.emit = EMIT_SLOT;
        w.out_base = coll_root_slot(ctx, args->root);
        break;
    case COLL_REDUCE_SCATTER:
    case COLL_REDUCE_SCATTER_BLOCK:
        /* Each rank computes its own block from the (peer group's) inputs. */
        w.in_base = ctx->peer_base;
        w.in_count = ctx->peer_size;
        w.first = args->recvcounts != NULL ? block_start(args->recvcounts, ctx->rank)
                                           : (size_t)ctx->rank * args->count;
        w.count = args->count;
        w.emit = args->in_place ? EMIT_TEMP : EMIT_OWN_BLOCK;
        break;
    default:
        return MPI_ERR_INTERN;
    }
    int rc = MPI_SUCCESS;
    if (w.emit == EMIT_TEMP && w.count > 0) {
        w.temp = malloc(op_plan_operand_bytes(&args->plan, w.count));
        if (w.temp == NULL) {
            /* Still meet the others at both gates, or they would wait forever. */
            rc = MPI_ERR_NO_MEM;
            computes = false;
        } else {
            w.temp -= op_plan_operand_shift(&args->plan);
        }
    }
    ctx->me->args = args;
    coll_gate_pass(ctx);
    if (computes)
        rc = work_run(&w, COMBINE_TOTAL);
    coll_gate_pass(ctx);
    if (w.temp != NULL) {
        /* In place: my input was read by the others until the gate. */
        op_plan_store(&args->plan, args->output, w.temp, w.count);
        free(w.temp + op_plan_operand_shift(&args->plan));
    }
    return rc;
}

/* Short scans on a contiguous type in groups of up to 64 go through
 * staging: every rank but the last deposits its input, and rank j combines
 * the deposits of ranks 0 .. j-1 (and its own input, for scan) itself, so
 * nobody meets anybody. Against the two gates below, 8-byte scan: 2 ranks
 * 1.69 -> 0.10 us; oversubscribed on 2 cores, 4 ranks 10.4 -> 0.68 us, 16
 * ranks 52.7 -> 3.4 us, 64 ranks 219 -> 33 us (each rank reads j entries,
 * not all n as a staged allreduce would). */
static bool prefix_stages(const struct coll_ctx *ctx, const struct coll_args *args)
{
    MPI_Datatype t = args->plan.type;
    return t->contiguous && args->count <= COLL_EAGER_BYTES / (t->size > 0 ? t->size : 1) &&
           ctx->local_size <= COLL_ALLREDUCE_READ_ALL_MAX;
}

static int prefix_staged(struct coll_ctx *ctx, struct coll_args *args)
{
    size_t bytes = args->count * args->plan.type->size;
    bool exclusive = args->kind == COLL_EXSCAN;
    if (bytes == 0)
        return MPI_SUCCESS;
    if (ctx->rank < ctx->local_size - 1) {
        dt_pack(coll_eager_claim(ctx, bytes), args->input, args->count, args->plan.type);
        coll_eager_publish(ctx);
    }
    int inputs = exclusive ? ctx->rank : ctx->rank + 1;
    if (inputs == 0)
        return MPI_SUCCESS;     /* exscan at rank 0: the result is undefined */
    ctx->me->args = args;
    for (int j = 0; j < ctx->rank; j++)
        coll_eager_open(ctx, ctx->local_base + j, bytes);
    struct reduce_work w = { .ctx = ctx, .plan = &args->plan, .in_base = ctx->local_base, .in_count = inputs,
                             .staged = true, .deposit_bytes = bytes, .first = 0, .count = args->count,
                             .emit = EMIT_SLOT, .out_base = ctx->self };
    return work_run(&w, COMBINE_TOTAL);
}

/* Scan and exscan (intracommunicators only). */
int coll_prefix_engine(struct coll_ctx *ctx, struct coll_args *args)
{
    if (prefix_stages(ctx, args))
        return prefix_staged(ctx, args);
    struct reduce_work w = { .ctx = ctx, .plan = &args->plan, .in_base = ctx->local_base,
                             .in_count = ctx->local_size, .emit = EMIT_PREFIX };
    split_range(&w, args->count, ctx->local_size, ctx->rank);
    ctx->me->args = args;
    coll_gate_pass(ctx);
    int rc = work_run(&w, args->kind == COLL_EXSCAN ? COMBINE_EXCLUSIVE : COMBINE_PREFIX);
    coll_gate_pass(ctx);
    return rc;
}
