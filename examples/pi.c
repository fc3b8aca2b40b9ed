/*
 * pi: compute pi as the integral of 4 / (1 + x^2) from 0 to 1.
 *
 *   mpicc pi.c -o pi
 *   mpiexec -n 8 ./pi [intervals]
 *
 * The interval [0, 1] is cut into n strips (default 10,000,000).  Rank r
 * adds up the midpoint rule over strips r, r + size, r + 2 size, ... and
 * sends its partial sum to rank 0, which adds the parts in rank order,
 * prints the result and checks it against M_PI (|error| < 1e-9).
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    long n = 10000000, i;
    double h, sum = 0.0, part, t0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        n = atol(argv[1]);
    t0 = MPI_Wtime();

    h = 1.0 / (double)n;
    for (i = rank; i < n; i += size) {
        double x = h * ((double)i + 0.5); /* midpoint of strip i */
        sum += 4.0 / (1.0 + x * x);
    }
    part = h * sum;

    if (rank != 0) {
        MPI_Send(&part, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    } else {
        double pi = part, error;
        int r;
        for (r = 1; r < size; r++) {
            double other;
            MPI_Recv(&other, 1, MPI_DOUBLE, r, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            pi += other;
        }
        error = pi > M_PI ? pi - M_PI : M_PI - pi; /* no libm needed */
        printf("pi is approximately %.16f, error %.3g (%ld intervals, %d "
               "ranks, %.3f s)\n", pi, error, n, size, MPI_Wtime() - t0);
        if (!(error < 1e-9)) {
            printf("rank 0: the error is too large (limit 1e-9)\n");
            errors++;
        }
    }

    MPI_Finalize();
    if (rank == 0)
        printf(errors ? " Found %d errors\n" : " No Errors\n", errors);
    return errors != 0;
}
