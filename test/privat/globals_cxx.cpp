// globals_cxx.cpp - C++ globals: objects with constructors (run once per
// rank when privatized), a static member, a function-local static object and
// a standard container, a thread_local object, and the same in a C++ shared library of the
// program's own (globals_libcxx.cpp, built with `ampicxx -shared`).  Prints
// "globals_cxx: OK" when every rank saw only its own; FAIL lines when ranks
// share one copy (AMPI_PRIVATIZE=off).
#include <mpi.h>
#include <cstdio>
#include <string>
#include <vector>

static int constructions; // how often this copy's Tracker constructor ran

struct Tracker {
    int value;
    Tracker() : value(0) { constructions++; }
};

Tracker tracker;                  // a global with a constructor
std::vector<int> history;         // a global container
std::string label("unset");       // a global with a non-trivial constructor
thread_local std::string tls_label("unset"); // a thread-local object: per copy, so per rank

struct LibObject {
    int value;
    LibObject();
};
extern LibObject lib_object;      // globals_libcxx.cpp
extern std::string lib_label;
int lib_constructions();

struct Config {
    static int level;             // a static member
};
int Config::level = 0;

static int rank, failures;

#define CHECK(cond, ...)                                                                                \
    do {                                                                                                \
        if (!(cond)) {                                                                                  \
            std::printf("FAIL rank %d: ", rank);                                                        \
            std::printf(__VA_ARGS__);                                                                   \
            std::printf("\n");                                                                          \
            failures++;                                                                                 \
        }                                                                                               \
    } while (0)

static Tracker &local_tracker()
{
    static Tracker t; // function-local static object: constructed on first use
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int at_start = constructions;
    tracker.value = rank;
    history.push_back(rank);
    label = "rank " + std::to_string(rank);
    tls_label = "tls rank " + std::to_string(rank);
    Config::level = 10 * rank;
    local_tracker().value += rank + 1;
    int lib_at_start = lib_constructions();
    lib_object.value = rank;
    lib_label = "library rank " + std::to_string(rank);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(lib_at_start == 1, "the library global's constructor ran %d times in this copy", lib_at_start);
    CHECK(lib_object.value == rank, "library global object holds %d", lib_object.value);
    CHECK(lib_label == "library rank " + std::to_string(rank), "library global string is \"%s\"",
          lib_label.c_str());
    CHECK(at_start == 1, "the global's constructor ran %d times in this copy before main", at_start);
    CHECK(constructions == 2, "%d constructions after the function-local static, expected 2", constructions);
    CHECK(tracker.value == rank, "global object holds %d", tracker.value);
    CHECK(history.size() == 1 && history[0] == rank, "global vector has %zu elements, first %d",
          history.size(), history.empty() ? -1 : history[0]);
    CHECK(label == "rank " + std::to_string(rank), "global string is \"%s\"", label.c_str());
    CHECK(tls_label == "tls rank " + std::to_string(rank), "thread-local string is \"%s\"", tls_label.c_str());
    CHECK(Config::level == 10 * rank, "static member is %d", Config::level);
    CHECK(local_tracker().value == rank + 1, "function-local static holds %d", local_tracker().value);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            std::printf("globals_cxx: OK (%d ranks)\n", size);
        else
            std::printf("globals_cxx: %d failures\n", total);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
