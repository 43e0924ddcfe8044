/* coll_persist.c - persistent collectives (MPI 4.0): each is set up once
 * and started three times with new data in between (MPI_Start, then all of
 * them at once with MPI_Startall), then freed; and nonblocking
 * v-collectives whose caller overwrites and frees its count and
 * displacement arrays right after the call (MPI 3.1 says it should not, but
 * mpi4py does, and other libraries copy them). */
#include "mpitest.h"

#if MPI_VERSION >= 4 || defined(AMPI_UCX)

#define NREQ 9

static int value(int round, int rank, int i) { return 1000 * round + 10 * rank + i; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), n = mt_size(), errs = 0, root = n - 1;
    int bc[4], red_in[3], red_out[3], ar[3], scan_in, scan_out, exscan_out = -1;
    int *gv_in = mt_zalloc(2 * sizeof(int)), *gv_out = mt_zalloc((size_t)2 * n * sizeof(int));
    int *a2a_in = mt_zalloc((size_t)n * sizeof(int)), *a2a_out = mt_zalloc((size_t)n * sizeof(int));
    int *rs_in = mt_zalloc((size_t)n * sizeof(int)), rs_out = -1;
    int *counts = mt_zalloc((size_t)n * sizeof(int)), *displs = mt_zalloc((size_t)n * sizeof(int));
    int *ones = mt_zalloc((size_t)n * sizeof(int)), *steps = mt_zalloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        counts[i] = 2;
        displs[i] = 2 * i;
        ones[i] = 1;
        steps[i] = i;
    }
    MPI_Request q[NREQ];
    MPI_Info info = MPI_INFO_NULL;
    MPI_Barrier_init(MPI_COMM_WORLD, info, &q[0]);
    MPI_Bcast_init(bc, 4, MPI_INT, root, MPI_COMM_WORLD, info, &q[1]);
    MPI_Reduce_init(red_in, red_out, 3, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, info, &q[2]);
    MPI_Allreduce_init(MPI_IN_PLACE, ar, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD, info, &q[3]);
    MPI_Allgatherv_init(gv_in, 2, MPI_INT, gv_out, counts, displs, MPI_INT, MPI_COMM_WORLD, info, &q[4]);
    MPI_Alltoallv_init(a2a_in, ones, steps, MPI_INT, a2a_out, ones, steps, MPI_INT, MPI_COMM_WORLD, info, &q[5]);
    MPI_Reduce_scatter_init(rs_in, &rs_out, ones, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &q[6]);
    MPI_Scan_init(&scan_in, &scan_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &q[7]);
    MPI_Exscan_init(&scan_in, &exscan_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &q[8]);

    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 4; i++)
            bc[i] = rank == root ? value(round, root, i) : -1;
        for (int i = 0; i < 3; i++) {
            red_in[i] = value(round, rank, i);
            red_out[i] = -1;
            ar[i] = value(round, rank, i);
        }
        for (int i = 0; i < 2; i++)
            gv_in[i] = value(round, rank, i);
        for (int i = 0; i < n; i++) {
            a2a_in[i] = value(round, rank, i);
            rs_in[i] = value(round, rank, i);
        }
        scan_in = value(round, rank, 0);
        if (round == 0) { /* one by one; then all at once */
            for (int i = 0; i < NREQ; i++) {
                MPI_Start(&q[i]);
                MPI_Wait(&q[i], MPI_STATUS_IGNORE);
            }
        } else {
            MPI_Startall(NREQ, q);
            MPI_Waitall(NREQ, q, MPI_STATUSES_IGNORE);
        }
        for (int i = 0; i < 4; i++)
            if (bc[i] != value(round, root, i))
                errs += mt_fail(rank, "round %d bcast[%d] = %d", round, i, bc[i]);
        int sum_ranks = n * (n - 1) / 2;
        for (int i = 0; i < 3; i++) {
            int sum = n * (1000 * round + i) + 10 * sum_ranks;
            if (rank == root && red_out[i] != sum)
                errs += mt_fail(rank, "round %d reduce[%d] = %d, expected %d", round, i, red_out[i], sum);
            if (ar[i] != value(round, n - 1, i))
                errs += mt_fail(rank, "round %d allreduce max[%d] = %d", round, i, ar[i]);
        }
        for (int r = 0; r < n; r++)
            for (int i = 0; i < 2; i++)
                if (gv_out[2 * r + i] != value(round, r, i))
                    errs += mt_fail(rank, "round %d allgatherv[%d] = %d", round, 2 * r + i, gv_out[2 * r + i]);
        for (int r = 0; r < n; r++)
            if (a2a_out[r] != value(round, r, rank))
                errs += mt_fail(rank, "round %d alltoallv[%d] = %d", round, r, a2a_out[r]);
        if (rs_out != n * (1000 * round + rank) + 10 * sum_ranks)
            errs += mt_fail(rank, "round %d reduce_scatter = %d", round, rs_out);
        int below = rank * (rank + 1) / 2; /* sum of ranks 0..rank */
        if (scan_out != (rank + 1) * 1000 * round + 10 * below)
            errs += mt_fail(rank, "round %d scan = %d", round, scan_out);
        if (rank > 0 && exscan_out != rank * 1000 * round + 10 * (below - rank))
            errs += mt_fail(rank, "round %d exscan = %d", round, exscan_out);
    }
    for (int i = 0; i < NREQ; i++) {
        MPI_Request_free(&q[i]);
        if (q[i] != MPI_REQUEST_NULL)
            errs += mt_fail(rank, "MPI_Request_free left request %d", i);
    }

    /* nonblocking: the caller's arrays change and go before the wait */
    int *c2 = mt_malloc((size_t)n * sizeof(int)), *d2 = mt_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        c2[i] = 2;
        d2[i] = 2 * (n - 1 - i); /* reversed order */
        gv_out[2 * i] = gv_out[2 * i + 1] = -1;
    }
    for (int i = 0; i < 2; i++)
        gv_in[i] = value(7, rank, i);
    MPI_Request rq;
    MPI_Iallgatherv(gv_in, 2, MPI_INT, gv_out, c2, d2, MPI_INT, MPI_COMM_WORLD, &rq);
    for (int i = 0; i < n; i++)
        c2[i] = d2[i] = -77;
    free(c2);
    free(d2);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < 2; i++)
            if (gv_out[2 * (n - 1 - r) + i] != value(7, r, i))
                errs += mt_fail(rank, "iallgatherv with freed arrays: block of rank %d wrong", r);

    /* MPI 4.0 orders persistent collectives by their init calls: the odd
     * ranks start the two in the other order */
    int bval = rank == 0 ? 42 : -1, sval = rank, ssum = -1;
    MPI_Request two[2];
    MPI_Bcast_init(&bval, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &two[0]);
    MPI_Allreduce_init(&sval, &ssum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &two[1]);
    for (int round = 0; round < 3; round++) {
        MPI_Start(&two[rank % 2]);
        MPI_Start(&two[1 - rank % 2]);
        MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
        if (bval != 42 || ssum != n * (n - 1) / 2)
            errs += mt_fail(rank, "persistent pair started out of order, round %d: bcast %d, sum %d", round, bval,
                            ssum);
    }
    MPI_Request_free(&two[0]);
    MPI_Request_free(&two[1]);

    free(gv_in), free(gv_out), free(a2a_in), free(a2a_out), free(rs_in);
    free(counts), free(displs), free(ones), free(steps);
    mt_finish(errs, "coll_persist: OK");
    MPI_Finalize();
    return 0;
}

#else
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (mt_rank() == 0)
        printf("coll_persist: OK (skipped: MPI %d has no persistent collectives)\n", MPI_VERSION);
    MPI_Finalize();
    return 0;
}
#endif
