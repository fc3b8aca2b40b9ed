/* The reference for libc_state: built with the plain C compiler (no mpicc,
 * no Strand), so these are glibc's results in an ordinary process.
 * `libc_reference N` prints, for who = 0..N-1, the transcript without and
 * with getopt's diagnostics (libc_transcript.h), each after a "== who D"
 * line. */
#include "libc_transcript.h"

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    for (int who = 0; who < n; who++) {
        for (int diagnostics = 0; diagnostics <= 1; diagnostics++) {
            printf("== %d %d\n", who, diagnostics);
            libc_transcript(stdout, who, diagnostics, NULL);
        }
    }
    return 0;
}
