/* Reduction operations: the MPI_Op objects (predefined and user-defined)
 * and the kernels that combine typed data. A kernel computes
 * inout[i] = in[i] op inout[i], MPI's argument order for user functions,
 * so that a non-commutative reduction keeps rank order when the caller
 * feeds operands from the highest rank down. */
#ifndef STRAND_OP_H
#define STRAND_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mpi.h"
#include "../datatype/datatype.h"

#define OP_MAGIC 0x534f5052u        /* "SOPR" */

enum op_kind {
    OP_MAX, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_BAND, OP_LOR, OP_BOR, OP_LXOR, OP_BXOR,
    OP_MINLOC, OP_MAXLOC, OP_REPLACE, OP_USER, OP_KINDS
};

struct strand_op {
    uint32_t magic;
    enum op_kind kind;
    bool commutative;
    bool predefined;
    MPI_User_function *user_fn;     /* OP_USER */
    const char *name;
};

/* inout[i] = in[i] op inout[i] for n elements of one predefined type. */
typedef void (*op_kernel_fn)(const void *in, void *inout, size_t n);

/* NULL when `op` is not a live operation handle. */
struct strand_op *op_lookup(MPI_Op op);

/* The kernel of a predefined op on a predefined element type; NULL when
 * MPI-2.2 does not define the op for that type. */
op_kernel_fn op_kernel(enum op_kind kind, MPI_Datatype element);

/* The predefined type whose elements a reduction on `t` combines (`t`
 * itself when predefined); NULL when `t` is not built from one. */
MPI_Datatype op_element_type(MPI_Datatype t);

/* How one rank applies `op` to data of type `type`. Operands are handed to
 * op_plan_apply in "operand layout": for predefined ops, `n * per_elem`
 * consecutive elements of `element` (a predefined type); for user ops, `n`
 * elements of `type` itself, since the user function expects that layout. */
struct op_plan {
    struct strand_op *op;
    MPI_Datatype type;
    MPI_Datatype element;           /* operand layout type */
    size_t per_elem;                /* operand elements per element of `type` */
    op_kernel_fn kernel;            /* predefined ops (NULL for replace and user ops) */
    bool direct;                    /* user buffers already are in operand layout */
};

/* MPI_SUCCESS, MPI_ERR_OP (no such op, or not defined for the type) or
 * MPI_ERR_TYPE; `why` gets a reason. `for_accumulate` admits MPI_REPLACE. */
int op_plan_init(struct op_plan *p, MPI_Op op, MPI_Datatype type, bool for_accumulate,
                 const char **why);
/* inout = in op inout for `n` elements of the plan's type, both in operand layout. */
void op_plan_apply(const struct op_plan *p, const void *in, void *inout, size_t n);

/* Bytes of operand-layout storage for n elements, and the offset of the
 * data's start within it (for types whose data does not start at 0). */
size_t op_plan_operand_bytes(const struct op_plan *p, size_t n);
MPI_Aint op_plan_operand_shift(const struct op_plan *p);
/* In-place operand view of a user buffer, for plans with `direct` set. */
static inline const void *op_plan_view(const struct op_plan *p, const void *user)
{
    return (const char *)user + p->type->true_lb - p->element->true_lb;
}
/* Copies n elements between a user buffer (layout of p->type) and operand layout. */
void op_plan_load(const struct op_plan *p, void *operand, const void *user, size_t n);
void op_plan_store(const struct op_plan *p, void *user, const void *operand, size_t n);

/* inout = in op inout over whole user buffers of `count` elements, using
 * bounded scratch (MPI_Reduce_local, RMA accumulate). Returns MPI_SUCCESS or MPI_ERR_NO_MEM. */
int op_reduce_buffers(const struct op_plan *p, const void *in, void *inout, size_t count);

#endif
