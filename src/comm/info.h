/* Info objects, for subsystems that read hints (I/O, windows, spawn). */
#ifndef STRAND_COMM_INFO_H
#define STRAND_COMM_INFO_H

#include "mpi.h"

/* NULL unless `info` is a live info object. */
struct strand_info *info_lookup(MPI_Info info);
/* The value stored under `key`, or NULL (also for MPI_INFO_NULL). */
const char *info_value(MPI_Info info, const char *key);

/* Calls fn on every (key, value) in insertion order (none for MPI_INFO_NULL). */
void info_visit(MPI_Info info, void (*fn)(const char *key, const char *value, void *arg), void *arg);
/* A new info object owned by the calling rank holding the n pairs
 * (keys valid and distinct); NULL when out of memory. */
MPI_Info info_build(const char *const *keys, const char *const *values, int n);

#endif
