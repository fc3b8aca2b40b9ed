/* Info objects, for subsystems that read hints (I/O, windows, spawn). */
#ifndef STRAND_COMM_INFO_H
#define STRAND_COMM_INFO_H

#include "mpi.h"

/* NULL unless `info` is a live info object. */
struct strand_info *info_lookup(MPI_Info info);
/* The value stored under `key`, or NULL (also for MPI_INFO_NULL). */
const char *info_value(MPI_Info info, const char *key);

#endif
