/* A program built for another MPI: mpiexec -n >1 must refuse it with a
 * message naming the library (launcher/foreign.c), not run it as N
 * independent "rank 0 of 1" jobs.  Built without Strand, against a stand-in
 * library whose soname is MPICH's (this file with FOREIGN_LIBRARY), so the
 * test needs no other MPI installed.  Run alone it works as usual. */
#include <stdio.h>

int foreign_mpi_size(void);

#ifdef FOREIGN_LIBRARY
int foreign_mpi_size(void)
{
    return 1;
}
#else
int main(void)
{
    if (foreign_mpi_size() == 1)
        printf(" No Errors\n");
    return 0;
}
#endif
