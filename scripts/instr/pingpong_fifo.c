/* An 8-byte ping-pong between two processes, N round trips (argv[1]), in
 * which each receiver first waits in the kernel, on a FIFO (argv[2]: to rank
 * 1, argv[3]: to rank 0), until the sender's MPI_Send has returned.  Its
 * MPI_Recv then finds the message in its first poll, so the instructions of
 * a call do not depend on timing (scripts/bench-instr.sh). */
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void fail(const char *what)
{
    perror(what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 4) {
        fprintf(stderr, "usage: pingpong_fifo N FIFO_TO_1 FIFO_TO_0\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int n = atoi(argv[1]);
    /* both open the FIFO to rank 1 first: neither open waits for the other's second */
    int to1 = open(argv[2], rank == 0 ? O_WRONLY : O_RDONLY);
    int to0 = open(argv[3], rank == 0 ? O_RDONLY : O_WRONLY);
    if (to1 < 0 || to0 < 0)
        fail("pingpong_fifo: open");
    char buf[8] = { 0 }, token = 0;
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            buf[0] = (char)i;
            MPI_Send(buf, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            if (write(to1, &token, 1) != 1 || read(to0, &token, 1) != 1)
                fail("pingpong_fifo: FIFO");
            MPI_Recv(buf, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (buf[0] != (char)(i + 1)) {
                fprintf(stderr, "pingpong_fifo: wrong reply in round trip %d\n", i);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        } else if (rank == 1) {
            if (read(to1, &token, 1) != 1)
                fail("pingpong_fifo: FIFO");
            MPI_Recv(buf, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            buf[0]++;
            MPI_Send(buf, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            if (write(to0, &token, 1) != 1)
                fail("pingpong_fifo: FIFO");
        }
    }
    close(to1);
    close(to0);
    MPI_Finalize();
    return 0;
}
