/* A client of examples/server.c, started as a separate command:
 *
 *   mpiexec -n 3 ./client [service | port-name] [requests]
 *
 * Rank 0 looks the service up (default "example-squares"; it waits up to
 * 30 s for the server to publish it), or takes a port name as given
 * (what the server printed, "strand-port:..."); the whole job connects.
 * Each rank sends `requests` numbers (default 100) to server rank
 * (its rank % server size) and checks every square it gets back, then
 * an empty message to say it is done; both sides disconnect. Prints
 * " No Errors" if every answer was right. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_REQUEST = 1, TAG_ANSWER = 2 };

/* Rank 0: the port name, looked up until the server has published it. */
static void find_server(const char *what, char *port)
{
    if (strncmp(what, "strand-port:", 12) == 0 || strchr(what, ':') != NULL) {
        snprintf(port, MPI_MAX_PORT_NAME, "%s", what);
        return;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int tries = 0; MPI_Lookup_name((char *)what, MPI_INFO_NULL, port) != MPI_SUCCESS; tries++) {
        if (tries == 300) {
            fprintf(stderr, "client: no service \"%s\" after 30 s\n", what);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        struct timespec ts = { 0, 100000000 };
        nanosleep(&ts, NULL);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    int rank, errs = 0, total = 0, servers;
    const char *what = argc > 1 ? argv[1] : "example-squares";
    int requests = argc > 2 ? atoi(argv[2]) : 100;
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        find_server(what, port);
    MPI_Comm server;
    MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &server);
    MPI_Comm_remote_size(server, &servers);
    int mine = rank % servers;
    for (int i = 0; i < requests; i++) {
        long value = (long)rank * 1000 + i, square = -1;
        MPI_Send(&value, 1, MPI_LONG, mine, TAG_REQUEST, server);
        MPI_Recv(&square, 1, MPI_LONG, mine, TAG_ANSWER, server, MPI_STATUS_IGNORE);
        if (square != value * value)
            errs++;
    }
    MPI_Send(NULL, 0, MPI_LONG, mine, TAG_REQUEST, server);
    MPI_Comm_disconnect(&server);
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total == 0 ? " No Errors\n" : " Found %d errors\n", total);
    MPI_Finalize();
    return total != 0;
}
