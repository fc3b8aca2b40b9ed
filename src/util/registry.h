/* A registry: objects found by a two-word key, read by any thread without
 * a lock (liburcu's RCU hash table, cds_lfht, over the "bulletproof"
 * flavor urcu-bp, whose readers need no registration: rank threads, the
 * threads a rank creates, the network progress thread and the spawn
 * service all read registries).
 *
 * Used for what the runtime looks up at run time by identity: the node
 * processes it talks to (src/net/net.c), the worlds whose ranks it holds
 * (src/core/world.c), its open ports (src/dpm/port.c).
 *
 * Threads and lifetime.
 *  - registry_find, registry_add: any thread, inside
 *    registry_read_lock/unlock; the node found stays valid until the
 *    matching unlock, or for ever if the owner never removes it.
 *  - registry_remove: any thread (inside the read lock as well); the
 *    object may be freed only after registry_synchronize() has returned
 *    in a thread that holds no read lock (every reader that could still
 *    see the node has left its read-side section).
 *  - Nodes are embedded in the owner's object; keys are immutable once
 *    added.
 *
 * The table has a fixed bucket array (no automatic resize): resizing
 * needs liburcu's call_rcu worker threads, which would be created from
 * whatever thread first frees something (possibly a rank thread, whose
 * pthread_create the runtime overrides). Registries hold tens of entries
 * (peers, worlds, ports), far below the bucket count. */
#ifndef STRAND_UTIL_REGISTRY_H
#define STRAND_UTIL_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

#ifndef _LGPL_SOURCE
#define _LGPL_SOURCE
#endif
#include <urcu-bp.h>
#include <urcu/rculfhash.h>

struct registry_node {
    struct cds_lfht_node lfht;
    uint64_t key[2];
};

struct registry {
    struct cds_lfht *table;     /* created on first use */
};

#define REGISTRY_INIT { NULL }

static inline void registry_read_lock(void) { urcu_bp_read_lock(); }
static inline void registry_read_unlock(void) { urcu_bp_read_unlock(); }

/* Under the read lock: the node with this key, or NULL. */
struct registry_node *registry_find(struct registry *r, uint64_t key0, uint64_t key1);
/* Under the read lock: adds `n` (its key set by the caller) unless a node
 * with the same key is there; returns the node now in the table (`n` or
 * the one that was first). NULL when out of memory for the table. */
struct registry_node *registry_add(struct registry *r, struct registry_node *n);
/* Under the read lock: takes `n` out (see the lifetime rule above). */
void registry_remove(struct registry *r, struct registry_node *n);
/* Not under the read lock: waits until no reader can still see a node
 * removed before the call. */
static inline void registry_synchronize(void) { urcu_bp_synchronize_rcu(); }

#endif
