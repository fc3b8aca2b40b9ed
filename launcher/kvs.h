/* mpiexec's key-value store for a job of several node processes (DESIGN
 * §12): node processes put what the static addressing rule cannot derive
 * (a port they had to change) and look it up lazily; the node agents that
 * ssh starts on other hosts report through it that they started and how
 * their node process ended.
 *
 * Served by one thread of mpiexec over TCP. Protocol: one request line,
 * one answer line, on a connection that first says who it is:
 *   hello JOBID NODE        -> ok | no (wrong job: connection closed)
 *   put KEY VALUE           -> ok
 *   get KEY                 -> value VALUE | none
 *   started                 -> ok     (an agent: its node process is starting)
 *   end KIND VALUE          -> ok     (an agent: KIND exit|signal|abort|nostart)
 * Keys and values have no spaces. */
#ifndef STRAND_LAUNCHER_KVS_H
#define STRAND_LAUNCHER_KVS_H

#include <stdbool.h>
#include <stddef.h>

enum node_end {
    NODE_END_UNKNOWN,   /* nothing reported */
    NODE_END_EXIT,      /* its ranks ended; value: status */
    NODE_END_SIGNAL,    /* killed; value: signal */
    NODE_END_ABORT,     /* MPI_Abort or a fatal error; value: status */
    NODE_END_NOSTART,   /* never ran (bad directory, program not found) */
};

/* Starts the server thread for `nnodes` node processes of job `job_id`,
 * listening on loopback, or on every address when `remote_nodes`. Returns
 * its port, or -1 with the reason in why[why_len]. */
int kvs_start(int nnodes, const char *job_id, bool remote_nodes, char *why, size_t why_len);
/* Any thread: what the agent of `node` reported. */
bool kvs_agent_started(int node);
enum node_end kvs_node_end(int node, int *value);

#endif
