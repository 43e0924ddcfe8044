/* comm_idup.c - MPI_Comm_idup: a duplicate that keeps the group, the
 * attributes (copy callbacks) and the error handler, and carries its own
 * traffic; idups that overlap each other (each rank duplicates a pair
 * communicator shared with its right neighbour and one shared with its
 * left: blocking duplication in that order would deadlock) and other work
 * of the rank while an idup is pending (a blocking MPI_Comm_dup of another
 * communicator and a nonblocking allreduce), with the contexts of all of
 * them kept apart. */
#include "mpitest.h"

static int copy_plus_one(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)key, (void)extra;
    *(intptr_t *)out = (intptr_t)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

/* rank sum over comm through MPI_Allreduce, checked against n(n-1)/2 */
static int check_comm(int wrank, MPI_Comm comm, int want_size, const char *what)
{
    int errs = 0, size = -1, me = -1, sum = -1;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &me);
    if (size != want_size)
        errs += mt_fail(wrank, "%s: size %d, expected %d", what, size, want_size);
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (sum != size * (size - 1) / 2)
        errs += mt_fail(wrank, "%s: rank sum %d, expected %d", what, sum, size * (size - 1) / 2);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;

    /* a duplicate of MPI_COMM_WORLD with an attribute and an error handler */
    int key;
    MPI_Comm_create_keyval(copy_plus_one, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm base, dup = MPI_COMM_NULL, other = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &base);
    MPI_Comm_set_attr(base, key, (void *)(intptr_t)(100 + rank));
    MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN);
    MPI_Request rq;
    MPI_Comm_idup(base, &dup, &rq);
    /* other work of the rank before the idup completes: a blocking dup of
     * another communicator and a nonblocking allreduce on the parent */
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    int one = 1, total = 0;
    MPI_Request ar;
    MPI_Iallreduce(&one, &total, 1, MPI_INT, MPI_SUM, base, &ar);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Wait(&ar, MPI_STATUS_IGNORE);
    if (total != size)
        errs += mt_fail(rank, "allreduce beside the idup: %d, expected %d", total, size);
    if (dup == MPI_COMM_NULL || dup == base || dup == other) {
        errs += mt_fail(rank, "MPI_Comm_idup gave no communicator of its own");
    } else {
        int result = -1, flag = 0;
        void *val = NULL;
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        MPI_Comm_compare(base, dup, &result);
        if (result != MPI_CONGRUENT)
            errs += mt_fail(rank, "idup is not congruent to its parent (%d)", result);
        MPI_Comm_get_attr(dup, key, &val, &flag);
        if (!flag || (intptr_t)val != 101 + rank)
            errs += mt_fail(rank, "attribute after idup: flag %d value %ld", flag, (long)(intptr_t)val);
        MPI_Comm_get_errhandler(dup, &eh);
        if (eh != MPI_ERRORS_RETURN)
            errs += mt_fail(rank, "idup did not take over MPI_ERRORS_RETURN");
        errs += check_comm(rank, dup, size, "idup of a world duplicate");
        /* messages on the three communicators stay apart */
        int right = (rank + 1) % size, left = (rank + size - 1) % size, got[3] = { -1, -1, -1 };
        MPI_Request r[6];
        MPI_Comm comms[3] = { base, dup, other };
        for (int i = 0; i < 3; i++)
            MPI_Irecv(&got[i], 1, MPI_INT, left, 5, comms[i], &r[i]);
        for (int i = 2; i >= 0; i--) {
            int v = 1000 * i + rank;
            MPI_Send(&v, 1, MPI_INT, right, 5, comms[i]);
        }
        MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 3; i++)
            if (got[i] != 1000 * i + left)
                errs += mt_fail(rank, "message on communicator %d: %d, expected %d", i, got[i], 1000 * i + left);
        MPI_Comm_free(&dup);
    }
    MPI_Comm_free(&other);

    /* overlapping idups: pair[0] = {rank, rank+1}, pair[1] = {rank-1, rank};
     * every rank first starts the idup of the pair its right neighbour
     * starts second */
    if (size >= 3) {
        MPI_Comm pair[2], pdup[2];
        for (int i = 0; i < size; i++) {
            int left_end = i, right_end = (i + 1) % size;
            int color = rank == left_end || rank == right_end ? 0 : MPI_UNDEFINED;
            /* key: the pair's left end is rank 0 */
            MPI_Comm c;
            MPI_Comm_split(MPI_COMM_WORLD, color, rank == left_end ? 0 : 1, &c);
            if (rank == left_end)
                pair[0] = c;
            else if (rank == right_end)
                pair[1] = c;
        }
        MPI_Request r[2];
        MPI_Comm_idup(pair[0], &pdup[0], &r[0]);
        MPI_Comm_idup(pair[1], &pdup[1], &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        /* on both duplicates at once (blocking calls pair by pair would
         * wait in a ring): a rank sum and the members' world ranks */
        int me[2] = { -1, -1 }, sum[2] = { -1, -1 }, peer_world[2] = { -1, -1 };
        MPI_Request q[6];
        for (int i = 0; i < 2; i++) {
            MPI_Comm_rank(pdup[i], &me[i]);
            MPI_Iallreduce(&me[i], &sum[i], 1, MPI_INT, MPI_SUM, pdup[i], &q[3 * i]);
            MPI_Irecv(&peer_world[i], 1, MPI_INT, 1 - me[i], 9, pdup[i], &q[3 * i + 1]);
            MPI_Isend(&rank, 1, MPI_INT, 1 - me[i], 9, pdup[i], &q[3 * i + 2]);
        }
        MPI_Waitall(6, q, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 2; i++) {
            int want = i == 0 ? (rank + 1) % size : (rank + size - 1) % size;
            if (me[i] != i || sum[i] != 1 || peer_world[i] != want)
                errs += mt_fail(rank, "duplicate of pair %d: rank %d, rank sum %d, peer %d (expected %d, 1, %d)", i,
                                me[i], sum[i], peer_world[i], i, want);
        }
        for (int i = 0; i < 2; i++) {
            MPI_Comm_free(&pdup[i]);
            MPI_Comm_free(&pair[i]);
        }
    }
    /* MPI 4.0's form with hints: the same duplicate */
    MPI_Comm wi;
    MPI_Request wr;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &wi, &wr);
    MPI_Info_free(&info);
    MPI_Wait(&wr, MPI_STATUS_IGNORE);
    errs += check_comm(rank, wi, size, "MPI_Comm_idup_with_info");
    MPI_Comm_free(&wi);
    MPI_Comm_free(&base);
    MPI_Comm_free_keyval(&key);
    mt_finish(errs, "comm_idup: OK");
    MPI_Finalize();
    return 0;
}
