/* main_elsewhere_mpi.c - the MPI part of main_elsewhere.c: a reduction of the
 * ranks' numbers, checked on every rank. */
#include <mpi.h>
#include <stdio.h>

int mpi_part(int argc, char **argv);

int mpi_part(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, sum = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int bad = sum != size * (size - 1) / 2;
    if (bad)
        printf("FAIL rank %d: sum %d\n", rank, sum);
    MPI_Finalize();
    return bad;
}
