/* The shared collective state of one communicator core: one slot per
 * member (both groups of an intercommunicator), a gate (full barrier) and
 * the algorithm table that every collective on the core goes through. */
#ifndef STRAND_COLL_STATE_H
#define STRAND_COLL_STATE_H

#include <stdatomic.h>
#include <stdint.h>

struct comm_core;
struct coll_args;
struct coll_algorithms;

/* A word that ranks wait on (spin, then futex sleep) until it holds a value. */
struct coll_flag {
    atomic_uint value;
    atomic_uint sleepers;
};

/* Full barrier of all members: use k completes when `arrived` reaches
 * k * members; the last arriver publishes k in `round`. */
struct coll_gate {
    _Alignas(64) atomic_ullong arrived;
    _Alignas(64) struct coll_flag round;
};

/* Eager staging: every member owns a ring of COLL_EAGER_DEPTH entries of
 * COLL_EAGER_BYTES, entry `epoch % depth` for the collective of that epoch.
 * Only the owner writes an entry (the root of a bcast or scatter its data,
 * a gather or reduce member its block), and only once its readers of the
 * previous use have copied out, so a writer runs at most `depth` eager
 * collectives ahead of its slowest reader and never overwrites unread data. */
enum {
    COLL_EAGER_DEPTH = 8,           /* power of two */
    COLL_EAGER_BYTES = 1024,        /* largest block staged per entry */
};

struct coll_eager_entry {
    _Alignas(64) struct coll_flag ready;    /* epoch whose data the entry holds */
    _Alignas(64) struct coll_flag pending;  /* readers that have not copied it out yet */
};

struct coll_slot {
    /* Written by the member, read by its peers. */
    _Alignas(64) struct coll_flag arrive;   /* epoch whose `args` are published (rooted patterns) */
    const struct coll_args *args;           /* the member's arguments for the current epoch */
    /* The member's own bookkeeping. */
    unsigned epoch;                         /* collectives started on this core */
    uint64_t gate_uses;
    /* Written by peers: how many still have to act on this member's epoch. */
    _Alignas(64) struct coll_flag pending;
    struct coll_eager_entry eager[COLL_EAGER_DEPTH];
};

struct coll_core {
    const struct coll_algorithms *algo;
    int nsides;                     /* 1: intracommunicator, 2: intercommunicator */
    struct comm_core *side[2];      /* the core of each group's members */
    int base[2], size[2];           /* slots of each group */
    int nslots;
    atomic_int attached;            /* comm cores using this state */
    struct coll_gate gate;
    char *eager_data;               /* nslots x depth x COLL_EAGER_BYTES; pages touched on first use */
    struct coll_slot slots[];
};

#endif
