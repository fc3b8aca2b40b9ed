/*
 * net_progress: work for a rank that is busy outside MPI is done by its
 * node process all the same (run with mpiexec -n 2 --nodes 2: the two
 * ranks in different node processes). Rank 0 computes in a loop that
 * makes no MPI call, watching its own memory, while rank 1
 *   1. runs 200 passive-target epochs (lock, put, unlock) on rank 0's
 *      window, the last put setting a flag;
 *   2. sends rank 0 a 1 MiB message (a rendezvous) that rank 0 posted a
 *      receive for before it started computing; its last byte is the
 *      flag.
 * Each flag can only appear if rank 0's node process serves the frames
 * with no call from rank 0 (while ranks that wait in MPI also read the
 * network themselves, src/net/tcp.c, a rank busy elsewhere must not
 * depend on that). Rank 0 gives up after 60 s. The memory is read with
 * volatile loads and no synchronization call: in Strand a window and a
 * receive buffer are the rank's own memory, written in place.
 * Exactly 2 ranks.
 */
#include <time.h>

#include "testutil.h"

enum { EPOCHS = 200, BIG = 1 << 20, TAG_BIG = 1 };

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Spins without MPI until *flag == want; false after 60 s. */
static int busy_until(volatile const int *flag, int want, const char *what)
{
    double start = seconds();
    while (*flag != want)
        if (seconds() - start > 60)
            return tu_fail(__LINE__, "%s: not done after 60 s of computing outside MPI", what);
    return 0;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        tu_abort(__LINE__, "run with exactly 2 ranks");
    int *slots = (int *)tu_malloc(2 * sizeof(int));
    slots[0] = slots[1] = 0;
    MPI_Win win;
    CHECK_RC(MPI_Win_create(slots, 2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    unsigned char *big = (unsigned char *)tu_malloc(BIG);
    memset(big, 0, BIG);
    MPI_Request req;
    if (rank == 0) {
        CHECK_RC(MPI_Irecv(big, BIG, MPI_BYTE, 1, TAG_BIG, MPI_COMM_WORLD, &req));
        tu_barrier();
        errs += busy_until(&slots[1], 1, "passive-target epochs");
        if (slots[0] != EPOCHS)
            errs += tu_fail(__LINE__, "the last put wrote %d, not %d", slots[0], EPOCHS);
        errs += busy_until((volatile int *)(big + BIG - sizeof(int)), 7, "a rendezvous receive");
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
        errs += tu_check_data(big, BIG - sizeof(int), BIG - sizeof(int), 5, "the rendezvous message");
    } else {
        tu_barrier();
        for (int i = 1; i <= EPOCHS; i++) {
            CHECK_RC(MPI_Win_lock(i % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, win));
            CHECK_RC(MPI_Put(&i, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
            CHECK_RC(MPI_Win_unlock(0, win));
        }
        int one = 1;
        CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_RC(MPI_Put(&one, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_unlock(0, win));
        tu_fill(big, BIG - sizeof(int), 5);
        int seven = 7;
        memcpy(big + BIG - sizeof(int), &seven, sizeof seven);
        CHECK_RC(MPI_Send(big, BIG, MPI_BYTE, 0, TAG_BIG, MPI_COMM_WORLD));
    }
    CHECK_RC(MPI_Win_free(&win));
    free(big);
    free(slots);
    return tu_finish(errs);
}
