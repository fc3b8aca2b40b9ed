/* Shared by the topology files. */
#ifndef STRAND_TOPO_INTERNAL_H
#define STRAND_TOPO_INTERNAL_H

#include "../comm/comm.h"
#include "topo.h"

/* A live communicator; with `kind` != 0 it must carry that topology
 * (MPI_ERR_TOPOLOGY otherwise). */
struct strand_comm *topo_comm_checked(MPI_Comm comm, const char *where, int kind, int *rc);
/* Splits `parent` by (color, key) and gives the caller's new handle the
 * topology `t` (consumed). A non-zero `error` fails the construction on
 * every member, so that bad arguments on one rank hang nobody. */
int topo_comm_create(MPI_Comm comm, const char *where, struct strand_comm *parent, int color, int key,
                     int error, struct topo *t, MPI_Comm *newcomm);

#endif
