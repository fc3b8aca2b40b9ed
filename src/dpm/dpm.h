/* Dynamic processes (MPI-2.2 chapter 10, DESIGN §10): spawn, ports,
 * accept/connect, names, join, disconnect. What the rest of libmpi sees. */
#ifndef STRAND_DPM_H
#define STRAND_DPM_H

#include "../comm/comm.h"
#include "../util/bytes.h"

/* MPI_Comm_free / MPI_Comm_disconnect of a handle: if it is the calling
 * rank's parent intercommunicator, MPI_Comm_get_parent returns
 * MPI_COMM_NULL from now on. */
void dpm_parent_forget(const struct strand_comm *c);

struct net_peer;
struct wire_frame;
/* The network progress thread: a dynamic-process frame (WIRE_DPM) from
 * `from`; `payload` (f->payload_len bytes) is valid until the call
 * returns. Checked here: a malformed one is refused (and ends the job, as
 * any malformed frame). */
void dpm_frame_arrived(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload);
/* The network progress thread: `peer`, of another job and used by no
 * communicator, cannot be reached or was lost; whoever waits for an
 * answer from it fails (MPI_ERR_PORT for a connect, MPI_ERR_SPAWN for a
 * spawn). */
void dpm_peer_lost(struct net_peer *peer, const char *what);

/* ---- shared by the files of src/dpm */

/* Kinds of WIRE_DPM frames (the frame's context_id): a, b, c and the
 * payload, per kind.
 *  DPM_CONNECT  a: port tag  b: connector's cookie  payload: its offer
 *  DPM_ACCEPT   a: connector's cookie               payload: the answer
 *  (offer and answer: u32 status, u32 context id proposal / agreed id,
 *   then the group's rank identities, src/core/identity.c)
 * The spawn service (service.c), between the spawning root's node process
 * and each node process of its job that hosts children:
 *  DPM_SPAWN_PREPARE   a: root's cookie   payload: the plan (service.c)
 *  DPM_SPAWN_PREPARED  a: cookie  b: status  c: a context id proposal   payload: why it failed
 *  DPM_SPAWN_GO        a: cookie  b: the agreed id   payload: the parents' identities
 *  DPM_SPAWN_DONE      a: cookie  b: status           payload: why it failed
 *  DPM_SPAWN_START     a: cookie (every host made its share: start the ranks)
 *  DPM_SPAWN_CANCEL    a: cookie (the spawn failed elsewhere: forget it) */
enum dpm_kind {
    DPM_CONNECT = 1, DPM_ACCEPT,
    DPM_SPAWN_PREPARE, DPM_SPAWN_PREPARED, DPM_SPAWN_GO, DPM_SPAWN_DONE, DPM_SPAWN_START, DPM_SPAWN_CANCEL,
};

/* ---- spawn across node processes (spawn.c, service.c) */

struct dpm_root_context;
struct dpm_outcome;
struct node_program;

/* World ranks [first, first + count), children of command `command`,
 * run in node process `node` of this job. */
struct spawn_block {
    int node, first, count, command;
};

/* A new world of spawned ranks as the root decided it. */
struct spawn_plan {
    uint64_t gid;
    int size;
    int nblocks;
    struct spawn_block *blocks;     /* in world rank order */
    int ncommands;
    const char **commands;          /* per command, as given */
    const char **wdirs, **paths;    /* per command: the info keys, NULL when absent */
    char *const **argvs;            /* per command: NULL-terminated, or NULL */
    struct node_program **programs; /* per command: opened for this process's share, or NULL */
};

/* Finds `command` like execvp (under `wdir`, in `path_key`, $PATH, the
 * working directory) and opens it for `nprocs` ranks with `args` (0 ranks:
 * only finds it). 0 with *program set (NULL for 0 ranks), or -1 with why. */
int dpm_command_open(const char *command, const char *wdir, const char *path_key, char *const *args, int nprocs,
                     struct node_program **program, char *why, size_t len);
/* The root, when some children run in other node processes: the spawn
 * service's protocol; fills `o` (described, or an error). */
void dpm_spawn_remote(const struct spawn_plan *plan, const struct strand_comm *parent,
                      const struct dpm_root_context *ctx, struct dpm_outcome *o);
/* service.c: the DPM_SPAWN_* frames; a node process that ended or was lost. */
void dpm_spawn_frame(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload);
void dpm_spawn_peer_lost(struct net_peer *peer, const char *what);

/* port.c: DPM_CONNECT and DPM_ACCEPT frames; a lost node process. */
void dpm_port_frame(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload);
void dpm_port_peer_lost(struct net_peer *peer, const char *what);

/* What a collective's root did, handed to every member of its
 * intracommunicator (spawn, accept, connect): the new intercommunicator's
 * core for the members' side (one reference per member), or its
 * description, from which every node process builds its copy, or an
 * error. */
struct dpm_outcome {
    atomic_int untaken;             /* members still to read it; the last frees it */
    int error;                      /* MPI error class, MPI_SUCCESS */
    struct comm_core *core;         /* NULL on error (or when nothing was built) */
    bool described;                 /* id, side, remote describe the intercommunicator */
    uint32_t id;                    /* its agreed context id */
    int side;                       /* the members' side */
    struct bytes_out remote;        /* the other group's identities (identity.c) */
    int nerrcodes;                  /* spawn: one code per requested process */
    int *errcodes;
    char message[512];              /* why it failed, naming the command or port */
};

/* Allocates an outcome for `members` readers with room for `nerrcodes`
 * codes; NULL when out of memory. */
struct dpm_outcome *dpm_outcome_alloc(int members, int nerrcodes);
/* The root's outcome is the intercommunicator with context id `id` whose
 * side `side` is the members' group and whose other group has the
 * identities remote[0..len) (copied). */
void dpm_outcome_describe(struct dpm_outcome *o, uint32_t id, int side, const unsigned char *remote, size_t len);

/* What the root knows when it starts: whether the communicator spans node
 * processes (then the root must describe its result, never build it),
 * and the highest context id proposal of its members' node processes. */
struct dpm_root_context {
    bool spans;
    uint32_t proposal;
};

/* A collective over the intracommunicator `comm` whose `root` does the
 * work: checks comm and root, calls at_root(comm, arg, ctx) at the root
 * (it returns the outcome, from dpm_outcome_alloc, or NULL when out of
 * memory), hands the outcome to every member, and gives each its handle of
 * the new intercommunicator in *newcomm (MPI_COMM_NULL on error) and the
 * error codes (if `errcodes` is not NULL). Errors are reported as `where`'s
 * through comm's error handler, with the root's message. */
typedef struct dpm_outcome *(*dpm_root_fn)(struct strand_comm *comm, void *arg, const struct dpm_root_context *ctx);
int dpm_rooted_collective(const char *where, MPI_Comm comm, int root, dpm_root_fn at_root, void *arg,
                          MPI_Comm *newcomm, int *errcodes);

#endif
