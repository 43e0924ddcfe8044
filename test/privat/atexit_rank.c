/* atexit_rank.c - atexit handlers of a privatized program: every rank
 * registers two handlers (one before MPI_Init, one after) on its own copy
 * of the program; odd ranks end with exit(0) after MPI_Finalize, even ranks
 * return from main.  Each rank's handlers must run once, newest first, at
 * that rank's end, before any other rank of its process runs again: main
 * leaves its rank in the environment (process-wide state of the C library)
 * just before it ends, and the handlers find it there.  Expected: one line
 * "atexit_rank: rank R handlers OK" per rank, no FAIL line, exit 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank = -1; /* per copy: each rank's handlers see their own */
static int ran;       /* handlers of this copy that ran, in the order checked */

static int last_rank_ended(void)
{
    const char *v = getenv("ATEXIT_RANK_ENDING");
    return v ? atoi(v) : -2;
}

static void check_here(const char *which)
{
    int ending = last_rank_ended();
    if (ending != rank)
        printf("FAIL rank %d: %s runs after rank %d ended, not at this rank's end\n", rank, which, ending);
}

static void registered_second(void)
{
    check_here("the handler registered second");
    if (ran != 0)
        printf("FAIL rank %d: the handler registered second runs after %d others\n", rank, ran);
    ran++;
}

static void registered_first(void)
{
    check_here("the handler registered first");
    if (ran != 1)
        printf("FAIL rank %d: the handler registered first runs after %d others\n", rank, ran);
    else
        printf("atexit_rank: rank %d handlers OK\n", rank);
    ran++;
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (atexit(registered_first) != 0)
        printf("FAIL: atexit failed before MPI_Init\n");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (atexit(registered_second) != 0)
        printf("FAIL rank %d: atexit failed\n", rank);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    char text[16];
    snprintf(text, sizeof text, "%d", rank);
    setenv("ATEXIT_RANK_ENDING", text, 1);
    if (rank % 2)
        exit(0);
    return 0;
}
