/* Never finishes: run with MPIEXEC_TIMEOUT set, mpiexec must kill the job
 * and exit with 124 and a message naming the time limit. */
#include "testutil.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    volatile double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 600.0)
        tu_sleep_ms(10);
    MPI_Finalize();
    return 0;
}
