// The ring of ring.c in C++, with a global std::vector that is per rank.
#include <mpi.h>

#include <iostream>
#include <vector>

static std::vector<int> seen;

int main(int argc, char **argv)
{
    int rank, size, token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != 0)
        MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    seen.push_back(token++);
    MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        seen.push_back(token);
    }
    MPI_Finalize();
    if (rank == 0)
        std::cout << (token == size && seen.size() == 2 ? " No Errors\n" : " Found 1 errors\n");
    return 0;
}
