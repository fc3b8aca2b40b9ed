/* Which world ranks each node process of a job hosts: shared by the
 * runtime (src/net/net.c) and the launcher (launcher/mpiexec.c), which must
 * agree without talking. */
#ifndef STRAND_NET_LAYOUT_H
#define STRAND_NET_LAYOUT_H

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

#endif
