// noreturn_cxx.cpp - the C++ hello world of the MPI tutorials, main without
// a return statement, built with ampicxx -O2.  Every rank prints one line
// through iostream.  Expected: exit 0 and one line per rank.
#include <mpi.h>
#include <iostream>
#include <string>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, got = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 1, &got, 1, MPI_INT, (rank + size - 1) % size, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (got != (rank + size - 1) % size)
        std::cout << "FAIL rank " << rank << ": got " << got << " from the ring" << std::endl;
    MPI_Finalize();
    std::cout << std::string("noreturn_cxx: rank ") + std::to_string(rank) + " of " + std::to_string(size) +
                     " finished\n"
              << std::flush;
}
