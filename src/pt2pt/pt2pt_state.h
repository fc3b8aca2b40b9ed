/* Per-rank point-to-point state embedded in struct rank: the mailbox other
 * ranks match into, the request pool, the attached Bsend buffer. */
#ifndef STRAND_PT2PT_STATE_H
#define STRAND_PT2PT_STATE_H

#include <stddef.h>
#include <stdint.h>
#include "../util/atomic_stack.h"
#include "../util/biased_lock.h"
#include "../util/lock.h"

struct envelope;
struct strand_request;
struct lane;
struct lane_offer_record;

/* Lanes into one mailbox at most (the first local senders to send a small
 * message get one; later ones use the mailbox path, see lane.h). */
enum { MAILBOX_LANES = 16 };

/* Guarded by `lock`: posted receives (in post order) and unexpected
 * messages (in arrival order). A sender matches into the posted queue or
 * appends to the unexpected queue while holding the lock, and so does
 * whoever drains the lanes (lane.h). The lock is biased towards the
 * receiving rank (util/biased_lock.h): while only its thread posts,
 * drains and probes, it takes the lock with plain stores; a sender on the
 * mailbox path, the network thread or a lane being opened revokes that.
 * The first line is what the lock holder touches; `lanes` are written
 * under the lock and read lock-free by the receiving rank's every poll
 * (`nlanes` published last), so they have the next line: on the lock's
 * line, those polls took the line away from every sender on the mailbox
 * path (64 KiB streaming 13 -> 9 GB/s). */
struct mailbox {
    struct biased_lock lock;
    int probers;                              /* threads blocked in MPI_Probe: wake on arrival */
    struct strand_request *posted_head, *posted_tail;
    struct envelope *unexpected_head, *unexpected_tail;
    struct envelope *free_envelopes;          /* under lock */
    _Alignas(64) atomic_int nlanes;
    struct lane *lanes[MAILBOX_LANES];
    struct atomic_stack returned_envelopes;   /* consumed envelopes, given back lock-free */
};

/* The lanes a rank sends on, found by the receiver's rank_uid() in a small
 * direct-mapped cache (a miss looks in the receiver's mailbox). `denied`
 * remembers, per entry, one receiver (uid + 1) whose lanes were all taken.
 * `owned` lists the rank's lanes, for the release when the rank ends.
 * `offers` are the offers of mid-sized messages it made and has not seen
 * taken (lane.h; allocated with the first, the rank's thread's alone). */
enum { OUTGOING_LANE_CACHE = 64 };
struct outgoing_lanes {
    _Atomic(struct lane *) cache[OUTGOING_LANE_CACHE];
    atomic_int denied[OUTGOING_LANE_CACHE];
    struct lite_lock lock;                    /* `owned` */
    struct lane *owned;
    int noffers;
    unsigned offer_polls;                     /* pt2pt_progress calls while noffers > 0 */
    uint64_t offers_due_ns;                   /* the earliest deadline of `offers`; 0: some have none yet */
    struct lane_offer_record *offers;         /* LANE_OFFERS_MAX */
};

/* `free` belongs to the rank's MPI-calling thread; with
 * MPI_THREAD_MULTIPLE its threads take `lock` for it. Threads that are
 * not the rank's (MPI_Grequest_complete from anywhere, the I/O thread)
 * give requests back through `returned`, taken whole when `free` runs
 * dry. So the per-message alloc and free take no atomic instruction. */
struct request_pool {
    struct lite_lock lock;          /* `free` under MPI_THREAD_MULTIPLE; `detached` always */
    struct strand_request *free;
    struct atomic_stack returned;
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
    struct outgoing_lanes lanes_out;
};

#endif
