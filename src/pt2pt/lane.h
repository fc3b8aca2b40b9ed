/* Lanes: small messages between two local ranks without the receiver's lock.
 *
 * A lane is a ring of 64-byte slots from one sending rank to one receiving
 * rank. The sender (the producer; the threads of an MPI_THREAD_MULTIPLE
 * sender take the lane's producer lock) writes a message's envelope and
 * data into consecutive slots and publishes it with one release store of
 * the first slot's sequence word. The consumer is whoever holds the
 * receiver's mailbox lock: the receiving rank when it waits, tests or
 * probes (pt2pt_progress), or a sender about to use the mailbox path. It
 * takes the lane's messages in order and matches each into the mailbox as
 * a sender would (posted receive, else unexpected queue). So the
 * messages of one sender reach the matching state in send order, and any
 * message a sender delivers through the mailbox path comes after
 * everything it put in a lane before (that path drains the lanes first).
 *
 * Ownership: a lane is created by its first sender under the receiver's
 * mailbox lock, listed in the receiver's mailbox and in the sender's
 * outgoing lanes, and freed when both ranks have ended. */
#ifndef STRAND_PT2PT_LANE_H
#define STRAND_PT2PT_LANE_H

#include "pt2pt.h"

/* Largest message that travels in a lane (bytes). */
enum { LANE_MAX_BYTES = 1000 };

/* Puts `m` into the sender's lane to `dest`. False when there is no lane
 * (the receiver has MAILBOX_LANES already) or no room: the caller then
 * takes the mailbox path, which drains the lanes first. Any thread of a
 * rank, with `self` its rank. */
bool lane_send(struct rank *self, struct rank *dest, const struct message *m);

/* Whether a lane into `mb` has a message waiting (a hint, lock-free). */
bool lanes_pending(struct mailbox *mb);

/* Under the mailbox lock of `dest`: matches every waiting lane message into
 * the mailbox; true when a blocked prober must be woken. */
bool lanes_drain(struct rank *dest);

/* When a rank ends: its share of the lanes into and out of it. */
void lanes_release(struct rank *r);

/* Under the mailbox lock (mailbox.c): one message from a local sender,
 * matched into the posted queue or queued unexpected (eager). True when a
 * blocked prober must be woken. */
bool mailbox_match_eager(struct rank *dest, const struct message *m);

#endif
