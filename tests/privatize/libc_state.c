/* Per-rank libc state (DESIGN §4 trap 8): getopt, getopt_long(_only) with
 * optind/optarg/optopt/opterr, rand/srand, random/srandom/initstate/
 * setstate, the drand48 family and strtok give each rank exactly what
 * glibc gives a process.  The expected transcripts come from
 * libc_reference, the same calls built without Strand and run as a plain
 * process (popen); see libc_transcript.h.
 *
 * Each rank writes its transcript (1) in lockstep with the others (a
 * barrier between its first calls and the rest, so shared state would show),
 * (2) many times concurrently, without diagnostics, and (3) with getopt's
 * diagnostics, one rank at a time (stderr is the process's). */
#include "libc_transcript.h"

#include <mpi.h>

#define ROUNDS 20

static void barrier(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The reference's output for every rank, read by rank 0 and broadcast. */
static char *reference_output(const char *program, int rank, int size)
{
    long length = 0;
    char *text = NULL;
    if (rank == 0) {
        char command[4096];
        const char *slash = strrchr(program, '/');
        snprintf(command, sizeof command, "%.*slibc_reference %d",
                 slash != NULL ? (int)(slash - program + 1) : 0, program, size);
        FILE *p = popen(command, "r");
        size_t capacity = 1 << 16, n;
        text = malloc(capacity);
        while (p != NULL && (n = fread(text + length, 1, capacity - (size_t)length - 1, p)) > 0) {
            length += (long)n;
            if ((size_t)length + 1 == capacity)
                text = realloc(text, capacity *= 2);
        }
        int status = p != NULL ? pclose(p) : -1;
        if (status != 0) {
            printf("%s failed (status %d)\n", command, status);
            length = 0;
        }
    }
    MPI_Bcast(&length, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank != 0)
        text = malloc((size_t)length + 1);
    MPI_Bcast(text, (int)length, MPI_CHAR, 0, MPI_COMM_WORLD);
    text[length] = '\0';
    return text;
}

/* The part of the reference after "== who diagnostics", up to the next "== ". */
static char *expected(const char *reference, int who, int diagnostics)
{
    char header[64];
    snprintf(header, sizeof header, "== %d %d\n", who, diagnostics);
    const char *start = strstr(reference, header);
    if (start == NULL)
        return strdup("(missing from the reference)");
    start += strlen(header);
    const char *end = strstr(start, "\n== ");
    size_t n = end != NULL ? (size_t)(end - start) + 1 : strlen(start);
    return strndup(start, n);
}

static char *transcript(int who, int diagnostics, void (*step)(void))
{
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    libc_transcript(out, who, diagnostics, step);
    fclose(out);
    return text;
}

static int compare(const char *what, int rank, const char *got, const char *want)
{
    if (strcmp(got, want) == 0)
        return 0;
    printf("rank %d, %s: transcript differs from glibc's in a process\n--- got:\n%s--- "
           "expected:\n%s",
           rank, what, got, want);
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0, all_errors;
    (void)argc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *reference = reference_output(argv[0], rank, size);
    char *quiet = expected(reference, rank, 0), *loud = expected(reference, rank, 1);

    char *got = transcript(rank, 0, barrier);
    errors += compare("lockstep", rank, got, quiet);
    free(got);
    for (int round = 0; round < ROUNDS && errors == 0; round++) {
        got = transcript(rank, 0, NULL);
        errors += compare("concurrent", rank, got, quiet);
        free(got);
    }
    for (int turn = 0; turn < size; turn++) {
        if (turn == rank) {
            got = transcript(rank, 1, NULL);
            errors += compare("with diagnostics", rank, got, loud);
            free(got);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    MPI_Reduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all_errors == 0)
        printf(" No Errors\n");
    free(quiet);
    free(loud);
    free(reference);
    MPI_Finalize();
    return 0;
}
