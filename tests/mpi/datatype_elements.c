/* MPI_Get_elements and MPI_Get_count on partial receives of derived types,
 * and a type freed while a nonblocking send that uses it is pending. */
#include <stdio.h>
#include <stdlib.h>
#include "mpi.h"

struct pair { int i; double d; };

static int expect(const char *what, int got, int want)
{
    if (got == want)
        return 0;
    printf("%s: got %d, expected %d\n", what, got, want);
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0, i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* {int, double} pairs, received with room for 5 */
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { 0, sizeof(double) };
    MPI_Datatype types[2] = { MPI_INT, MPI_DOUBLE }, pair, vec;
    MPI_Type_create_struct(2, bl, disp, types, &pair);
    MPI_Type_commit(&pair);
    MPI_Type_vector(3, 2, 4, MPI_SHORT, &vec);
    MPI_Type_commit(&vec);
    int peer = rank ^ 1;
    if (peer < size) {
        if (rank % 2 == 0) {
            struct pair p[3] = { { 1, 1.5 }, { 2, 2.5 }, { 3, 3.5 } };
            /* 3 whole pairs plus a lone int: 7 basic elements, no whole count */
            int ints[7] = { 0 };
            MPI_Send(p, 3, pair, peer, 1, MPI_COMM_WORLD);
            MPI_Send(ints, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
            char *packed = malloc(64);
            int pos = 0;
            MPI_Pack(p, 3, pair, packed, 64, &pos, MPI_COMM_WORLD);
            MPI_Pack(ints, 1, MPI_INT, packed, 64, &pos, MPI_COMM_WORLD);
            MPI_Send(packed, pos, MPI_PACKED, peer, 3, MPI_COMM_WORLD);
            free(packed);
            short s[5] = { 1, 2, 3, 4, 5 };
            MPI_Send(s, 5, MPI_SHORT, peer, 4, MPI_COMM_WORLD);
            /* free the type while the send using it is still pending */
            MPI_Datatype tmp;
            MPI_Request req;
            MPI_Type_dup(vec, &tmp);
            short big[12] = { 1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0, 0 };
            MPI_Isend(big, 1, tmp, peer, 5, MPI_COMM_WORLD, &req);
            MPI_Type_free(&tmp);
            errs += expect("freed handle is MPI_DATATYPE_NULL", tmp == MPI_DATATYPE_NULL, 1);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            struct pair q[5];
            MPI_Status st;
            int n;
            MPI_Recv(q, 5, pair, peer, 1, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, pair, &n);
            errs += expect("count of 3 pairs", n, 3);
            MPI_Get_elements(&st, pair, &n);
            errs += expect("elements of 3 pairs", n, 6);
            MPI_Recv(q, 5, pair, peer, 2, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, pair, &n);
            errs += expect("count of a lone int as pairs", n, MPI_UNDEFINED);
            MPI_Get_elements(&st, pair, &n);
            errs += expect("elements of a lone int as pairs", n, 1);
            MPI_Recv(q, 5, pair, peer, 3, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, pair, &n);
            errs += expect("count of 3.5 pairs", n, MPI_UNDEFINED);
            MPI_Get_elements(&st, pair, &n);
            errs += expect("elements of 3.5 pairs", n, 7);
            errs += expect("pair values", q[2].i == 3 && q[2].d == 3.5 && q[3].i == 0, 1);
            short r[12];
            for (i = 0; i < 12; i++) r[i] = -1;
            MPI_Recv(r, 2, vec, peer, 4, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, vec, &n);
            errs += expect("count of 5 shorts as vectors of 6", n, MPI_UNDEFINED);
            MPI_Get_elements(&st, vec, &n);
            errs += expect("elements of 5 shorts", n, 5);
            errs += expect("short layout", r[0] == 1 && r[1] == 2 && r[2] == -1 && r[4] == 3 && r[8] == 5 &&
                           r[9] == -1, 1);
            MPI_Recv(r, 6, MPI_SHORT, peer, 5, MPI_COMM_WORLD, &st);
            MPI_Get_elements(&st, MPI_SHORT, &n);
            errs += expect("elements through a freed type", n, 6);
            for (i = 0; i < 6; i++)
                errs += expect("value through a freed type", r[i], i + 1);
        }
    }
    MPI_Type_free(&pair);
    MPI_Type_free(&vec);
    if (rank == 0) {
        for (i = 1; i < size; i++) {
            int e;
            MPI_Recv(&e, 1, MPI_INT, i, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += e;
        }
        printf(errs == 0 ? " No Errors\n" : " Found %d errors\n", errs);
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return errs != 0;
}
