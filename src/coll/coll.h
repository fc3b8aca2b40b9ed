/* Collectives: per-communicator shared state and the algorithms over it.
 * The communicator code calls coll_comm_attach when an intracommunicator
 * core is created (once, by whoever builds the core) and coll_comm_detach
 * when a core is destroyed. An intercommunicator's two cores (one per
 * group; each rank's handle points at its own group's core) share one
 * collective state, made by coll_intercomm_attach. */
#ifndef STRAND_COLL_H
#define STRAND_COLL_H

struct comm_core;

/* Allocates the collective state of a new intracommunicator core of
 * core->size members. */
int coll_comm_attach(struct comm_core *core);
/* One state for both groups: group 0's members have handles on `core0`,
 * group 1's on `core1`; a member's handle rank is its rank in its group. */
int coll_intercomm_attach(struct comm_core *core0, int size0, struct comm_core *core1, int size1);
/* Every core calls it once; the state goes with the last. */
void coll_comm_detach(struct comm_core *core);

struct strand_comm;
/* A barrier over the handle `c` for the library itself (MPI_Comm_disconnect
 * across node processes): the communicator's algorithm, no argument
 * checks; returns an MPI error class. */
int coll_barrier(struct strand_comm *c);

#endif
