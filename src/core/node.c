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
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../privatize/privatize.h"
#include "../comm/comm.h"
#include "../net/net.h"
#include "../pt2pt/pt2pt.h"
#include "../util/cpus.h"
#include "core.h"
#include "node_pid.h"

struct node strand_node = { .forked_by_rank = -2 };
extern char **environ;
__thread struct rank *strand_self __attribute__((tls_model("initial-exec")));

enum {
    UNLIMITED_STACK_SIZE = 8 << 20, /* the stack of a rank when ulimit -s is unlimited */
    MIN_STACK_SIZE = 64 << 10,
    STACK_GUARD = 1 << 20,          /* catches frames up to this size running off a stack */
    ALT_STACK_SIZE = 64 << 10,      /* for the crash report (signals.c) */
    DEFAULT_EAGER_LIMIT = 16 << 10,
    /* A core each: spin tens of microseconds. A sleeper pays membarrier
     * (light wakes, src/core/wait.c); with a few microseconds of spinning
     * a receiver slept between the messages of a 64 KiB stream
     * (doc/performance.md §12). */
    SPINS_DEDICATED = 20000,
    SPINS_OVERSUBSCRIBED = 1,   /* sharing cores: the awaited rank is not running; poll once */
    /* Sharing cores, a waiter usually waits for a rank that is runnable
     * but not running: yielding hands it the core without the two system
     * calls of a futex sleep and wake, and keeps the cores busy (a core
     * whose ranks all sleep goes idle, and waking it again is slow in a
     * VM). Collective waits gained most (a 64-rank barrier, doc/performance.md,
     * session 3). */
    YIELDS_OVERSUBSCRIBED = 32,
    /* Point-to-point waits yield only while a core has a few ranks: with
     * many, every rank that has just passed a message on spends its
     * yields while the next hops wait, and a token ring gets several
     * times slower (doc/performance.md §12b). */
    WAIT_YIELD_RANKS_PER_CORE = 4,
    /* With at most two ranks per core, a waiter back from a yield polls
     * this many times before it yields again (wait.c, "yield, then poll";
     * a poll is a few tens of nanoseconds). */
    WAIT_POLLS_AFTER_YIELD = 300,
    POLL_AFTER_YIELD_RANKS_PER_CORE = 2,
};

struct rank *strand_current_rank(void) { return strand_self; }
int strand_rank_world_number(struct rank *r) { return r->world_rank; }
void strand_node_launched_ranks(const int **ranks, int *count)
{
    *ranks = strand_node.local_ranks;
    *count = strand_node.nlocal;
}
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
    if (status != 0) {
        tell_launcher_abort();
        net_job_aborting(status, message);
    }
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

/* A rank's stack is as large as a process's main stack may grow: ulimit -s.
 * Only the pages a rank touches cost memory. */
static size_t default_stack_size(void)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_STACK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return UNLIMITED_STACK_SIZE;
    return limit.rlim_cur < MIN_STACK_SIZE ? MIN_STACK_SIZE : (size_t)limit.rlim_cur;
}

/* The variables that make a process a node process of a job: set by
 * mpiexec for the processes it starts, or by net_bootstrap from PMI. */
static const char *const job_variables[] = {
    "STRAND_NRANKS", "STRAND_NODES", "STRAND_NODE_INDEX", "STRAND_PPN", "STRAND_RANK_NODES",
    "STRAND_NET_PORT", "STRAND_NET_HOSTS", "STRAND_KV_ADDR", "STRAND_JOB_ID", "STRAND_LAUNCHER_PID",
    "STRAND_APPS", "STRAND_UNIVERSE_SIZE", "STRAND_BIND", "STRAND_PREFIX_OUTPUT", NODE_PID_VARIABLE,
};

static void job_environment_remove(void)
{
    for (size_t i = 0; i < sizeof job_variables / sizeof job_variables[0]; i++)
        unsetenv(job_variables[i]);
    /* STRAND_APP_<k>, one per MPMD app (src/core/apps.h) */
    for (bool removed = true; removed;) {
        removed = false;
        for (char **e = environ; *e != NULL && !removed; e++) {
            const char *eq = strchr(*e, '=');
            if (strncmp(*e, "STRAND_APP_", 11) == 0 && eq != NULL) {
                char name[64];
                snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
                unsetenv(name);
                removed = true;
            }
        }
    }
}

/* Main thread, first thing: whether this process is the node process the
 * job's environment was made for. A program a rank starts with fork and
 * exec inherits that environment and would start as a node process of the
 * same job, running every rank of it (HDF5's t_cache_image runs its serial
 * steps so); under a process-per-rank MPI it runs once, as a process of
 * its own. So a node process writes its pid into its environment, and a
 * process that finds another pid there removes the job's variables and
 * runs as a program started without mpiexec (a 1-rank job if it calls
 * MPI_Init). Returns true for such an inheritor. mpiexec removes the pid
 * from the environment of the node processes it starts. */
static bool node_environment_inherited(void)
{
    char self[24];
    snprintf(self, sizeof self, "%ld", (long)getpid());
    const char *owner = getenv(NODE_PID_VARIABLE);
    if (owner != NULL && strcmp(owner, self) != 0) {
        job_environment_remove();
        return true;
    }
    setenv(NODE_PID_VARIABLE, self, 1);
    return false;
}

static void config_from_environment(struct node_config *cfg)
{
    cfg->nranks = (int)env_long("STRAND_NRANKS", 1, 1);
    const char *bind = getenv("STRAND_BIND");
    cfg->bind_cores = bind != NULL && strcmp(bind, "cores") == 0;
    cfg->stack_size = (size_t)env_long("STRAND_STACK_SIZE", (long)default_stack_size(), MIN_STACK_SIZE);
    cfg->universe_size = (int)env_long("STRAND_UNIVERSE_SIZE", cfg->nranks, 1);
    cfg->eager_limit = (size_t)env_long("STRAND_EAGER_LIMIT", DEFAULT_EAGER_LIMIT, 0);
}

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int spin_limit_for(int nranks, int ncores)
{
    return nranks <= ncores ? SPINS_DEDICATED : SPINS_OVERSUBSCRIBED;
}

static int yield_limit_for(int nranks, int ncores)
{
    return nranks <= ncores ? 0 : YIELDS_OVERSUBSCRIBED;
}

static int wait_yield_limit_for(int nranks, int ncores)
{
    return nranks <= WAIT_YIELD_RANKS_PER_CORE * ncores ? yield_limit_for(nranks, ncores) : 0;
}

static int wait_polls_after_yield_for(int nranks, int ncores)
{
    return nranks > ncores && nranks <= POLL_AFTER_YIELD_RANKS_PER_CORE * ncores ? WAIT_POLLS_AFTER_YIELD : 0;
}

/* One count per CPU the system may have (wait.c); none when out of memory
 * (then no waiter polls after a yield). */
static void cpu_wanted_setup(struct node *n)
{
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    if (cpus < 1)
        return;
    n->cpu_wanted = aligned_alloc(_Alignof(struct cpu_wanted), (size_t)cpus * sizeof *n->cpu_wanted);
    if (n->cpu_wanted == NULL)
        return;
    memset(n->cpu_wanted, 0, (size_t)cpus * sizeof *n->cpu_wanted);
    n->ncpu_slots = (int)cpus;
}

/* A child that a rank creates with fork() is an ordinary process (DESIGN
 * §4 trap 9): its thread is no rank's any more, so that MPI calls fail
 * clearly instead of waiting for ranks that the child does not have. */
static void node_forked_child(void)
{
    strand_node.forked_by_rank = strand_self != NULL ? strand_self->world_rank : -1;
    strand_self = NULL;
}

const char *node_no_rank_reason(void)
{
    static char reason[160];
    if (strand_node.forked_by_rank == -2)
        return "MPI is not initialized (call MPI_Init first)";
    snprintf(reason, sizeof reason,
             "this process was created with fork() by %s %d; a forked child is an ordinary "
             "process and cannot use MPI",
             strand_node.forked_by_rank >= 0 ? "rank" : "the node process of",
             strand_node.forked_by_rank >= 0 ? strand_node.forked_by_rank : (int)getppid());
    return reason;
}

static int node_setup(void)
{
    struct node *n = &strand_node;
    pthread_atfork(NULL, NULL, node_forked_child);
    /* Its allowed CPUs: counting every online CPU made two ranks under
     * `taskset -c 0` spin for each other as if each had a core (~500 µs
     * per message instead of a few). STRAND_CORES overrides the count:
     * the tests run the lanes, which exist only while ranks do not
     * outnumber cores, at more ranks than the test machine has CPUs. */
    n->ncores = (int)env_long("STRAND_CORES", cpus_allowed(), 1);
    n->spin_limit = spin_limit_for(n->config.nranks, n->ncores);
    n->yield_limit = yield_limit_for(n->config.nranks, n->ncores);
    n->wait_yield_limit = wait_yield_limit_for(n->config.nranks, n->ncores);
    cpu_wanted_setup(n);
    if (n->ncpu_slots > 0)
        n->wait_polls_after_yield = wait_polls_after_yield_for(n->config.nranks, n->ncores);
    /* Only while every rank has a core: then sleeps are rare, while with
     * more ranks than cores every hand-off sleeps and membarrier's
     * inter-processor interrupts made a 64-rank halo 7x slower. Fixed
     * here, before any rank runs (both sides must agree); spawned ranks
     * that oversubscribe later make sleeps dearer, not incorrect. */
    n->light_wakes = n->config.nranks <= n->ncores && waiting_setup();
    atomic_store(&n->ranks_total, n->config.nranks);
    n->wtime_base = monotonic_seconds();
    /* In a job over several node processes, world_create_initial has the
     * network module make proxies of the other node processes' ranks. */
    int *all = malloc((size_t)n->config.nranks * sizeof *all);
    if (all == NULL)
        return MPI_ERR_NO_MEM;
    for (int r = 0; r < n->config.nranks; r++)
        all[r] = r;
    n->local_ranks = all;
    n->nlocal = n->config.nranks;
    n->initial_world = world_create_initial(n->config.nranks);
    if (n->initial_world == NULL)
        return MPI_ERR_NO_MEM;
    n->ranks = n->initial_world->ranks;
    net_run();
    return MPI_SUCCESS;
}

/* Spawned ranks (count > 0) or their end (count < 0): waiters spin only
 * while every rank can have a core, and yield only while they cannot. */
void node_ranks_added(int count)
{
    struct node *n = &strand_node;
    int total = atomic_fetch_add(&n->ranks_total, count) + count;
    /* a plain int read on every wait: a racing update only tunes spinning */
    __atomic_store_n(&n->spin_limit, spin_limit_for(total, n->ncores), __ATOMIC_RELAXED);
    __atomic_store_n(&n->yield_limit, yield_limit_for(total, n->ncores), __ATOMIC_RELAXED);
    __atomic_store_n(&n->wait_yield_limit, wait_yield_limit_for(total, n->ncores), __ATOMIC_RELAXED);
    if (n->ncpu_slots > 0)
        __atomic_store_n(&n->wait_polls_after_yield, wait_polls_after_yield_for(total, n->ncores),
                         __ATOMIC_RELAXED);
}

size_t node_rank_stack_size(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (strand_node.config.stack_size + page - 1) / page * page;
}

struct rank *rank_create(struct world *w, int world_rank)
{
    struct rank *r = aligned_alloc(_Alignof(struct rank), sizeof *r);
    if (r == NULL)
        return NULL;
    memset(r, 0, sizeof *r);
    r->world = w;
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
    for (int i = 0; i < n->nlocal; i++) {
        struct rank *r = n->ranks[n->local_ranks[i]];
        if (!atomic_load(&r->thread_ended) && r != strand_self)
            place_rank_thread(r, r->program_thread);
    }
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

/* "rank N" in gdb's info threads, top, perf and valgrind's reports.  Named
 * by the thread itself: valgrind sees only names set with prctl. */
static void name_rank_thread(int world_rank)
{
    char name[16]; /* the kernel's limit, with the terminating zero */
    snprintf(name, sizeof name, "rank %d", world_rank);
    pthread_setname_np(pthread_self(), name);
}

int rank_thread_run(struct rank *r, int (*rank_main)(void *arg), void *arg)
{
    strand_self = r;
    r->program_thread = pthread_self();
    name_rank_thread(r->world_rank);
    signals_rank_thread_start(r);
    r->exit_status = rank_main(arg);
    rank_waits_over(r);
    atomic_store(&r->thread_ended, true);
    if (r->mpi_state == RANK_MPI_NOT_STARTED && r->exit_status != 0 && r->world->size > 1) {
        /* As a process-per-rank MPI's launcher would: the other ranks may
         * be waiting in MPI_Init or for its messages, and its node process
         * may take no connection any more. */
        char line[256];
        snprintf(line, sizeof line,
                 "Strand MPI: rank %d%s ended (status %d) without calling MPI_Init; ending the job\n",
                 r->world_rank, r->world->id != 0 ? " of a spawned job" : "", r->exit_status);
        strand_job_abort(r->exit_status, line);
    }
    if (r->mpi_state == RANK_MPI_INITIALIZED) {
        char line[256];
        snprintf(line, sizeof line,
                 "Strand MPI: rank %d%s ended (status %d) without calling MPI_Finalize; ending the job\n",
                 r->world_rank, r->world->id != 0 ? " of a spawned job" : "", r->exit_status);
        strand_job_abort(r->exit_status != 0 ? r->exit_status : 1, line);
    }
    return r->exit_status;
}

static void *rank_thread_main(void *argp)
{
    struct rank_start *start = argp;
    struct rank *r = start->rank;
    if (strand_node.config.bind_cores && !launch.active)
        bind_rank_thread(r->world_rank, pthread_self());
    rank_thread_run(r, start->rank_main, start->arg);
    return NULL;
}

/* Rank stacks are the node's, not glibc's: glibc unmaps a joined thread's
 * stack (beyond a small cache), one TLB shoot-down per rank as a job ends
 * (a tenth of a 1024-rank hello's time); these go with the process.
 * One mapping per rank, from low to high addresses: an inaccessible guard
 * (larger than glibc's page, so that a large frame still lands in it), the
 * stack, then the signal stack for crash reports (next to the stack, with
 * the same protection: one kernel memory area, as before it was added). */
static int rank_stack_create(struct rank *r, size_t size)
{
    size_t total = STACK_GUARD + size + ALT_STACK_SIZE;
    char *p = mmap(NULL, total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    if (mprotect(p, STACK_GUARD, PROT_NONE) != 0) {
        munmap(p, total);
        return -1;
    }
    r->stack_guard = STACK_GUARD;
    r->stack_low = p + STACK_GUARD;
    r->stack_size = size;
    r->alt_stack = p + STACK_GUARD + size;
    r->alt_stack_size = ALT_STACK_SIZE;
    return 0;
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
    /* Under srun: PMI's job into the environment read next (not for an
     * inheritor: the PMI connection is its parent's). */
    if (!node_environment_inherited())
        net_bootstrap();
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
    size_t stack_size = node_rank_stack_size();
    launch_confine(n);
    signals_install();
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    atomic_store(&n->ranks_running, nranks);
    for (int i = 0; i < nranks; i++) {
        struct rank *r = n->ranks[n->local_ranks[i]];
        starts[i] = (struct rank_start){ r, rank_main, arg };
        if (rank_stack_create(r, stack_size) != 0)
            rank_thread_failed(n->local_ranks[i], n->config.nranks, errno);
        pthread_attr_setstack(&attr, r->stack_low, stack_size);
        int rc = strand_real_pthread_create(&threads[i], &attr, rank_thread_main, &starts[i]);
        if (rc != 0)
            rank_thread_failed(n->local_ranks[i], n->config.nranks, rc);
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
    int spawned = world_wait_spawned();
    net_end();
    return spawned > status ? spawned : status;
}

/* MPI_Init in a thread that is not a rank: a program not started through
 * Strand's loader (not built with mpicc). It can only be a 1-rank job. */
int node_start_singleton(void)
{
    struct node *n = &strand_node;
    if (n->forked_by_rank != -2)
        return MPI_ERR_OTHER;
    (void)node_environment_inherited();
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
