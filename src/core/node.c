/* The node process: configuration from the launcher, rank threads, their
 * placement, the job's exit status. */
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../comm/comm.h"
#include "../net/net.h"
#include "../pt2pt/pt2pt.h"
#include "core.h"

struct node strand_node;
__thread struct rank *strand_self __attribute__((tls_model("initial-exec")));

enum {
    DEFAULT_STACK_SIZE = 4 << 20,
    DEFAULT_EAGER_LIMIT = 16 << 10,
    SPINS_DEDICATED = 4000,     /* a core each: spin a few microseconds */
    SPINS_OVERSUBSCRIBED = 1,   /* sharing cores: the awaited rank is not running; poll once */
};

struct rank *strand_current_rank(void) { return strand_self; }
int strand_rank_world_number(struct rank *r) { return r->world_rank; }
void strand_thread_adopt_rank(struct rank *r) { strand_self = r; }

int strand_rank_is_main_thread(struct rank *r)
{
    return pthread_equal(r->program_thread, pthread_self());
}

/* In a job of several node processes, tells mpiexec that this exit is an
 * abort (end every node process now), not a node whose ranks all ended
 * with a non-zero status (let the others finish). Only to the mpiexec that
 * started us, never to some other parent. */
static void tell_launcher_abort(void)
{
    const char *launcher = getenv("STRAND_LAUNCHER_PID");
    if (launcher != NULL && strtol(launcher, NULL, 10) == (long)getppid())
        kill(getppid(), SIGUSR1);
}

_Noreturn void strand_job_abort(int status, const char *message)
{
    if (message != NULL)
        fputs(message, stderr);
    fflush(NULL);
    if (status != 0)
        tell_launcher_abort();
    /* Not exit(): the runtime exports its own exit() for ranks. */
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

static long env_long(const char *name, long fallback, long min)
{
    const char *text = getenv(name);
    if (text == NULL || *text == '\0')
        return fallback;
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || value < min) {
        fprintf(stderr, "Strand MPI: invalid %s=%s (expected an integer >= %ld)\n", name, text, min);
        strand_job_abort(1, NULL);
    }
    return value;
}

static void config_from_environment(struct node_config *cfg)
{
    cfg->nranks = (int)env_long("STRAND_NRANKS", 1, 1);
    const char *bind = getenv("STRAND_BIND");
    cfg->bind_cores = bind != NULL && strcmp(bind, "cores") == 0;
    cfg->stack_size = (size_t)env_long("STRAND_STACK_SIZE", DEFAULT_STACK_SIZE, 64 << 10);
    cfg->universe_size = (int)env_long("STRAND_UNIVERSE_SIZE", cfg->nranks, 1);
    cfg->eager_limit = (size_t)env_long("STRAND_EAGER_LIMIT", DEFAULT_EAGER_LIMIT, 0);
}

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int node_setup(void)
{
    struct node *n = &strand_node;
    n->ncores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (n->ncores < 1)
        n->ncores = 1;
    n->spin_limit = n->config.nranks <= n->ncores ? SPINS_DEDICATED : SPINS_OVERSUBSCRIBED;
    n->wtime_base = monotonic_seconds();
    n->ranks = calloc((size_t)n->config.nranks, sizeof *n->ranks);
    if (n->ranks == NULL)
        return MPI_ERR_NO_MEM;
    /* A job over several node processes: the others' ranks are proxies. */
    n->first_local = 0;
    n->nlocal = n->config.nranks;
    if (!n->singleton)
        net_start(n->config.nranks, n->ranks, &n->first_local, &n->nlocal);
    for (int i = n->first_local; i < n->first_local + n->nlocal; i++) {
        n->ranks[i] = rank_create(i);
        if (n->ranks[i] == NULL)
            return MPI_ERR_NO_MEM;
    }
    int rc = comm_world_create(n->config.nranks, n->ranks);
    if (rc == MPI_SUCCESS)
        net_run();
    return rc;
}

struct rank *rank_create(int world_rank)
{
    struct rank *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->world_rank = world_rank;
    r->mpi_state = RANK_MPI_NOT_STARTED;
    pt2pt_rank_init(r);
    if (comm_rank_handles_create(r) != MPI_SUCCESS) {
        free(r);
        return NULL;
    }
    return r;
}

void rank_destroy(struct rank *r)
{
    pt2pt_rank_destroy(r);
    comm_rank_handles_destroy(r);
    free(r);
}

/* Placement: rank i on core i mod ncores, through hwloc's view of the
 * machine so that SMT siblings are filled last. */
static hwloc_topology_t topology;

static void bind_rank_thread(int world_rank, pthread_t thread)
{
    int ncores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    if (ncores <= 0)
        return;
    hwloc_obj_t core = hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, (unsigned)(world_rank % ncores));
    if (core != NULL && core->cpuset != NULL)
        hwloc_set_thread_cpubind(topology, thread, core->cpuset, 0);
}

/* Launching on one CPU (strand_node_start_on_one_cpu, core.h). */
static struct {
    bool requested, active;
    cpu_set_t cpus;                 /* the process's CPUs before the launch */
    pthread_t main_thread;
    atomic_int ranks_loaded;
} launch;

void strand_node_start_on_one_cpu(void)
{
    launch.requested = true;
}

/* Threads inherit their creator's CPUs: confining the creating thread
 * confines every rank thread. */
static void launch_confine(const struct node *n)
{
    if (!launch.requested || n->nlocal <= n->ncores)
        return;
    if (sched_getaffinity(0, sizeof launch.cpus, &launch.cpus) != 0)
        return;
    int cpu = sched_getcpu();   /* where the launcher put us, else the first allowed CPU */
    if (cpu < 0 || !CPU_ISSET(cpu, &launch.cpus))
        for (cpu = 0; !CPU_ISSET(cpu, &launch.cpus); cpu++)
            ;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    launch.main_thread = pthread_self();
    launch.active = sched_setaffinity(0, sizeof one, &one) == 0;
}

static void place_rank_thread(const struct rank *r, pthread_t thread)
{
    if (strand_node.config.bind_cores)
        bind_rank_thread(r->world_rank, thread);
    else if (launch.active)
        pthread_setaffinity_np(thread, sizeof launch.cpus, &launch.cpus);
}

/* A rank that already ended has no thread to place; glibc would then apply
 * the call to the caller, which therefore places itself last. */
static void launch_spread(void)
{
    struct node *n = &strand_node;
    for (int i = n->first_local; i < n->first_local + n->nlocal; i++)
        if (!atomic_load(&n->ranks[i]->thread_ended) && n->ranks[i] != strand_self)
            place_rank_thread(n->ranks[i], n->ranks[i]->program_thread);
    pthread_setaffinity_np(launch.main_thread, sizeof launch.cpus, &launch.cpus);
    place_rank_thread(strand_self, pthread_self());
}

void strand_rank_loaded(void)
{
    if (launch.active && atomic_fetch_add(&launch.ranks_loaded, 1) + 1 == strand_node.nlocal)
        launch_spread();
}

struct rank_start {
    struct rank *rank;
    int (*rank_main)(void *arg);
    void *arg;
};

static void *rank_thread_main(void *argp)
{
    struct rank_start *start = argp;
    struct rank *r = start->rank;
    strand_self = r;
    r->program_thread = pthread_self();
    if (strand_node.config.bind_cores && !launch.active)
        bind_rank_thread(r->world_rank, pthread_self());
    r->exit_status = start->rank_main(start->arg);
    atomic_store(&r->thread_ended, true);
    if (r->mpi_state == RANK_MPI_INITIALIZED) {
        char line[256];
        snprintf(line, sizeof line,
                 "Strand MPI: rank %d ended (status %d) without calling MPI_Finalize; ending the job\n",
                 r->world_rank, r->exit_status);
        strand_job_abort(r->exit_status != 0 ? r->exit_status : 1, line);
    }
    return NULL;
}

/* Rank stacks are the node's, not glibc's: glibc unmaps a joined thread's
 * stack (beyond a small cache), one TLB shoot-down per rank as a job ends
 * (a tenth of a 1024-rank hello's time); these go with the process.  A
 * guard page below each, as glibc would place. */
static void *rank_stack_create(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (mprotect(p, page, PROT_NONE) != 0) {
        munmap(p, size + page);
        return NULL;
    }
    return p + page;
}

static _Noreturn void rank_thread_failed(int rank, int nranks, int error)
{
    char line[256];
    snprintf(line, sizeof line,
             "Strand MPI: cannot create the thread of rank %d of %d: %s "
             "(see doc/limits.md: ulimit -u, vm.max_map_count, --stack-size)\n",
             rank, nranks, strerror(error));
    strand_job_abort(1, line);
}

int strand_node_run(int (*rank_main)(void *arg), void *arg)
{
    struct node *n = &strand_node;
    config_from_environment(&n->config);
    if (node_setup() != MPI_SUCCESS)
        strand_job_abort(1, "Strand MPI: out of memory while starting the ranks\n");
    if (n->config.bind_cores && (hwloc_topology_init(&topology) != 0 || hwloc_topology_load(topology) != 0))
        n->config.bind_cores = false;

    int nranks = n->nlocal;
    struct rank_start *starts = calloc((size_t)nranks, sizeof *starts);
    pthread_t *threads = calloc((size_t)nranks, sizeof *threads);
    if (starts == NULL || threads == NULL)
        strand_job_abort(1, "Strand MPI: out of memory while starting the ranks\n");
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t stack_size = (n->config.stack_size + page - 1) / page * page;
    launch_confine(n);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    atomic_store(&n->ranks_running, nranks);
    for (int i = 0; i < nranks; i++) {
        starts[i] = (struct rank_start){ n->ranks[n->first_local + i], rank_main, arg };
        void *stack = rank_stack_create(stack_size);
        if (stack == NULL)
            rank_thread_failed(n->first_local + i, n->config.nranks, errno);
        pthread_attr_setstack(&attr, stack, stack_size);
        int rc = pthread_create(&threads[i], &attr, rank_thread_main, &starts[i]);
        if (rc != 0)
            rank_thread_failed(n->first_local + i, n->config.nranks, rc);
    }
    pthread_attr_destroy(&attr);
    int status = 0;
    for (int i = 0; i < nranks; i++) {
        pthread_join(threads[i], NULL);
        if (starts[i].rank->exit_status > status)
            status = starts[i].rank->exit_status;
    }
    free(threads);
    free(starts);
    net_end();
    return status;
}

/* MPI_Init in a thread that is not a rank: a program not started through
 * Strand's loader (not built with mpicc). It can only be a 1-rank job. */
int node_start_singleton(void)
{
    struct node *n = &strand_node;
    config_from_environment(&n->config);
    if (n->config.nranks > 1)
        strand_job_abort(1,
            "Strand MPI: this program was not built with Strand's mpicc, so its ranks cannot be "
            "started as threads; rebuild it with mpicc (it must be linked as a Strand program)\n");
    if (n->ranks != NULL)
        strand_job_abort(1, "Strand MPI: MPI_Init called from a thread that is not an MPI rank\n");
    n->singleton = true;
    if (node_setup() != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    strand_self = n->ranks[0];
    strand_self->program_thread = pthread_self();
    return MPI_SUCCESS;
}
