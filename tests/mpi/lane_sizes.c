/*
 * lane_sizes: every message size around the lanes' limits, streamed.
 *
 * Rank 2k streams to rank 2k+1, in windows of MPI_Isend, messages whose
 * sizes walk 0 .. 1100 bytes: each size that fits a lane's slot exactly
 * or spills into one more (a slot is 32 bytes and the first holds a
 * 24-byte header, so 8/9, 40/41, ... bytes), the largest lane message
 * (1024) and the first that takes the mailbox path (1025), with many
 * lane laps and wraps between. Half the windows the receiver posts its
 * receives first, half it posts them after the window has arrived
 * (unexpected). Every fourth window the sender describes its data with a
 * strided type (the lane copy through the datatype engine). Each receive
 * checks the bytes, the guard past them, and the status (source, tag,
 * count); one tag per window, in order, so a message overtaking another
 * of the same window shows as wrong bytes.
 * With an odd rank count the last rank idles.
 *
 * Arguments: [laps] (default 3): walks through the sizes.
 */
#include <stdbool.h>

#include "testutil.h"

enum { MAX_BYTES = 1100, WINDOW = 48, CAPACITY = MAX_BYTES + 16 };

/* The size of message `i` of the walk: the slot boundaries first, then
 * every size in a stride that still reaches all residues modulo 32. */
static int walk_size(int i)
{
    static const int edges[] = {0, 1, 7, 8, 9, 39, 40, 41, 71, 72, 73, 1000, 1023, 1024, 1025, 1056, 1057, 1100};
    enum { NEDGES = sizeof edges / sizeof edges[0] };
    if (i < NEDGES)
        return edges[i];
    return ((i - NEDGES) * 37) % (MAX_BYTES + 1);
}

enum { WALK = 18 + MAX_BYTES + 1 };

static unsigned seed_of(int lap, int i)
{
    return (unsigned)(lap * WALK + i) * 7u + 3u;
}

/* The strided send type: `bytes` data bytes, each followed by a hole. */
static int send_strided(const unsigned char *packed, int bytes, int dest, int tag, MPI_Request *req,
                        unsigned char *scratch)
{
    MPI_Datatype vec;
    for (int b = 0; b < bytes; b++)
        scratch[2 * b] = packed[b];
    MPI_Type_vector(bytes > 0 ? bytes : 1, 1, 2, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    int rc = MPI_Isend(scratch, bytes > 0 ? 1 : 0, vec, dest, tag, MPI_COMM_WORLD, req);
    MPI_Type_free(&vec);
    return rc;
}

static int sender(int peer, int laps)
{
    unsigned char *data = tu_malloc((size_t)WINDOW * CAPACITY);
    unsigned char *strided = tu_malloc((size_t)WINDOW * 2 * CAPACITY);
    MPI_Request reqs[WINDOW];
    int window = 0;
    for (int lap = 0; lap < laps; lap++)
        for (int first = 0; first < WALK; first += WINDOW, window++) {
            int n = WALK - first < WINDOW ? WALK - first : WINDOW;
            for (int j = 0; j < n; j++) {
                int bytes = walk_size(first + j);
                unsigned char *buf = data + (size_t)j * CAPACITY;
                tu_fill(buf, (size_t)bytes, seed_of(lap, first + j));
                if (window % 4 == 3)
                    send_strided(buf, bytes, peer, window, &reqs[j], strided + (size_t)j * 2 * CAPACITY);
                else
                    MPI_Isend(buf, bytes, MPI_BYTE, peer, window, MPI_COMM_WORLD, &reqs[j]);
            }
            MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
            int ack;
            MPI_Recv(&ack, 1, MPI_INT, peer, TU_TAG_RESERVED, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    free(strided);
    free(data);
    return 0;
}

static int receiver(int peer, int laps)
{
    unsigned char *data = tu_malloc((size_t)WINDOW * CAPACITY);
    MPI_Request reqs[WINDOW];
    MPI_Status stats[WINDOW];
    int errs = 0, window = 0;
    for (int lap = 0; lap < laps; lap++)
        for (int first = 0; first < WALK; first += WINDOW, window++) {
            int n = WALK - first < WINDOW ? WALK - first : WINDOW;
            bool late = window % 2 == 1;
            if (late) {
                /* the whole window waits unexpected before anything is posted */
                int flag = 0;
                MPI_Status st;
                while (!flag)
                    MPI_Iprobe(peer, window, MPI_COMM_WORLD, &flag, &st);
                tu_sleep_ms(1);
            }
            tu_guard(data, (size_t)WINDOW * CAPACITY);
            for (int j = 0; j < n; j++)
                MPI_Irecv(data + (size_t)j * CAPACITY, CAPACITY, MPI_BYTE, peer, window, MPI_COMM_WORLD, &reqs[j]);
            MPI_Waitall(n, reqs, stats);
            for (int j = 0; j < n && errs < 10; j++) {
                int bytes = walk_size(first + j);
                char what[96];
                snprintf(what, sizeof what, "lap %d window %d message %d (%d bytes, %s)", lap, window, j, bytes,
                         late ? "unexpected" : "posted");
                errs += tu_check_status(&stats[j], peer, window, MPI_BYTE, bytes, what);
                errs += tu_check_data(data + (size_t)j * CAPACITY, (size_t)bytes, CAPACITY, seed_of(lap, first + j),
                                      what);
            }
            int ack = 0;
            MPI_Send(&ack, 1, MPI_INT, peer, TU_TAG_RESERVED, MPI_COMM_WORLD);
        }
    free(data);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int laps = argc > 1 ? atoi(argv[1]) : 3;
    int rank = tu_rank(), size = tu_size(), errs = 0;
    if (rank % 2 == 0 && rank + 1 < size)
        errs += sender(rank + 1, laps);
    else if (rank % 2 == 1)
        errs += receiver(rank - 1, laps);
    return tu_finish(errs);
}
