/* A spawned rank ends like a launched one: its atexit handler runs and its
 * exit status counts in the job's (spawn.testlist expects status 3 and the
 * handler's line). The parents themselves succeed. Minimum 1 rank. Also:
 * MPI_UNIVERSE_SIZE follows STRAND_UNIVERSE_SIZE when that is set (Strand's
 * documented variable, as mpiexec -usize sets it). */
#include "testutil.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int errs = 0, flag = 0, *usize = NULL;
    const char *env = getenv("STRAND_UNIVERSE_SIZE");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    if (env != NULL)
        CHECK(flag && *usize == atoi(env), "MPI_UNIVERSE_SIZE: expected %s", env);
    char child[512], *args[] = { "exit", NULL };
    const char *slash = strrchr(argv[0], '/');
    snprintf(child, sizeof child, "%.*s/spawn_child", slash != NULL ? (int)(slash - argv[0]) : 1,
             slash != NULL ? argv[0] : ".");
    MPI_Comm kids;
    CHECK_RC(MPI_Comm_spawn(child, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids, MPI_ERRCODES_IGNORE));
    MPI_Comm_disconnect(&kids);
    return tu_finish(errs);
}
