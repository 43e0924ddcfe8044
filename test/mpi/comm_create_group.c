/* comm_create_group.c - MPI_Comm_create_group with overlapping pairs, one
 * after the other with the same tag: {3,4}, {4,5}, {0,5}, {0,1} (with 6 or
 * more ranks; a ring of pairs with fewer), each followed by traffic on the
 * new communicator.  A rank that is in no earlier pair starts its call at
 * once, so the first member of a later pair may get its agreement message
 * while it is still agreeing on an earlier pair with the same tag. */
#include "mpitest.h"

static int use_pair(int rank, int a, int b, int tag)
{
    int errs = 0;
    if (rank != a && rank != b)
        return 0;
    int members[2] = { a < b ? a : b, a < b ? b : a };
    MPI_Group world, pair;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 2, members, &pair);
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_create_group(MPI_COMM_WORLD, pair, tag, &comm);
    if (comm == MPI_COMM_NULL) {
        errs += mt_fail(rank, "no communicator for pair {%d,%d}", members[0], members[1]);
    } else {
        int me = -1, peer = -1;
        MPI_Comm_rank(comm, &me);
        MPI_Barrier(comm);
        MPI_Sendrecv(&rank, 1, MPI_INT, 1 - me, 4, &peer, 1, MPI_INT, 1 - me, 4, comm, MPI_STATUS_IGNORE);
        int want = rank == members[0] ? members[1] : members[0];
        if (me != (rank == members[0] ? 0 : 1) || peer != want)
            errs += mt_fail(rank, "pair {%d,%d}: rank %d, peer %d", members[0], members[1], me, peer);
        MPI_Comm_free(&comm);
    }
    MPI_Group_free(&pair);
    MPI_Group_free(&world);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    if (size >= 6) {
        const int pairs[4][2] = { { 3, 4 }, { 4, 5 }, { 0, 5 }, { 0, 1 } };
        for (int round = 0; round < 3; round++)
            for (int i = 0; i < 4; i++)
                errs += use_pair(rank, pairs[i][0], pairs[i][1], 0);
    } else if (size >= 2) {
        for (int i = 0; i < size; i++)
            errs += use_pair(rank, i, (i + 1) % size, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mt_finish(errs, "comm_create_group: OK");
    MPI_Finalize();
    return 0;
}
