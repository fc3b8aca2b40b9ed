/* Rank identities across node processes (core.h): what a constructor
 * sends another process instead of `struct rank *`s.
 *
 * Encoding (little-endian, util/bytes.h), three tables:
 *   processes: u32 count, then per process: u64 job id, u32 node index,
 *              u32 port, string host (where it listens)
 *   worlds:    u32 count, then per world: u64 gid, u32 size
 *   members:   u32 count, then per member: u32 world, u32 rank, u32 process
 *              (indices into the tables above)
 * A member list of 4096 ranks of one world takes about 49 KiB.
 *
 * Decoding trusts nothing: every count is bounded by the bytes left,
 * every index by its table, every rank by its world's size; a rank said
 * to run in this process must be one of its ranks, a rank of a world
 * running here must be the one the world has. Ranks of worlds unknown
 * here become proxies of a foreign world (world.c), living in the node
 * process named (net_peer_get). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../net/net.h"
#include "../util/bytes.h"
#include "core.h"

/* Where a rank runs: NULL for this process. */
static struct net_peer *process_of(const struct rank *r) { return r->remote; }

/* Index of `key` among the first `n` of `keys`, or -1 (tables are small:
 * the distinct worlds and node processes of one member list). */
static int index_of(const void *const *keys, int n, const void *key)
{
    for (int i = n - 1; i >= 0; i--)
        if (keys[i] == key)
            return i;
    return -1;
}

static void process_encode(struct bytes_out *out, const struct net_peer *p)
{
    const char *host;
    int port;
    if (p == NULL) {
        bytes_put_u64(out, net_self_job_id());
        bytes_put_u32(out, (uint32_t)net_self_node());
        port = net_self_port();
        host = net_self_host();
    } else {
        bytes_put_u64(out, p->job_id);
        bytes_put_u32(out, (uint32_t)p->job_node);
        net_peer_contact(p, &host, &port);
    }
    bytes_put_u32(out, (uint32_t)port);
    bytes_put_str(out, host);
}

void identity_encode(struct rank *const *members, int n, struct bytes_out *out)
{
    const void **procs = malloc(((size_t)n + 1) * sizeof *procs);
    const void **worlds = malloc(((size_t)n + 1) * sizeof *worlds);
    int *member_proc = malloc(((size_t)n + 1) * sizeof *member_proc);
    int *member_world = malloc(((size_t)n + 1) * sizeof *member_world);
    int nprocs = 0, nworlds = 0;
    if (procs == NULL || worlds == NULL || member_proc == NULL || member_world == NULL) {
        out->failed = true;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const void *p = process_of(members[i]), *w = members[i]->world;
        int pi = index_of(procs, nprocs, p), wi = index_of(worlds, nworlds, w);
        if (pi < 0)
            procs[pi = nprocs++] = p;
        if (wi < 0)
            worlds[wi = nworlds++] = w;
        member_proc[i] = pi;
        member_world[i] = wi;
    }
    bytes_put_u32(out, (uint32_t)nprocs);
    for (int i = 0; i < nprocs; i++)
        process_encode(out, procs[i]);
    bytes_put_u32(out, (uint32_t)nworlds);
    for (int i = 0; i < nworlds; i++) {
        const struct world *w = worlds[i];
        bytes_put_u64(out, w->gid);
        bytes_put_u32(out, (uint32_t)w->size);
    }
    bytes_put_u32(out, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        bytes_put_u32(out, (uint32_t)member_world[i]);
        bytes_put_u32(out, (uint32_t)members[i]->world_rank);
        bytes_put_u32(out, (uint32_t)member_proc[i]);
    }
done:
    free(procs);
    free(worlds);
    free(member_proc);
    free(member_world);
}

void identity_encode_layout(uint64_t gid, int size, const struct world_block *blocks, int nblocks,
                            struct bytes_out *out)
{
    /* one process entry per block (a process may come twice: harmless) */
    bytes_put_u32(out, (uint32_t)nblocks);
    for (int b = 0; b < nblocks; b++)
        process_encode(out, blocks[b].peer);
    bytes_put_u32(out, 1);
    bytes_put_u64(out, gid);
    bytes_put_u32(out, (uint32_t)size);
    bytes_put_u32(out, (uint32_t)size);
    for (int b = 0; b < nblocks; b++)
        for (int r = blocks[b].first; r < blocks[b].first + blocks[b].count; r++) {
            bytes_put_u32(out, 0);
            bytes_put_u32(out, (uint32_t)r);
            bytes_put_u32(out, (uint32_t)b);
        }
}

struct process_entry {
    uint64_t job;
    int node, port;
    bool self;
    char host[256];
    struct net_peer *peer;          /* looked up on first use */
};

struct world_entry {
    uint64_t gid;
    int size;
    struct world *world;            /* retained on first use */
};

enum { PROCESS_MIN_BYTES = 8 + 4 + 4 + 2, WORLD_BYTES = 12, MEMBER_BYTES = 12 };

static int processes_read(struct bytes_in *in, struct process_entry **out, int *n)
{
    uint32_t count = bytes_get_u32(in);
    if (in->bad || count == 0 || count > bytes_left(in) / PROCESS_MIN_BYTES)
        return MPI_ERR_INTERN;
    struct process_entry *p = calloc(count, sizeof *p);
    if (p == NULL)
        return MPI_ERR_NO_MEM;
    for (uint32_t i = 0; i < count; i++) {
        p[i].job = bytes_get_u64(in);
        p[i].node = (int)bytes_get_u32(in);
        p[i].port = (int)bytes_get_u32(in);
        bytes_get_str(in, p[i].host, sizeof p[i].host);
        p[i].self = p[i].job == net_self_job_id() && p[i].node == net_self_node();
    }
    *out = p;
    *n = (int)count;
    return in->bad ? MPI_ERR_INTERN : MPI_SUCCESS;
}

static int worlds_read(struct bytes_in *in, struct world_entry **out, int *n)
{
    uint32_t count = bytes_get_u32(in);
    if (in->bad || count == 0 || count > bytes_left(in) / WORLD_BYTES)
        return MPI_ERR_INTERN;
    struct world_entry *w = calloc(count, sizeof *w);
    if (w == NULL)
        return MPI_ERR_NO_MEM;
    for (uint32_t i = 0; i < count; i++) {
        w[i].gid = bytes_get_u64(in);
        uint32_t size = bytes_get_u32(in);
        w[i].size = size > 0 && size <= INT32_MAX / 2 ? (int)size : -1;
        if (w[i].size < 0)
            in->bad = true;
    }
    *out = w;
    *n = (int)count;
    return in->bad ? MPI_ERR_INTERN : MPI_SUCCESS;
}

/* The world of a member running in process `p`: a world running here, or
 * a foreign world when the member runs elsewhere. */
static struct world *world_of_entry(struct world_entry *w, const struct process_entry *p)
{
    if (w->world != NULL)
        return w->world;
    registry_read_lock();
    w->world = world_find_retain(w->gid);
    registry_read_unlock();
    if (w->world == NULL && !p->self)
        w->world = world_foreign_get(w->gid, w->size);
    if (w->world != NULL && w->world->size != w->size) {
        world_release(w->world);
        w->world = NULL;
    }
    return w->world;
}

/* One member: its rank here (a local rank, a proxy the world has, or a
 * new proxy of a foreign world). */
static int member_resolve(struct world_entry *w, struct process_entry *p, int rank, struct rank **out)
{
    struct world *world = world_of_entry(w, p);
    if (world == NULL)
        return p->self ? MPI_ERR_OTHER : MPI_ERR_NO_MEM;
    if (!p->self && world->foreign && p->peer == NULL &&
        (p->peer = net_peer_get(p->job, p->node, p->host, p->port)) == NULL)
        return MPI_ERR_NO_MEM;
    struct rank *r = world_rank_get(world, rank, p->self ? NULL : p->peer);
    /* A rank here only if the identity says so. */
    if (r == NULL || (r->remote == NULL) != p->self)
        return MPI_ERR_OTHER;
    world_retain(world);            /* the member's reference */
    *out = r;
    return MPI_SUCCESS;
}

int identity_decode(struct bytes_in *in, struct rank ***members, int *n)
{
    struct process_entry *procs = NULL;
    struct world_entry *worlds = NULL;
    struct rank **ranks = NULL;
    int nprocs = 0, nworlds = 0, resolved = 0;
    int rc = processes_read(in, &procs, &nprocs);
    if (rc == MPI_SUCCESS)
        rc = worlds_read(in, &worlds, &nworlds);
    uint32_t count = rc == MPI_SUCCESS ? bytes_get_u32(in) : 0;
    if (rc == MPI_SUCCESS && (in->bad || count > bytes_left(in) / MEMBER_BYTES))
        rc = MPI_ERR_INTERN;
    if (rc == MPI_SUCCESS && (ranks = malloc(((size_t)count + 1) * sizeof *ranks)) == NULL)
        rc = MPI_ERR_NO_MEM;
    for (uint32_t i = 0; i < count && rc == MPI_SUCCESS; i++) {
        uint32_t wi = bytes_get_u32(in), rank = bytes_get_u32(in), pi = bytes_get_u32(in);
        if (in->bad || wi >= (uint32_t)nworlds || pi >= (uint32_t)nprocs || rank >= (uint32_t)worlds[wi].size)
            rc = MPI_ERR_INTERN;
        else if ((rc = member_resolve(&worlds[wi], &procs[pi], (int)rank, &ranks[i])) == MPI_SUCCESS)
            resolved++;
    }
    for (int i = 0; i < nworlds; i++)
        if (worlds[i].world != NULL)
            world_release(worlds[i].world);     /* the members hold theirs */
    free(procs);
    free(worlds);
    if (rc != MPI_SUCCESS) {
        identity_release(ranks, resolved);
        return rc;
    }
    *members = ranks;
    *n = (int)count;
    return MPI_SUCCESS;
}

void identity_release(struct rank **members, int n)
{
    if (members == NULL)
        return;
    for (int i = 0; i < n; i++)
        world_release(members[i]->world);
    free(members);
}

int identity_compare(const struct rank *a, const struct rank *b)
{
    if (a->world->gid != b->world->gid)
        return a->world->gid < b->world->gid ? -1 : 1;
    return a->world_rank < b->world_rank ? -1 : a->world_rank > b->world_rank;
}
