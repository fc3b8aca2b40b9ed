// C++ through MPI::MPI_CXX: every rank fills a std::vector with its own
// numbers, MPI_Allreduce adds the vectors element-wise, and every rank
// checks the sums against the closed form; rank 0 prints the verdict.
#include <mpi.h>

#include <iostream>
#include <numeric>
#include <vector>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<long> mine(16), sums(16);
    std::iota(mine.begin(), mine.end(), 16L * rank);
    MPI_Allreduce(mine.data(), sums.data(), 16, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int errors = 0;
    for (long i = 0; i < 16; i++) // sum over r of 16r + i
        errors += sums[i] != 16L * size * (size - 1) / 2 + i * size;
    int total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0)
        std::cout << (total == 0 ? " No Errors\n" : " Found errors\n");
    return 0;
}
