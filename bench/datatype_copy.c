/* Copy-engine throughput: dt_copy for the layouts of bench/datatype.c (1 MiB
 * of doubles as a stride-2 vector; an array of structs with a gap) against
 * memcpy of the same number of bytes. Links libstrand statically:
 *   cc -O2 -Iinclude -Isrc bench/datatype_copy.c .libs/libstrand.a -lurcu -lhwloc -ldl -pthread
 * Prints GB/s of data moved (bytes of the type signature per second). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datatype/datatype.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of `reps` runs of fn, in GB/s for `bytes` per run. */
#define MEASURE(label, bytes, reps, stmt)                                            \
    do {                                                                             \
        double best = 1e30;                                                          \
        for (int r_ = 0; r_ < (reps); r_++) {                                        \
            double t0_ = now();                                                      \
            stmt;                                                                    \
            double t_ = now() - t0_;                                                 \
            if (t_ < best)                                                           \
                best = t_;                                                           \
        }                                                                            \
        printf("%-40s %8.2f GB/s\n", label, (double)(bytes) / best / 1e9);          \
    } while (0)

struct particle { double pos[3]; int id; char pad[4]; double mass; char unused[16]; };

int main(void)
{
    const size_t n = (1 << 20) / sizeof(double);       /* 1 MiB of doubles */
    double *strided = malloc(2 * n * sizeof(double)), *dense = malloc(n * sizeof(double));
    double *strided2 = malloc(2 * n * sizeof(double));
    for (size_t i = 0; i < 2 * n; i++)
        strided[i] = (double)i;
    memset(strided2, 0, 2 * n * sizeof(double));
    MPI_Datatype v;
    /* Types are built through the engine's internal constructors (no MPI_Init). */
    const char *why;
    dt_make_hvector((int)n, 1, 2 * sizeof(double), MPI_DOUBLE, &v, &why);
    dt_layout_build(v);
    v->committed = true;
    size_t bytes = n * sizeof(double);
    int reps = 200;
    MEASURE("memcpy 1 MiB", bytes, reps, memcpy(dense, strided, bytes));
    MEASURE("vector(stride 2) -> contiguous", bytes, reps, dt_copy(dense, n, MPI_DOUBLE, strided, 1, v));
    MEASURE("contiguous -> vector(stride 2)", bytes, reps, dt_copy(strided2, 1, v, dense, n, MPI_DOUBLE));
    MEASURE("vector -> vector", bytes, reps, dt_copy(strided2, 1, v, strided, 1, v));

    /* Struct: 3 doubles + int + double of a 64-byte particle (36 data bytes). */
    size_t np = (1 << 20) / 36 + 1;
    struct particle *ps = calloc(np, sizeof *ps), *pd = calloc(np, sizeof *pd);
    char *packed = malloc(np * 36);
    int bl[3] = { 3, 1, 1 };
    MPI_Aint disp[3] = { offsetof(struct particle, pos), offsetof(struct particle, id),
                         offsetof(struct particle, mass) };
    MPI_Datatype types[3] = { MPI_DOUBLE, MPI_INT, MPI_DOUBLE }, s, sr;
    dt_make_struct(3, bl, disp, types, &s, &why);
    dt_make_resized(s, 0, sizeof(struct particle), &sr, &why);
    dt_layout_build(sr);
    sr->committed = true;
    size_t sbytes = np * sr->size;
    MEASURE("memcpy (struct data bytes)", sbytes, reps, memcpy(packed, ps, sbytes));
    MEASURE("struct array -> packed", sbytes, reps, dt_copy(packed, sbytes, MPI_BYTE, ps, np, sr));
    MEASURE("struct array -> struct array", sbytes, reps, dt_copy(pd, np, sr, ps, np, sr));
    printf("check: %g %g\n", dense[n - 1], strided2[2 * n - 2]);
    return 0;
}
