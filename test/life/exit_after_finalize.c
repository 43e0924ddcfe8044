/* exit_after_finalize.c - every rank prints a line after MPI_Finalize and
 * calls exit(): the last rank exit(5), the others exit(0).  exit ends only
 * the calling rank: the other ranks of its process still finish.  Expected:
 * job status 5 and one "finished" line per rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    printf("exit_after_finalize: rank %d of %d finished\n", rank, size);
    exit(rank == size - 1 ? 5 : 0);
}
