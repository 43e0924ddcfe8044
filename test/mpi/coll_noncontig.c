/* coll_noncontig.c - collectives on derived datatypes that are not one
 * plain block: a strided vector (every other int, so the gaps must stay
 * untouched) and a struct of an int and a double with a hole between them.
 * Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v), with MPI_IN_PLACE
 * where MPI allows it, and ranks that describe the same data with different
 * types (the vector on one side, plain MPI_INT on the other).
 * COLL_MODE picks the form of every call: 0 blocking, 1 nonblocking (then
 * MPI_Wait), 2 persistent (MPI_Xxx_init, MPI_Start, MPI_Wait,
 * MPI_Request_free); coll_noncontig_nb.c and coll_noncontig_persist.c set
 * it. */
#include "mpitest.h"

#ifndef COLL_MODE
#define COLL_MODE 0
#endif

#define K 3      /* ints per block */
#define HOLE -99 /* what the gaps of a strided buffer hold */

static int val(int owner, int block, int i) { return 10000 * owner + 100 * block + i; }

/* n blocks of K ints, every other int used */
static int *strided(int n)
{
    int *b = mt_malloc((size_t)2 * K * n * sizeof(int));
    for (int i = 0; i < 2 * K * n; i++)
        b[i] = HOLE;
    return b;
}

static int check_strided(int rank, const char *what, const int *b, int n, int (*want)(int blk, int i, int me),
                         int me)
{
    for (int blk = 0; blk < n; blk++)
        for (int i = 0; i < K; i++) {
            int at = 2 * (K * blk + i);
            if (b[at] != want(blk, i, me) || b[at + 1] != HOLE)
                return mt_fail(rank, "%s: block %d element %d is %d (gap %d), expected %d", what, blk, i, b[at],
                               b[at + 1], want(blk, i, me));
        }
    return 0;
}

static int from_block_owner(int blk, int i, int me) { (void)me; return val(blk, 0, i); }
static int a2a_want(int blk, int i, int me) { return val(blk, me, i); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), n = mt_size(), errs = 0, root = 0;
    MPI_Datatype vec, strided_int;
    MPI_Type_vector(K, 1, 2, MPI_INT, &vec); /* K ints, stride 2 */
    /* extent 2K ints: consecutive blocks follow each other */
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * K * sizeof(int)), &strided_int);
    MPI_Type_commit(&strided_int);
    MPI_Type_free(&vec);

    /* Bcast */
    int *b = strided(1);
    if (rank == root)
        for (int i = 0; i < K; i++)
            b[2 * i] = val(0, 0, i);
    MT_COLL(MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, b, 1, strided_int, root);
    errs += check_strided(rank, "bcast", b, 1, from_block_owner, rank);
    free(b);

    /* Gather: the root receives strided, the others send plain ints */
    int mine[K], *g = rank == root ? strided(n) : NULL;
    for (int i = 0; i < K; i++)
        mine[i] = val(rank, 0, i);
    if (rank == root)
        MT_COLL(MPI_Gather, MPI_Igather, MPI_Gather_init, mine, K, MPI_INT, g, 1, strided_int, root);
    else
        MT_COLL(MPI_Gather, MPI_Igather, MPI_Gather_init, mine, K, MPI_INT, NULL, 0, MPI_INT, root);
    if (rank == root)
        errs += check_strided(rank, "gather", g, n, from_block_owner, rank);

    /* Gatherv, in place at the root, strided everywhere */
    int *counts = mt_malloc((size_t)n * sizeof(int)), *displs = mt_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        counts[i] = 1;
        displs[i] = n - 1 - i; /* reversed */
    }
    int *one = strided(1);
    for (int i = 0; i < K; i++)
        one[2 * i] = val(rank, 0, i);
    if (rank == root) {
        free(g);
        g = strided(n);
        for (int i = 0; i < K; i++)
            g[2 * (K * displs[root] + i)] = val(root, 0, i);
        MT_COLL(MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, MPI_IN_PLACE, 1, strided_int, g, counts, displs, strided_int, root);
        for (int r = 0; r < n; r++)
            for (int i = 0; i < K; i++)
                if (g[2 * (K * displs[r] + i)] != val(r, 0, i))
                    errs += mt_fail(rank, "gatherv: block of rank %d element %d wrong", r, i);
    } else {
        MT_COLL(MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, one, 1, strided_int, NULL, NULL, NULL, MPI_INT, root);
    }

    /* Scatter: strided at the root, plain ints elsewhere; Scatterv in place */
    int *s = NULL;
    if (rank == root) {
        s = strided(n);
        for (int r = 0; r < n; r++)
            for (int i = 0; i < K; i++)
                s[2 * (K * r + i)] = val(0, r, i);
    }
    int got[K] = { 0 };
    MT_COLL(MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, s, 1, strided_int, got, K, MPI_INT, root);
    for (int i = 0; i < K; i++)
        if (got[i] != val(0, rank, i))
            errs += mt_fail(rank, "scatter: element %d is %d", i, got[i]);
    int *mine_s = strided(1);
    if (rank == root)
        MT_COLL(MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, s, counts, displs, strided_int, MPI_IN_PLACE, 1, strided_int, root);
    else
        MT_COLL(MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, NULL, NULL, NULL, MPI_INT, mine_s, 1, strided_int, root);
    if (rank != root) /* block displs[rank] of the root's buffer = val(0, displs[rank], i) */
        for (int i = 0; i < K; i++)
            if (mine_s[2 * i] != val(0, displs[rank], i) || mine_s[2 * i + 1] != HOLE)
                errs += mt_fail(rank, "scatterv: element %d is %d", i, mine_s[2 * i]);

    /* Allgather, in place */
    int *ag = strided(n);
    for (int i = 0; i < K; i++)
        ag[2 * (K * rank + i)] = val(rank, 0, i);
    MT_COLL(MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, 1, strided_int);
    errs += check_strided(rank, "allgather in place", ag, n, from_block_owner, rank);

    /* Allgatherv: plain ints sent, strided received */
    free(ag);
    ag = strided(n);
    for (int i = 0; i < n; i++)
        displs[i] = i;
    MT_COLL(MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init, mine, K, MPI_INT, ag, counts, displs, strided_int);
    errs += check_strided(rank, "allgatherv", ag, n, from_block_owner, rank);

    /* Alltoall strided both ways, and in place */
    int *a_in = strided(n), *a_out = strided(n);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < K; i++)
            a_in[2 * (K * r + i)] = val(rank, r, i);
    MT_COLL(MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init, a_in, 1, strided_int, a_out, 1, strided_int);
    errs += check_strided(rank, "alltoall", a_out, n, a2a_want, rank);
    MT_COLL(MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a_in, 1, strided_int);
    errs += check_strided(rank, "alltoall in place", a_in, n, a2a_want, rank);

    /* Alltoallv: strided sent, plain ints received */
    int *plain = mt_zalloc((size_t)K * n * sizeof(int)), *kc = mt_malloc((size_t)n * sizeof(int));
    int *kd = mt_malloc((size_t)n * sizeof(int));
    for (int r = 0; r < n; r++) {
        kc[r] = K;
        kd[r] = K * r;
        for (int i = 0; i < K; i++)
            a_out[2 * (K * r + i)] = val(rank, r, i);
    }
    MT_COLL(MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init, a_out, counts, displs, strided_int, plain, kc, kd, MPI_INT);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < K; i++)
            if (plain[K * r + i] != val(r, rank, i))
                errs += mt_fail(rank, "alltoallv: from %d element %d is %d", r, i, plain[K * r + i]);

    free(g), free(counts), free(displs), free(one), free(s), free(mine_s), free(ag);
    free(a_in), free(a_out), free(plain), free(kc), free(kd);
    MPI_Type_free(&strided_int);
    mt_finish(errs, COLL_MODE == 0 ? "coll_noncontig: OK" : COLL_MODE == 1 ? "coll_noncontig_nb: OK" : "coll_noncontig_persist: OK");
    MPI_Finalize();
    return 0;
}
