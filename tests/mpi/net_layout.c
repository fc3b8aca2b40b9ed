/*
 * net_layout: how the ranks are spread over node processes, as a launcher
 * promised. Arguments: NODES [UNIVERSE]: the ranks must live in exactly
 * NODES processes (all ranks of one node process are threads of it, so
 * they share a pid), each holding a contiguous block of world ranks; when
 * UNIVERSE is given, MPI_UNIVERSE_SIZE must be it; MPI_APPNUM must be 0.
 * Used for mpiexec --nodes and -hosts, srun --mpi=pmi2 (one node process
 * per Slurm node, or per task), see tests/testbeds. Minimum ranks: 1.
 */
#include <unistd.h>

#include "testutil.h"

int main(int argc, char **argv)
{
    int rank, size, errors = 0, flag;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int want_nodes = argc > 1 ? atoi(argv[1]) : 1;
    int want_universe = argc > 2 ? atoi(argv[2]) : 0;
    int *appnum, *universe;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    if (!flag || *appnum != 0) {
        printf("rank %d: MPI_APPNUM: expected 0, got %s %d\n", rank, flag ? "" : "(unset)", flag ? *appnum : 0);
        errors++;
    }
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
    if (want_universe > 0 && (!flag || *universe != want_universe)) {
        printf("rank %d: MPI_UNIVERSE_SIZE: expected %d, got %d\n", rank, want_universe, flag ? *universe : -1);
        errors++;
    }
    long pid = (long)getpid();
    long *pids = rank == 0 ? malloc((size_t)size * sizeof *pids) : NULL;
    MPI_Gather(&pid, 1, MPI_LONG, pids, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int nodes = 1;
        for (int r = 1; r < size; r++) {
            if (pids[r] == pids[r - 1])
                continue;
            nodes++;
            for (int q = 0; q < r - 1; q++)
                if (pids[q] == pids[r]) {
                    printf("rank %d shares node process %ld with rank %d but not with rank %d before it\n",
                           r, pids[r], q, r - 1);
                    errors++;
                }
        }
        if (nodes != want_nodes) {
            printf("the %d ranks live in %d node processes, expected %d\n", size, nodes, want_nodes);
            errors++;
        }
        free(pids);
    }
    return tu_finish(errors);
}
