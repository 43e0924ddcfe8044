/* atexit_once.c - every rank registers the same atexit handler; odd ranks
 * then end with exit(0) after MPI_Finalize, even ranks return.  The handler
 * runs once per process, when the process ends after all its ranks (it
 * prints the number of ranks that finished, from a process-wide counter:
 * this program is meant to run without globals privatization).  Expected:
 * exit 0, one "handler" line per process, each after all ranks of that
 * process finished. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int finished_here; /* ranks of this process that finished */
static int ranks_here;    /* ranks of this process (from MPI_Init on) */

static void handler(void)
{
    printf("atexit_once: handler in pid %d after %d of %d ranks of the process finished\n", (int)getpid(),
           finished_here, ranks_here);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ranks_here++;
    if (atexit(handler) != 0)
        printf("FAIL rank %d: atexit failed\n", rank);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    finished_here++;
    if (rank % 2)
        exit(0);
    return 0;
}
