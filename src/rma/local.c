/* Operations on a target in this node process: its window is memory, so
 * a put or get is one copy between the two layouts (the datatype engine)
 * and an accumulate combines elements in place. */
#include <stdlib.h>
#include <string.h>

#include "../datatype/datatype.h"
#include "rma.h"

static char *target_address(const struct strand_win *w, const struct rma_op *op)
{
    return w->core->members[op->target].base + op->offset;
}

static int local_put(struct strand_win *w, const struct rma_op *op)
{
    dt_copy(target_address(w, op), (size_t)op->target_count, op->target_type, op->origin,
            (size_t)op->origin_count, op->origin_type);
    return MPI_SUCCESS;
}

static int local_get(struct strand_win *w, const struct rma_op *op)
{
    dt_copy(op->origin, (size_t)op->origin_count, op->origin_type, target_address(w, op),
            (size_t)op->target_count, op->target_type);
    return MPI_SUCCESS;
}

/* Buffers whose elements sit back to back like an array of the element
 * type can be used in place ("operand layout"). */
static bool operand_layout(MPI_Datatype t, MPI_Datatype element)
{
    return t == element || (t->contiguous && element->contiguous);
}

static char *operand_view(char *buf, MPI_Datatype t, MPI_Datatype element)
{
    return buf + t->true_lb - element->true_lb;
}

struct target_walk {
    const struct op_plan *plan;
    const char *src;                /* next origin element (operand layout) */
    size_t left;                    /* origin elements not yet applied */
    MPI_Aint stride;
    bool exclusive;
};

/* dt_visit callback: a run of `n` target elements at `addr`. */
static int apply_run(MPI_Datatype named, char *addr, size_t n, void *arg)
{
    (void)named;
    struct target_walk *tw = arg;
    if (n > tw->left)
        n = tw->left;
    acc_apply(tw->plan, addr, tw->src, n, tw->exclusive);
    tw->src += (MPI_Aint)n * tw->stride;
    tw->left -= n;
    return tw->left == 0;   /* non-zero stops the walk */
}

enum { STACK_OPERANDS = 2048 };

static int local_accumulate(struct strand_win *w, const struct rma_op *op)
{
    const struct op_plan *plan = &op->plan;
    MPI_Datatype element = plan->element;
    size_t n = (size_t)op->origin_count * (op->origin_type->size / element->size);
    if (n == 0)
        return MPI_SUCCESS;
    MPI_Aint stride = dt_extent(element);
    /* The origin in operand layout: in place, or gathered into scratch. */
    _Alignas(64) char stack[STACK_OPERANDS];
    char *heap = NULL;
    const char *src;
    if (operand_layout(op->origin_type, element)) {
        src = operand_view(op->origin, op->origin_type, element);
    } else {
        size_t bytes = n * (size_t)stride;
        char *scratch = bytes <= sizeof stack ? stack : (heap = malloc(bytes));
        if (scratch == NULL)
            return MPI_ERR_NO_MEM;
        dt_copy(scratch, n, element, op->origin, (size_t)op->origin_count, op->origin_type);
        src = scratch;
    }
    char *target = target_address(w, op);
    if (operand_layout(op->target_type, element)) {
        acc_apply(plan, operand_view(target, op->target_type, element), src, n, op->exclusive);
    } else {
        struct target_walk tw = { plan, src, n, stride, op->exclusive };
        dt_visit(op->target_type, target, (size_t)op->target_count, apply_run, &tw);
    }
    free(heap);
    return MPI_SUCCESS;
}

const struct win_target_ops rma_local_ops = {
    .put = local_put,
    .get = local_get,
    .accumulate = local_accumulate,
};
