/* The job's key-value store, as a node process sees it (DESIGN §12): what
 * the static addressing rule cannot derive is put here and looked up
 * lazily, never exchanged all-to-all at startup.
 *
 * Served by the mpiexec that started the job (STRAND_KV_ADDR=host:port,
 * a line protocol over TCP, see launcher/kvs.c). Without it (a program run
 * without mpiexec, a single-process job) nothing is available.
 *
 * Threads: any thread may call these; calls are serialized by one lock and
 * each is one synchronous round trip on a connection of its own (used on
 * rare paths only: a port that was taken, a connection that was refused). */
#ifndef STRAND_NET_KV_H
#define STRAND_NET_KV_H

#include <stdbool.h>
#include <stddef.h>

/* True when the job has a store this process can reach. */
bool net_kv_available(void);
/* Stores `value` under `key` for the whole job. Returns 0, or -1 (the
 * reason in why[why_len]). Keys and values: no spaces or newlines. */
int net_kv_put(const char *key, const char *value, char *why, size_t why_len);
/* Looks `key` up: 1 with the value in value[len], 0 when nobody put it
 * (yet), -1 when the store cannot be reached. */
int net_kv_get(const char *key, char *value, size_t len);
/* Any request line of the protocol (no newline); true with the answer
 * line in answer[len]. Used by mpiexec's remote node agent. */
bool net_kv_request(const char *request, char *answer, size_t len);

/* The name service (src/dpm/name.c): the server named by
 * STRAND_NAMESERVER (host:port, e.g. from mpiexec --nameserver) when set,
 * else the job's store; NULL when there is neither. */
const char *net_names_address(void);
/* One request line of the name verbs (publish, unpublish, lookup: see
 * launcher/kvs.h) to that server; true with the answer line. */
bool net_names_request(const char *request, char *answer, size_t len);

#endif
