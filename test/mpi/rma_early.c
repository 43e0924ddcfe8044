/* rma_early.c - operations issued the moment a window exists.
 *
 * A rank may leave MPI_Win_create while a peer is still inside it; the peer
 * must still serve (and answer: lock grants, get data) what arrives at
 * once.  Many rounds of: create a window over a word already holding
 * (round, owner), read every other rank's word under a shared lock with no
 * synchronization in between, check it, free. */
#include "mpitest.h"

enum { ROUNDS = 40 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int *word = mt_malloc(sizeof(int));
    for (int round = 0; round < ROUNDS && !errs; round++) {
        MPI_Win win;
        *word = round * 1000 + rank;
        MPI_Win_create(word, sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        for (int k = 1; k < size; k++) {
            int t = (rank + k) % size, got = -1;
            MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
            MPI_Get(&got, 1, MPI_INT, t, 0, 1, MPI_INT, win);
            MPI_Win_unlock(t, win);
            if (got != round * 1000 + t)
                errs += mt_fail(rank, "round %d: rank %d's word read %d", round, t, got);
        }
        MPI_Win_free(&win);
    }
    free(word);
    mt_finish(errs, "rma_early OK");
    MPI_Finalize();
    return 0;
}
