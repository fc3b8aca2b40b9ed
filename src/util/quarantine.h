/* Deferred free for objects whose handles are validated by a magic word:
 * a freed object's memory is kept for the next QUARANTINE_SLOTS frees, so a
 * stale handle still finds a cleared magic (MPI_ERR_COMM, ...) instead of
 * a new object that reused the memory. Bounded memory, no lock. */
#ifndef STRAND_UTIL_QUARANTINE_H
#define STRAND_UTIL_QUARANTINE_H

void quarantine_free(void *object);

#endif
