/* An 8-byte ping-pong between ranks 0 and 1, N round trips (argv[1]); the
 * reply is checked.  scripts/bench-instr.sh counts its instructions with
 * -np 1 +vp 2, where every message is a switch between the two ranks and
 * nothing waits on time. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    char buf[8] = { 0 };
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            buf[0] = (char)i;
            MPI_Send(buf, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (buf[0] != (char)(i + 1)) {
                fprintf(stderr, "pingpong: wrong reply in round trip %d\n", i);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        } else if (rank == 1) {
            MPI_Recv(buf, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            buf[0]++;
            MPI_Send(buf, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
