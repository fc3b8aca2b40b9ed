/* Handle conversion: c2f/f2c round trips for every handle kind, the fixed
 * values of predefined handles, null handles, and status conversion. */
#include <string.h>
#include "comm_check.h"

int main(int argc, char **argv)
{
    int errs = 0, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    CHECK(errs, MPI_Comm_c2f(MPI_COMM_WORLD) == 1 && MPI_Comm_c2f(MPI_COMM_SELF) == 2, "predefined comm values");
    CHECK(errs, MPI_Comm_f2c(1) == MPI_COMM_WORLD && MPI_Comm_f2c(2) == MPI_COMM_SELF, "predefined comm handles");
    CHECK(errs, MPI_Comm_c2f(MPI_COMM_NULL) == 0 && MPI_Comm_f2c(0) == MPI_COMM_NULL, "null comm");
    CHECK(errs, MPI_Type_f2c(MPI_Type_c2f(MPI_INT)) == MPI_INT, "MPI_INT round trip");
    CHECK(errs, MPI_Type_c2f(MPI_DATATYPE_NULL) == 0, "null datatype");
    CHECK(errs, MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY, "MPI_GROUP_EMPTY round trip");
    CHECK(errs, MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN, "errhandler");
    CHECK(errs, MPI_Type_c2f(MPI_DOUBLE) != MPI_Type_c2f(MPI_INT), "two types, one value");
    /* Every rank sees the same values for predefined objects. */
    int mine = MPI_Type_c2f(MPI_DOUBLE), zero;
    if (rank == 0)
        zero = mine;
    MPI_Sendrecv(&mine, 1, MPI_INT, 0, 1, &zero, 1, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    CHECK(errs, zero == mine, "self exchange");

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Fint f = MPI_Comm_c2f(dup);
    CHECK(errs, f > 2 && MPI_Comm_f2c(f) == dup, "dup round trip (%d)", f);
    CHECK(errs, MPI_Comm_c2f(dup) == f, "stable value");
    MPI_Comm_free(&dup);

    MPI_Group g;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    CHECK(errs, MPI_Group_f2c(MPI_Group_c2f(g)) == g, "group round trip");
    MPI_Group_free(&g);
    MPI_Info info;
    MPI_Info_create(&info);
    CHECK(errs, MPI_Info_f2c(MPI_Info_c2f(info)) == info, "info round trip");
    MPI_Info_free(&info);
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(errs, MPI_Errhandler_f2c(MPI_Errhandler_c2f(eh)) == eh, "errhandler round trip");
    MPI_Request req;
    int v = 3, w = 0;
    MPI_Irecv(&w, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &req);
    CHECK(errs, MPI_Request_f2c(MPI_Request_c2f(req)) == req, "request round trip");
    MPI_Send(&v, 1, MPI_INT, 0, 9, MPI_COMM_SELF);
    MPI_Status st;
    MPI_Wait(&req, &st);
    CHECK(errs, MPI_Request_c2f(MPI_REQUEST_NULL) == 0, "null request");
    CHECK(errs, MPI_Op_c2f(MPI_OP_NULL) == 0 && MPI_Win_c2f(MPI_WIN_NULL) == 0 && MPI_File_c2f(MPI_FILE_NULL) == 0,
          "null op/win/file");
    CHECK(errs, MPI_Comm_f2c(1 << 30) == MPI_COMM_NULL, "unknown value");

    MPI_Fint fst[sizeof(MPI_Status) / sizeof(MPI_Fint)];
    MPI_Status back;
    MPI_Status_c2f(&st, fst);
    MPI_Status_f2c(fst, &back);
    int count;
    MPI_Get_count(&back, MPI_INT, &count);
    CHECK(errs, back.MPI_SOURCE == 0 && back.MPI_TAG == 9 && count == 1, "status round trip");
    return check_finish(errs);
}
