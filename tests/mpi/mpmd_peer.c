/*
 * mpmd_peer: the second program of an MPMD job; see mpmd.h. Run with
 * LAYOUT MODE "a b" "" (a space inside an argument, and an empty one).
 */
#include "mpmd.h"

int main(int argc, char **argv)
{
    static const char *const extra[] = { "a b", "", NULL };
    MPI_Init(&argc, &argv);
    return tu_finish(mpmd_check("mpmd_peer", argc, argv, extra));
}
