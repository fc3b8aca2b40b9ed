/*
 * net_layout: how the ranks are spread over node processes, as a launcher
 * promised. Arguments: NODES [UNIVERSE]: the ranks must live in exactly
 * NODES processes (all ranks of one node process are threads of it, so
 * they share a pid); when UNIVERSE is given, MPI_UNIVERSE_SIZE must be it;
 * MPI_APPNUM must be 0. Under mpiexec each node process holds a contiguous
 * block of world ranks. Under srun the world rank is the PMI rank,
 * whatever the distribution (-m cyclic, plane, arbitrary): a node process
 * per Slurm node holds exactly the ranks Slurm put on that node (its
 * environment's SLURM_GTIDS, the node's task ids; SLURM_NODEID the node),
 * one per task (STRAND_PMI_LAYOUT=task) runs SLURM_PROCID. (Every rank of
 * a node process reads the same environment: the node process's.)
 * Used for mpiexec --nodes and -hosts, srun --mpi=pmi2 and pmix, see
 * tests/testbeds. Minimum ranks: 1.
 */
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static bool under_srun_pmi(void)
{
    return getenv("SLURM_PROCID") != NULL && (getenv("PMI_FD") != NULL || getenv("PMIX_NAMESPACE") != NULL);
}

/* Under srun: this rank runs in the node process of the Slurm task (or
 * node) whose PMI rank it is. */
static int srun_placement_errors(int rank, int size)
{
    const char *procid = getenv("SLURM_PROCID"), *gtids = getenv("SLURM_GTIDS"), *node = getenv("SLURM_NODEID");
    const char *layout = getenv("STRAND_PMI_LAYOUT");
    if (!under_srun_pmi() || gtids == NULL || node == NULL || size == 1)
        return 0;
    if (layout != NULL && strcmp(layout, "task") == 0) {
        if (atoi(procid) == rank)
            return 0;
        printf("rank %d runs in the node process of task %s\n", rank, procid);
        return 1;
    }
    for (const char *p = gtids; p != NULL; p = strchr(p, ',') != NULL ? strchr(p, ',') + 1 : NULL)
        if (atoi(p) == rank)
            return 0;
    printf("rank %d runs on Slurm node %s, whose tasks are %s\n", rank, node, gtids);
    return 1;
}

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
    errors += srun_placement_errors(rank, size);
    long pid = (long)getpid();
    long *pids = rank == 0 ? malloc((size_t)size * sizeof *pids) : NULL;
    MPI_Gather(&pid, 1, MPI_LONG, pids, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int nodes = 0;
        bool blocks = !under_srun_pmi();     /* mpiexec's layout */
        for (int r = 0; r < size; r++) {
            int q = 0;
            while (q < r && pids[q] != pids[r])
                q++;
            nodes += q == r;
            if (blocks && q < r && pids[r - 1] != pids[r]) {
                printf("rank %d shares node process %ld with rank %d but not with rank %d before it\n", r,
                       pids[r], q, r - 1);
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
