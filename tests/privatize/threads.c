/* Trap 4: a thread created by a rank knows that rank: it sees the rank's
 * globals and gets the rank's number from MPI_Comm_rank.  Checked for a
 * pthread, a thread that pthread creates, and a C11 thrd_create thread. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <threads.h>

static int rank_tag = -1; /* set by main: rank * 10 + 3 */
static int expected_rank;

struct seen {
    int tag, rank;
};

static void look(struct seen *s)
{
    s->tag = rank_tag;
    MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
}

static int wrong(const struct seen *s, const char *who)
{
    if (s->tag == expected_rank * 10 + 3 && s->rank == expected_rank)
        return 0;
    printf("rank %d: %s saw global %d and rank %d\n", expected_rank, who, s->tag, s->rank);
    return 1;
}

static void *grandchild(void *p)
{
    look(p);
    return NULL;
}

static void *child(void *p)
{
    struct seen *s = p;
    pthread_t t;
    look(&s[0]);
    if (pthread_create(&t, NULL, grandchild, &s[1]) == 0)
        pthread_join(t, NULL);
    return NULL;
}

static int c11_child(void *p)
{
    look(p);
    return 42;
}

int main(int argc, char **argv)
{
    int provided, size, errors = 0;
    struct seen s[3] = {{-1, -1}, {-1, -1}, {-1, -1}};
    pthread_t t;
    thrd_t c11;
    int c11_result = 0;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &expected_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank_tag = expected_rank * 10 + 3;

    if (pthread_create(&t, NULL, child, s) == 0)
        pthread_join(t, NULL);
    if (thrd_create(&c11, c11_child, &s[2]) == thrd_success)
        thrd_join(c11, &c11_result);
    errors += wrong(&s[0], "its pthread");
    errors += wrong(&s[1], "a pthread of its pthread");
    errors += wrong(&s[2], "its C11 thread");
    if (c11_result != 42) {
        printf("rank %d: thrd_join returned %d, not 42\n", expected_rank, c11_result);
        errors++;
    }

    if (expected_rank != 0) {
        MPI_Send(&errors, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    } else {
        for (int r = 1; r < size; r++) {
            int theirs;
            MPI_Recv(&theirs, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errors += theirs;
        }
        if (errors == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", errors);
    }
    MPI_Finalize();
    return 0;
}
