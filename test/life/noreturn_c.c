/* noreturn_c.c - main without a return statement (C99: reaching the end of
 * main returns 0).  Every rank sends its number round a ring, checks what it
 * got and prints one line; the last call is printf, whose result would be
 * the exit status if main were an ordinary function.  Expected: exit 0 and
 * one line per rank. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, got = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 1, &got, 1, MPI_INT, (rank + size - 1) % size, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (got != (rank + size - 1) % size)
        printf("FAIL rank %d: got %d from the ring\n", rank, got);
    MPI_Finalize();
    printf("noreturn_c: rank %d of %d finished\n", rank, size);
}
