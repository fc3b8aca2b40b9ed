/* The node process and its rank threads: who is running, how a rank waits,
 * how errors end a job. Every other subsystem reaches the calling rank
 * through `strand_self`. */
#ifndef STRAND_CORE_H
#define STRAND_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpi.h"
#include "../pt2pt/pt2pt_state.h"
#include "../util/registry.h"

#define STRAND_EXPORT __attribute__((visibility("default")))
#define STRAND_LIKELY(x) __builtin_expect(!!(x), 1)
#define STRAND_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* MPI_ functions are weak aliases of their PMPI_ definitions, so a profiling
 * library can interpose MPI_ names. Use after the PMPI_ definition. */
#define STRAND_MPI_ALIAS(name) \
    extern __typeof__(P##name) name __attribute__((weak, alias("P" #name), visibility("default")))

struct net_peer;

enum rank_mpi_state { RANK_MPI_NOT_STARTED, RANK_MPI_INITIALIZED, RANK_MPI_FINALIZED };

/* A rank sleeps on `seq` when it has nothing to do; whoever changes
 * something it may be waiting for calls rank_wake(). */
struct rank_waiter {
    atomic_uint seq;
    atomic_int sleepers;
    /* Set by a sleeper before it counts itself in `sleepers`: the one
     * completion it needs before its wait can end (rank_wait_until_picked),
     * or NULL for any.  rank_wake_for skips the wake for the others. */
    _Atomic(const void *) awaited;
    /* Two ranks per core (wait.c, "yield, then poll"): the CPU + 1 whose
     * run queue the rank joined when it last yielded in a wait, 0 while it
     * is not yielding; and the CPU + 1 whose `cpu_wanted` count a waker
     * raised for it since (rank_want_cpu), 0 for none. */
    atomic_int yielded_on;
    atomic_int wanted_on;
    /* The CPU + 1 the rank last left a wait on, counted in `cpu_wanted`
     * until its next wait (the rank's thread only; 0 when not counted). */
    atomic_int busy_on;
};

struct world;

struct rank {
    int world_rank;                 /* rank in its own world's MPI_COMM_WORLD */
    struct world *world;            /* the job it belongs to (several after MPI_Comm_spawn) */
    enum rank_mpi_state mpi_state;
    int thread_level;
    pthread_t init_thread;          /* thread that called MPI_Init[_thread] */
    pthread_t program_thread;
    int exit_status;
    atomic_bool thread_ended;       /* its program thread returned from the rank's main */
    /* NULL for a rank of this node process; for a rank of another node
     * process, this struct is a proxy (no thread, no handles) and `remote`
     * is its node process (src/net/net.h). Written once at start, so the
     * sender's one branch reads a line every sender keeps shared. */
    struct net_peer *remote;
    /* Every sender reads `waiter.sleepers` after delivering (rank_wake);
     * the rank writes it only when it goes to sleep, so it has a line of
     * its own, apart from the mailbox line the lock holder writes. */
    _Alignas(64) struct rank_waiter waiter;
    _Alignas(64) struct pt2pt_rank_state pt2pt; /* mailbox, request pool, attached buffer, lanes */
    struct strand_comm *comm_world; /* this rank's handles of the predefined comms */
    struct strand_comm *comm_self;
    /* its program thread's stack (from the node, so a crash report can
     * tell an overflow): usable bytes from stack_low up, an inaccessible
     * guard of stack_guard bytes below, the signal stack above */
    char *stack_low;
    size_t stack_size, stack_guard;
    void *alt_stack;
    size_t alt_stack_size;
};

_Static_assert(offsetof(struct rank, pt2pt.mailbox.free_envelopes) + sizeof(struct envelope *) -
                       offsetof(struct rank, pt2pt.mailbox) <= 64 &&
                   offsetof(struct rank, pt2pt.mailbox.nlanes) - offsetof(struct rank, pt2pt.mailbox) >= 64,
               "the mailbox's lock, queues and free envelopes share one cache line, the lanes are on the next");
_Static_assert(offsetof(struct rank, pt2pt) - offsetof(struct rank, waiter) >= 64,
               "the waiter, read by every sender, is not on the mailbox's line");

struct node_config {
    int nranks;
    bool bind_cores;
    size_t stack_size;
    int universe_size;
    size_t eager_limit;
};

struct node {
    struct node_config config;
    struct rank **ranks;            /* the initial world's, by world rank (proxies for
                                     * ranks of other node processes) */
    const int *local_ranks;         /* the initial world's ranks this node process runs,
                                     * ascending, not always consecutive (srun -m cyclic) */
    int nlocal;
    struct world *initial_world;
    int ncores;
    int spin_limit;                 /* polls before a waiter yields or sleeps */
    int yield_limit;                /* collective waits: then polls each followed by sched_yield */
    int wait_yield_limit;           /* the same for rank_wait_until (few ranks per core only) */
    int wait_polls_after_yield;     /* rank_wait_until: polls after each yield (two ranks per core) */
    /* Per CPU (ncpu_slots of them, a line each): ranks that yielded in a
     * wait on that CPU and were given work since (wait.c). */
    struct cpu_wanted *cpu_wanted;
    int ncpu_slots;
    /* Sleepers issue a process-wide barrier (membarrier) after announcing
     * themselves, so rank_wake_light needs no fence (wait.c). Set once
     * before any rank runs, when ranks do not outnumber cores (node.c). */
    bool light_wakes;
    double wtime_base;
    bool singleton;                 /* MPI_Init in a plain executable: caller is rank 0 */
    atomic_int ranks_running;
    atomic_int ranks_total;         /* initial and spawned ranks alive */
    /* Some rank of this process's tables lives in another node process
     * (a proxy exists): communicators may span node processes. Set once,
     * before the first proxy is published, never cleared. */
    bool has_proxies;
    /* In a child a rank (or a node thread: -1) created with fork(): an
     * ordinary process, which cannot use MPI.  -2 in the node process. */
    int forked_by_rank;
};

/* signals.c: crash and stack overflow reports naming the rank */
void signals_install(void);
void signals_rank_thread_start(const struct rank *r);

/* Why a thread without a rank cannot call MPI (error_check_initialized, MPI_Init). */
const char *node_no_rank_reason(void);

extern struct node strand_node;

/* A world is one MPI job: the initial one (started by mpiexec, id 0) or
 * one started by MPI_Comm_spawn. Each has its own MPI_COMM_WORLD, rank
 * numbering and MPI_APPNUM values; context ids and the name service are
 * shared by all worlds of the node process. A world may span node
 * processes: its ranks in other node processes are proxies (`remote`
 * set). A *foreign* world is one no rank of which runs here, known only
 * because some of its ranks were named to this process (a connection, a
 * spawn, an intercommunicator): it holds their proxies and nothing else.
 *
 * Identity: `gid` names the world in every process (the launched world's
 * is its job id, a spawned world's is drawn at random by the spawning
 * root), `id` only in this one. A rank is (gid, world rank) everywhere.
 *
 * Lifetime: the initial world lives as long as the process. Any other
 * world holds one reference per rank thread still running, one per
 * communicator (other than its predefined ones) with members in it
 * (construct.c) and one per holder of a resolved identity list
 * (identity.c); the last release destroys its ranks. Thread safety: the
 * registry is read without a lock (util/registry.h); a world's fields are
 * written once before it is registered, except a foreign world's rank
 * slots, filled by compare-and-swap as its ranks are named. */
struct world {
    uint32_t id;                    /* 0: the initial world; never reused */
    uint64_t gid;                   /* its id in every process */
    bool foreign;                   /* no rank of it runs here */
    bool owns_context_id;           /* context_id is this process's to recycle */
    int size;
    int uid_base;                   /* rank_uid() of its rank 0 */
    struct rank **ranks;            /* by world rank (foreign: NULL until named) */
    struct comm_core *core;         /* its MPI_COMM_WORLD core (one reference held; none if foreign) */
    uint32_t context_id;            /* of that core: the initial world's is 0, others allocated or agreed */
    int *appnums;                   /* MPI_APPNUM of each rank */
    struct strand_comm **parents;   /* each rank's MPI_Comm_get_parent handle, or NULL */
    atomic_int refs;
    struct registry_node reg;       /* key (gid, 0) */
};

/* A number unique among all ranks the node process ever hosted. */
static inline int rank_uid(const struct rank *r) { return r->world->uid_base + r->world_rank; }

/* Where a block of a new world's ranks runs: `count` ranks from `first`,
 * in `peer` (NULL: this node process). */
struct world_block {
    int first, count;
    struct net_peer *peer;
};

/* world.c. world_create makes a spawned world: its ranks (proxies for the
 * blocks of other node processes; all local when `blocks` is NULL), its
 * world communicator with context id `context_id` (CONTEXT_ID_NONE: a
 * fresh id of this process, for a world all here) and registers it under
 * `gid`; the caller holds one reference (and adds those of the rank
 * threads with world_start_ranks). */
struct world *world_create(uint64_t gid, int size, const int *appnums, uint32_t context_id,
                           const struct world_block *blocks, int nblocks);
struct world *world_create_initial(int size);
/* Ends a world and its ranks now: for the initial world of unit tests. */
void world_destroy(struct world *w);
/* Inside registry_read_lock: the world `gid` and a reference to it (NULL
 * if none, or if it is being destroyed). */
struct world *world_find_retain(uint64_t gid);
/* Inside registry_read_lock: rank `rank` of world `gid` when it runs in
 * this process, else NULL (valid until registry_read_unlock). */
struct rank *world_rank_here(uint64_t gid, int rank);
/* The foreign world `gid` of `size` ranks, made on first use; retained.
 * NULL when out of memory, or when `gid` is a world of another size. */
struct world *world_foreign_get(uint64_t gid, int size);
/* Rank `rank` of `w` (retained by the caller): the one it has, or a new
 * proxy living in `peer` for a foreign world. NULL when it has none and
 * cannot make one. */
struct rank *world_rank_get(struct world *w, int rank, struct net_peer *peer);
void world_retain(struct world *w);
void world_release(struct world *w);
/* Starts one detached thread per local rank of a spawned world, running
 * rank_main(args[i]) (args by world rank); each holds a world reference
 * until it ends. The job's exit status includes theirs; the process waits
 * for them before exiting. Returns 0 or an errno value (threads already
 * started keep running). */
int world_start_ranks(struct world *w, int (*rank_main)(void *arg), void *const *args);
/* Called by strand_node_run after the initial ranks ended: waits for the
 * spawned ranks and for spawns being prepared here (world_spawn_hold),
 * returns the highest status among the spawned ranks. From then on the
 * node process is ending: world_spawn_hold fails. */
int world_wait_spawned(void);
/* The spawn service: a spawn onto this node process is under way (from
 * its request until its ranks run, or it is called off); the process does
 * not end meanwhile. False when the process is ending already. */
bool world_spawn_hold(void);
void world_spawn_unhold(void);

/* Rank identities across node processes (identity.c): a member list as
 * bytes any process can resolve to its own `struct rank *`s, proxies
 * made as needed (each rank: its world's gid and size, its rank, and the
 * node process it runs in, with that process's contact address). */
struct bytes_out;
struct bytes_in;
/* Appends the identities of members[0..n) to `out` (out->failed when out
 * of memory). */
void identity_encode(struct rank *const *members, int n, struct bytes_out *out);
/* Resolves a list made by identity_encode: *members gets a malloc'd array
 * of *n ranks, whose worlds are retained until identity_release. Returns
 * MPI_SUCCESS, or an error class (malformed input: MPI_ERR_INTERN; a rank
 * that should be here but is not: MPI_ERR_OTHER; out of memory). */
int identity_decode(struct bytes_in *in, struct rank ***members, int *n);
void identity_release(struct rank **members, int n);
/* The identities of all ranks of the world `gid` of `size` ranks laid out
 * in `blocks` (peer NULL: this process), appended to `out`. */
void identity_encode_layout(uint64_t gid, int size, const struct world_block *blocks, int nblocks,
                            struct bytes_out *out);
/* The order of two ranks that is the same in every process. */
int identity_compare(const struct rank *a, const struct rank *b);
/* Initial-exec: one %fs-relative load instead of a __tls_get_addr call on
 * every MPI entry (libmpi is loaded with the program, or, if dlopened,
 * fits glibc's static TLS reserve with one pointer). */
extern __thread struct rank *strand_self __attribute__((tls_model("initial-exec")));

/* Interface used by privatize/ (the program loader). */
STRAND_EXPORT struct rank *strand_current_rank(void);
STRAND_EXPORT int strand_rank_world_number(struct rank *r);
STRAND_EXPORT void strand_node_launched_ranks(const int **ranks, int *count);
STRAND_EXPORT void strand_thread_adopt_rank(struct rank *r);
STRAND_EXPORT int strand_rank_is_main_thread(struct rank *r);
STRAND_EXPORT int strand_node_run(int (*rank_main)(void *arg), void *arg);
/* For a loader whose ranks begin by loading a program copy, one at a time
 * under the dynamic loader's lock; call before strand_node_run. With more
 * ranks than cores, every rank thread then starts on one CPU (the loads are
 * serial anyway, and page-table shoot-downs and lock hand-offs between CPUs
 * doubled their cost), and the threads are spread over the process's CPUs
 * (or bound, with --bind cores) once every rank called strand_rank_loaded. */
STRAND_EXPORT void strand_node_start_on_one_cpu(void);
STRAND_EXPORT void strand_rank_loaded(void);
STRAND_EXPORT _Noreturn void strand_job_abort(int status, const char *message);

/* Waiting: spin briefly (or, with more ranks than cores, yield the core a
 * few times), then sleep until woken. `done` is polled. */
typedef bool (*rank_wait_cond)(void *arg);
void rank_wait_until(struct rank *self, rank_wait_cond done, void *arg);

/* The same, for a wait that can end only once each of several completions
 * happened (MPI_Waitall): `pick` names one still needed (its address, as
 * completers pass it to rank_wake_for), or NULL when it cannot tell.
 * While the rank sleeps, completers of other ones do not wake it, so a
 * wait for N messages costs about one wake instead of N (with more ranks
 * than cores each wake was a switch to the waiter and back).  `pick` runs
 * in the waiting thread, before the rank counts itself asleep and again
 * after; each call must return a completion not yet done, or NULL.  Ranks at
 * MPI_THREAD_MULTIPLE wait as with rank_wait_until: several of their
 * threads may sleep, each for its own condition. */
typedef const void *(*rank_wait_pick)(void *arg);
void rank_wait_until_picked(struct rank *self, rank_wait_cond done, rank_wait_pick pick, void *arg);
/* A nonblocking test or probe found nothing (MPI_Test*, MPI_Iprobe,
 * MPI_Request_get_status, MPI_Win_test): with more ranks than cores, the
 * rank yields its core (wait.c). */
void rank_poll_missed(struct rank *self);
/* When a rank's program returned: gives back what its waits counted on a
 * CPU (wait.c, "yield, then poll"). The rank's thread. */
void rank_waits_over(struct rank *self);
void rank_wake_slow(struct rank *r);

struct cpu_wanted {
    _Alignas(64) atomic_int count;
};

/* `r`, which yielded in a wait on CPU `cpu_plus_1` - 1, has work now:
 * counts it there once, so that a rank polling on that CPU yields to it. */
void rank_want_cpu(struct rank *r, int cpu_plus_1);

/* Every waker, after its store: a rank yielding in a wait (two ranks per
 * core) is counted on its CPU. A hint: a mark missed or stale costs at most
 * one round of polls (wait.c). */
static inline void rank_note_work(struct rank *r)
{
    int cpu_plus_1 = atomic_load_explicit(&r->waiter.yielded_on, memory_order_relaxed);
    if (STRAND_UNLIKELY(cpu_plus_1 != 0))
        rank_want_cpu(r, cpu_plus_1);
}

static inline void rank_wake(struct rank *r)
{
    /* Pairs with the sleeper's increment of `sleepers` before its final
     * check: either it sees our update or we see it asleep. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->waiter.sleepers, memory_order_relaxed) != 0)
        rank_wake_slow(r);
    rank_note_work(r);
}

/* rank_wake after completing `what`: no wake while the rank sleeps for
 * another completion (rank_wait_until_picked).  The acquire load of
 * `sleepers` makes the sleeper's `awaited`, stored before its increment,
 * visible. */
static inline void rank_wake_for(struct rank *r, const void *what)
{
    atomic_thread_fence(memory_order_seq_cst);
    rank_note_work(r);
    if (atomic_load_explicit(&r->waiter.sleepers, memory_order_acquire) == 0)
        return;
    const void *awaited = atomic_load_explicit(&r->waiter.awaited, memory_order_relaxed);
    if (awaited == NULL || awaited == what)
        rank_wake_slow(r);
}

/* The same for a waker on a hot path (a lane send): when sleepers pay the
 * process-wide barrier (light_wakes), a compiler barrier orders our store
 * before the load of `sleepers` (asymmetric Dekker, see wait.c). */
static inline void rank_wake_light(struct rank *r)
{
    if (!strand_node.light_wakes) {
        rank_wake(r);
        return;
    }
    atomic_signal_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->waiter.sleepers, memory_order_relaxed) != 0)
        rank_wake_slow(r);
    rank_note_work(r);
}

/* Registers for the sleepers' barrier; true if the kernel supports it
 * (wait.c, called once by the node before ranks start). */
bool waiting_setup(void);

/* Called on the first MPI_Init in a thread that is not a rank thread. */
int node_start_singleton(void);
struct rank *rank_create(struct world *w, int world_rank);
/* What a rank thread does around rank_main: the rank's status, the check
 * that it finalized (else the job ends). */
int rank_thread_run(struct rank *r, int (*rank_main)(void *arg), void *arg);
/* Stack size of rank threads (page-rounded), and whether ranks outnumber
 * cores now: spawned ranks count too (node.c). */
size_t node_rank_stack_size(void);
void node_ranks_added(int count);
void rank_destroy(struct rank *r);

/* Errors (core/errors.c). `where` is the MPI function name. */
const char *error_class_name(int errclass);
int error_report(MPI_Comm comm, int code, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same for a window or file: `errhandler` is the object's handler,
 * `handle` the object as the program holds it (given to a user handler). */
int error_report_object(MPI_Errhandler errhandler, void *handle, int code, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
_Noreturn void error_fatal(const char *where, int code, const char *message);
/* Checks that MPI is initialized and not finalized for the calling thread
 * (inline: every MPI call makes it; the report is errors.c's). */
_Noreturn void error_not_initialized(const char *where);
static inline int error_check_initialized(const char *where)
{
    struct rank *r = strand_self;
    if (STRAND_LIKELY(r != NULL && r->mpi_state == RANK_MPI_INITIALIZED))
        return MPI_SUCCESS;
    error_not_initialized(where);
}

#endif
