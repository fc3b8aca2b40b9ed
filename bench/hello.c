/*
 * hello.c - start-up probe for bench/launch (Strand benchmark suite).
 *
 * MPI_Init, one pass of an int around all ranks (0 -> 1 -> ... -> 0, each
 * rank adds one; rank 0 checks that it comes back equal to the number of
 * ranks), optionally a hold, then MPI_Finalize.  Rank 0 prints:
 *   hello_init N SECONDS seconds   time spent in MPI_Init on rank 0
 *   hello_ring N SECONDS seconds   time of the ring pass
 * With --hold S every rank sleeps up to S seconds after the ring, so that
 * bench/launch can read the memory of the live ranks; rank 0 first prints
 * "hello_ready N" to say the ranks are all alive.  --release FILE ends the
 * hold early as soon as FILE exists.
 *
 * Run: mpiexec -n N ./hello [--hold SECONDS [--release FILE]]
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HELLO_TAG 5
#define HELLO_POLL_SECONDS 0.05

typedef struct {
    double hold;         /* seconds to sleep after the ring, 0 = none */
    const char *release; /* file whose existence ends the hold, or NULL */
} hello_opts;

static double hello_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void hello_sleep(double seconds)
{
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0)
        ; /* interrupted: sleep the rest */
}

static int hello_file_exists(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    fclose(f);
    return 1;
}

/* Returns 0 on success, -1 on a bad command line. */
static int hello_parse(int argc, char **argv, hello_opts *o)
{
    o->hold = 0.0;
    o->release = NULL;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--hold") && i + 1 < argc) {
            o->hold = strtod(argv[++i], &end);
            if (*end != '\0' || o->hold < 0)
                return -1;
        } else if (!strcmp(argv[i], "--release") && i + 1 < argc) {
            o->release = argv[++i];
        } else {
            return -1;
        }
    }
    return 0;
}

/* Passes a counter around the ring once; returns it as rank 0 got it back
 * (the number of ranks if all went well), 0 on other ranks. */
static int hello_ring(MPI_Comm comm)
{
    int rank, nprocs, token = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);

    if (nprocs == 1) {
        int one = 1;
        MPI_Sendrecv(&one, 1, MPI_INT, 0, HELLO_TAG, &token, 1, MPI_INT, 0,
                     HELLO_TAG, comm, MPI_STATUS_IGNORE);
        return token;
    }
    if (rank == 0) {
        token = 1;
        MPI_Send(&token, 1, MPI_INT, 1, HELLO_TAG, comm);
        MPI_Recv(&token, 1, MPI_INT, nprocs - 1, HELLO_TAG, comm,
                 MPI_STATUS_IGNORE);
        return token;
    }
    MPI_Recv(&token, 1, MPI_INT, rank - 1, HELLO_TAG, comm, MPI_STATUS_IGNORE);
    token++;
    MPI_Send(&token, 1, MPI_INT, (rank + 1) % nprocs, HELLO_TAG, comm);
    return 0;
}

static void hello_hold(const hello_opts *o)
{
    double end = hello_now() + o->hold;
    while (hello_now() < end) {
        if (o->release != NULL && hello_file_exists(o->release))
            return;
        hello_sleep(HELLO_POLL_SECONDS);
    }
}

int main(int argc, char **argv)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    double start = hello_now(), init_done, ring_done;
    int rank, nprocs, token;
    hello_opts opts;

    MPI_Init(&argc, &argv);
    init_done = hello_now();
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    if (hello_parse(argc, argv, &opts) != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: %s [--hold SECONDS [--release FILE]]\n",
                    argv[0]);
        MPI_Finalize();
        return 1;
    }

    token = hello_ring(comm);
    ring_done = hello_now();
    if (rank == 0) {
        if (token != nprocs) {
            fprintf(stderr, "hello: ring token came back as %d, want %d\n",
                    token, nprocs);
            MPI_Abort(comm, 3);
        }
        printf("hello_init %d %.6f seconds\n", nprocs, init_done - start);
        printf("hello_ring %d %.6f seconds\n", nprocs, ring_done - init_done);
        if (opts.hold > 0)
            printf("hello_ready %d\n", nprocs);
        fflush(stdout);
    }
    if (opts.hold > 0)
        hello_hold(&opts);
    MPI_Finalize();
    return 0;
}
