/* Bad RMA usage under MPI_ERRORS_RETURN: each call returns the right
 * error class, changes nothing, and the window stays usable. */
#include <stdlib.h>
#include "rma_util.h"

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)in; (void)inout; (void)len; (void)type;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int buf[8] = { 0 }, v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    MPI_Win win;
    /* Creation arguments (collective: everyone passes the same bad value). */
    EXPECT_CLASS(&errs, MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE);
    EXPECT_CLASS(&errs, MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_ARG);
    EXPECT_CLASS(&errs, MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_NULL, &win), MPI_ERR_COMM);
    /* Only rank 0's arguments are bad: everyone fails, nobody hangs. */
    EXPECT_CLASS(&errs, MPI_Win_create(buf, rank == 0 ? -5 : (MPI_Aint)sizeof buf, sizeof(int), MPI_INFO_NULL,
                                       MPI_COMM_WORLD, &win),
                 MPI_ERR_SIZE);
    MUST(&errs, MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MUST(&errs, MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int right = (rank + 1) % size;

    /* No epoch yet. */
    EXPECT_CLASS(&errs, MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(&errs, MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(&errs, MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    int flag;
    EXPECT_CLASS(&errs, MPI_Win_test(win, &flag), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(&errs, MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);

    /* Fence epoch: ranks, displacements, counts, types, ops. */
    MUST(&errs, MPI_Win_fence(0, win));
    EXPECT_CLASS(&errs, MPI_Win_fence(0x1, win), MPI_ERR_ASSERT);
    EXPECT_CLASS(&errs, MPI_Put(v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT_CLASS(&errs, MPI_Put(v, 1, MPI_INT, -3, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT_CLASS(&errs, MPI_Put(v, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_DISP);
    EXPECT_CLASS(&errs, MPI_Put(v, 1, MPI_INT, right, 8, 1, MPI_INT, win), MPI_ERR_DISP);
    EXPECT_CLASS(&errs, MPI_Put(v, 2, MPI_INT, right, 7, 2, MPI_INT, win), MPI_ERR_DISP);
    EXPECT_CLASS(&errs, MPI_Get(v, 8, MPI_INT, right, 1, 8, MPI_INT, win), MPI_ERR_DISP);
    EXPECT_CLASS(&errs, MPI_Put(v, 1, MPI_INT, right, (MPI_Aint)1 << 61, 1, MPI_INT, win), MPI_ERR_DISP);
    EXPECT_CLASS(&errs, MPI_Put(v, -1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT_CLASS(&errs, MPI_Put(v, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    EXPECT_CLASS(&errs, MPI_Put(v, 4, MPI_INT, right, 0, 2, MPI_INT, win), MPI_ERR_TRUNCATE);
    EXPECT_CLASS(&errs, MPI_Get(v, 2, MPI_INT, right, 0, 4, MPI_INT, win), MPI_ERR_TRUNCATE);
    MPI_Datatype uncommitted;
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    EXPECT_CLASS(&errs, MPI_Get(v, 1, uncommitted, right, 0, 1, uncommitted, win), MPI_ERR_TYPE);
    MPI_Type_free(&uncommitted);
    EXPECT_CLASS(&errs, MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP);
    EXPECT_CLASS(&errs, MPI_Accumulate(v, 1, MPI_FLOAT, right, 0, 1, MPI_FLOAT, MPI_BAND, win), MPI_ERR_OP);
    EXPECT_CLASS(&errs, MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_FLOAT, MPI_SUM, win), MPI_ERR_TYPE);
    MPI_Op user;
    MPI_Op_create(user_sum, 1, &user);
    EXPECT_CLASS(&errs, MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, user, win), MPI_ERR_OP);
    MPI_Op_free(&user);
    /* Overlapping origin and target in my own window. */
    EXPECT_CLASS(&errs, MPI_Put(&buf[1], 2, MPI_INT, rank, 2, 2, MPI_INT, win), MPI_ERR_RMA_CONFLICT);
    /* Mixing epochs. */
    MUST(&errs, MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    EXPECT_CLASS(&errs, MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    EXPECT_CLASS(&errs, MPI_Win_start(world, 0, win), MPI_ERR_RMA_SYNC);
    /* NOPRECEDE after our own put: reported, and the fence still completes. */
    EXPECT_CLASS(&errs, MPI_Win_fence(MPI_MODE_NOPRECEDE, win), MPI_ERR_RMA_SYNC);
    int left = (rank + size - 1) % size;
    CHECK(&errs, buf[0] == 1, "the put before the misused fence: %d", buf[0]);
    MUST(&errs, MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    EXPECT_CLASS(&errs, MPI_Get(v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    /* A target that promised NOPUT. */
    MUST(&errs, MPI_Win_fence(MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE, win));
    EXPECT_CLASS(&errs, MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_CONFLICT);
    MUST(&errs, MPI_Get(&v[7], 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MUST(&errs, MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    (void)left;

    /* Locks. */
    EXPECT_CLASS(&errs, MPI_Win_lock(3, right, 0, win), MPI_ERR_LOCKTYPE);
    EXPECT_CLASS(&errs, MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK);
    EXPECT_CLASS(&errs, MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOPRECEDE, win), MPI_ERR_ASSERT);
    MUST(&errs, MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT_CLASS(&errs, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(&errs, MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(&errs, MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    if (size > 1)
        EXPECT_CLASS(&errs, MPI_Put(v, 1, MPI_INT, left == right ? rank : left, 0, 1, MPI_INT, win),
                     MPI_ERR_RMA_SYNC);
    MUST(&errs, MPI_Win_unlock(right, win));
    EXPECT_CLASS(&errs, MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);

    /* PSCW. */
    MPI_Group nobody = MPI_GROUP_EMPTY;
    EXPECT_CLASS(&errs, MPI_Win_post(MPI_GROUP_NULL, 0, win), MPI_ERR_GROUP);
    EXPECT_CLASS(&errs, MPI_Win_start(nobody, MPI_MODE_NOSTORE, win), MPI_ERR_ASSERT);
    MUST(&errs, MPI_Win_start(nobody, 0, win));
    EXPECT_CLASS(&errs, MPI_Win_start(nobody, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(&errs, MPI_Get(v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    MUST(&errs, MPI_Win_complete(win));
    MUST(&errs, MPI_Win_post(nobody, 0, win));
    EXPECT_CLASS(&errs, MPI_Win_post(nobody, 0, win), MPI_ERR_RMA_SYNC);
    MUST(&errs, MPI_Win_test(win, &flag));
    CHECK(&errs, flag == 1, "test of an epoch with no origins: flag %d", flag);

    /* Bad handles. */
    EXPECT_CLASS(&errs, MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT_CLASS(&errs, MPI_Put(v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);
    MPI_Win none = MPI_WIN_NULL;
    EXPECT_CLASS(&errs, MPI_Win_free(&none), MPI_ERR_WIN);

    /* Still usable. */
    MUST(&errs, MPI_Win_fence(0, win));
    MUST(&errs, MPI_Put(&v[2], 1, MPI_INT, right, 5, 1, MPI_INT, win));
    MUST(&errs, MPI_Win_fence(0, win));
    CHECK(&errs, buf[5] == 3, "put after errors: %d", buf[5]);
    MPI_Group_free(&world);
    MUST(&errs, MPI_Win_free(&win));
    CHECK(&errs, win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
    return rma_finish(errs);
}
