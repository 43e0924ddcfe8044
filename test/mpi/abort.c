/* abort.c - the last rank calls MPI_Abort(MPI_COMM_WORLD, 7) while all the
 * others are blocked in MPI_Recv for a message that never comes.  Expected:
 * the whole job ends with a non-zero exit status within a few seconds.
 * Any rank that gets past its MPI_Recv or MPI_Abort prints FAIL. */
#include "mpitest.h"

enum { TAG_NEVER = 99, ABORT_CODE = 7 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), last = size - 1, x = 0;

    MPI_Barrier(MPI_COMM_WORLD); /* all ranks are up */
    if (rank == last) {
        mt_delay(0.2); /* let the others reach their MPI_Recv */
        mt_note("abort: rank %d of %d calls MPI_Abort(MPI_COMM_WORLD, %d)",
                rank, size, ABORT_CODE);
        MPI_Abort(MPI_COMM_WORLD, ABORT_CODE);
        mt_fail(rank, "MPI_Abort returned");
        return 1;
    }
    MPI_Recv(&x, 1, MPI_INT, last, TAG_NEVER, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    mt_fail(rank, "MPI_Recv returned (%d) although nothing was sent", x);
    return 1;
}
