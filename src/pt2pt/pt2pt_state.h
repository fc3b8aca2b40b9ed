/* Per-rank point-to-point state embedded in struct rank: the mailbox other
 * ranks match into, the request pool, the attached Bsend buffer. */
#ifndef STRAND_PT2PT_STATE_H
#define STRAND_PT2PT_STATE_H

#include <stddef.h>
#include "../util/atomic_stack.h"
#include "../util/lock.h"

struct envelope;
struct strand_request;

/* Guarded by `lock`: posted receives (in post order) and unexpected
 * messages (in arrival order). A sender matches into the posted queue or
 * appends to the unexpected queue while holding the lock. */
struct mailbox {
    struct lite_lock lock;
    int probers;                              /* threads blocked in MPI_Probe: wake on arrival */
    struct strand_request *posted_head, *posted_tail;
    struct envelope *unexpected_head, *unexpected_tail;
    struct envelope *free_envelopes;          /* under lock */
    struct atomic_stack returned_envelopes;   /* consumed envelopes, given back lock-free */
};

struct request_pool {
    struct lite_lock lock;          /* uncontended unless MPI_THREAD_MULTIPLE */
    struct strand_request *free;
    struct strand_request *detached; /* freed by the user while still active */
};

struct bsend_buffer {
    struct lite_lock lock;
    char *base;                     /* aligned start of the regions */
    size_t size;
    void *user_base;                /* as attached, returned by detach */
    int user_size;
};

struct pt2pt_rank_state {
    struct mailbox mailbox;
    struct request_pool requests;
    struct bsend_buffer bsend;
};

#endif
