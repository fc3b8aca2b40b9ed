/* Worlds: the jobs a node process hosts (core.h). The initial world is
 * made at start; MPI_Comm_spawn (src/dpm) adds worlds whose ranks run in
 * detached threads, accounted here so that the process exits only after
 * them and with the highest status of all. */
#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../privatize/privatize.h"
#include "../comm/comm.h"
#include "../net/net.h"
#include "apps.h"
#include "core.h"

static struct {
    pthread_mutex_t lock;
    pthread_cond_t spawned_gone;    /* signalled when `spawned_running` drops to 0 */
    uint32_t next_id;               /* of the next spawned world */
    int next_uid;
    int spawned_running;            /* spawned rank threads not yet ended, + spawns being prepared */
    int spawned_status;             /* highest exit status among ended spawned ranks */
    bool ending;                    /* world_wait_spawned returned: no more spawns here */
} worlds = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1, 0, 0, 0, false };

/* Every live world, by gid (read by the network progress thread for each
 * arrival to a world other than the launched one). */
static struct registry registry = REGISTRY_INIT;

static void world_free(struct world *w)
{
    free(w->ranks);
    free(w->appnums);
    free(w->parents);
    free(w);
}

/* The programs of the launched job (MPMD, apps.h): read after net_start,
 * since under srun the node learns its tasks' programs at PMI's fence. */
static void launched_apps_read(int size)
{
    char why[256];
    if (apps_read(size, why, sizeof why) < 0) {
        fprintf(stderr, "Strand MPI: the launcher's description of the programs to run: %s\n", why);
        strand_job_abort(1, NULL);
    }
}

static void ranks_destroy(struct world *w)
{
    for (int i = 0; i < w->size; i++) {
        struct rank *r = __atomic_load_n(&w->ranks[i], __ATOMIC_ACQUIRE);
        if (r == NULL)
            continue;
        if (r->remote != NULL)
            net_proxy_destroy(r);
        else
            rank_destroy(r);
    }
}

static struct world *world_alloc(uint32_t id, uint64_t gid, int size)
{
    struct world *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->size = size;
    w->gid = gid;
    w->reg.key[0] = gid;
    w->context_id = CONTEXT_ID_NONE;
    w->ranks = calloc((size_t)size, sizeof *w->ranks);
    w->appnums = calloc((size_t)size, sizeof *w->appnums);
    w->parents = calloc((size_t)size, sizeof *w->parents);
    if (w->ranks == NULL || w->appnums == NULL || w->parents == NULL) {
        world_free(w);
        return NULL;
    }
    atomic_store(&w->refs, id != 0 ? 1 : 0);
    pthread_mutex_lock(&worlds.lock);
    w->id = id != 0 ? worlds.next_id++ : 0;
    w->uid_base = worlds.next_uid;
    worlds.next_uid += size;
    pthread_mutex_unlock(&worlds.lock);
    return w;
}

/* Published last, so that a world found in the registry is complete. */
static bool world_register(struct world *w)
{
    registry_read_lock();
    struct registry_node *in = registry_add(&registry, &w->reg);
    registry_read_unlock();
    return in == &w->reg;
}

/* Ranks (proxies where `blocks` say so), then the world communicator. */
static struct world *world_make(uint32_t id, uint64_t gid, int size, const int *appnums, uint32_t context_id,
                                const struct world_block *blocks, int nblocks)
{
    struct world *w = world_alloc(id, gid, size);
    if (w == NULL)
        return NULL;
    /* The launched world of a job over several node processes: the
     * network module puts proxies for the other node processes' ranks. */
    if (id == 0 && !strand_node.singleton)
        net_start(size, w->ranks, &strand_node.local_ranks, &strand_node.nlocal);
    if (id == 0)
        launched_apps_read(size);
    for (int b = 0; b < nblocks; b++)
        for (int i = blocks[b].first; blocks[b].peer != NULL && i < blocks[b].first + blocks[b].count; i++)
            if ((w->ranks[i] = net_proxy_create(i, blocks[b].peer)) == NULL)
                goto fail;
    for (int i = 0; i < size; i++) {
        const struct app *launched = id == 0 ? apps_of_rank(i) : NULL;
        w->appnums[i] = appnums != NULL ? appnums[i] : launched != NULL ? launched->appnum : 0;
        if (w->ranks[i] != NULL) {
            w->ranks[i]->world = w;     /* a proxy */
            continue;
        }
        w->ranks[i] = rank_create(w, i);
        if (w->ranks[i] == NULL)
            goto fail;
    }
    if (id == 0) {
        w->context_id = COMM_CONTEXT_WORLD;
    } else if (context_id == CONTEXT_ID_NONE) {
        w->context_id = context_id_alloc();
        w->owns_context_id = w->context_id != CONTEXT_ID_NONE;
    } else {
        w->context_id = context_id;
    }
    if (w->context_id == CONTEXT_ID_NONE || comm_world_create(w) != MPI_SUCCESS || !world_register(w))
        goto fail;
    return w;
fail:
    comm_world_destroy(w);
    ranks_destroy(w);
    if (w->owns_context_id)
        context_id_free(w->context_id);
    world_free(w);
    return NULL;
}

struct world *world_create(uint64_t gid, int size, const int *appnums, uint32_t context_id,
                           const struct world_block *blocks, int nblocks)
{
    return world_make(1, gid, size, appnums, context_id, blocks, nblocks);
}

struct world *world_create_initial(int size)
{
    return world_make(0, net_self_job_id(), size, NULL, CONTEXT_ID_NONE, NULL, 0);
}

struct world *world_find_retain(uint64_t gid)
{
    struct registry_node *n = registry_find(&registry, gid, 0);
    if (n == NULL)
        return NULL;
    struct world *w = caa_container_of(n, struct world, reg);
    if (w->id == 0)
        return w;
    /* A world whose last reference went is being destroyed: not found. */
    int refs = atomic_load(&w->refs);
    while (refs > 0)
        if (atomic_compare_exchange_weak(&w->refs, &refs, refs + 1))
            return w;
    return NULL;
}

struct rank *world_rank_here(uint64_t gid, int rank)
{
    struct registry_node *n = registry_find(&registry, gid, 0);
    if (n == NULL)
        return NULL;
    struct world *w = caa_container_of(n, struct world, reg);
    if (rank < 0 || rank >= w->size)
        return NULL;
    struct rank *r = __atomic_load_n(&w->ranks[rank], __ATOMIC_ACQUIRE);
    return r != NULL && r->remote == NULL ? r : NULL;
}

struct world *world_foreign_get(uint64_t gid, int size)
{
    for (;;) {
        registry_read_lock();
        struct world *w = world_find_retain(gid);
        bool dying = w == NULL && registry_find(&registry, gid, 0) != NULL;
        registry_read_unlock();
        if (w != NULL) {
            if (w->size == size)
                return w;
            world_release(w);
            return NULL;
        }
        if (dying) {                /* its last holder is taking it out of the registry */
            sched_yield();
            continue;
        }
        w = world_alloc(1, gid, size);
        if (w == NULL)
            return NULL;
        w->foreign = true;
        if (world_register(w))
            return w;
        world_free(w);              /* another thread made it first */
    }
}

struct rank *world_rank_get(struct world *w, int rank, struct net_peer *peer)
{
    struct rank *r = __atomic_load_n(&w->ranks[rank], __ATOMIC_ACQUIRE);
    if (r != NULL || !w->foreign || peer == NULL)
        return r;
    struct rank *mine = net_proxy_create(rank, peer);
    if (mine == NULL)
        return NULL;
    mine->world = w;
    if (__atomic_compare_exchange_n(&w->ranks[rank], &r, mine, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return mine;
    net_proxy_destroy(mine);        /* named by another thread at the same time */
    return r;
}

void world_retain(struct world *w)
{
    if (w->id != 0)
        atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
}

void world_destroy(struct world *w)
{
    registry_read_lock();
    registry_remove(&registry, &w->reg);
    registry_read_unlock();
    /* The progress thread may be delivering to one of its ranks. */
    registry_synchronize();
    /* The ranks' handles go first (they hold the world core), then the
     * world's own reference; the context id is the world's. */
    for (int i = 0; i < w->size; i++) {
        struct rank *r = w->ranks[i];
        if (r != NULL && r->remote == NULL) {
            rank_destroy(r);
            w->ranks[i] = NULL;
        }
    }
    comm_world_destroy(w);
    ranks_destroy(w);       /* the proxies */
    if (w->owns_context_id)
        context_id_free(w->context_id);
    world_free(w);
}

void world_release(struct world *w)
{
    if (w->id != 0 && atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1)
        world_destroy(w);
}

/* ---- spawned rank threads */

struct spawned_start {
    struct rank *rank;
    int (*rank_main)(void *arg);
    void *arg;
};

static void *spawned_rank_thread(void *argp)
{
    struct spawned_start start = *(struct spawned_start *)argp;
    free(argp);
    struct world *w = start.rank->world;
    int status = rank_thread_run(start.rank, start.rank_main, start.arg);
    /* A parent communicator the program never freed (it need not) would
     * keep the world alive; the rank can no longer use it. */
    struct strand_comm **parent = &w->parents[start.rank->world_rank];
    if (*parent != NULL)
        comm_handle_discard(*parent);
    *parent = NULL;
    /* The rank's memory may go with the world below: nothing of it is used
     * after this point. */
    strand_self = NULL;
    pthread_mutex_lock(&worlds.lock);
    if (status > worlds.spawned_status)
        worlds.spawned_status = status;
    if (--worlds.spawned_running == 0)
        pthread_cond_broadcast(&worlds.spawned_gone);
    pthread_mutex_unlock(&worlds.lock);
    node_ranks_added(-1);
    world_release(w);
    return NULL;
}

int world_start_ranks(struct world *w, int (*rank_main)(void *arg), void *const *args)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* glibc's stacks (unlike the initial ranks'): freed when the thread
     * ends, so that spawn/end cycles do not grow the process. */
    pthread_attr_setstacksize(&attr, node_rank_stack_size());
    /* Not the spawning rank's CPU binding: any CPU of the machine (the
     * kernel keeps them within the process's cpuset). */
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &cpus);
    pthread_attr_setaffinity_np(&attr, sizeof cpus, &cpus);
    int rc = 0;
    for (int i = 0; i < w->size && rc == 0; i++) {
        if (w->ranks[i]->remote != NULL)
            continue;       /* it runs in another node process */
        struct spawned_start *start = malloc(sizeof *start);
        if (start == NULL) {
            rc = ENOMEM;
            break;
        }
        *start = (struct spawned_start){ w->ranks[i], rank_main, args[i] };
        world_retain(w);
        pthread_mutex_lock(&worlds.lock);
        worlds.spawned_running++;
        pthread_mutex_unlock(&worlds.lock);
        node_ranks_added(1);
        pthread_t thread;
        rc = strand_real_pthread_create(&thread, &attr, spawned_rank_thread, start);
        if (rc != 0) {
            free(start);
            pthread_mutex_lock(&worlds.lock);
            worlds.spawned_running--;
            pthread_mutex_unlock(&worlds.lock);
            node_ranks_added(-1);
            world_release(w);
        }
    }
    pthread_attr_destroy(&attr);
    return rc;
}

int world_wait_spawned(void)
{
    pthread_mutex_lock(&worlds.lock);
    while (worlds.spawned_running > 0)
        pthread_cond_wait(&worlds.spawned_gone, &worlds.lock);
    int status = worlds.spawned_status;
    worlds.ending = true;
    pthread_mutex_unlock(&worlds.lock);
    return status;
}

bool world_spawn_hold(void)
{
    pthread_mutex_lock(&worlds.lock);
    bool held = !worlds.ending;
    if (held)
        worlds.spawned_running++;
    pthread_mutex_unlock(&worlds.lock);
    return held;
}

void world_spawn_unhold(void)
{
    pthread_mutex_lock(&worlds.lock);
    if (--worlds.spawned_running == 0)
        pthread_cond_broadcast(&worlds.spawned_gone);
    pthread_mutex_unlock(&worlds.lock);
}
