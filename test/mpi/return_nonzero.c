/* return_nonzero.c - all ranks finish MPI normally, then the last rank
 * returns 3 from main and the others 0.  Expected: job exit status 3. */
#include "mpitest.h"

enum { LAST_RANK_STATUS = 3 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == size - 1) {
        mt_note("return_nonzero: rank %d of %d returns %d after "
                "MPI_Finalize", rank, size, LAST_RANK_STATUS);
        return LAST_RANK_STATUS;
    }
    return 0;
}
