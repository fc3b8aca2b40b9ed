/* The spawn service: MPI_Comm_spawn onto other node processes of the job
 * (DESIGN §10). Every node process runs it: its network progress thread
 * receives the requests (WIRE_DPM frames), and a service thread of its
 * own (a runtime thread made on the first request) does the work, since
 * reading programs and starting rank threads must not hold up the
 * network.
 *
 * The root (in its rank thread, dpm_spawn_remote):
 *  1. sends each node process that hosts children DPM_SPAWN_PREPARE with
 *     the plan (the world's id and size, which node process runs which
 *     ranks of which command, the commands with their wdir, path and
 *     argv); each finds and opens its commands for its share and answers
 *     DPM_SPAWN_PREPARED with a context id proposal, or why it cannot;
 *  2. if one cannot, sends the others DPM_SPAWN_CANCEL: MPI_ERR_SPAWN
 *     with that node process's reason, nothing started anywhere;
 *  3. else agrees on the intercommunicator's context id (the largest
 *     proposal, parents' included; the children's MPI_COMM_WORLD takes the
 *     id after it), makes its own share's world, sends DPM_SPAWN_GO with
 *     the id and the parents' identities, and waits for every
 *     DPM_SPAWN_DONE: then the children's world exists in every node
 *     process that runs some of them;
 *  4. starts its own share's rank threads and sends DPM_SPAWN_START: a
 *     child's first message cannot arrive where its world does not exist
 *     yet.
 * A host makes the world (its ranks, proxies for the others), its side of
 * the intercommunicator and each child's parent handle at GO, and the
 * rank threads at START.
 * A node process that ended (its BYE) or that is ending fails the spawn
 * with MPI_ERR_SPAWN; one with a spawn under way does not end
 * (world_spawn_hold). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../privatize/privatize.h"
#include "../net/net.h"
#include "dpm.h"

/* ---- the plan on the wire */

enum { PLAN_BLOCK_BYTES = 16, PLAN_COMMAND_MIN_BYTES = 6, HAS_WDIR = 1, HAS_PATH = 2, HAS_ARGV = 4 };

static void plan_encode(const struct spawn_plan *p, struct bytes_out *out)
{
    bytes_put_u64(out, p->gid);
    bytes_put_u32(out, (uint32_t)p->size);
    bytes_put_u32(out, (uint32_t)p->nblocks);
    for (int b = 0; b < p->nblocks; b++) {
        bytes_put_u32(out, (uint32_t)p->blocks[b].node);
        bytes_put_u32(out, (uint32_t)p->blocks[b].first);
        bytes_put_u32(out, (uint32_t)p->blocks[b].count);
        bytes_put_u32(out, (uint32_t)p->blocks[b].command);
    }
    bytes_put_u32(out, (uint32_t)p->ncommands);
    for (int i = 0; i < p->ncommands; i++) {
        uint32_t flags = (p->wdirs[i] != NULL ? HAS_WDIR : 0) | (p->paths[i] != NULL ? HAS_PATH : 0) |
                         (p->argvs[i] != NULL ? HAS_ARGV : 0);
        bytes_put_str(out, p->commands[i]);
        bytes_put_u32(out, flags);
        if (flags & HAS_WDIR)
            bytes_put_str(out, p->wdirs[i]);
        if (flags & HAS_PATH)
            bytes_put_str(out, p->paths[i]);
        if (flags & HAS_ARGV) {
            uint32_t n = 0;
            while (p->argvs[i][n] != NULL)
                n++;
            bytes_put_u32(out, n);
            for (uint32_t k = 0; k < n; k++)
                bytes_put_str(out, p->argvs[i][k]);
        }
    }
}

/* A plan received by a host: the plan and the memory it points into. */
struct hosted {
    struct hosted *next;
    struct net_peer *root;
    uint64_t cookie;
    struct spawn_plan plan;
    struct world *world;            /* made at GO, started at START */
    char **strings;                 /* every string the plan points to */
    int nstrings;
    char ***argvs;                  /* per command */
};

static void hosted_free(struct hosted *h)
{
    for (int i = 0; i < h->nstrings; i++)
        free(h->strings[i]);
    for (int i = 0; i < h->plan.ncommands && h->argvs != NULL; i++)
        free(h->argvs[i]);
    free(h->strings);
    free(h->argvs);
    free(h->plan.blocks);
    free(h->plan.commands);
    free(h->plan.wdirs);
    free(h->plan.paths);
    free((void *)h->plan.argvs);
    free(h->plan.programs);
    free(h);
}

static char *hosted_string(struct hosted *h, struct bytes_in *in, int cap)
{
    if (h->nstrings >= cap) {
        in->bad = true;
        return NULL;
    }
    char *s = bytes_get_strdup(in);
    if (s != NULL)
        h->strings[h->nstrings++] = s;
    return s;
}

static bool blocks_read(struct bytes_in *in, struct spawn_plan *p, int nnodes)
{
    uint32_t n = bytes_get_u32(in);
    if (in->bad || n == 0 || n > bytes_left(in) / PLAN_BLOCK_BYTES || (p->blocks = calloc(n, sizeof *p->blocks)) == NULL)
        return false;
    p->nblocks = (int)n;
    int next = 0;
    for (uint32_t b = 0; b < n; b++) {
        struct spawn_block *k = &p->blocks[b];
        k->node = (int)bytes_get_u32(in);
        k->first = (int)bytes_get_u32(in);
        k->count = (int)bytes_get_u32(in);
        k->command = (int)bytes_get_u32(in);
        if (k->node < 0 || k->node >= nnodes || k->first != next || k->count <= 0 || k->count > p->size - next)
            return false;
        next += k->count;
    }
    return next == p->size;
}

static bool commands_read(struct bytes_in *in, struct hosted *h)
{
    struct spawn_plan *p = &h->plan;
    uint32_t n = bytes_get_u32(in);
    if (in->bad || n == 0 || n > bytes_left(in) / PLAN_COMMAND_MIN_BYTES)
        return false;
    p->ncommands = (int)n;
    int cap = (int)(bytes_left(in) / 2) + 1;       /* every string takes 2 bytes at least */
    p->commands = calloc(n, sizeof *p->commands);
    p->wdirs = calloc(n, sizeof *p->wdirs);
    p->paths = calloc(n, sizeof *p->paths);
    p->argvs = calloc(n, sizeof *p->argvs);
    p->programs = calloc(n, sizeof *p->programs);
    h->argvs = calloc(n, sizeof *h->argvs);
    h->strings = calloc((size_t)cap, sizeof *h->strings);
    if (p->commands == NULL || p->wdirs == NULL || p->paths == NULL || p->argvs == NULL || p->programs == NULL ||
        h->argvs == NULL || h->strings == NULL)
        return false;
    for (uint32_t i = 0; i < n && !in->bad; i++) {
        p->commands[i] = hosted_string(h, in, cap);
        uint32_t flags = bytes_get_u32(in);
        if (flags & HAS_WDIR)
            p->wdirs[i] = hosted_string(h, in, cap);
        if (flags & HAS_PATH)
            p->paths[i] = hosted_string(h, in, cap);
        if (flags & HAS_ARGV) {
            uint32_t nargs = bytes_get_u32(in);
            if (in->bad || nargs > bytes_left(in) / 2 || (h->argvs[i] = calloc(nargs + 1, sizeof(char *))) == NULL)
                return false;
            for (uint32_t k = 0; k < nargs && !in->bad; k++)
                h->argvs[i][k] = hosted_string(h, in, cap);
            p->argvs[i] = h->argvs[i];
        }
        if (p->commands[i] == NULL)
            return false;
    }
    for (int b = 0; b < p->nblocks; b++)
        if (p->blocks[b].command >= p->ncommands)
            return false;
    return !in->bad;
}

static struct hosted *plan_decode(const unsigned char *payload, size_t len)
{
    struct hosted *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    struct bytes_in in = { payload, len, 0, false };
    h->plan.gid = bytes_get_u64(&in);
    uint32_t size = bytes_get_u32(&in);
    h->plan.size = size > 0 && size <= INT32_MAX / 2 ? (int)size : 0;
    if (h->plan.size == 0 || !blocks_read(&in, &h->plan, net_active() ? net_job()->nnodes : 1) ||
        !commands_read(&in, h) || bytes_left(&in) != 0) {
        hosted_free(h);
        return NULL;
    }
    return h;
}

/* ---- making this node process's share */

static int self_node(void) { return net_active() ? net_job()->node : 0; }

static int share_of(const struct spawn_plan *p, int command)
{
    int n = 0;
    for (int b = 0; b < p->nblocks; b++)
        if (p->blocks[b].node == self_node() && (command < 0 || p->blocks[b].command == command))
            n += p->blocks[b].count;
    return n;
}

/* The plan's blocks with their node processes (NULL: this one). */
static struct world_block *world_blocks(const struct spawn_plan *p)
{
    struct world_block *w = calloc((size_t)p->nblocks, sizeof *w);
    for (int b = 0; w != NULL && b < p->nblocks; b++) {
        const struct spawn_block *k = &p->blocks[b];
        w[b] = (struct world_block){ k->first, k->count,
                                     k->node == self_node() ? NULL : &net_job()->peers[k->node] };
    }
    return w;
}

static void programs_release(const struct spawn_plan *p)
{
    for (int i = 0; i < p->ncommands; i++)
        if (p->programs[i] != NULL)
            privatize_program_release(p->programs[i], share_of(p, i));
}

/* This node process's children: their world (context id id + 2), their
 * side of the intercommunicator (id) with `parents`, their parent
 * handles; returned with the creator's reference. Out of memory ends the
 * job: other node processes may have made theirs already. */
static struct world *share_create(const struct spawn_plan *p, uint32_t id, struct rank **parents, int nparents)
{
    int *appnums = malloc((size_t)p->size * sizeof *appnums);
    struct world_block *blocks = world_blocks(p);
    if (appnums == NULL || blocks == NULL)
        strand_job_abort(1, "Strand MPI: out of memory while spawning\n");
    for (int b = 0; b < p->nblocks; b++)
        for (int r = p->blocks[b].first; r < p->blocks[b].first + p->blocks[b].count; r++)
            appnums[r] = p->blocks[b].command;
    context_id_seen_global(id + 2);
    struct world *w = world_create(p->gid, p->size, appnums, id + 2, blocks, p->nblocks);
    struct comm_core *core0 = w != NULL ? comm_shared_core_take(id, parents, nparents, w->ranks, p->size,
                                                                share_of(p, -1))
                                        : NULL;
    if (core0 == NULL)
        strand_job_abort(1, "Strand MPI: out of memory while spawning\n");
    for (int j = 0; j < p->size; j++) {
        if (w->ranks[j]->remote != NULL)
            continue;
        w->parents[j] = comm_handle_for(core0->peer, j, NULL);
        if (w->parents[j] == NULL)
            strand_job_abort(1, "Strand MPI: out of memory while spawning\n");
        snprintf(w->parents[j]->name, sizeof w->parents[j]->name, "MPI_COMM_PARENT"); /* MPI-2.2 10.3.2 */
    }
    free(appnums);
    free(blocks);
    return w;
}

/* Starts the rank threads of a share made by share_create (they own the
 * programs' shares from now on), dropping the creator's reference. */
static void share_run(const struct spawn_plan *p, struct world *w)
{
    void **args = calloc((size_t)p->size, sizeof *args);
    if (args == NULL)
        strand_job_abort(1, "Strand MPI: out of memory while spawning\n");
    for (int b = 0; b < p->nblocks; b++)
        for (int r = p->blocks[b].first; r < p->blocks[b].first + p->blocks[b].count; r++)
            args[r] = p->programs[p->blocks[b].command];
    if (world_start_ranks(w, privatize_spawned_rank_main, args) != 0)
        strand_job_abort(1, "Strand MPI: cannot create the threads of spawned ranks "
                            "(see doc/limits.md: ulimit -u, vm.max_map_count)\n");
    world_release(w);
    free(args);
}

/* ---- the root */

/* The root's wait for the answers of one phase. */
struct spawn_wait {
    struct spawn_wait *next;
    uint64_t cookie;
    struct rank *waiter;
    int ntargets;
    int *nodes;                     /* the node processes hosting children */
    bool *answered;                 /* this phase */
    int *status;
    uint32_t *proposal;
    atomic_int pending;             /* answers still to come this phase */
    char why[400];                  /* the first failure */
};

static struct {
    pthread_mutex_t lock;
    struct spawn_wait *list;
    uint64_t next_cookie;
} waits = { PTHREAD_MUTEX_INITIALIZER, NULL, 1 };

/* Under waits.lock: target `node` of `w` answered (or is lost). */
static void wait_answer(struct spawn_wait *w, int node, int status, uint32_t proposal, const char *why)
{
    for (int t = 0; t < w->ntargets; t++) {
        if (w->nodes[t] != node || w->answered[t])
            continue;
        w->answered[t] = true;
        w->status[t] = status;
        w->proposal[t] = proposal;
        if (status != MPI_SUCCESS && w->why[0] == '\0')
            snprintf(w->why, sizeof w->why, "node process %d: %.360s", node, why);
        struct rank *waiter = w->waiter;
        if (atomic_fetch_sub_explicit(&w->pending, 1, memory_order_acq_rel) == 1)
            rank_wake(waiter);
        return;
    }
}

static bool phase_done(void *arg)
{
    struct spawn_wait *w = arg;
    return atomic_load_explicit(&w->pending, memory_order_acquire) == 0;
}

/* Sends `kind` to every target (the payload copied for each) and waits
 * for their answers (none for CANCEL and START). */
static void phase_run(struct spawn_wait *w, uint32_t kind, uint64_t b, const struct bytes_out *payload)
{
    bool answers = kind != DPM_SPAWN_CANCEL && kind != DPM_SPAWN_START;
    pthread_mutex_lock(&waits.lock);
    atomic_store(&w->pending, answers ? w->ntargets : 0);
    for (int t = 0; t < w->ntargets; t++)
        w->answered[t] = !answers;
    pthread_mutex_unlock(&waits.lock);
    for (int t = 0; t < w->ntargets; t++) {
        if (kind == DPM_SPAWN_CANCEL && w->status[t] != MPI_SUCCESS)
            continue;       /* it forgot the spawn itself */
        unsigned char *copy = payload->len > 0 ? malloc(payload->len) : NULL;
        if (payload->len > 0 && copy == NULL)
            strand_job_abort(1, "Strand MPI: out of memory while spawning\n");
        if (payload->len > 0)
            memcpy(copy, payload->data, payload->len);
        if (net_dpm_send(&net_job()->peers[w->nodes[t]], kind, w->cookie, b, 0, copy, payload->len) != MPI_SUCCESS)
            strand_job_abort(1, "Strand MPI: out of memory while spawning\n");
    }
    if (answers)
        rank_wait_until(strand_self, phase_done, w);
}

static struct spawn_wait *wait_new(const struct spawn_plan *plan)
{
    struct spawn_wait *w = calloc(1, sizeof *w);
    int k = net_job()->nnodes;
    if (w == NULL || (w->nodes = calloc((size_t)k, sizeof *w->nodes)) == NULL ||
        (w->answered = calloc((size_t)k, sizeof *w->answered)) == NULL ||
        (w->status = calloc((size_t)k, sizeof *w->status)) == NULL ||
        (w->proposal = calloc((size_t)k, sizeof *w->proposal)) == NULL)
        strand_job_abort(1, "Strand MPI: out of memory while spawning\n");
    w->waiter = strand_self;
    for (int b = 0; b < plan->nblocks; b++) {
        int node = plan->blocks[b].node, t = 0;
        while (t < w->ntargets && w->nodes[t] != node)
            t++;
        if (node != self_node() && t == w->ntargets)
            w->nodes[w->ntargets++] = node;
    }
    pthread_mutex_lock(&waits.lock);
    w->cookie = waits.next_cookie++;
    w->next = waits.list;
    waits.list = w;
    pthread_mutex_unlock(&waits.lock);
    return w;
}

static void wait_free(struct spawn_wait *w)
{
    pthread_mutex_lock(&waits.lock);
    struct spawn_wait **link = &waits.list;
    while (*link != w)
        link = &(*link)->next;
    *link = w->next;
    pthread_mutex_unlock(&waits.lock);
    free(w->nodes);
    free(w->answered);
    free(w->status);
    free(w->proposal);
    free(w);
}

void dpm_spawn_remote(const struct spawn_plan *plan, const struct strand_comm *parent,
                      const struct dpm_root_context *ctx, struct dpm_outcome *o)
{
    struct spawn_wait *w = wait_new(plan);
    struct bytes_out request = { 0 }, parents = { 0 }, children = { 0 };
    plan_encode(plan, &request);
    identity_encode(parent->core->local_members, parent->core->local_size, &parents);
    if (request.failed || parents.failed) {
        o->error = MPI_ERR_SPAWN;
        snprintf(o->message, sizeof o->message, "out of memory, or an argument longer than 65535 bytes");
        programs_release(plan);
        goto done;
    }
    phase_run(w, DPM_SPAWN_PREPARE, 0, &request);
    uint32_t id = ctx->proposal;
    for (int t = 0; t < w->ntargets; t++) {
        if (w->status[t] != MPI_SUCCESS)
            o->error = MPI_ERR_SPAWN;
        else if (w->proposal[t] > id)
            id = w->proposal[t];
    }
    if (o->error != MPI_SUCCESS) {
        snprintf(o->message, sizeof o->message, "%s", w->why);
        phase_run(w, DPM_SPAWN_CANCEL, 0, &children);
        programs_release(plan);
        goto done;
    }
    struct world *mine = share_of(plan, -1) > 0
                             ? share_create(plan, id, parent->core->local_members, parent->core->local_size)
                             : NULL;
    phase_run(w, DPM_SPAWN_GO, id, &parents);
    for (int t = 0; t < w->ntargets; t++)
        if (w->status[t] != MPI_SUCCESS) {
            char line[512];
            snprintf(line, sizeof line, "Strand MPI: a spawn failed after some children were made (%s); ending the job\n",
                     w->why);
            strand_job_abort(1, line);
        }
    if (mine != NULL)
        share_run(plan, mine);
    phase_run(w, DPM_SPAWN_START, 0, &children);
    struct world_block *blocks = world_blocks(plan);
    if (blocks == NULL)
        strand_job_abort(1, "Strand MPI: out of memory while spawning\n");
    identity_encode_layout(plan->gid, plan->size, blocks, plan->nblocks, &children);
    free(blocks);
    dpm_outcome_describe(o, id, 0, children.data, children.len);
done:
    free(request.data);
    free(parents.data);
    free(children.data);
    wait_free(w);
}

/* ---- the hosts: the service thread */

struct service_job {
    struct service_job *next;
    struct net_peer *from;
    uint32_t kind;
    uint64_t cookie, b;
    unsigned char *payload;
    size_t len;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t more;
    struct service_job *head, **tail;
    bool started;
    struct hosted *prepared;        /* service thread only */
} service = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, &service.head, false, NULL };

static void answer(struct net_peer *root, uint32_t kind, uint64_t cookie, int status, uint64_t c, const char *why)
{
    size_t len = why != NULL ? strlen(why) : 0;
    char *copy = len > 0 ? strdup(why) : NULL;
    if (net_dpm_send(root, kind, cookie, (uint64_t)status, c, copy, copy != NULL ? len : 0) != MPI_SUCCESS)
        strand_job_abort(1, "Strand MPI: out of memory in the spawn service\n");
}

static void serve_prepare(struct service_job *j)
{
    struct hosted *h = plan_decode(j->payload, j->len);
    char why[1024] = "";
    if (h == NULL) {
        answer(j->from, DPM_SPAWN_PREPARED, j->cookie, MPI_ERR_SPAWN, 0, "a malformed spawn request");
        world_spawn_unhold();
        return;
    }
    int failed = -1;
    for (int i = 0; i < h->plan.ncommands && failed < 0; i++)
        if (share_of(&h->plan, i) > 0 &&
            dpm_command_open(h->plan.commands[i], h->plan.wdirs[i], h->plan.paths[i], h->plan.argvs[i],
                             share_of(&h->plan, i), &h->plan.programs[i], why, sizeof why) != 0)
            failed = i;
    if (failed >= 0) {
        char msg[1200];
        snprintf(msg, sizeof msg, "cannot spawn %.100s: %s", h->plan.commands[failed], why);
        programs_release(&h->plan);
        hosted_free(h);
        answer(j->from, DPM_SPAWN_PREPARED, j->cookie, MPI_ERR_SPAWN, 0, msg);
        world_spawn_unhold();
        return;
    }
    h->root = j->from;
    h->cookie = j->cookie;
    h->next = service.prepared;
    service.prepared = h;
    answer(j->from, DPM_SPAWN_PREPARED, j->cookie, MPI_SUCCESS, context_id_propose_global(), NULL);
}

static struct hosted *prepared_take(struct net_peer *root, uint64_t cookie)
{
    for (struct hosted **link = &service.prepared; *link != NULL; link = &(*link)->next)
        if ((*link)->root == root && (*link)->cookie == cookie) {
            struct hosted *h = *link;
            *link = h->next;
            return h;
        }
    return NULL;
}

static void serve_go(struct service_job *j)
{
    struct hosted *h = prepared_take(j->from, j->cookie);
    struct rank **parents = NULL;
    int nparents = 0;
    struct bytes_in in = { j->payload, j->len, 0, false };
    if (h == NULL || identity_decode(&in, &parents, &nparents) != MPI_SUCCESS)
        strand_job_abort(1, "Strand MPI: a spawn request went wrong between node processes; ending the job\n");
    h->world = share_create(&h->plan, (uint32_t)j->b, parents, nparents);
    identity_release(parents, nparents);
    h->next = service.prepared;
    service.prepared = h;
    answer(j->from, DPM_SPAWN_DONE, j->cookie, MPI_SUCCESS, 0, NULL);
}

static void serve_start(struct service_job *j)
{
    struct hosted *h = prepared_take(j->from, j->cookie);
    if (h == NULL || h->world == NULL)
        strand_job_abort(1, "Strand MPI: a spawn request went wrong between node processes; ending the job\n");
    share_run(&h->plan, h->world);
    hosted_free(h);
    world_spawn_unhold();       /* its rank threads hold the process now */
}

static void serve_cancel(struct service_job *j)
{
    struct hosted *h = prepared_take(j->from, j->cookie);
    if (h == NULL)
        return;
    programs_release(&h->plan);
    hosted_free(h);
    world_spawn_unhold();
}

static void *service_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&service.lock);
        while (service.head == NULL)
            pthread_cond_wait(&service.more, &service.lock);
        struct service_job *j = service.head;
        service.head = j->next;
        if (service.head == NULL)
            service.tail = &service.head;
        pthread_mutex_unlock(&service.lock);
        if (j->kind == DPM_SPAWN_PREPARE)
            serve_prepare(j);
        else if (j->kind == DPM_SPAWN_GO)
            serve_go(j);
        else if (j->kind == DPM_SPAWN_START)
            serve_start(j);
        else
            serve_cancel(j);
        free(j->payload);
        free(j);
    }
    return NULL;
}

/* Progress thread: hands a request to the service thread (made now the
 * first time: a runtime thread, every signal blocked). */
static void service_post(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload)
{
    struct service_job *j = calloc(1, sizeof *j);
    if (j == NULL || (f->payload_len > 0 && (j->payload = malloc(f->payload_len)) == NULL))
        strand_job_abort(1, "Strand MPI: out of memory in the spawn service\n");
    *j = (struct service_job){ .from = from, .kind = f->context_id, .cookie = f->a, .b = f->b, .payload = j->payload,
                               .len = f->payload_len };
    if (f->payload_len > 0)
        memcpy(j->payload, payload, f->payload_len);
    pthread_mutex_lock(&service.lock);
    if (!service.started) {
        pthread_t thread;
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        if (strand_real_pthread_create(&thread, NULL, service_main, NULL) != 0)
            strand_job_abort(1, "Strand MPI: cannot start the spawn service thread\n");
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_detach(thread);
        service.started = true;
    }
    *service.tail = j;
    service.tail = &j->next;
    pthread_cond_signal(&service.more);
    pthread_mutex_unlock(&service.lock);
}

/* ---- frames (the progress thread) */

void dpm_spawn_frame(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload)
{
    if (f->context_id == DPM_SPAWN_PREPARED || f->context_id == DPM_SPAWN_DONE) {
        char why[400];
        snprintf(why, sizeof why, "%.*s", (int)(f->payload_len < sizeof why ? f->payload_len : sizeof why - 1),
                 (const char *)payload);
        pthread_mutex_lock(&waits.lock);
        for (struct spawn_wait *w = waits.list; w != NULL; w = w->next)
            if (w->cookie == f->a && !from->foreign)
                wait_answer(w, from->job_node, (int)f->b, (uint32_t)f->c, why);
        pthread_mutex_unlock(&waits.lock);
        return;
    }
    if (from->foreign) {
        /* Spawns stay within a job: another job's node process is not a root here. */
        answer(from, DPM_SPAWN_PREPARED, f->a, MPI_ERR_SPAWN, 0, "spawn requests come from the node's own job only");
        return;
    }
    if (f->context_id == DPM_SPAWN_PREPARE && !world_spawn_hold()) {
        answer(from, DPM_SPAWN_PREPARED, f->a, MPI_ERR_SPAWN, 0, "the node process is ending (its ranks ended)");
        return;
    }
    service_post(from, f, payload);
}

void dpm_spawn_peer_lost(struct net_peer *peer, const char *what)
{
    if (peer->foreign)
        return;
    pthread_mutex_lock(&waits.lock);
    for (struct spawn_wait *w = waits.list; w != NULL; w = w->next)
        wait_answer(w, peer->job_node, MPI_ERR_SPAWN, 0, what);
    pthread_mutex_unlock(&waits.lock);
}
