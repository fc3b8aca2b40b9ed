/* The CPUs this process may run on: its affinity mask (taskset, a cpuset
 * or container limit, Slurm's binding), not every online CPU of the
 * machine; the online count only when the mask does not fit a cpu_set_t.
 * Used by mpiexec (how many ranks fit) and by a node process (whether its
 * ranks each have a core). Any thread; reads the caller's own mask. */
#ifndef STRAND_UTIL_CPUS_H
#define STRAND_UTIL_CPUS_H

#include <sched.h>
#include <unistd.h>

static inline int cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}

#endif
