/* A server that other MPI jobs connect to (MPI-2.2 §10.4): run it and
 * examples/client.c as two separate commands.
 *
 *   mpiexec -n 2 ./server [clients] [service]
 *
 * Rank 0 opens a port, publishes it under the service name (default
 * "example-squares") and prints it; the whole job then accepts `clients`
 * clients (default 1), one after the other. Each client's ranks send
 * numbers, which the server's ranks answer with their squares (client
 * rank r is served by server rank r % size); a client ends its session
 * with an empty message to every server rank, then both sides
 * disconnect. Finally the server unpublishes the name and closes the
 * port, and prints " No Errors" if every request was well formed.
 *
 * Separately started jobs find the name through a name server: start
 * `strand-nameserver` and give its HOST:PORT to both mpiexec commands
 * (`mpiexec --nameserver HOST:PORT ...`); or pass the printed port name
 * to the client instead of the service name. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { TAG_REQUEST = 1, TAG_ANSWER = 2 };

/* One client: every request to this rank gets its square, until each of
 * the client's ranks that this rank serves has said it is done. */
static int serve(MPI_Comm client)
{
    int rank, size, nclients, done = 0, mine = 0, errs = 0;
    MPI_Comm_rank(client, &rank);
    MPI_Comm_size(client, &size);
    MPI_Comm_remote_size(client, &nclients);
    for (int r = rank; r < nclients; r += size)
        mine++;
    while (done < mine) {
        long value;
        int count;
        MPI_Status st;
        MPI_Recv(&value, 1, MPI_LONG, MPI_ANY_SOURCE, TAG_REQUEST, client, &st);
        MPI_Get_count(&st, MPI_LONG, &count);
        if (count == 0) {
            done++;
            continue;
        }
        if (st.MPI_SOURCE % size != rank)
            errs++;         /* a request for another server rank */
        long square = value * value;
        MPI_Send(&square, 1, MPI_LONG, st.MPI_SOURCE, TAG_ANSWER, client);
    }
    return errs;
}

int main(int argc, char **argv)
{
    int rank, errs = 0, total = 0;
    int clients = argc > 1 ? atoi(argv[1]) : 1;
    char *service = argc > 2 ? argv[2] : "example-squares";
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        MPI_Publish_name(service, MPI_INFO_NULL, port);
        printf("server: \"%s\" is at %s\n", service, port);
        fflush(stdout);
    }
    for (int c = 0; c < clients; c++) {
        MPI_Comm client;
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &client);
        errs += serve(client);
        MPI_Comm_disconnect(&client);
    }
    if (rank == 0) {
        MPI_Unpublish_name(service, MPI_INFO_NULL, port);
        MPI_Close_port(port);
    }
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total == 0 ? " No Errors\n" : " Found %d errors\n", total);
    MPI_Finalize();
    return total != 0;
}
