/* globals_so.c - the globals of the program's own shared libraries: the
 * program links globals_lib (built with `ampicc -shared`, needing
 * globals_lib2, built the same way) and globals_plainlib (built by plain
 * cc).  Built with `ampicc -privatize`, every rank has its own copy of the
 * first two: their globals, thread-locals and constructors are the rank's,
 * and the program prints "globals_so: OK".  The plain library's global is
 * shared by the ranks of a process (test/privat/run.sh checks that the
 * globals warning names it, and only it).  With AMPI_PRIVATIZE=off ranks
 * that share a process share everything and it prints FAIL lines. */
#include <mpi.h>
#include <stdio.h>

extern int lib_counter, lib2_counter;
extern __thread int lib_tls;
int lib_bump(void);
int lib_constructed(void);
int plain_bump(void);

static int rank, failures;

#define CHECK(cond, ...)                                                                                \
    do {                                                                                                \
        if (!(cond)) {                                                                                  \
            printf("FAIL rank %d: ", rank);                                                             \
            printf(__VA_ARGS__);                                                                        \
            printf("\n");                                                                               \
            failures++;                                                                                 \
        }                                                                                               \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int constructed = lib_constructed();
    for (int i = 0; i < rank + 2; i++)
        lib_bump();
    plain_bump();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(constructed == 1, "the library's constructor ran %d times in this copy", constructed);
    CHECK(lib_counter == rank + 2, "library global is %d, expected %d", lib_counter, rank + 2);
    CHECK(lib2_counter == rank + 2, "global of the library's library is %d, expected %d", lib2_counter, rank + 2);
    CHECK(lib_tls == 10 * (rank + 2), "library thread-local is %d, expected %d", lib_tls, 10 * (rank + 2));
    MPI_Barrier(MPI_COMM_WORLD);
    lib_bump();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(lib_counter == rank + 3, "library global is %d after one more call, expected %d", lib_counter, rank + 3);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf("globals_so: OK (%d ranks)\n", size);
        else
            printf("globals_so: %d failures\n", total);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
