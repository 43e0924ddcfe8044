/* listeners.c - a job whose processes all run on one node listens on no
 * network address that another machine could reach: each process lists its
 * own listening TCP sockets (ss) after MPI_Init, a message exchange, a
 * nonblocking collective and a one-sided window (each of these has UCX
 * workers of its own), and reports those bound to anything but loopback.
 * Prints "listeners OK". */
#include "../mpi/mpitest.h"

#include <unistd.h>

static int own_outside_listeners(int rank)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "ss -Hltnp 2>/dev/null | grep 'pid=%ld,'", (long)getpid());
    FILE *p = popen(cmd, "r");
    if (!p)
        return mt_fail(rank, "cannot run ss");
    int errs = 0;
    char line[512];
    while (fgets(line, sizeof line, p)) {
        char state[32], local[128];
        unsigned long rq, sq;
        if (sscanf(line, "%31s %lu %lu %127s", state, &rq, &sq, local) != 4)
            continue;
        if (strncmp(local, "127.", 4) != 0 && strncmp(local, "[::1]", 5) != 0)
            errs += mt_fail(rank, "process %ld listens on %s", (long)getpid(), local);
    }
    pclose(p);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int x = rank, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int errs = sum == size * (size - 1) / 2 ? 0 : mt_fail(rank, "allreduce gave %d", sum);
    MPI_Request q;
    MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (sum != size * (size - 1) / 2)
        errs += mt_fail(rank, "iallreduce gave %d", sum);
    int *base;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_fence(0, win);
    MPI_Put(&x, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    if (*base != (rank + size - 1) % size)
        errs += mt_fail(rank, "window holds %d, expected %d", *base, (rank + size - 1) % size);
    errs += own_outside_listeners(rank);
    MPI_Win_free(&win);
    mt_finish(errs, "listeners OK");
    MPI_Finalize();
    return 0;
}
