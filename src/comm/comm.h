/* Communicators: a shared core (members, context id) and a per-rank handle
 * (the rank's own number, error handler). MPI_Comm values are pointers to
 * handles, except MPI_COMM_WORLD and MPI_COMM_SELF, which are constants
 * every rank shares and which resolve to the calling rank's own handle. */
#ifndef STRAND_COMM_H
#define STRAND_COMM_H

#include <stdatomic.h>
#include <stdint.h>
#include "../core/core.h"

#define COMM_MAGIC 0x53434f4du      /* "SCOM" */

struct coll_core;

/* Context ids come in pairs: `context_id` (even) matches point-to-point
 * messages, `context_id + 1` messages internal to collectives. */
struct comm_core {
    uint32_t context_id;            /* point-to-point matching context */
    int size;
    struct rank **members;          /* comm rank -> rank (the remote group for an intercomm) */
    atomic_int refcount;
    struct coll_core *coll;         /* shared collective state (src/coll) */
};

struct strand_comm {
    uint32_t magic;
    struct comm_core *core;
    int rank;                       /* the owning rank's number in this comm */
    MPI_Errhandler errhandler;
    char name[MPI_MAX_OBJECT_NAME];
};

/* Context ids of the predefined communicators; others come after. */
enum { COMM_CONTEXT_WORLD = 0, COMM_CONTEXT_SELF = 2, COMM_CONTEXT_FIRST_FREE = 4 };

static inline struct strand_comm *comm_resolve(MPI_Comm c)
{
    if (c == MPI_COMM_WORLD)
        return strand_self->comm_world;
    if (c == MPI_COMM_SELF)
        return strand_self->comm_self;
    return c;
}

/* NULL when the handle is not a live communicator. */
static inline struct strand_comm *comm_lookup(MPI_Comm c)
{
    if (c == MPI_COMM_NULL || strand_self == NULL)
        return NULL;
    struct strand_comm *comm = comm_resolve(c);
    return comm != NULL && comm->magic == COMM_MAGIC ? comm : NULL;
}

/* Node start: the world core; each rank: its WORLD and SELF handles. */
int comm_world_create(int nranks, struct rank **ranks);
int comm_rank_handles_create(struct rank *r);
void comm_rank_handles_destroy(struct rank *r);
void comm_world_destroy(void);

#endif
