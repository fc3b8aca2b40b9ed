/* mpiexec's key-value store for a job (DESIGN §12), which is also the
 * name service of the job and of the jobs it spawns (MPI_Publish_name,
 * DESIGN §10): node processes put what the static addressing rule cannot
 * derive (a port they had to change) and look it up lazily; the node
 * agents that ssh starts on other hosts report through it that they
 * started and how their node process ended; ranks publish, unpublish and
 * look up service names. The same server, for names only and open to any
 * job, is the standalone name server (launcher/nameserver.c,
 * strand-nameserver) that lets separately started jobs find each other.
 *
 * Served by one thread over TCP. Protocol: one request line, one answer
 * line, on a connection that first says who it is:
 *   hello JOBID NODE        -> ok | no (wrong job: connection closed; the
 *                              name server takes any job)
 *   put KEY VALUE           -> ok
 *   get KEY                 -> value VALUE | none
 *   started                 -> ok     (an agent: its node process is starting)
 *   end KIND VALUE          -> ok     (an agent: KIND exit|signal|abort|nostart)
 *   exited NODE             -> value STATUS | none (whether mpiexec saw node
 *                              NODE's process end on its own, with STATUS)
 *   publish SERVICE PORT    -> ok | taken
 *   unpublish SERVICE PORT  -> ok | unknown | other (published with another port)
 *   lookup SERVICE          -> value PORT | none
 * Keys and values have no spaces; SERVICE and PORT are percent-encoded
 * (every byte but letters, digits and "-._~:/" as %XX), so that any
 * service name travels. The name server answers only hello and the name
 * verbs. */
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
/* The same as a name server for any job: on `port` (0: any) of every
 * IPv4 address, or of loopback only when `local`. */
int kvs_start_names(int port, bool local, char *why, size_t why_len);

/* Longest request or answer line. */
enum { KVS_LINE_MAX = 4096 };
/* Any thread: what the agent of `node` reported. */
bool kvs_agent_started(int node);
enum node_end kvs_node_end(int node, int *value);
/* The main thread: node `node`'s process ended on its own with `status`
 * without ending the job (its ranks ended). A node process that still
 * tries to connect to it then learns from `exited` that it never will. */
void kvs_note_exited(int node, int status);

#endif
