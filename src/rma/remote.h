/* One-sided communication with members in other node processes
 * (remote.c). Origin side: the `rma_remote_ops` table and the frames of
 * the synchronization calls; target side: every frame is served by the
 * progress thread of the target's node process (src/net), which never
 * waits and never calls an MPI entry point; the target rank takes no part.
 *
 * Completion: every request frame is answered (ACK, or GET_REPLY chunks);
 * an origin counts its unanswered frames in its member entry
 * (`remote_pending`) and its sync calls wait for zero (rma_remote_drain).
 * So after MPI_Win_unlock, MPI_Win_complete and MPI_Win_fence return, the
 * data is at the target; and since every member drains before the
 * barrier of MPI_Win_free, no frame can arrive for a freed window.
 *
 * Frames one rank sends to one node process are served in order (net.h),
 * so UNLOCK and COMPLETE are served after the operations before them.
 *
 * Passive target: MPI_Win_lock sends LOCK and returns; the operations and
 * UNLOCK follow at once, so lock-put-unlock costs one round trip (the
 * unlock waits for every answer, the grant's included). The target holds
 * the frames that arrive while the request waits in its lock and serves
 * them, in order, once it is granted (struct remote_lock). */
#ifndef STRAND_RMA_REMOTE_H
#define STRAND_RMA_REMOTE_H

#include <stdbool.h>
#include <stdint.h>

#include "../net/wire.h"

struct net_peer;
struct strand_win;
struct win_core;

/* A window id no other window of the job has (any rank thread). */
uint64_t rma_window_id_new(void);

/* Origin side (the calling rank's thread); rma_remote_ops is in rma.h. */
/* Waits until every frame the caller sent on this window was answered. */
void rma_remote_drain(struct strand_win *w);
/* Passive target on a remote member: requests the lock and waits for the grant; releases it. */
void rma_remote_lock(struct strand_win *w, int target, bool exclusive);
void rma_remote_unlock(struct strand_win *w, int target, bool exclusive);
/* Active target: tells remote `origin` that the caller posted to it; tells
 * remote `target` that the caller's access epoch to it ended. */
void rma_remote_post(struct strand_win *w, int origin);
void rma_remote_complete(struct strand_win *w, int target);

/* Target side. lock.c: `origin`'s lock request on `target` was granted
 * (any thread): answers the origin and schedules the frames held for the
 * request on the calling thread, which serves them in
 * rma_remote_serve_held once it is out of the lock code. */
void rma_remote_lock_granted(struct win_core *core, int target, int origin);
/* lock.c, before `origin`'s request on `target` can be granted: its
 * frames are held from now until rma_remote_lock_granted. */
void rma_remote_lock_request_pending(struct win_core *core, int target, int origin);
/* lock.c, at the end of every lock operation that may grant (any thread):
 * serves what this thread scheduled, unless it already does so further up
 * its stack (a held UNLOCK served here may grant again: those are served
 * by the same loop). */
void rma_remote_serve_held(void);

/* For the network layer (progress thread). */
void rma_remote_serve(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload);
bool rma_remote_window(uint64_t id, uint32_t dest, uint32_t source, struct wire_window *out);
bool rma_remote_acc_element(uint32_t op, uint32_t element, struct wire_element *out);

#endif
