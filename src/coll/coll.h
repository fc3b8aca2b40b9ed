/* Collectives: per-communicator shared state and the algorithms over it.
 * The communicator code calls coll_comm_attach when a communicator core is
 * created (by every member, or once by whoever builds the core) and
 * coll_comm_detach when the core is destroyed. */
#ifndef STRAND_COLL_H
#define STRAND_COLL_H

struct comm_core;

/* Allocates the collective state of a new communicator core. */
int coll_comm_attach(struct comm_core *core);
void coll_comm_detach(struct comm_core *core);

#endif
