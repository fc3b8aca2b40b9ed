/* Every collective on an intercommunicator (MPI-2.2 §5.2.2) between two
 * groups of MPI_COMM_WORLD of different sizes (inter_checks.h). */
#include "inter_checks.h"

int main(int argc, char **argv)
{
    int errs = 0, wrank, wsize;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2)
        return coll_finish(0);
    int split = wsize / 3 > 0 ? wsize / 3 : 1;
    int g = wrank < split ? 0 : 1;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, g, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g == 0 ? split : 0, 77, &inter);
    errs += inter_collectives_check(inter, g);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return coll_finish(errs);
}
