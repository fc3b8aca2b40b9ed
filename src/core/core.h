/* The node process and its rank threads: who is running, how a rank waits,
 * how errors end a job. Every other subsystem reaches the calling rank
 * through `strand_self`. */
#ifndef STRAND_CORE_H
#define STRAND_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "mpi.h"
#include "../pt2pt/pt2pt_state.h"

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
};

struct rank {
    int world_rank;
    enum rank_mpi_state mpi_state;
    int thread_level;
    pthread_t init_thread;          /* thread that called MPI_Init[_thread] */
    pthread_t program_thread;
    int exit_status;
    atomic_bool thread_ended;       /* its program thread returned from the rank's main */
    struct rank_waiter waiter;
    /* NULL for a rank of this node process; for a rank of another node
     * process, this struct is a proxy (no thread, no handles) and `remote`
     * is its node process (src/net/net.h). Next to the mailbox lock, so
     * the sender's one branch reads a line it touches anyway. */
    struct net_peer *remote;
    struct pt2pt_rank_state pt2pt;  /* mailbox, request pool, attached buffer */
    struct strand_comm *comm_world; /* this rank's handles of the predefined comms */
    struct strand_comm *comm_self;
};

struct node_config {
    int nranks;
    bool bind_cores;
    size_t stack_size;
    int universe_size;
    size_t eager_limit;
};

struct node {
    struct node_config config;
    struct rank **ranks;            /* by world rank (proxies for ranks of other node processes) */
    int first_local, nlocal;        /* the world ranks this node process runs */
    int ncores;
    int spin_limit;                 /* polls before a waiter sleeps */
    double wtime_base;
    bool singleton;                 /* MPI_Init in a plain executable: caller is rank 0 */
    atomic_int ranks_running;
};

extern struct node strand_node;
/* Initial-exec: one %fs-relative load instead of a __tls_get_addr call on
 * every MPI entry (libmpi is loaded with the program, or, if dlopened,
 * fits glibc's static TLS reserve with one pointer). */
extern __thread struct rank *strand_self __attribute__((tls_model("initial-exec")));

/* Interface used by privatize/ (the program loader). */
STRAND_EXPORT struct rank *strand_current_rank(void);
STRAND_EXPORT int strand_rank_world_number(struct rank *r);
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

/* Waiting: spin briefly, then sleep until woken. `done` is polled. */
typedef bool (*rank_wait_cond)(void *arg);
void rank_wait_until(struct rank *self, rank_wait_cond done, void *arg);
void rank_wake_slow(struct rank *r);

static inline void rank_wake(struct rank *r)
{
    /* Pairs with the sleeper's increment of `sleepers` before its final
     * check: either it sees our update or we see it asleep. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->waiter.sleepers, memory_order_relaxed) != 0)
        rank_wake_slow(r);
}

/* Called on the first MPI_Init in a thread that is not a rank thread. */
int node_start_singleton(void);
struct rank *rank_create(int world_rank);
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
/* Checks that MPI is initialized and not finalized for the calling thread. */
int error_check_initialized(const char *where);

#endif
