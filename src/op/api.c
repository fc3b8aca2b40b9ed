/* MPI entry points of the op subsystem. */
#include <stdlib.h>

#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "op.h"

int PMPI_Op_create(MPI_User_function *function, int commute, MPI_Op *op)
{
    int rc = error_check_initialized("MPI_Op_create");
    if (rc != MPI_SUCCESS)
        return rc;
    if (function == NULL || op == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create",
                            "function and op must not be NULL");
    struct strand_op *o = calloc(1, sizeof *o);
    if (o == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Op_create", "out of memory");
    o->magic = OP_MAGIC;
    o->kind = OP_USER;
    o->commutative = commute != 0;
    o->user_fn = function;
    o->name = "user operation";
    *op = o;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Op_create);

int PMPI_Op_free(MPI_Op *op)
{
    int rc = error_check_initialized("MPI_Op_free");
    if (rc != MPI_SUCCESS)
        return rc;
    if (op == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_free", "op must not be NULL");
    struct strand_op *o = op_lookup(*op);
    if (o == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_free", "invalid operation handle");
    if (o->predefined)
        return error_report(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_free",
                            "%s is predefined and cannot be freed", o->name);
    /* Blocking collectives hold no reference once they return, so the
     * object can go now. */
    o->magic = 0;
    free(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Op_free);

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    int rc = error_check_initialized("MPI_Op_commutative");
    if (rc != MPI_SUCCESS)
        return rc;
    struct strand_op *o = op_lookup(op);
    if (o == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation handle");
    if (commute == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_commutative",
                            "commute must not be NULL");
    *commute = o->commutative;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Op_commutative);

int PMPI_Reduce_local(void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
    const char *where = "MPI_Reduce_local";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_COUNT, where, "negative count %d", count);
    const char *why;
    rc = dt_check_usable(datatype, &why);
    if (rc != MPI_SUCCESS)
        return error_report(MPI_COMM_WORLD, rc, where, "%s", why);
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
        return error_report(MPI_COMM_WORLD, MPI_ERR_BUFFER, where, "MPI_IN_PLACE is not allowed here");
    if (dt_buffer_is_invalid(inbuf, count, datatype) || dt_buffer_is_invalid(inoutbuf, count, datatype))
        return error_report(MPI_COMM_WORLD, MPI_ERR_BUFFER, where, "NULL buffer with count %d", count);
    struct op_plan plan;
    rc = op_plan_init(&plan, op, datatype, false, &why);
    if (rc != MPI_SUCCESS)
        return error_report(MPI_COMM_WORLD, rc, where, "%s", why);
    rc = op_reduce_buffers(&plan, inbuf, inoutbuf, (size_t)count);
    if (rc != MPI_SUCCESS)
        return error_report(MPI_COMM_WORLD, rc, where, "out of memory");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Reduce_local);
