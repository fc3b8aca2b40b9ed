/*
 * launch_cpus: with more ranks than cores, Strand starts every rank thread
 * on one CPU while the ranks load their program copies, then spreads them
 * over the process's CPUs (core.h, strand_node_start_on_one_cpu). After a
 * barrier every rank is loaded, so every rank thread (and the process's
 * main thread) must again be allowed on all the CPUs the job was given.
 * Checked, with more ranks than CPUs: each rank's CPU set equals the main
 * thread's (and with LAUNCH_CPUS_EXPECT_ALL, it is every online CPU). With
 * a CPU per rank mpiexec binds each rank to one core by default: then the
 * rank's set must lie within the main thread's.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>
#include "testutil.h"

int main(int argc, char **argv)
{
    int errs = 0;
    cpu_set_t mine, main_thread;
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(sched_getaffinity(0, sizeof mine, &mine) == 0, "sched_getaffinity(self) failed");
    CHECK(sched_getaffinity(getpid(), sizeof main_thread, &main_thread) == 0,
          "sched_getaffinity(main thread) failed");
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (tu_size() > online) {
        CHECK(CPU_EQUAL(&mine, &main_thread), "rank %d may run on %d CPUs, the main thread on %d",
              tu_rank(), CPU_COUNT(&mine), CPU_COUNT(&main_thread));
        if (getenv("LAUNCH_CPUS_EXPECT_ALL") != NULL)
            CHECK(CPU_COUNT(&mine) == online, "rank %d may run on %d of %ld CPUs", tu_rank(),
                  CPU_COUNT(&mine), online);
    } else {
        cpu_set_t both;
        CPU_AND(&both, &mine, &main_thread);
        CHECK(CPU_COUNT(&mine) >= 1 && CPU_EQUAL(&both, &mine),
              "rank %d may run on CPUs outside the process's set", tu_rank());
    }
    return tu_finish(errs);
}
