/* A manager that farms out tasks to workers it spawns.
 *
 * Run as `mpiexec -n 1 -usize 5 ./manager [tasks]`: the manager spawns
 * MPI_UNIVERSE_SIZE - 1 copies of itself as workers (default 4 when the
 * universe is not larger than the job), then hands out tasks one at a time
 * over the intercommunicator: each worker computes the sum of i*i for i in
 * [task*1000, task*1000 + 1000) and sends it back, and gets the next task
 * until the manager sends a stop message. The manager checks the total
 * against the closed form, then all merge into one communicator and agree
 * on the number of tasks done with an allreduce. Prints " No Errors". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { TAG_TASK = 1, TAG_RESULT = 2, TAG_STOP = 3, CHUNK = 1000 };

static double work(int task)
{
    double sum = 0;
    for (long i = (long)task * CHUNK; i < (long)(task + 1) * CHUNK; i++)
        sum += (double)i * (double)i;
    return sum;
}

static int worker(MPI_Comm manager)
{
    int task, done = 0;
    MPI_Status st;
    for (;;) {
        MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, manager, &st);
        if (st.MPI_TAG == TAG_STOP)
            break;
        double result = work(task);
        MPI_Send(&result, 1, MPI_DOUBLE, 0, TAG_RESULT, manager);
        done++;
    }
    MPI_Comm all;
    int total = 0;
    MPI_Intercomm_merge(manager, 1, &all);
    MPI_Allreduce(&done, &total, 1, MPI_INT, MPI_SUM, all);
    MPI_Comm_free(&all);
    MPI_Comm_disconnect(&manager);
    return 0;
}

static int manager(const char *self, int ntasks)
{
    int flag, *universe, nworkers = 4, errs = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
    if (flag && *universe > 1)
        nworkers = *universe - 1;
    MPI_Comm workers;
    MPI_Comm_spawn((char *)self, MPI_ARGV_NULL, nworkers, MPI_INFO_NULL, 0, MPI_COMM_SELF, &workers,
                   MPI_ERRCODES_IGNORE);
    int next = 0, busy = 0;
    double total = 0;
    /* one task per worker to start, then a new one for every result */
    for (int w = 0; w < nworkers; w++) {
        if (next < ntasks) {
            MPI_Send(&next, 1, MPI_INT, w, TAG_TASK, workers);
            next++;
            busy++;
        } else {
            MPI_Send(&next, 1, MPI_INT, w, TAG_STOP, workers);
        }
    }
    while (busy > 0) {
        double result;
        MPI_Status st;
        MPI_Recv(&result, 1, MPI_DOUBLE, MPI_ANY_SOURCE, TAG_RESULT, workers, &st);
        total += result;
        if (next < ntasks) {
            MPI_Send(&next, 1, MPI_INT, st.MPI_SOURCE, TAG_TASK, workers);
            next++;
        } else {
            MPI_Send(&next, 1, MPI_INT, st.MPI_SOURCE, TAG_STOP, workers);
            busy--;
        }
    }
    double n = (double)ntasks * CHUNK; /* sum of i*i for i < n */
    double expect = (n - 1) * n * (2 * n - 1) / 6;
    if (total < expect * (1 - 1e-12) || total > expect * (1 + 1e-12)) {
        printf("manager: total %.17g, expected %.17g\n", total, expect);
        errs++;
    }
    MPI_Comm all;
    int zero = 0, done = 0;
    MPI_Intercomm_merge(workers, 0, &all);
    MPI_Allreduce(&zero, &done, 1, MPI_INT, MPI_SUM, all);
    MPI_Comm_free(&all);
    if (done != ntasks) {
        printf("manager: workers report %d tasks done, expected %d\n", done, ntasks);
        errs++;
    }
    MPI_Comm_disconnect(&workers);
    printf("manager: %d tasks on %d workers\n", ntasks, nworkers);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    int errs = 0;
    if (parent != MPI_COMM_NULL) {
        worker(parent);
    } else {
        int ntasks = argc > 1 ? atoi(argv[1]) : 100;
        errs = manager(argv[0], ntasks > 0 ? ntasks : 100);
    }
    MPI_Finalize();
    if (parent == MPI_COMM_NULL)
        printf(errs == 0 ? " No Errors\n" : " Found %d errors\n", errs);
    return errs != 0;
}
