/* return_no_finalize.c - the last rank returns 0 from main without calling
 * MPI_Finalize while the others wait for its message.  Expected: the job
 * ends within seconds (no hang) with a non-zero status and a message naming
 * that rank. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, x = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == size - 1) {
        printf("return_no_finalize: rank %d returns without MPI_Finalize\n", rank);
        return 0;
    }
    MPI_Recv(&x, 1, MPI_INT, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("FAIL rank %d: received from a rank that returned\n", rank);
    MPI_Finalize();
    return 1;
}
