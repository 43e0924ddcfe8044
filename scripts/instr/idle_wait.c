/* Rank 0 waits in MPI_Recv while rank 1 sleeps argv[1] milliseconds before
 * it sends 8 bytes: the waiting receive polls all that time.
 * scripts/bench-instr.sh divides its instructions by its polls. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int ms = argc > 1 ? atoi(argv[1]) : 500;
    char buf[8] = { 0 };
    if (rank == 1) {
        usleep((useconds_t)ms * 1000);
        buf[0] = 42;
        MPI_Send(buf, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(buf, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (buf[0] != 42) {
            fprintf(stderr, "idle_wait: wrong message\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Finalize();
    return 0;
}
