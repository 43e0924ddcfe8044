/* exit_before_finalize.c - the last rank calls exit(7) between MPI_Init and
 * MPI_Finalize while the others wait for its message.  Expected: the job
 * ends at once with a non-zero status and a message naming that rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, x = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == size - 1) {
        printf("exit_before_finalize: rank %d calls exit(7)\n", rank);
        fflush(stdout);
        exit(7);
    }
    MPI_Recv(&x, 1, MPI_INT, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("FAIL rank %d: received from a rank that exited\n", rank);
    MPI_Finalize();
    return 1;
}
