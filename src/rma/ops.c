/* MPI_Put, MPI_Get, MPI_Accumulate: one engine that checks the arguments,
 * admits the call into the caller's epoch with the target, checks that the
 * target buffer lies inside the target's window, and hands the operation
 * to the target's operations table. */
#include <string.h>

#include "../datatype/datatype.h"
#include "rma.h"

enum rma_kind { RMA_PUT, RMA_GET, RMA_ACCUMULATE };

/* Is an operation on `target` allowed now? Waits, the first time, for
 * what the epoch requires of the target (its post, its fence arrival). */
static int epoch_admit(struct strand_win *w, int target, const char *where)
{
    uint8_t state = w->target_state[target];
    if (state & TS_LOCKED)
        return MPI_SUCCESS;
    if (w->locks_held > 0)
        return win_error(w, MPI_ERR_RMA_SYNC, where, "target %d is not locked (a lock epoch is open)", target);
    if (w->access_active) {
        if (!(state & TS_ACCESS))
            return win_error(w, MPI_ERR_RMA_SYNC, where, "target %d is not in the group of MPI_Win_start", target);
        return state & TS_POSTED ? MPI_SUCCESS : pscw_await_post(w, target);
    }
    switch (w->fence) {
    case FENCE_OPEN_UNSYNCED:
        fence_await_target(w, target);
        /* fall through */
    case FENCE_OPEN:
        w->fence_ops = true;
        return MPI_SUCCESS;
    case FENCE_CLOSED:
        break;
    }
    return win_error(w, MPI_ERR_RMA_SYNC, where,
                     "no epoch is open (use MPI_Win_fence, MPI_Win_start or MPI_Win_lock first)");
}

/* Bytes [lo, hi) that `count` elements of `t` touch, relative to the
 * buffer address; false on overflow. */
static bool data_span(MPI_Datatype t, int count, MPI_Aint *lo, MPI_Aint *hi)
{
    MPI_Aint extent = dt_extent(t), last;
    if (__builtin_mul_overflow((MPI_Aint)(count - 1), extent, &last))
        return false;
    if (extent >= 0) {
        *lo = t->true_lb;
        return !__builtin_add_overflow(last, t->true_ub, hi);
    }
    *hi = t->true_ub;
    return !__builtin_add_overflow(last, t->true_lb, lo);
}

static int target_range_check(struct strand_win *w, struct rma_op *op, MPI_Aint disp, const char *where)
{
    const struct win_member *m = &w->core->members[op->target];
    MPI_Aint lo, hi;
    bool empty = op->target_count == 0 || op->target_type->size == 0;
    bool bad = __builtin_mul_overflow(disp, (MPI_Aint)m->disp_unit, &op->offset);
    if (!bad && !empty)
        bad = !data_span(op->target_type, op->target_count, &lo, &hi) ||
              __builtin_add_overflow(op->offset, lo, &lo) || __builtin_add_overflow(op->offset, hi, &hi) ||
              lo < 0 || hi > m->size;
    if (bad)
        return win_error(w, MPI_ERR_DISP, where,
                         "the target buffer (displacement %ld, %d elements) is not inside the window of rank %d "
                         "(%ld bytes, disp_unit %d)",
                         (long)disp, op->target_count, op->target, (long)m->size, m->disp_unit);
    return MPI_SUCCESS;
}

/* Accumulate: a predefined operation (or MPI_REPLACE) on data built from
 * one predefined type, the same on both sides. */
static int accumulate_check(struct strand_win *w, struct rma_op *op, MPI_Op mpi_op, const char *where)
{
    const struct strand_op *o = op_lookup(mpi_op);
    if (o == NULL)
        return win_error(w, MPI_ERR_OP, where, "invalid operation");
    if (o->kind == OP_USER)
        return win_error(w, MPI_ERR_OP, where, "MPI_Accumulate takes predefined operations only (MPI-2.2 11.3.4)");
    MPI_Datatype element = op->target_type->uniform;
    if (element == NULL || op->origin_type->uniform != element)
        return win_error(w, MPI_ERR_TYPE, where,
                         "origin and target datatypes must be built from the same predefined datatype");
    /* The plan is made for the element type: data is combined element by element. */
    const char *why = NULL;
    int rc = op_plan_init(&op->plan, mpi_op, element, true, &why);
    if (rc != MPI_SUCCESS)
        return win_error(w, rc, where, "%s (%s)", why, o->name);
    return MPI_SUCCESS;
}

/* Put, Accumulate: the origin data must fit in the target buffer; Get: the reverse. */
static int size_check(struct strand_win *w, enum rma_kind kind, const struct rma_op *op, const char *where)
{
    size_t origin_bytes = (size_t)op->origin_count * op->origin_type->size;
    size_t target_bytes = (size_t)op->target_count * op->target_type->size;
    bool truncated = kind == RMA_GET ? target_bytes > origin_bytes : origin_bytes > target_bytes;
    if (truncated)
        return win_error(w, MPI_ERR_TRUNCATE, where, "%zu bytes do not fit in a buffer of %zu bytes",
                         kind == RMA_GET ? target_bytes : origin_bytes, kind == RMA_GET ? origin_bytes : target_bytes);
    return MPI_SUCCESS;
}

/* A contiguous origin buffer overlapping a contiguous target buffer in
 * the same memory is a conflicting access (MPI-2.2 11.7). */
static int overlap_check(struct strand_win *w, const struct rma_op *op, const char *where)
{
    if (!op->origin_type->contiguous || !op->target_type->contiguous || op->origin_count == 0 ||
        (w->core->spans && win_member_is_remote(w->core, op->target)))
        return MPI_SUCCESS;
    const char *origin = (const char *)op->origin + op->origin_type->true_lb;
    const char *target = w->core->members[op->target].base + op->offset + op->target_type->true_lb;
    size_t origin_len = (size_t)op->origin_count * op->origin_type->size;
    size_t target_len = (size_t)op->target_count * op->target_type->size;
    if (origin < target + target_len && target < origin + origin_len)
        return win_error(w, MPI_ERR_RMA_CONFLICT, where, "the origin buffer overlaps the target buffer");
    return MPI_SUCCESS;
}

static int rma_call(enum rma_kind kind, const char *where, void *origin, int origin_count, MPI_Datatype origin_type,
                    int target, MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Op mpi_op,
                    MPI_Win win)
{
    int rc;
    struct strand_win *w = win_checked(win, where, &rc);
    if (w == NULL)
        return rc;
    const char *why;
    if (origin_count < 0 || target_count < 0)
        return win_error(w, MPI_ERR_COUNT, where, "negative count (origin %d, target %d)", origin_count, target_count);
    if (dt_check_usable(origin_type, &why) != MPI_SUCCESS || dt_check_usable(target_type, &why) != MPI_SUCCESS)
        return win_error(w, MPI_ERR_TYPE, where, "%s", why);
    if (target == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (target < 0 || target >= w->core->size)
        return win_error(w, MPI_ERR_RANK, where, "target rank %d is not in the window (size %d)", target,
                         w->core->size);
    if (target_disp < 0)
        return win_error(w, MPI_ERR_DISP, where, "negative target displacement %ld", (long)target_disp);
    if (dt_buffer_is_invalid(origin, origin_count, origin_type))
        return win_error(w, MPI_ERR_BUFFER, where, "the origin buffer is NULL");
    struct rma_op op = { .origin = origin, .origin_count = origin_count, .origin_type = origin_type,
                         .target = target, .target_count = target_count, .target_type = target_type };
    if (kind == RMA_ACCUMULATE && (rc = accumulate_check(w, &op, mpi_op, where)) != MPI_SUCCESS)
        return rc;
    if ((rc = size_check(w, kind, &op, where)) != MPI_SUCCESS)
        return rc;
    if ((rc = epoch_admit(w, target, where)) != MPI_SUCCESS)
        return rc;
    if ((rc = target_range_check(w, &op, target_disp, where)) != MPI_SUCCESS)
        return rc;
    if (kind != RMA_GET && w->fence != FENCE_CLOSED && !w->access_active && w->locks_held == 0 &&
        (fence_target_assert(w, target) & MPI_MODE_NOPUT))
        return win_error(w, MPI_ERR_RMA_CONFLICT, where,
                         "rank %d gave MPI_MODE_NOPUT to the fence that opened this epoch", target);
    if ((rc = overlap_check(w, &op, where)) != MPI_SUCCESS)
        return rc;
    op.exclusive = (w->target_state[target] & TS_LOCK_EXCLUSIVE) != 0;
    const struct win_target_ops *ops = w->core->members[target].ops;
    switch (kind) {
    case RMA_PUT: rc = ops->put(w, &op); break;
    case RMA_GET: rc = ops->get(w, &op); break;
    case RMA_ACCUMULATE: rc = ops->accumulate(w, &op); break;
    }
    return rc == MPI_SUCCESS ? rc : win_error(w, rc, where, "the operation on rank %d failed", target);
}

int PMPI_Put(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return rma_call(RMA_PUT, "MPI_Put", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, MPI_OP_NULL, win);
}
STRAND_MPI_ALIAS(MPI_Put);

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return rma_call(RMA_GET, "MPI_Get", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, MPI_OP_NULL, win);
}
STRAND_MPI_ALIAS(MPI_Get);

int PMPI_Accumulate(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return rma_call(RMA_ACCUMULATE, "MPI_Accumulate", origin_addr, origin_count, origin_datatype, target_rank,
                    target_disp, target_count, target_datatype, op, win);
}
STRAND_MPI_ALIAS(MPI_Accumulate);
