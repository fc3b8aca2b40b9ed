/* The predefined communicators, queries, and the intra-/inter-communicator
 * constructors and destructor of MPI-2.2 §6.4. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/quarantine.h"
#include "../core/errhandler.h"
#include "../datatype/datatype.h"
#include "../topo/topo.h"
#include "../dpm/dpm.h"
#include "attr.h"
#include "comm.h"

/* Predefined attributes of MPI_COMM_WORLD: the same for every rank of the
 * node, handed out by address as MPI requires. */
static int attr_tag_ub = 0x7fffffff;
static int attr_host = MPI_PROC_NULL;
static int attr_io = MPI_ANY_SOURCE;
static int attr_wtime_is_global = 1;
static int attr_universe_size;

void comm_world_destroy(struct world *w)
{
    if (w->core != NULL)
        comm_core_release(w->core);
    w->core = NULL;
}

static struct strand_comm *predefined_handle(struct comm_core *core, int rank, MPI_Comm public_handle,
                                             const char *name)
{
    struct strand_comm *c = comm_handle_for(core, rank, NULL);
    if (c == NULL)
        return NULL;
    c->public_handle = public_handle;
    snprintf(c->name, sizeof c->name, "%s", name);
    return c;
}

/* MPI_APPNUM is the rank's: spawn_multiple numbers its commands. */
static int world_attributes_set(struct strand_comm *c, int *appnum)
{
    static const int keys[] = { MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL,
                                MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE, MPI_APPNUM };
    int *values[] = { &attr_tag_ub, &attr_host, &attr_io, &attr_wtime_is_global,
                      &attr_universe_size, &errhandler_last_used_code, appnum };
    struct attr_host h = { ATTR_COMM, MPI_COMM_WORLD, &c->attrs };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        int rc = attr_set_predefined(&h, keys[i], values[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int comm_rank_handles_create(struct rank *r)
{
    struct comm_core *self_core = comm_intra_core_create(&r, 1, COMM_CONTEXT_SELF, 1);
    if (self_core == NULL)
        return MPI_ERR_NO_MEM;
    r->comm_self = predefined_handle(self_core, 0, MPI_COMM_SELF, "MPI_COMM_SELF");
    return r->comm_self != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* After a world's ranks exist: its core and every rank's handle of it.
 * The world holds one reference until comm_world_destroy. */
int comm_world_create(struct world *w)
{
    if (w->id == 0)
        attr_universe_size = strand_node.config.universe_size > 0 ? strand_node.config.universe_size : w->size;
    int nlocal = 0;
    for (int i = 0; i < w->size; i++)
        nlocal += w->ranks[i]->remote == NULL;
    /* The world holds one reference until comm_world_destroy, each local
     * rank's handle one. */
    w->core = comm_intra_core_create(w->ranks, w->size, w->context_id, nlocal + 1);
    if (w->core == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < w->size; i++) {
        struct rank *r = w->ranks[i];
        if (r->remote != NULL)
            continue;   /* a rank of another node process: its handles live there */
        r->comm_world = predefined_handle(w->core, i, MPI_COMM_WORLD, "MPI_COMM_WORLD");
        if (r->comm_world == NULL)
            return MPI_ERR_NO_MEM;
        struct rank *saved = strand_self;
        strand_self = r;    /* attribute lists are kept per owning rank */
        int rc = world_attributes_set(r->comm_world, &w->appnums[i]);
        strand_self = saved;
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Ends a handle: no callbacks (they ran, or the node is going away). */
static void handle_end(struct strand_comm *c)
{
    handle_magic_clear(&c->magic);
    errhandler_release(c->errhandler);
    c->errhandler = MPI_ERRHANDLER_NULL;
    if (c->topo != NULL)
        topo_release(c->topo);
    c->topo = NULL;
    comm_release(c);
}

void comm_handle_discard(struct strand_comm *c)
{
    struct attr_host h = { ATTR_COMM, c->public_handle, &c->attrs };
    attr_discard_all(&h);
    handle_end(c);
}

void comm_rank_handles_destroy(struct rank *r)
{
    struct rank *saved = strand_self;
    strand_self = r;    /* attribute lists are kept per owning rank */
    if (r->comm_self != NULL)
        comm_handle_discard(r->comm_self);
    if (r->comm_world != NULL)
        comm_handle_discard(r->comm_world);
    r->comm_self = r->comm_world = NULL;
    strand_self = saved;
}

int comm_finalize_rank(struct rank *r)
{
    struct attr_host self = { ATTR_COMM, MPI_COMM_SELF, &r->comm_self->attrs };
    int rc = attr_delete_all(&self);
    struct attr_host world = { ATTR_COMM, MPI_COMM_WORLD, &r->comm_world->attrs };
    int rc2 = attr_delete_all(&world);
    return rc != MPI_SUCCESS ? rc : rc2;
}

void comm_retain(struct strand_comm *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

/* The core (and so the context id) lives as long as the handle: a receive
 * still pending on a freed communicator cannot match messages of a new
 * communicator that reuses the id. */
void comm_last_release(struct strand_comm *c)
{
    comm_core_release(c->core);
    quarantine_free(c);
}

void comm_release(struct strand_comm *c)
{
    if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
        comm_last_release(c);
}

struct strand_comm *comm_checked(MPI_Comm comm, const char *where, int *rc)
{
    *rc = error_check_initialized(where);
    if (*rc != MPI_SUCCESS)
        return NULL;
    struct strand_comm *c = comm_lookup(comm);
    if (c == NULL)
        *rc = error_report(MPI_COMM_WORLD, MPI_ERR_COMM, where, "invalid communicator");
    return c;
}

/* --- queries */

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_size", &rc);
    if (c == NULL)
        return rc;
    if (size == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Comm_size", "size must not be NULL");
    *size = comm_local_size(c);
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

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_test_inter", &rc);
    if (c == NULL)
        return rc;
    if (flag == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Comm_test_inter", "flag must not be NULL");
    *flag = c->core->is_inter;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_test_inter);

static struct strand_comm *inter_checked(MPI_Comm comm, const char *where, int *rc)
{
    struct strand_comm *c = comm_checked(comm, where, rc);
    if (c != NULL && !c->core->is_inter) {
        *rc = error_report(comm, MPI_ERR_COMM, where, "an inter-communicator is required");
        return NULL;
    }
    return c;
}

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    int rc;
    struct strand_comm *c = inter_checked(comm, "MPI_Comm_remote_size", &rc);
    if (c == NULL)
        return rc;
    if (size == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Comm_remote_size", "size must not be NULL");
    *size = c->core->size;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_remote_size);

static int group_out(MPI_Comm comm, const char *where, struct rank **members, int size, MPI_Group *group)
{
    if (group == NULL)
        return error_report(comm, MPI_ERR_ARG, where, "group must not be NULL");
    struct strand_group *g = group_from_members(members, size);
    if (g == NULL)
        return error_report(comm, MPI_ERR_NO_MEM, where, "out of memory");
    *group = g;
    return MPI_SUCCESS;
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_group", &rc);
    if (c == NULL)
        return rc;
    return group_out(comm, "MPI_Comm_group", c->core->local_members, c->core->local_size, group);
}
STRAND_MPI_ALIAS(MPI_Comm_group);

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    int rc;
    struct strand_comm *c = inter_checked(comm, "MPI_Comm_remote_group", &rc);
    if (c == NULL)
        return rc;
    return group_out(comm, "MPI_Comm_remote_group", c->core->members, c->core->size, group);
}
STRAND_MPI_ALIAS(MPI_Comm_remote_group);

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    int rc;
    struct strand_comm *c1 = comm_checked(comm1, "MPI_Comm_compare", &rc);
    if (c1 == NULL)
        return rc;
    struct strand_comm *c2 = comm_checked(comm2, "MPI_Comm_compare", &rc);
    if (c2 == NULL)
        return rc;
    if (result == NULL)
        return error_report(comm1, MPI_ERR_ARG, "MPI_Comm_compare", "result must not be NULL");
    const struct comm_core *a = c1->core, *b = c2->core;
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->is_inter != b->is_inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int local = group_compare_members(a->local_members, a->local_size, b->local_members, b->local_size);
    int remote = a->is_inter ? group_compare_members(a->members, a->size, b->members, b->size) : MPI_IDENT;
    int worst = local > remote ? local : remote;    /* IDENT < SIMILAR < UNEQUAL in mpi.h */
    *result = worst == MPI_IDENT ? MPI_CONGRUENT : worst;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_compare);

/* --- error handlers */

/* MPI_Comm_set/get_errhandler and their MPI-1 names, errors reported as `where`. */
static int comm_errhandler_set(const char *where, MPI_Comm comm, MPI_Errhandler errhandler)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, where, &rc);
    if (c == NULL)
        return rc;
    if (!errhandler_valid_for(errhandler, ERRHANDLER_COMM))
        return error_report(comm, MPI_ERR_ARG, where, "not a communicator error handler");
    errhandler_retain(errhandler);
    errhandler_release(c->errhandler);
    c->errhandler = errhandler;
    return MPI_SUCCESS;
}

static int comm_errhandler_get(const char *where, MPI_Comm comm, MPI_Errhandler *errhandler)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, where, &rc);
    if (c == NULL)
        return rc;
    if (errhandler == NULL)
        return error_report(comm, MPI_ERR_ARG, where, "errhandler must not be NULL");
    errhandler_retain(c->errhandler);
    *errhandler = c->errhandler;
    return MPI_SUCCESS;
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return comm_errhandler_set("MPI_Comm_set_errhandler", comm, errhandler);
}
STRAND_MPI_ALIAS(MPI_Comm_set_errhandler);

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return comm_errhandler_get("MPI_Comm_get_errhandler", comm, errhandler);
}
STRAND_MPI_ALIAS(MPI_Comm_get_errhandler);

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return comm_errhandler_set("MPI_Errhandler_set", comm, errhandler);
}
STRAND_MPI_ALIAS(MPI_Errhandler_set);

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return comm_errhandler_get("MPI_Errhandler_get", comm, errhandler);
}
STRAND_MPI_ALIAS(MPI_Errhandler_get);

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_call_errhandler", &rc);
    if (c == NULL)
        return rc;
    rc = error_report(comm, errorcode, "MPI_Comm_call_errhandler", "error raised by the program");
    /* A user handler that returns has handled it. */
    return c->errhandler->kind == ERRHANDLER_COMM ? MPI_SUCCESS : rc;
}
STRAND_MPI_ALIAS(MPI_Comm_call_errhandler);

/* --- names */

static int name_set(char *dst, const char *src, MPI_Comm comm, const char *where)
{
    if (src == NULL)
        return error_report(comm, MPI_ERR_ARG, where, "name must not be NULL");
    snprintf(dst, MPI_MAX_OBJECT_NAME, "%s", src);
    return MPI_SUCCESS;
}

static int name_get(const char *src, char *dst, int *resultlen, MPI_Comm comm, const char *where)
{
    if (dst == NULL || resultlen == NULL)
        return error_report(comm, MPI_ERR_ARG, where, "name and resultlen must not be NULL");
    size_t n = strnlen(src, MPI_MAX_OBJECT_NAME - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm comm, char *comm_name)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_set_name", &rc);
    return c == NULL ? rc : name_set(c->name, comm_name, comm, "MPI_Comm_set_name");
}
STRAND_MPI_ALIAS(MPI_Comm_set_name);

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_get_name", &rc);
    return c == NULL ? rc : name_get(c->name, comm_name, resultlen, comm, "MPI_Comm_get_name");
}
STRAND_MPI_ALIAS(MPI_Comm_get_name);

int PMPI_Type_set_name(MPI_Datatype type, char *type_name)
{
    int rc = dt_check_arg("MPI_Type_set_name", type);
    if (rc != MPI_SUCCESS)
        return rc;
    return name_set(type->name, type_name, MPI_COMM_WORLD, "MPI_Type_set_name");
}
STRAND_MPI_ALIAS(MPI_Type_set_name);

int PMPI_Type_get_name(MPI_Datatype type, char *type_name, int *resultlen)
{
    int rc = dt_check_arg("MPI_Type_get_name", type);
    if (rc != MPI_SUCCESS)
        return rc;
    return name_get(type->name, type_name, resultlen, MPI_COMM_WORLD, "MPI_Type_get_name");
}
STRAND_MPI_ALIAS(MPI_Type_get_name);

/* --- constructors */

/* The calling rank's handle for its result of a construction, with the
 * parent's error handler; `dup` also copies attributes and topology. */
static int handle_deliver(MPI_Comm comm, const char *where, struct strand_comm *parent,
                          const struct build_result *res, bool dup, MPI_Comm *newcomm)
{
    if (res->core == NULL) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    struct strand_comm *c = comm_handle_for(res->core, res->rank, parent);
    if (c == NULL)
        return error_report(comm, MPI_ERR_NO_MEM, where, "out of memory");
    if (dup) {
        if (parent->topo != NULL)
            topo_retain(parent->topo);
        c->topo = parent->topo;
        struct attr_host from = { ATTR_COMM, parent->public_handle, &parent->attrs };
        struct attr_host to = { ATTR_COMM, c->public_handle, &c->attrs };
        int rc = attr_copy_all(&from, &to);
        if (rc != MPI_SUCCESS) {
            comm_handle_discard(c);
            return error_report(comm, rc, where, "an attribute copy callback failed with code %d", rc);
        }
    }
    *newcomm = c;
    return MPI_SUCCESS;
}

static int build_report(MPI_Comm comm, int rc, const char *where)
{
    switch (rc) {
    case MPI_ERR_GROUP:
        return error_report(comm, rc, where, "the group is not a subgroup of the communicator's group, "
                                             "or members passed different groups");
    case MPI_ERR_NO_MEM:
        return error_report(comm, rc, where, "out of memory or out of context ids");
    case MPI_ERR_UNSUPPORTED_OPERATION:
        return error_report(comm, rc, where, COMM_SPANS_NODES_TEXT);
    default:
        return error_report(comm, rc, where, "invalid arguments on this or another member");
    }
}

int comm_construct(MPI_Comm comm, const char *where, struct strand_comm *parent, enum build_kind kind,
                   const struct build_request *req, bool dup, MPI_Comm *newcomm)
{
    struct build_result res;
    int rc = comm_build(parent, kind, req, NULL, &res);
    if (rc != MPI_SUCCESS)
        return build_report(comm, rc, where);
    return handle_deliver(comm, where, parent, &res, dup, newcomm);
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_dup", &rc);
    if (c == NULL)
        return rc;
    if (newcomm == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Comm_dup", "newcomm must not be NULL");
    *newcomm = MPI_COMM_NULL;
    struct build_request req = { .expect_size = -1 };
    return comm_construct(comm, "MPI_Comm_dup", c, BUILD_DUP, &req, true, newcomm);
}
STRAND_MPI_ALIAS(MPI_Comm_dup);

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_split", &rc);
    if (c == NULL)
        return rc;
    if (newcomm == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Comm_split", "newcomm must not be NULL");
    *newcomm = MPI_COMM_NULL;
    struct build_request req = { .color = color, .key = key, .expect_size = -1 };
    if (color < 0 && color != MPI_UNDEFINED)
        req.error = MPI_ERR_ARG;
    return comm_construct(comm, "MPI_Comm_split", c, BUILD_SPLIT, &req, false, newcomm);
}
STRAND_MPI_ALIAS(MPI_Comm_split);

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, "MPI_Comm_create", &rc);
    if (c == NULL)
        return rc;
    if (newcomm == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Comm_create", "newcomm must not be NULL");
    *newcomm = MPI_COMM_NULL;
    struct strand_group *g = group_lookup(group);
    /* MPI-2.2 allows disjoint subgroups of an intracommunicator, one
     * communicator each: members split off in group order, colored by the
     * group's first member (the same for all members of one group, distinct
     * between disjoint groups). On an intercommunicator each side passes one
     * group of its own and both sides pair up under one color. The size
     * check catches members that passed different groups. */
    struct build_request req = { .color = MPI_UNDEFINED, .expect_size = -1 };
    if (g == NULL) {
        req.error = MPI_ERR_GROUP;
    } else if (g->self_rank != MPI_UNDEFINED) {
        /* the same in every node process: from the first member's identity */
        const struct rank *first = g->members[0];
        req.color = c->core->is_inter ? 0 : (int)((first->world->gid * 31 + (uint64_t)first->world_rank) & 0x3fffffff);
        req.key = g->self_rank;
        req.expect_size = g->size;
    }
    return comm_construct(comm, "MPI_Comm_create", c, BUILD_SPLIT, &req, false, newcomm);
}
STRAND_MPI_ALIAS(MPI_Comm_create);

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    int rc;
    struct strand_comm *c = inter_checked(intercomm, "MPI_Intercomm_merge", &rc);
    if (c == NULL)
        return rc;
    if (newintracomm == NULL)
        return error_report(intercomm, MPI_ERR_ARG, "MPI_Intercomm_merge", "newintracomm must not be NULL");
    *newintracomm = MPI_COMM_NULL;
    struct build_request req = { .high = high != 0, .expect_size = -1 };
    return comm_construct(intercomm, "MPI_Intercomm_merge", c, BUILD_MERGE, &req, false, newintracomm);
}
STRAND_MPI_ALIAS(MPI_Intercomm_merge);

int comm_free_handle(struct strand_comm *c, const char *where)
{
    /* Delete callbacks see a live communicator; one that fails keeps it. */
    struct attr_host h = { ATTR_COMM, c->public_handle, &c->attrs };
    int rc = attr_delete_all(&h);
    if (rc != MPI_SUCCESS)
        return error_report(c->public_handle, rc, where, "an attribute delete callback failed with code %d", rc);
    dpm_parent_forget(c);
    handle_end(c);
    return MPI_SUCCESS;
}

int PMPI_Comm_free(MPI_Comm *comm)
{
    int rc = error_check_initialized("MPI_Comm_free");
    if (rc != MPI_SUCCESS)
        return rc;
    if (comm == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_free", "comm must not be NULL");
    struct strand_comm *c = comm_checked(*comm, "MPI_Comm_free", &rc);
    if (c == NULL)
        return rc;
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return error_report(*comm, MPI_ERR_COMM, "MPI_Comm_free", "a predefined communicator cannot be freed");
    rc = comm_free_handle(c, "MPI_Comm_free");
    if (rc != MPI_SUCCESS)
        return rc;
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Comm_free);
