/*
 * mpmd: the first program of an MPMD job; see mpmd.h. Run with LAYOUT
 * MODE and no other argument.
 */
#include "mpmd.h"

int main(int argc, char **argv)
{
    static const char *const extra[] = { NULL };
    MPI_Init(&argc, &argv);
    return tu_finish(mpmd_check("mpmd", argc, argv, extra));
}
