/* globals_warn.c - a program with writable globals (a counter in .bss, a
 * table in .data, a function's static), which the ranks of a process share
 * under +vp.  MPI_Init warns once per job (process 0) naming them when some
 * process runs several ranks; never when every process runs one rank, nor
 * with AMPI_WARN_GLOBALS=0.  Rank 0 writes them before a barrier, the
 * others only read, and every rank prints one line. */
#include <mpi.h>
#include <stdio.h>

int hits_counter;                              /* .bss */
static double scale_table[4] = { 1, 2, 3, 4 }; /* .data */

static int calls(void)
{
    static int ncalls; /* a function's static: .bss, named ncalls.N */
    return ++ncalls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        hits_counter = calls();
        scale_table[0] = 2;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("globals_warn: rank %d of %d, scale %g OK\n", rank, size, scale_table[rank % 4]);
    MPI_Finalize();
    return 0;
}
