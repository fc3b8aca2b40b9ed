/* MPI_Bcast from every root, several sizes, back to back (no barrier in
 * between, so a fast rank enters the next broadcast while slow ones still
 * copy from the previous root), plus MPI_Barrier blocking. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "coll_util.h"

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int counts[] = { 0, 1, 1000, 1 << 18 };
    int *buf = malloc(sizeof(int) << 18);
    for (int c = 0; c < 4; c++) {
        int count = counts[c];
        int roots = size > 8 && count > 1000 ? 3 : size > 64 ? 64 : size;
        for (int k = 0; k < roots; k++) {
            int root = (k * 7) % size;
            for (int i = 0; i < count; i++)
                buf[i] = rank == root ? root * 1000003 + i + c : -1;
            MPI_Bcast(buf, count, MPI_INT, root, MPI_COMM_WORLD);
            for (int i = 0; i < count; i++)
                if (buf[i] != root * 1000003 + i + c) {
                    CHECK(&errs, 0, "bcast count %d root %d: buf[%d] = %d", count, root, i, buf[i]);
                    break;
                }
        }
    }
    /* A late root: everyone else must wait in the barrier. t0 is read
     * before the first barrier, which rank 0 leaves only after every rank
     * read it, so a rank descheduled between the barriers cannot make the
     * wait look short: the second barrier ends >= 60 ms after every t0. */
    double t0 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        usleep(60000);
    MPI_Barrier(MPI_COMM_WORLD);
    double waited = MPI_Wtime() - t0;
    CHECK(&errs, waited >= 0.03, "left the barrier after %.4f s, before rank 0 arrived", waited);
    for (int i = 0; i < 200; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    /* Bcast on MPI_COMM_SELF and of a char array. */
    char text[16] = "";
    if (rank == size - 1)
        strcpy(text, "strand");
    MPI_Bcast(text, 16, MPI_CHAR, size - 1, MPI_COMM_WORLD);
    CHECK(&errs, strcmp(text, "strand") == 0, "char bcast gave '%s'", text);
    int one = rank;
    MPI_Bcast(&one, 1, MPI_INT, 0, MPI_COMM_SELF);
    CHECK(&errs, one == rank, "bcast on MPI_COMM_SELF changed the value");
    free(buf);
    return coll_finish(errs);
}
