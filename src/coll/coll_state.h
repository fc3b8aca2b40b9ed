/* The shared collective state of one communicator core. */
#ifndef STRAND_COLL_STATE_H
#define STRAND_COLL_STATE_H

#include <stdatomic.h>

struct coll_core {
    atomic_uint barrier_arrived;   /* ranks arrived in the current barrier round */
    atomic_uint barrier_round;     /* bumped when a round completes */
};

#endif
