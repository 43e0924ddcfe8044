/* crash.c - rank 0 dies of SIGSEGV right after MPI_Init while the others
 * wait in MPI_Recv for a message from it.  Expected: the launcher notices
 * and the job ends with a non-zero exit status. */
#include "mpitest.h"
#include <signal.h>

enum { TAG_NEVER = 98 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), x = 0;

    if (rank == 0) {
        mt_note("crash: rank 0 of %d raises SIGSEGV", size);
        raise(SIGSEGV);
        mt_fail(rank, "survived SIGSEGV");
        return 1;
    }
    MPI_Recv(&x, 1, MPI_INT, 0, TAG_NEVER, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mt_fail(rank, "MPI_Recv from the crashed rank returned (%d)", x);
    return 1;
}
