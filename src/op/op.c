/* MPI_Op objects: the predefined operations, user operations, and the
 * plan that says how one rank applies an op to a datatype. */
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "op.h"

#define PREDEFINED_OP(var, opkind, label)                                                  \
    struct strand_op var = { .magic = OP_MAGIC, .kind = opkind, .commutative = true,       \
                             .predefined = true, .name = label };

PREDEFINED_OP(strand_op_max, OP_MAX, "MPI_MAX")
PREDEFINED_OP(strand_op_min, OP_MIN, "MPI_MIN")
PREDEFINED_OP(strand_op_sum, OP_SUM, "MPI_SUM")
PREDEFINED_OP(strand_op_prod, OP_PROD, "MPI_PROD")
PREDEFINED_OP(strand_op_land, OP_LAND, "MPI_LAND")
PREDEFINED_OP(strand_op_band, OP_BAND, "MPI_BAND")
PREDEFINED_OP(strand_op_lor, OP_LOR, "MPI_LOR")
PREDEFINED_OP(strand_op_bor, OP_BOR, "MPI_BOR")
PREDEFINED_OP(strand_op_lxor, OP_LXOR, "MPI_LXOR")
PREDEFINED_OP(strand_op_bxor, OP_BXOR, "MPI_BXOR")
PREDEFINED_OP(strand_op_minloc, OP_MINLOC, "MPI_MINLOC")
PREDEFINED_OP(strand_op_maxloc, OP_MAXLOC, "MPI_MAXLOC")
PREDEFINED_OP(strand_op_replace, OP_REPLACE, "MPI_REPLACE")

struct strand_op *op_lookup(MPI_Op op)
{
    return op != MPI_OP_NULL && op->magic == OP_MAGIC ? op : NULL;
}

MPI_Datatype op_element_type(MPI_Datatype t)
{
    /* `uniform`: the predefined type all of t's basic elements are (pair
     * types count as one), NULL for mixed types and markers. */
    MPI_Datatype e = t->uniform;
    if (e == NULL || e->size == 0 || t->size % e->size != 0)
        return NULL;
    return e;
}

static bool layouts_match(MPI_Datatype type, MPI_Datatype element)
{
    return type == element || (type->contiguous && element->contiguous);
}

int op_plan_init(struct op_plan *p, MPI_Op op, MPI_Datatype type, bool for_accumulate,
                 const char **why)
{
    p->op = op_lookup(op);
    p->type = type;
    p->kernel = NULL;
    if (p->op == NULL) {
        *why = "invalid operation handle";
        return MPI_ERR_OP;
    }
    if (p->op->kind == OP_USER) {
        p->element = type;
        p->per_elem = 1;
        p->direct = true;
        return MPI_SUCCESS;
    }
    if (p->op->kind == OP_REPLACE && !for_accumulate) {
        *why = "MPI_REPLACE is only valid in MPI_Accumulate";
        return MPI_ERR_OP;
    }
    p->element = op_element_type(type);
    if (p->element == NULL) {
        *why = "predefined operations need a datatype built from one predefined type";
        return MPI_ERR_OP;
    }
    p->per_elem = p->element->size > 0 ? type->size / p->element->size : 0;
    p->direct = layouts_match(type, p->element);
    if (p->op->kind == OP_REPLACE)
        return MPI_SUCCESS;
    p->kernel = op_kernel(p->op->kind, p->element);
    if (p->kernel == NULL) {
        *why = "the operation is not defined for this datatype (MPI-2.2 section 5.9.2)";
        return MPI_ERR_OP;
    }
    return MPI_SUCCESS;
}

void op_plan_apply(const struct op_plan *p, const void *in, void *inout, size_t n)
{
    if (p->kernel != NULL) {
        p->kernel(in, inout, n * p->per_elem);
        return;
    }
    if (p->op->kind == OP_REPLACE) {
        memmove(inout, in, n * p->per_elem * (size_t)dt_extent(p->element));
        return;
    }
    /* User functions take an int count: feed them in int-sized pieces. */
    MPI_Aint extent = dt_extent(p->type);
    MPI_Datatype type = p->type;
    while (n > 0) {
        int len = n > (size_t)INT32_MAX ? INT32_MAX : (int)n;
        p->op->user_fn((void *)in, inout, &len, &type);
        in = (const char *)in + (MPI_Aint)len * extent;
        inout = (char *)inout + (MPI_Aint)len * extent;
        n -= (size_t)len;
    }
}

size_t op_plan_operand_bytes(const struct op_plan *p, size_t n)
{
    if (n == 0)
        return 0;
    MPI_Datatype e = p->element;
    size_t elems = n * p->per_elem;
    return (elems - 1) * (size_t)dt_extent(e) + (size_t)(e->true_ub - e->true_lb);
}

MPI_Aint op_plan_operand_shift(const struct op_plan *p)
{
    return p->element->true_lb;
}

void op_plan_load(const struct op_plan *p, void *operand, const void *user, size_t n)
{
    if (p->type->contiguous && p->element->contiguous) {
        memcpy((char *)operand + p->element->true_lb, (const char *)op_plan_view(p, user) + p->element->true_lb,
               n * p->type->size);
        return;
    }
    dt_copy(operand, n * p->per_elem, p->element, user, n, p->type);
}

void op_plan_store(const struct op_plan *p, void *user, const void *operand, size_t n)
{
    if (p->type->contiguous && p->element->contiguous) {
        memcpy((char *)op_plan_view(p, user) + p->element->true_lb,
               (const char *)operand + p->element->true_lb, n * p->type->size);
        return;
    }
    dt_copy(user, n, p->type, operand, n * p->per_elem, p->element);
}

enum { SCRATCH_BYTES = 8192 };

int op_reduce_buffers(const struct op_plan *p, const void *in, void *inout, size_t count)
{
    if (count == 0)
        return MPI_SUCCESS;
    if (p->direct) {
        /* Layouts match: contiguous buffers, or a user op on its own type. */
        op_plan_apply(p, op_plan_view(p, in), (void *)op_plan_view(p, inout), count);
        return MPI_SUCCESS;
    }
    _Alignas(64) char scratch[2][SCRATCH_BYTES];
    size_t one = op_plan_operand_bytes(p, 1);
    size_t chunk = one >= SCRATCH_BYTES ? 1 : SCRATCH_BYTES / one;
    size_t bytes = op_plan_operand_bytes(p, chunk);
    char *heap = NULL;
    char *a = scratch[0], *b = scratch[1];
    if (bytes > SCRATCH_BYTES) {
        heap = malloc(2 * bytes);
        if (heap == NULL)
            return MPI_ERR_NO_MEM;
        a = heap;
        b = heap + bytes;
    }
    a -= op_plan_operand_shift(p);
    b -= op_plan_operand_shift(p);
    MPI_Aint extent = dt_extent(p->type);
    for (size_t done = 0; done < count; done += chunk) {
        size_t n = count - done < chunk ? count - done : chunk;
        MPI_Aint offset = (MPI_Aint)done * extent;
        op_plan_load(p, a, (const char *)in + offset, n);
        op_plan_load(p, b, (char *)inout + offset, n);
        op_plan_apply(p, a, b, n);
        op_plan_store(p, (char *)inout + offset, b, n);
    }
    free(heap);
    return MPI_SUCCESS;
}
