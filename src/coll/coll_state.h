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
struct coll_hier;

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

/* Eager staging: every member owns a ring of `eager_depth` entries,
 * entry `epoch % depth` for the collective of that epoch. Only the owner
 * writes its entries (the root of a bcast or scatter its data, a gather or
 * reduce member its block). A block of up to COLL_EAGER_INLINE bytes is
 * stored in the entry's own cache line, next to its ready flag; a larger
 * one, up to COLL_EAGER_BYTES, in a shallower ring of COLL_EAGER_BLOCKS
 * areas. A writer reuses an entry (area) only when every member has
 * completed the collective that last could have used it (`done` >= epoch -
 * depth), so it runs at most `depth` collectives ahead of the slowest
 * member and never overwrites unread data. Small communicators get deeper
 * rings: oversubscribed, a root that runs further ahead makes each member
 * wake less often per call (64-rank 8-byte bcast 2.1 -> 1.55 us), and the
 * memory (64 B x depth per member, touched only when used) stays small;
 * large ones keep 16 KiB per member. */
enum {
    COLL_EAGER_DEPTH_SMALL_COMM = 1024, /* entries per member, <= 64 members; power of two */
    COLL_EAGER_DEPTH = 256,             /* entries per member otherwise; power of two */
    COLL_EAGER_SMALL_COMM = 64,
    COLL_EAGER_INLINE = 48,             /* bytes stored in the entry itself */
    COLL_EAGER_BLOCKS = 16,             /* larger-block areas per member; power of two */
    COLL_EAGER_BYTES = 1024,            /* largest staged block */
};

/* One cache line: a reader of a small block fetches flag and data at once.
 * Its sleepers are counted in the owner's slot (`eager_sleepers`), a line
 * the owner keeps cached, so publishing does not wait for this one. */
struct coll_eager_entry {
    _Alignas(64) atomic_uint ready;         /* epoch whose data the entry holds */
    /* Aligned for any element type a reduction reads in place. */
    _Alignas(16) char data[COLL_EAGER_INLINE];
};
_Static_assert(sizeof(struct coll_eager_entry) == 64, "a staging entry is one cache line");

struct coll_slot {
    /* Written by the member, read by its peers. */
    _Alignas(64) struct coll_flag arrive;   /* epoch whose `args` are published (rooted patterns) */
    const struct coll_args *args;           /* the member's arguments for the current epoch */
    /* The member's own bookkeeping. */
    unsigned epoch;                         /* collectives started on this core */
    uint64_t gate_uses;
    /* Written by peers: how many still have to act on this member's epoch. */
    _Alignas(64) struct coll_flag pending;
    /* Written by the member after each collective: the last epoch it completed. */
    _Alignas(64) struct coll_flag done;
    unsigned eager_clear;           /* own: every member is known done up to here */
    /* Readers asleep on one of this member's ring entries. */
    _Alignas(64) atomic_uint eager_sleepers;
};

struct coll_core {
    const struct coll_algorithms *algo;
    /* Cores spanning node processes: this node process's members and the
     * other node processes (src/coll/hier.c); else NULL. */
    struct coll_hier *hier;
    int nsides;                     /* 1: intracommunicator, 2: intercommunicator */
    struct comm_core *side[2];      /* the core of each group's members */
    int base[2], size[2];           /* slots of each group */
    int nslots;
    unsigned eager_depth;           /* ring entries per member (see above) */
    atomic_int attached;            /* comm cores using this state */
    struct coll_gate gate;
    /* Staging memory, mapped by the first member that stages anything on
     * the core (so creating communicators costs nothing more): nslots x
     * eager_depth entries, then nslots x COLL_EAGER_BLOCKS areas. */
    _Atomic(struct coll_eager_entry *) eager;
    struct coll_slot slots[];
};

#endif
