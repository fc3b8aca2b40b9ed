/* Communication with MPI_PROC_NULL moves no data, so any buffer and even
 * MPI_DATATYPE_NULL are accepted (as MPICH and Open MPI do); the receive
 * status says source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0. */
#include "testutil.h"

int main(int argc, char **argv)
{
    int errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Status st;
    MPI_Request req;
    if (MPI_Send(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, MPI_COMM_WORLD) != MPI_SUCCESS)
        errs += TU_FAIL("MPI_Send to MPI_PROC_NULL with MPI_DATATYPE_NULL failed");
    if (MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st) != MPI_SUCCESS)
        errs += TU_FAIL("MPI_Recv from MPI_PROC_NULL with MPI_DATATYPE_NULL failed");
    errs += tu_check_procnull_status(&st, "MPI_Recv from MPI_PROC_NULL");
    if (MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        errs += TU_FAIL("MPI_Irecv from MPI_PROC_NULL with MPI_DATATYPE_NULL failed");
    MPI_Wait(&req, &st);
    errs += tu_check_procnull_status(&st, "MPI_Irecv from MPI_PROC_NULL");
    if (MPI_Isend(NULL, 3, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        errs += TU_FAIL("MPI_Isend to MPI_PROC_NULL with MPI_DATATYPE_NULL failed");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* A real peer still needs a real datatype. */
    int rc = MPI_Send(NULL, 0, MPI_DATATYPE_NULL, 0, 1, MPI_COMM_WORLD);
    if (tu_class(rc) != MPI_ERR_TYPE)
        errs += TU_FAIL("MPI_Send to rank 0 with MPI_DATATYPE_NULL gave %d, expected MPI_ERR_TYPE", rc);
    return tu_finish(errs);
}
