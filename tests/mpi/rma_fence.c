/* Fence epochs: a periodic halo exchange with puts and with gets, a
 * column exchange through vector datatypes on both sides, accumulates from
 * every rank into one array, and the fence asserts used as the standard
 * allows (NOPRECEDE, NOSTORE, NOPUT, NOSUCCEED). */
#include <stdlib.h>
#include "rma_util.h"

enum { N = 64, STEPS = 20, ROWS = 8, COLS = 6 };

static double value(int rank, int step, int i)
{
    return rank * 100000.0 + step * 100.0 + i;
}

static void halo_puts(int *errs, int rank, int size)
{
    double *a;
    MPI_Win win;
    MPI_Alloc_mem((N + 2) * sizeof *a, MPI_INFO_NULL, &a);
    MUST(errs, MPI_Win_create(a, (N + 2) * sizeof *a, sizeof *a, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int step = 0; step < STEPS; step++) {
        for (int i = 1; i <= N; i++)
            a[i] = value(rank, step, i);
        MUST(errs, MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        MUST(errs, MPI_Put(&a[1], 1, MPI_DOUBLE, left, N + 1, 1, MPI_DOUBLE, win));
        MUST(errs, MPI_Put(&a[N], 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win));
        MUST(errs, MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, win));
        CHECK(errs, a[0] == value(left, step, N), "step %d: left halo %g", step, a[0]);
        CHECK(errs, a[N + 1] == value(right, step, 1), "step %d: right halo %g", step, a[N + 1]);
    }
    MUST(errs, MPI_Win_free(&win));
    MPI_Free_mem(a);
}

static void halo_gets(int *errs, int rank, int size)
{
    double a[N + 2];
    MPI_Win win;
    MUST(errs, MPI_Win_create(a, sizeof a, sizeof a[0], MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int step = 0; step < STEPS; step++) {
        for (int i = 1; i <= N; i++)
            a[i] = value(rank, step, i);
        /* Nobody puts into us in this epoch. */
        MUST(errs, MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOPUT, win));
        MUST(errs, MPI_Get(&a[0], 1, MPI_DOUBLE, left, N, 1, MPI_DOUBLE, win));
        MUST(errs, MPI_Get(&a[N + 1], 1, MPI_DOUBLE, right, 1, 1, MPI_DOUBLE, win));
        MUST(errs, MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        CHECK(errs, a[0] == value(left, step, N) && a[N + 1] == value(right, step, 1),
              "step %d: halos %g %g", step, a[0], a[N + 1]);
    }
    MUST(errs, MPI_Win_free(&win));
}

/* Each rank owns a ROWS x COLS block with one halo column on each side and
 * puts its first interior column into its left neighbour's right halo. */
static void column_exchange(int *errs, int rank, int size)
{
    int m[ROWS][COLS + 2];
    MPI_Datatype column;
    MPI_Type_vector(ROWS, 1, COLS + 2, MPI_INT, &column);
    MPI_Type_commit(&column);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS + 2; c++)
            m[r][c] = c == 0 || c == COLS + 1 ? -1 : rank * 1000 + r * 10 + c;
    MPI_Win win;
    MUST(errs, MPI_Win_create(m, sizeof m, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MUST(errs, MPI_Win_fence(0, win));
    MUST(errs, MPI_Put(&m[0][1], 1, column, left, COLS + 1, 1, column, win));
    MUST(errs, MPI_Win_fence(0, win));
    for (int r = 0; r < ROWS; r++)
        CHECK(errs, m[r][COLS + 1] == right * 1000 + r * 10 + 1, "row %d: halo %d", r, m[r][COLS + 1]);
    /* Get a column into a contiguous buffer, then put that run into the
     * left neighbour's left halo column: it ends up two ranks away. */
    int col[ROWS];
    MUST(errs, MPI_Get(col, ROWS, MPI_INT, right, COLS, 1, column, win));
    MUST(errs, MPI_Win_fence(0, win));
    for (int r = 0; r < ROWS; r++)
        CHECK(errs, col[r] == right * 1000 + r * 10 + COLS, "row %d: got %d", r, col[r]);
    MUST(errs, MPI_Put(col, ROWS, MPI_INT, left, 0, 1, column, win));
    MUST(errs, MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int r = 0; r < ROWS; r++)
        CHECK(errs, m[r][0] == ((rank + 2) % size) * 1000 + r * 10 + COLS,
              "row %d: left halo %d", r, m[r][0]);
    MUST(errs, MPI_Win_free(&win));
    MPI_Type_free(&column);
}

/* Every rank adds into rank 0's array; rank 0 also reads it back with a get. */
static void accumulate_all(int *errs, int rank, int size)
{
    long sums[N] = { 0 };
    MPI_Win win;
    MUST(errs, MPI_Win_create(rank == 0 ? sums : NULL, rank == 0 ? sizeof sums : 0, sizeof(long), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &win));
    long mine[N];
    for (int i = 0; i < N; i++)
        mine[i] = rank + i;
    MUST(errs, MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int rep = 0; rep < 3; rep++)
        MUST(errs, MPI_Accumulate(mine, N, MPI_LONG, 0, 0, N, MPI_LONG, MPI_SUM, win));
    MUST(errs, MPI_Win_fence(0, win));
    long back[N];
    MUST(errs, MPI_Get(back, N, MPI_LONG, 0, 0, N, MPI_LONG, win));
    MUST(errs, MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < N; i++) {
        long want = 3L * ((long)size * (size - 1) / 2 + (long)size * i);
        CHECK(errs, back[i] == want, "sum[%d] = %ld, expected %ld", i, back[i], want);
        if (rank == 0)
            CHECK(errs, sums[i] == want, "window sum[%d] = %ld, expected %ld", i, sums[i], want);
    }
    MUST(errs, MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    halo_puts(&errs, rank, size);
    halo_gets(&errs, rank, size);
    column_exchange(&errs, rank, size);
    accumulate_all(&errs, rank, size);
    return rma_finish(errs);
}
