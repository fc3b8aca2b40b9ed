/* Dynamic processes (MPI-2.2 chapter 10, DESIGN §10): spawn, ports,
 * accept/connect, names, join, disconnect. What the rest of libmpi sees. */
#ifndef STRAND_DPM_H
#define STRAND_DPM_H

#include "../comm/comm.h"

/* MPI_Comm_free / MPI_Comm_disconnect of a handle: if it is the calling
 * rank's parent intercommunicator, MPI_Comm_get_parent returns
 * MPI_COMM_NULL from now on. */
void dpm_parent_forget(const struct strand_comm *c);

/* ---- shared by the files of src/dpm */

/* What a collective's root did, handed to every member of its
 * intracommunicator (spawn, accept, connect): the new intercommunicator's
 * core for the members' side (one reference per member) or an error. */
struct dpm_outcome {
    atomic_int untaken;             /* members still to read it; the last frees it */
    int error;                      /* MPI error class, MPI_SUCCESS */
    struct comm_core *core;         /* NULL on error (or when nothing was built) */
    int nerrcodes;                  /* spawn: one code per requested process */
    int *errcodes;
    char message[512];              /* why it failed, naming the command or port */
};

/* Allocates an outcome for `members` readers with room for `nerrcodes`
 * codes; NULL when out of memory. */
struct dpm_outcome *dpm_outcome_alloc(int members, int nerrcodes);

/* A collective over the intracommunicator `comm` whose `root` does the
 * work: checks comm and root, calls at_root(comm, arg) at the root (it
 * returns the outcome, from dpm_outcome_alloc, or NULL when out of
 * memory), hands the outcome to every member, and gives each its handle of
 * the new intercommunicator in *newcomm (MPI_COMM_NULL on error) and the
 * error codes (if `errcodes` is not NULL). Errors are reported as `where`'s
 * through comm's error handler, with the root's message. */
typedef struct dpm_outcome *(*dpm_root_fn)(struct strand_comm *comm, void *arg);
int dpm_rooted_collective(const char *where, MPI_Comm comm, int root, dpm_root_fn at_root, void *arg,
                          MPI_Comm *newcomm, int *errcodes);

#endif
