/* The predefined communicators and the queries every program makes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/errhandler.h"
#include "../coll/coll.h"
#include "comm.h"

static struct comm_core world_core;

int comm_world_create(int nranks, struct rank **ranks)
{
    world_core.context_id = COMM_CONTEXT_WORLD;
    world_core.size = nranks;
    world_core.members = ranks;
    atomic_store(&world_core.refcount, 1);
    return coll_comm_attach(&world_core);
}

void comm_world_destroy(void)
{
    coll_comm_detach(&world_core);
    world_core.members = NULL;
    world_core.size = 0;
}

static struct strand_comm *handle_create(struct comm_core *core, int rank, const char *name)
{
    struct strand_comm *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->magic = COMM_MAGIC;
    c->core = core;
    c->rank = rank;
    c->errhandler = MPI_ERRORS_ARE_FATAL;
    snprintf(c->name, sizeof c->name, "%s", name);
    return c;
}

int comm_rank_handles_create(struct rank *r)
{
    struct comm_core *self_core = calloc(1, sizeof *self_core + sizeof(struct rank *));
    if (self_core == NULL)
        return MPI_ERR_NO_MEM;
    self_core->context_id = COMM_CONTEXT_SELF;
    self_core->size = 1;
    self_core->members = (struct rank **)(self_core + 1);
    self_core->members[0] = r;
    atomic_store(&self_core->refcount, 1);
    if (coll_comm_attach(self_core) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    r->comm_world = handle_create(&world_core, r->world_rank, "MPI_COMM_WORLD");
    r->comm_self = handle_create(self_core, 0, "MPI_COMM_SELF");
    if (r->comm_world == NULL || r->comm_self == NULL)
        return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

void comm_rank_handles_destroy(struct rank *r)
{
    if (r->comm_self != NULL) {
        coll_comm_detach(r->comm_self->core);
        free(r->comm_self->core);
    }
    free(r->comm_self);
    free(r->comm_world);
    r->comm_self = r->comm_world = NULL;
}

static struct strand_comm *comm_checked(MPI_Comm comm, const char *where, int *rc)
{
    *rc = error_check_initialized(where);
    if (*rc != MPI_SUCCESS)
        return NULL;
    struct strand_comm *c = comm_lookup(comm);
    if (c == NULL)
        *rc = error_report(MPI_COMM_WORLD, MPI_ERR_COMM, where, "invalid communicator");
    return c;
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_size", &rc);
    if (c == NULL)
        return rc;
    if (size == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Comm_size", "size must not be NULL");
    *size = c->core->size;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_size);

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_rank", &rc);
    if (c == NULL)
        return rc;
    if (rank == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Comm_rank", "rank must not be NULL");
    *rank = c->rank;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_rank);

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_set_errhandler", &rc);
    if (c == NULL)
        return rc;
    if (!errhandler_valid_for(errhandler, ERRHANDLER_COMM))
        return error_report(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                            "not a communicator error handler");
    errhandler_retain(errhandler);
    errhandler_release(c->errhandler);
    c->errhandler = errhandler;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_set_errhandler);

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_get_errhandler", &rc);
    if (c == NULL)
        return rc;
    if (errhandler == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler", "errhandler must not be NULL");
    errhandler_retain(c->errhandler);
    *errhandler = c->errhandler;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_get_errhandler);

/* Predefined attributes of MPI_COMM_WORLD. Values live per node (they are
 * the same for every rank) and are handed out by address, as MPI requires. */
static int attr_tag_ub = 0x7fffffff;
static int attr_host = MPI_PROC_NULL;
static int attr_io = MPI_ANY_SOURCE;
static int attr_wtime_is_global = 1;
static int attr_universe_size;
static int attr_appnum = 0;

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_get_attr", &rc);
    if (c == NULL)
        return rc;
    if (attribute_val == NULL || flag == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Comm_get_attr", "attribute_val and flag must not be NULL");
    int *value = NULL;
    switch (keyval) {
    case MPI_TAG_UB: value = &attr_tag_ub; break;
    case MPI_HOST: value = &attr_host; break;
    case MPI_IO: value = &attr_io; break;
    case MPI_WTIME_IS_GLOBAL: value = &attr_wtime_is_global; break;
    case MPI_UNIVERSE_SIZE:
        attr_universe_size = strand_node.config.universe_size;
        value = &attr_universe_size;
        break;
    case MPI_APPNUM: value = &attr_appnum; break;
    default:
        return error_report(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "invalid keyval %d", keyval);
    }
    /* Predefined attributes are set on MPI_COMM_WORLD only. */
    *flag = c->core->context_id == COMM_CONTEXT_WORLD;
    if (*flag)
        *(int **)attribute_val = value;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_get_attr);
