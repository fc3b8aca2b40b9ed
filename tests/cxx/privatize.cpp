// C++ programs built with mpicxx: what each rank must own (DESIGN §4).
// Global objects are constructed and destroyed once per rank; static
// locals, template statics and inline variables are private per rank;
// exceptions are thrown and caught inside a rank; std::cout, std::string,
// std::vector and std::map work in every rank.  Any rank count (min 1).
// Rank 0 prints " No Errors" from its global object's destructor, after the
// other checks, so a run passes only if that destructor ran.
#include <mpi.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int errors = 0;
int world_rank = -1;

void check(bool ok, const std::string &what)
{
    if (!ok) {
        std::ostringstream line;
        line << "rank " << world_rank << ": " << what << "\n";
        std::cout << line.str() << std::flush;
        errors++;
    }
}

// One per rank: its constructor ran in this rank's copy only.
struct Tracker {
    int constructed = 0;
    std::vector<int> history;
    Tracker() { constructed++; }
    ~Tracker()
    {
        // the other ranks' copies have their own Tracker: exactly one
        // destructor call per copy, with this rank's history
        if (world_rank == 0 && constructed == 1 && history.size() == 3 && errors == 0)
            std::printf(" No Errors\n");
        else if (world_rank == 0)
            std::printf(" Found errors (constructed %d, history %zu, errors %d)\n", constructed,
                        history.size(), errors);
        std::fflush(stdout);
    }
};
Tracker tracker;

int next_ticket()
{
    static int ticket = 0; // a static local: per rank
    return ++ticket;
}

template <typename T> struct Registry {
    static std::map<std::string, T> entries; // a template static: per rank
};
template <typename T> std::map<std::string, T> Registry<T>::entries;

inline int inline_counter = 0; // an inline variable (C++17): per rank

struct RankError : std::runtime_error {
    int rank;
    explicit RankError(int r) : std::runtime_error("rank error " + std::to_string(r)), rank(r) {}
};

void throw_for(int rank)
{
    throw RankError(rank);
}

void barrier()
{
    MPI_Barrier(MPI_COMM_WORLD);
}

} // namespace

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tracker.history.push_back(world_rank);

    check(tracker.constructed == 1, "global object constructed " +
                                        std::to_string(tracker.constructed) + " times");
    // Each rank does rank+1 increments of every kind, then all compare:
    // shared state would show the sum over all ranks.
    int tickets = 0;
    for (int i = 0; i <= world_rank; i++) {
        tickets = next_ticket();
        inline_counter++;
        Registry<int>::entries["calls"]++;
        Registry<std::string>::entries["name"] += "x";
    }
    barrier();
    check(tickets == world_rank + 1, "static local is " + std::to_string(tickets));
    check(inline_counter == world_rank + 1,
          "inline variable is " + std::to_string(inline_counter));
    check(Registry<int>::entries["calls"] == world_rank + 1, "template static map count is " +
                                                                 std::to_string(Registry<int>::entries["calls"]));
    check(Registry<std::string>::entries["name"] == std::string((size_t)world_rank + 1, 'x'),
          "template static string is " + Registry<std::string>::entries["name"]);
    tracker.history.push_back(tickets);

    // Exceptions: thrown and caught inside each rank, with its own value.
    int caught = -1;
    try {
        throw_for(world_rank);
    } catch (const RankError &e) {
        caught = e.rank;
        check(std::string(e.what()) == "rank error " + std::to_string(world_rank),
              std::string("exception text ") + e.what());
    }
    check(caught == world_rank, "caught the exception of rank " + std::to_string(caught));
    barrier();

    std::ostringstream hello;
    hello << "rank " << world_rank << " of " << size << " says hello through std::cout\n";
    std::cout << hello.str() << std::flush;

    int local = errors, total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    errors = total;
    tracker.history.push_back(total);
    MPI_Finalize();
    return errors != 0;
}
