/* mpiexec: refuse a program built for another MPI (launcher/foreign.c). */
#ifndef STRAND_LAUNCHER_FOREIGN_H
#define STRAND_LAUNCHER_FOREIGN_H

/* 0 if `program` may run with `nranks` ranks; -1 (after a message on
 * stderr) if it needs another MPI's library, so that under Strand its ranks
 * would each run alone. */
int foreign_mpi_check(const char *program, long nranks);

#endif
