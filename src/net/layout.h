/* Which world ranks each node process of a job hosts: shared by the
 * runtime (src/net/net.c) and the launcher (launcher/mpiexec.c), which must
 * agree without talking. */
#ifndef STRAND_NET_LAYOUT_H
#define STRAND_NET_LAYOUT_H

#include <stdlib.h>
#include <string.h>

/* First world rank of node `node` (node == nnodes gives nranks): `ppn`
 * consecutive ranks per node when ppn > 0 (-ppn), else balanced blocks
 * (node sizes differ by at most one). */
static inline int net_node_first_rank(int nranks, int nnodes, int ppn, int node)
{
    if (ppn > 0) {
        long first = (long)ppn * node;
        return first < nranks ? (int)first : nranks;
    }
    return (int)((long)nranks * node / nnodes);
}

/* A list of numbers with Slurm's repeats ("3,2(x2),1" is 3,2,2,1: its
 * SLURM_STEP_TASKS_PER_NODE, and STRAND_RANK_NODES) into out[max]:
 * returns how many, or -1 when malformed, longer than `max`, or a number
 * is outside [min, limit]. */
static inline int net_layout_list(const char *spec, int *out, int max, long min, long limit)
{
    int n = 0;
    for (const char *p = spec; *p != '\0';) {
        char *end;
        long value = strtol(p, &end, 10), times = 1;
        if (end == p || value < min || value > limit)
            return -1;
        if (strncmp(end, "(x", 2) == 0) {
            times = strtol(end + 2, &end, 10);
            if (*end++ != ')' || times < 1 || times > max - n)
                return -1;
        }
        if ((*end != ',' && *end != '\0') || (*end == ',' && end[1] == '\0'))
            return -1;
        for (long i = 0; i < times; i++) {
            if (n == max)
                return -1;
            out[n++] = (int)value;
        }
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

#endif
