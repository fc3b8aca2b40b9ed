/* One TCP connection per pair of node processes (tcp.c): what the acceptor
 * of a connection does with it once its HELLO says who is calling. Pure
 * functions of the two identities and of the acceptor's own connection to
 * that peer, so that the tie-break is tested on its own
 * (tests/unit/test_tcp_pair).
 *
 * Both sides of a simultaneous open decide alike: the connection opened by
 * the lower (job id, node index) wins. Ours is switched away from only
 * while nothing but HELLO was written on it (frames wait on its queue
 * until HELLO_ACK), so no frame is written on two connections and none
 * overtakes another; a connection that carried or may carry our frames
 * is never given up for another. */
#ifndef STRAND_NET_TCP_PAIR_H
#define STRAND_NET_TCP_PAIR_H

#include <stdbool.h>
#include <stdint.h>

/* The acceptor's own connection to the calling peer, as far as it goes. */
enum pair_ours {
    PAIR_OURS_NONE,             /* none, or closed and not being redone */
    PAIR_OURS_SETTING_UP,       /* connecting, refused and waiting to retry, or waiting for HELLO_ACK */
    PAIR_OURS_OPEN,             /* answered: our frames may be on it */
};

enum pair_choice {
    PAIR_ADOPT,                 /* we send on the caller's connection too */
    PAIR_ADOPT_REPLACING,       /* as ADOPT; our queued frames move to it, ours is given up */
    PAIR_RECEIVE_ONLY,          /* it carries the caller's frames only; we send on ours */
};

/* True when the connection (peer_job, peer_node) opened wins over the one
 * we (self_job, self_node) opened: the lower identity's wins. */
static inline bool pair_peer_wins(uint64_t self_job, uint64_t self_node, uint64_t peer_job, uint64_t peer_node)
{
    return peer_job != self_job ? peer_job < self_job : peer_node < self_node;
}

static inline enum pair_choice pair_choose(enum pair_ours ours, bool peer_wins)
{
    switch (ours) {
    case PAIR_OURS_NONE:
        return PAIR_ADOPT;
    case PAIR_OURS_SETTING_UP:
        return peer_wins ? PAIR_ADOPT_REPLACING : PAIR_RECEIVE_ONLY;
    case PAIR_OURS_OPEN:
    default:
        return PAIR_RECEIVE_ONLY;
    }
}

#endif
