/*
 * ring: a token travels around all ranks, several times.
 *
 *   mpicc ring.c -o ring
 *   mpiexec -n 8 ./ring [laps]
 *
 * Rank 0 starts the token at 0.  Each rank adds one to the token and
 * passes it to its right-hand neighbour (rank + 1, wrapping round to 0).
 * After `laps` trips (default 10) the token is back at rank 0 and must be
 * laps * size; every rank also checks the value it receives on the way.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, laps = 10, lap, token = 0, errors = 0;
    int left, right;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        laps = atoi(argv[1]);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    for (lap = 0; lap < laps; lap++) {
        if (rank == 0) {
            token++; /* rank 0's own step */
            if (size > 1) {
                MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
                MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            }
        } else {
            MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            /* before us: `lap` full laps plus ranks 0..rank-1 */
            if (token != lap * size + rank) {
                printf("rank %d, lap %d: got token %d, expected %d\n", rank,
                       lap, token, lap * size + rank);
                errors++;
            }
            token++;
            MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
        }
    }

    if (rank == 0) {
        if (token != laps * size) {
            printf("rank 0: the token came back as %d, expected %d\n", token,
                   laps * size);
            errors++;
        } else
            printf("The token went %d times around %d ranks: %d\n", laps,
                   size, token);
    }
    /* tell rank 0 whether the others saw anything wrong */
    if (rank != 0)
        MPI_Send(&errors, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    else {
        int r, e;
        for (r = 1; r < size; r++) {
            MPI_Recv(&e, 1, MPI_INT, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errors += e;
        }
    }

    MPI_Finalize();
    if (rank == 0)
        printf(errors ? " Found %d errors\n" : " No Errors\n", errors);
    return errors != 0;
}
