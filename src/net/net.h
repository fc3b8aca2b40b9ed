/* The inter-node layer: how ranks in different node processes reach each
 * other (DESIGN §12, §12a), within one job and between jobs.
 *
 * Two parts:
 *  - the layer (net.c): the job's layout (which node process hosts which
 *    world ranks), the registry of node processes this one talks to (its
 *    job's, made at start, and those of other jobs or of spawned worlds,
 *    added at run time), proxies for remote ranks, the one branch where
 *    point-to-point leaves the local path (net_send_message), the delivery
 *    of arrived messages into the receiver's mailbox, and the progress
 *    thread;
 *  - one network module for this job's node processes, chosen once at start
 *    (tcp.c, or ucx.c when built: STRAND_NET, see net.c), behind the const
 *    table `struct net_ops` below. Peers of other jobs (`foreign`) always
 *    go over the tcp module: in a job over another module, a second
 *    instance of it serves them, started on demand (net_ensure_started)
 *    with its own progress thread; the layer picks the module by
 *    peer->foreign.
 *
 * A job of N ranks on K node processes: node j hosts the launched world's
 * ranks r with job.node_of[r] == j: blocks [net_node_first_rank(j),
 * net_node_first_rank(j + 1)) under mpiexec, whatever set Slurm put on the
 * node under srun (STRAND_RANK_NODES: -m cyclic, plane, arbitrary), so
 * that a world rank is the PMI rank. With K == 1
 * (the default) nothing here runs until the program asks for another
 * process (a port, a connection, a spawn onto another node process:
 * net_ensure_started), so a single-process job has no thread and no
 * socket of the network.
 *
 * Addressing. A node process is named by (job id, node index): the job id
 * is the launch's (mpiexec's STRAND_JOB_ID, random for a program started
 * without mpiexec), the same in all its node processes. A rank is named by
 * (world id, rank in that world): world ids are 64-bit and unique (the
 * launched world's is its job id, a spawned world's is drawn at random),
 * so frames name the destination world and rank, whatever job sent them.
 *
 * Threads.
 *  - Rank threads (any number, concurrently, MPI_THREAD_MULTIPLE included)
 *    call net_send_message and, through the mailbox, ops->pull. They never
 *    block in the kernel on a socket: these calls queue work for the
 *    progress thread (a wait-free queue) and wake it; a module may also
 *    write a small message itself with a non-blocking call when that keeps
 *    the order of messages (tcp.c does; ucx.c hands every frame to UCX's
 *    non-blocking calls under one short lock).
 *  - One progress thread per module instance runs its progress in a loop
 *    (two in a job over UCX that reaches other jobs: upcalls may then run
 *    on either, concurrently; the layer serializes those that share state
 *    across frames, net_rma_arrived and net_dpm_arrived). It is a runtime
 *    thread, not a rank: `strand_self` is NULL there, and it
 *    never calls an MPI entry point. It reads every socket, and it is the
 *    thread on which every completion below fires, except:
 *  - A rank thread spinning in a wait (src/core/wait.c) may run a round of
 *    the same work itself (ops->poll, one thread at a time with the
 *    progress thread), so that a message arriving for a waiting rank costs
 *    no wake-up, neither of the progress thread nor of the rank. Whatever
 *    "on the progress thread" says below then happens on that rank thread,
 *    which holds no lock and is in no MPI call's critical section there
 *    (it is between two polls of its wait condition).
 *  - The node's main thread calls net_start before any rank thread exists
 *    and net_end after every local rank thread has ended; net_ensure_started
 *    may start the layer later from any thread.
 *
 * Buffers and completions (the contract between the layer and a module).
 *  - send_eager: the module copies (packs) the data before it returns; the
 *    caller's buffer is free again at once. The send is complete for MPI.
 *  - send_rendezvous: the module sends only the envelope. The caller's
 *    buffer, datatype and `done` are lent to the module until `done` is
 *    signalled, which happens on the progress thread after the receiver
 *    matched the message, pulled the bytes it wants, and those bytes were
 *    handed to the kernel (so MPI_Ssend is synchronous: a match happened).
 *    The datatype must stay committed (the request holds a reference).
 *  - An arriving EAGER message is delivered by the progress thread into the
 *    destination rank's mailbox (net_arrived_eager -> mailbox_deliver_remote):
 *    copied into a matching posted receive or into an unexpected envelope.
 *    The module's receive buffer is free when the upcall returns.
 *  - An arriving rendezvous envelope becomes a `struct net_pull` (owned by
 *    the module) queued in the mailbox like any message, so MPI_ANY_SOURCE,
 *    probe and ordering see it in arrival order among local messages.
 *    When a receive matches it (on the progress thread at arrival, or on
 *    the receiving rank's thread later), the matcher calls ops->pull(pull,
 *    req) outside the mailbox lock. From then on the module owns `req`'s
 *    buffer until it calls mailbox_receive_complete(req, ...) on the
 *    progress thread; the pull is freed by the module then.
 *
 * Ordering: messages from one sender rank to one receiver rank are
 * delivered in the order they were sent (one FIFO queue per node process,
 * one connection per ordered pair of node processes, delivered in order).
 *
 * Failures (net_peer_lost): a node process of this job that ends without
 * saying goodbye, or that sends a frame failing validation, ends the job
 * (the launcher learns of the death too and ends every node process); so
 * does one of another job while a communicator of this process still
 * reaches its ranks (before MPI_Comm_disconnect the jobs are one failure
 * domain), once it still does a grace of 3 s later (the other job may
 * have left MPI_Comm_disconnect while the ranks here are still releasing
 * the communicator). A node process of another job that no communicator
 * reaches any more (after MPI_Comm_disconnect) or that could never be
 * reached is only forgotten: what was queued for it is dropped, waiters
 * are told (dpm_peer_lost). A message to a node process that already ended cleanly
 * can never be received and is dropped (the program is erroneous:
 * MPI_Finalize does not wait for it). */
#ifndef STRAND_NET_NET_H
#define STRAND_NET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "../pt2pt/pt2pt.h"
#include "../util/registry.h"
#include "layout.h"
#include "wire.h"

/* Another node process. Those of this job are made by net_start (index =
 * node index) and those of other jobs when first named (net_peer_get:
 * an HELLO, a port name, a rank identity); none is ever freed, so a
 * pointer to one stays valid for the process's life. Immutable once in
 * the registry, except `transport` (the module's), `users` and the
 * contact of this job's peers (net_peer_host, net_peer_port). */
struct net_peer {
    int node;                       /* its index among this process's peers: for this
                                     * job's, its node index; others after them */
    uint64_t job_id;                /* who it is: its job ... */
    int job_node;                   /* ... and its node index there */
    bool foreign;                   /* of another job */
    int nranks;                     /* this job's: how many ranks of the launched world
                                     * it hosts (job.node_of says which) */
    char *host;                     /* another job's: where it listens */
    int port;
    /* Another job's: proxies in this process of ranks it hosts; while
     * there is one, losing it ends this job (see Failures above). */
    atomic_int users;
    atomic_bool ended;              /* it said goodbye (net_peer_ended) */
    void *transport;                /* the module's per-peer state (set by the module) */
    struct registry_node reg;       /* key (job_id, job_node) */
};
/* What the receiver matches on, plus the size. */
struct net_envelope {
    uint32_t context_id;
    int source;                     /* sender's rank in the communicator */
    int tag;
    int dest;                       /* receiver's world rank */
    size_t bytes;
    uint64_t world;                 /* receiver's world id */
};

/* The job as this node process sees it (filled by net_start from the
 * launcher's environment; immutable afterwards). */
struct net_job {
    int nranks, nnodes, node;       /* world size, node processes, this one's index */
    int *node_of;                   /* the node process of each world rank (nranks) */
    int *local, local_ranks;        /* this node's world ranks, ascending */
    int ppn;                        /* ranks per node when given (-ppn), else 0: balanced blocks
                                     * (without STRAND_RANK_NODES) */
    uint64_t job_id;                /* the same in every node process of the job */
    char **hosts;                   /* host of each node process */
    int base_port;                  /* node j listens on base_port + j; 0: on any port
                                     * (a single-process job started on demand) */
    size_t eager_limit;
    struct net_peer *peers;         /* by node index; this node's own entry is unused */
};

/* What an arriving EAGER frame may carry at least, whatever this job's
 * eager limit: a job started with other settings may connect
 * (STRAND_NET_EAGER_LIMIT above it must be equal in connected jobs). */
enum { NET_EAGER_ACCEPTED = 4 << 20 };

struct net_pull;                    /* a remote rendezvous message (module-defined) */

/* What names a remote rendezvous message at its receiver: the node process
 * that sent it and the sender's cookie (RTS `b`, CANCEL `a`). Every
 * module's struct net_pull begins with one, so that the layer can find a
 * pull by it (net_withdraw_remote) without knowing the rest. */
struct net_pull_id {
    struct net_peer *peer;
    uint64_t sender_cookie;
};

/* The header fields of a one-sided frame (wire.h: what each means per type). */
struct net_rma {
    enum wire_type type;
    uint32_t flags;                 /* context_id */
    int32_t code;                   /* tag: ACC operation | element << 8 */
    uint32_t source, dest;          /* window ranks */
    uint64_t window, b, c;
};

/* A network module. Entries may be called from the threads named; the
 * module synchronizes internally. Peers of other jobs appear at run time:
 * a module sets up its state for a peer (`transport`) on the peer's first
 * use, from whatever thread that is. */
struct net_ops {
    const char *name;
    /* Once, before the progress thread starts: open the listening
     * endpoint (so peers can connect as early as possible), on
     * base_port + node, or on any port when base_port is 0, and report
     * it with net_listening_on. Called by the main thread before any rank
     * runs, or, in a job of one node process, by net_ensure_started in
     * any thread. job->peers NULL (the tcp module only, started by
     * net_ensure_started in a job over another module): it serves peers
     * of other jobs only, this job's are the other module's. No connection is opened here: the first message to a
     * peer opens one. Returns 0, or -1 with the reason in why[why_len]. */
    int (*init)(const struct net_job *job, char *why, size_t why_len);
    /* Progress thread only: one round of work (accept, connect, read,
     * write, deliver), waiting at most timeout_ms (-1: until woken).
     * Returns false once the node is shutting down and all queued frames
     * are written (the thread then ends). */
    bool (*progress)(int timeout_ms);
    /* Any rank thread: see the contract above. Return MPI_SUCCESS or an
     * MPI error class (MPI_ERR_NO_MEM). */
    int (*send_eager)(struct net_peer *peer, const struct net_envelope *env, const void *buf, int count,
                      MPI_Datatype type);
    int (*send_rendezvous)(struct net_peer *peer, const struct net_envelope *env, const void *buf,
                           int count, MPI_Datatype type, struct completion *done);
    /* Any thread, outside the mailbox lock: the receive `req` matched
     * `pull`; fetch min(message, req's capacity) bytes into req. */
    void (*pull)(struct net_pull *pull, struct strand_request *req);
    /* Any rank thread: MPI_Cancel of a send whose `done` was given to
     * send_rendezvous. Asynchronous: when the receiver withdrew the
     * message, the progress thread completes the request as cancelled
     * (pt2pt_send_cancelled); otherwise the send completes as usual. */
    void (*cancel_send)(struct net_peer *peer, struct completion *done);
    /* Main thread, after every local rank ended: flush queued frames, say
     * goodbye to every connected peer, then make progress() return false. */
    void (*shutdown)(void);
    /* Main thread, after the progress thread ended: close everything. */
    void (*close)(void);
    /* Rank threads in a wait (optional: NULL when the module has no
     * such path). poll_begin when a wait starts spinning, poll between
     * polls of its condition (a non-blocking round of progress, skipped
     * when another thread runs one), poll_end when the spinning ends,
     * with `sleeping` if the thread now sleeps until woken (the progress
     * thread must then watch the network for it at once). */
    void (*poll_begin)(void);
    void (*poll)(void);
    void (*poll_end)(bool sleeping);
    /* Any thread: queue one control frame (wire.h: one-sided RMA_* frames
     * and dynamic-process DPM frames) for `peer`. The module owns
     * `payload` (malloc'd, payload_len bytes, may be NULL when 0) from the
     * call on and frees it once written. Frames one thread queues for one
     * peer are written, and served there, in call order.
     * MPI_SUCCESS or MPI_ERR_NO_MEM. */
    int (*rma_send)(struct net_peer *peer, const struct net_rma *frame, void *payload, size_t payload_len);
};

extern const struct net_ops net_tcp_ops;
#ifdef HAVE_UCX
/* ucx.c: UCP active messages and rendezvous (src/net/README.md). */
extern const struct net_ops net_ucx_ops;
/* Main thread: whether this host has a network UCX drives better than the
 * tcp module (an RDMA device); decides the default module. */
bool net_ucx_fabric_present(void);
#endif

/* --- the layer (net.c) --- */

/* Main thread, first thing at node start, before the launcher environment
 * is read: under srun --mpi=pmi2, turns PMI's and Slurm's description of
 * the job into that environment (pmi.c); a task whose ranks run in
 * another task's node process takes part in PMI's fence and exits here.
 * Says so in one line when started by srun without a usable PMI. */
void net_bootstrap(void);
/* The job aborts with `status` (strand_job_abort): tells the process
 * manager, if any. */
void net_job_aborting(int status, const char *message);

/* Main thread, at node start: reads the job from the environment. When
 * the job spans several node processes, fills `ranks` (world size entries)
 * with proxies for the remote ranks (world set by the caller), starts the
 * module (listening), and returns true; `*local` (ascending, owned by
 * the layer, valid for the process's life) and `*count` get the local
 * ranks, which need not be consecutive. Returns false for a single-node job (nothing started). Ends the
 * job with a message on a bad configuration. */
bool net_start(int nranks, struct rank **ranks, const int **local, int *count);
/* Main thread, once the local ranks exist (their mailboxes receive from
 * now on) and before their threads start: starts the progress thread. */
void net_run(void);
/* Any thread: makes sure this process can reach and be reached by other
 * node processes (ports, connections and spawns between jobs). In a job
 * of several node processes over tcp the layer runs already; in one over
 * another module the tcp module for other jobs starts now (listening at
 * the node's static port, its own progress thread); in a job of one node
 * process the layer starts now (tcp, listening on any port, one progress
 * thread). A failure is not retried: later calls say it again. Returns
 * MPI_SUCCESS, or MPI_ERR_OTHER with the reason in why[why_len]. */
int net_ensure_started(char *why, size_t why_len);
/* Main thread, after every local rank thread ended. */
void net_end(void);
/* True when this process is one of several node processes of its job. */
bool net_active(void);
/* True when the layer runs (net_active, or started on demand). */
bool net_started(void);

/* A rank's wait (src/core/wait.c), between node processes: true when the
 * waiter should call net_wait_poll between polls of its condition, then
 * net_wait_end(sleeping) once it stops spinning (ops->poll_*: this job's
 * module, and the tcp module for other jobs too while it runs beside
 * another one; the rank thread, no lock held). Only while
 * waiters spin (ranks do not outnumber cores): a waiter that polls once
 * and sleeps would only add a system call and a hand-back to the
 * progress thread to every wait. */
extern bool net_waits_poll;
bool net_wait_begin_slow(void);
static inline bool net_wait_begin(void)
{
    return net_waits_poll && strand_node.spin_limit > 1 && net_wait_begin_slow();
}
void net_wait_poll(void);
void net_wait_end(bool sleeping);

const struct net_job *net_job(void);

/* Who this process is: its job id (the launcher's, or drawn at random
 * for a program started without one) and its node index, valid from the
 * first call on; where it listens (port 0 until the layer started). */
uint64_t net_self_job_id(void);
int net_self_node(void);
const char *net_self_host(void);
int net_self_port(void);

/* A new world id: 64 random bits (unique with overwhelming probability,
 * so that processes need not agree on it). */
uint64_t net_new_world_id(void);

/* Any thread: the node process (job_id, node) that listens on host:port,
 * registered on first use (this job's own: the static entry, whatever
 * host and port say); another job's is registered only once this process
 * can reach other jobs (net_ensure_started first). NULL when out of
 * memory, when that cannot start, or when it names this process. */
struct net_peer *net_peer_get(uint64_t job_id, int node, const char *host, int port);
/* A proxy rank `world_rank` living in `peer` (no thread, no handles);
 * counts as a user of a peer of another job until destroyed. */
struct rank *net_proxy_create(int world_rank, struct net_peer *peer);
void net_proxy_destroy(struct rank *proxy);

/* Addressing (DESIGN §12: the static rule first, the key-value store for
 * what it cannot derive). Node j listens on its host's address, port
 * base_port + j; a node that finds that port taken listens elsewhere and
 * publishes the port, and peers look it up only when refused. A peer of
 * another job listens where it said (its HELLO, a port name, an
 * identity). */
/* Any thread: where `peer` listens, for another process to reach it (a
 * node of this job: its static port, or the one a refusal made us learn;
 * under PMI its host looked up in the store on first use, "" when not
 * there). In a job over another module than tcp, where its tcp module
 * for other jobs listens once started. */
void net_peer_contact(const struct net_peer *peer, const char **host, int *port);
/* Progress thread: the host of `peer` (under PMI looked up on first use). */
const char *net_peer_host(const struct net_peer *peer);
/* Progress thread: the port to connect to for `peer`. */
int net_peer_port(const struct net_peer *peer);
/* Progress thread: a connection to `peer` was refused or reached another
 * process; asks the store whether it listens elsewhere (net_peer_port
 * then answers that port). True when it learned a new port. */
bool net_peer_refused(const struct net_peer *peer);
/* Progress thread: whether mpiexec saw the node process of `peer` (of this
 * job) end on its own; then *status is its exit status. A peer that never
 * took a connection and has ended never will (it died starting, or ran
 * another program): a connector stops retrying at once. False without
 * mpiexec's store (under PMI: the connect timeout decides). */
bool net_peer_exited(const struct net_peer *peer, int *status);
/* Main thread, in ops->init: whether a taken static port may be replaced
 * by another (a store is there to publish it), and publishing it.
 * net_publish_port returns 0, or -1 with the reason in why[why_len]. */
bool net_port_fallback_allowed(void);
int net_publish_port(int port, char *why, size_t why_len);
/* ops->init: the port the module listens on. */
void net_listening_on(int port);
/* Progress thread: an incoming connection says it is node `node` of job
 * `job_id`, whose job has `nnodes` node processes, listening at
 * `contact` ("PORT HOST", contact_len bytes, not NUL-terminated; may be
 * empty for this job's nodes). Returns the peer, or NULL with the reason
 * in *why (the connection is then refused). */
struct net_peer *net_peer_hello(uint64_t job_id, uint64_t node, uint64_t nnodes, const char *contact,
                                size_t contact_len, const char **why);
/* This process's contact for its HELLO: "PORT HOST" into out[len];
 * returns its length. */
size_t net_self_contact(char *out, size_t len);
/* The job's key-value store itself (PMI's under srun, else mpiexec's), for
 * what a module cannot derive (the UCX module's worker addresses): whether
 * there is one; put (main thread, in ops->init: under PMI before the
 * job's one fence), 0 or -1 with the reason in why[why_len]; get `key`
 * put by node `node` (any thread), 1 with the value in value[len], 0 when
 * not (yet) there, -1 when the store cannot be reached. Keys and values:
 * no spaces or newlines, a line of at most 500 bytes together. */
bool net_store_available(void);
int net_store_put(const char *key, const char *value, char *why, size_t why_len);
int net_store_get(int node, const char *key, char *value, size_t len);

/* The seam (called through pt2pt_deliver when dest->remote != NULL): same
 * contract as mailbox_deliver. Returns QUEUED_EAGER (the send is
 * complete) or QUEUED_RENDEZVOUS (`done` is signalled later, on the
 * progress thread). */
enum delivery net_send_message(struct rank *dest, const struct message *m, bool sync,
                               struct completion *done);

/* A receive matched a remote rendezvous message (mailbox.c, any thread,
 * outside the mailbox lock): ops->pull. */
void net_pull(struct net_pull *pull, struct strand_request *req);

/* MPI_Cancel of a send to a remote rank (completion.c): ops->cancel_send. */
void net_cancel_send(struct rank *dest, struct completion *done);

/* Upcalls from the module, on the progress thread. `env` has been
 * validated (dest is a rank of this process: net_world_rank_here). */
void net_arrived_eager(const struct net_envelope *env, const void *data);
void net_arrived_rendezvous(const struct net_envelope *env, struct net_pull *pull);
/* Progress thread, on a CANCEL from `peer` for its message `cookie` to
 * rank `dest` of world `world` (validated): the pull taken out of dest's
 * mailbox if no receive matched it yet (the module owns it again: it
 * frees it and answers CANCELLED withdrawn), else NULL (a receive has it
 * or had it). Finds it by the struct net_pull_id that begins every
 * module's pull. */
struct net_pull *net_withdraw_remote(uint64_t world, uint32_t dest, struct net_peer *peer, uint64_t cookie);
/* What the decoder asks about destinations (wire_limits.world_rank):
 * whether rank `rank` of world `world` (not the launched one) runs here. */
bool net_world_rank_here(uint64_t world, uint32_t rank);
/* A one-sided frame arrived from `from` (its header checked by the
 * decoder); `payload` is valid until the call returns. The block list of a
 * PUT, ACC or GET is checked here against the window
 * (wire_check_rma_blocks): NULL when the frame was served (by
 * src/rma/remote.c, without any call of the target rank), else why it is
 * malformed (nothing was done; the module drops the peer). */
const char *net_rma_arrived(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload);
/* One-sided frames to a node process (any thread): ops->rma_send. */
int net_rma_send(struct net_peer *peer, const struct net_rma *frame, void *payload, size_t payload_len);
/* What the decoder asks about windows and accumulate element types
 * (wire_limits.window, .acc_element): answered by src/rma/remote.c. */
bool net_rma_window(uint64_t id, uint32_t dest, uint32_t source, struct wire_window *out);
bool net_rma_acc_element(uint32_t op, uint32_t element, struct wire_element *out);
/* Dynamic-process frames (WIRE_DPM, wire.h): sent by any thread through
 * ops->rma_send (the module owns `payload` as there); arrivals handed to
 * src/dpm on the progress thread (payload valid until the call returns).
 * To a peer that said goodbye the frame is dropped and its waiters are
 * told at once (dpm_peer_lost), so that nobody waits for an answer. */
int net_dpm_send(struct net_peer *peer, uint32_t kind, uint64_t a, uint64_t b, uint64_t c, void *payload,
                 size_t payload_len);
void net_dpm_arrived(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload);

/* Frames of both modules: the frame of a message's envelope (EAGER or
 * RTS, `a` = its bytes, `c` = the receiver's world), the envelope of such a frame, and the header of a
 * one-sided frame with payload_len bytes of payload. */
static inline struct wire_frame net_envelope_frame(enum wire_type type, const struct net_envelope *env)
{
    return (struct wire_frame){
        .type = type, .context_id = env->context_id, .source = env->source, .tag = env->tag,
        .dest = (uint32_t)env->dest, .a = env->bytes, .c = env->world,
    };
}

static inline struct net_envelope net_frame_envelope(const struct wire_frame *f)
{
    return (struct net_envelope){ f->context_id, f->source, f->tag, (int)f->dest, (size_t)f->a, f->c };
}

static inline struct wire_frame net_rma_frame(const struct net_rma *r, size_t payload_len)
{
    return (struct wire_frame){ .type = r->type, .payload_len = (uint32_t)payload_len, .context_id = r->flags,
                                .source = (int32_t)r->source, .tag = r->code, .dest = r->dest,
                                .a = r->window, .b = r->b, .c = r->c };
}

/* What a module's decoder accepts (wire_limits) for `job`: its ranks here
 * and those of worlds hosted here, eager frames up to the job's eager limit
 * or NET_EAGER_ACCEPTED, DATA payloads up to max_data (0: none). */
static inline struct wire_limits net_wire_limits(const struct net_job *job, uint32_t max_data)
{
    size_t eager = job->eager_limit > NET_EAGER_ACCEPTED ? job->eager_limit : NET_EAGER_ACCEPTED;
    return (struct wire_limits){
        .world_rank = net_world_rank_here,
        .nnodes = (uint32_t)job->nnodes, .job_id = job->job_id,
        .max_eager = (uint32_t)(eager < UINT32_MAX ? eager : UINT32_MAX),
        .max_data = max_data, .tag_ub = INT32_MAX,
        .window = net_rma_window, .acc_element = net_rma_acc_element,
    };
}

/* Seconds on the monotonic clock (connect timeouts and retries of the modules). */
static inline double net_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Progress thread: a peer said goodbye (its ranks all ended): whoever
 * waits for an answer from it is told (dpm_peer_lost). */
void net_peer_ended(struct net_peer *peer);
/* Progress thread: a peer died, closed without goodbye, broke the
 * protocol, or cannot be reached (see Failures above). Returns, and the
 * job ends 2 s later for a peer of this job (the launcher, which sees the
 * death too, ends it first with its own message; a JOB_ABORT may still
 * arrive meanwhile, net.c), later for a peer of another job only if a
 * communicator here still reaches it after the grace (the waiters are
 * told at once, dpm_peer_lost): the module then drops what it queued for
 * the peer and starts afresh on its next message. Exits at once, with the
 * abort's status, when the job is aborting (JOB_ABORT). */
void net_peer_lost(struct net_peer *peer, const char *what);
/* The same for a module that cannot go on serving: ends the job after the
 * grace (a peer of this job) or at once. */
_Noreturn void net_peer_lost_fatal(struct net_peer *peer, const char *what);

#endif
