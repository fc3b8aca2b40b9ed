/*
 * hello: every rank says hello, and rank 0 collects the greetings.
 *
 *   mpicc hello.c -o hello
 *   mpiexec -n 8 ./hello
 *
 * Each rank prints its own line (the lines may come out in any order),
 * then sends its greeting to rank 0 as a message.  Rank 0 receives one
 * greeting from every other rank, checks that each says what it should,
 * and prints " No Errors" when all n greetings are there.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define MAXLEN 128

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    char greeting[MAXLEN];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    snprintf(greeting, sizeof greeting, "Hello from rank %d of %d", rank,
             size);
    printf("%s\n", greeting);
    fflush(stdout);

    if (rank != 0) {
        /* send the string, including its terminating NUL */
        MPI_Send(greeting, (int)strlen(greeting) + 1, MPI_CHAR, 0, 0,
                 MPI_COMM_WORLD);
    } else {
        int source;
        for (source = 1; source < size; source++) {
            char received[MAXLEN], expected[MAXLEN];
            MPI_Status status;
            /* take the greetings in whatever order they arrive */
            MPI_Recv(received, MAXLEN, MPI_CHAR, MPI_ANY_SOURCE, 0,
                     MPI_COMM_WORLD, &status);
            snprintf(expected, sizeof expected, "Hello from rank %d of %d",
                     status.MPI_SOURCE, size);
            if (strcmp(received, expected) != 0) {
                printf("rank 0: from rank %d expected \"%s\", got \"%s\"\n",
                       status.MPI_SOURCE, expected, received);
                errors++;
            }
        }
        printf("Rank 0 received greetings from all %d ranks\n", size);
    }

    MPI_Finalize();
    if (rank == 0)
        printf(errors ? " Found %d errors\n" : " No Errors\n", errors);
    return errors != 0;
}
