/* Worlds: the jobs a node process hosts (core.h). The initial world is
 * made at start; MPI_Comm_spawn (src/dpm) adds worlds whose ranks run in
 * detached threads, accounted here so that the process exits only after
 * them and with the highest status of all. */
#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../privatize/privatize.h"
#include "../comm/comm.h"
#include "../net/net.h"
#include "apps.h"
#include "core.h"

static struct {
    pthread_mutex_t lock;
    pthread_cond_t spawned_gone;    /* signalled when `spawned_running` drops to 0 */
    struct world *list;             /* live worlds */
    uint32_t next_id;               /* of the next spawned world */
    int next_uid;
    int spawned_running;            /* spawned rank threads not yet ended */
    int spawned_status;             /* highest exit status among ended spawned ranks */
} worlds = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 1, 0, 0, 0 };

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

/* Ranks, then the world communicator; the registry last, so that a world
 * found by world_lookup is complete. */
static struct world *world_make(uint32_t id, int size, const int *appnums)
{
    struct world *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->size = size;
    w->ranks = calloc((size_t)size, sizeof *w->ranks);
    w->appnums = calloc((size_t)size, sizeof *w->appnums);
    w->parents = calloc((size_t)size, sizeof *w->parents);
    if (w->ranks == NULL || w->appnums == NULL || w->parents == NULL) {
        world_free(w);
        return NULL;
    }
    pthread_mutex_lock(&worlds.lock);
    w->id = id != 0 ? worlds.next_id++ : 0;
    w->uid_base = worlds.next_uid;
    worlds.next_uid += size;
    pthread_mutex_unlock(&worlds.lock);
    /* The launched world of a job over several node processes: the
     * network module puts proxies for the other node processes' ranks. */
    if (id == 0 && !strand_node.singleton)
        net_start(size, w->ranks, &strand_node.first_local, &strand_node.nlocal);
    if (id == 0)
        launched_apps_read(size);
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
    w->context_id = w->id == 0 ? COMM_CONTEXT_WORLD : context_id_alloc();
    if (w->context_id == CONTEXT_ID_NONE || comm_world_create(w) != MPI_SUCCESS)
        goto fail;
    pthread_mutex_lock(&worlds.lock);
    w->next = worlds.list;
    worlds.list = w;
    pthread_mutex_unlock(&worlds.lock);
    return w;
fail:
    comm_world_destroy(w);
    for (int i = 0; i < size && w->ranks[i] != NULL; i++)
        rank_destroy(w->ranks[i]);
    if (w->id != 0 && w->context_id != CONTEXT_ID_NONE && w->context_id != 0)
        context_id_free(w->context_id);
    world_free(w);
    return NULL;
}

struct world *world_create(int size, const int *appnums)
{
    return world_make(1, size, appnums);
}

struct world *world_create_initial(int size)
{
    return world_make(0, size, NULL);
}

struct world *world_lookup(uint32_t id)
{
    pthread_mutex_lock(&worlds.lock);
    struct world *w = worlds.list;
    while (w != NULL && w->id != id)
        w = w->next;
    pthread_mutex_unlock(&worlds.lock);
    return w;
}

void world_retain(struct world *w)
{
    if (w->id != 0)
        atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
}

void world_destroy(struct world *w)
{
    pthread_mutex_lock(&worlds.lock);
    struct world **p = &worlds.list;
    while (*p != w)
        p = &(*p)->next;
    *p = w->next;
    pthread_mutex_unlock(&worlds.lock);
    /* The ranks' handles go first (they hold the world core), then the
     * world's own reference; the context id is the world's. */
    for (int i = 0; i < w->size; i++)
        rank_destroy(w->ranks[i]);
    comm_world_destroy(w);
    if (w->id != 0)
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
    pthread_mutex_unlock(&worlds.lock);
    return status;
}
