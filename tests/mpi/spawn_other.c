/* A second child program for spawn_basic (spawn_multiple with different
 * programs): sends parent rank 0 (tag 6) {1000 + world rank, APPNUM,
 * argc}, then disconnects. Never run on its own. */
#include <mpi.h>
#include <stddef.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int info[3], flag = 0, *appnum = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &info[0]);
    info[0] += 1000;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    info[1] = flag ? *appnum : -1;
    info[2] = argc;
    MPI_Send(info, 3, MPI_INT, 0, 6, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}
