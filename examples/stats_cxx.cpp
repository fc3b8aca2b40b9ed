/*
 * stats_cxx: a C++ program using MPI's C API, built with mpicxx.
 *
 *   mpicxx -std=c++17 stats_cxx.cpp -o stats_cxx
 *   mpiexec -n 4 ./stats_cxx
 *
 * Each rank fills a std::vector with samples of its own, computes their sum
 * with the standard library, and MPI_Reduce adds the sums at rank 0, which
 * compares them with the closed form and prints " No Errors".  A global
 * std::map caches the samples per rank: every rank has its own copy of it
 * (Strand runs ranks as threads, mpicxx gives each one its own globals).
 */
#include <mpi.h>

#include <iostream>
#include <map>
#include <numeric>
#include <sstream>
#include <vector>

static std::map<int, std::vector<long>> samples_by_rank;

static const std::vector<long> &samples(int rank, int count)
{
    std::vector<long> &v = samples_by_rank[rank];
    if (v.empty())
        for (int i = 0; i < count; i++)
            v.push_back((long)rank * count + i);
    return v;
}

int main(int argc, char **argv)
{
    const int count = 1000;
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const std::vector<long> &mine = samples(rank, count);
    long sum = std::accumulate(mine.begin(), mine.end(), 0L), total = 0;
    int ok = samples_by_rank.size() == 1;
    MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int all_ok = 0;
    MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        long n = (long)size * count, expected = n * (n - 1) / 2;
        std::ostringstream out;
        out << "sum of 0.." << n - 1 << " over " << size << " ranks: " << total << "\n";
        if (total == expected && all_ok)
            out << " No Errors\n";
        else
            out << " Found errors: expected " << expected << ", per-rank maps "
                << (all_ok ? "private" : "shared") << "\n";
        std::cout << out.str();
    }
    MPI_Finalize();
    return 0;
}
