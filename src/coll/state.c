/* Collective state attached to every communicator core. */
#include <stdlib.h>

#include "../comm/comm.h"
#include "coll.h"
#include "coll_state.h"

int coll_comm_attach(struct comm_core *core)
{
    core->coll = calloc(1, sizeof *core->coll);
    return core->coll != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

void coll_comm_detach(struct comm_core *core)
{
    free(core->coll);
    core->coll = NULL;
}
