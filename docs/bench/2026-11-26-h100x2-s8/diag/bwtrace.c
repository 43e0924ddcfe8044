/* bwtrace: osu_bw's exchange (window of 64 Isend/Irecv, 4-byte ack) at one
 * size, repeated as ROUNDS "sizes" of 10 + 100 windows each, as osu_bw
 * runs its sizes.  Rank 0 prints each round's bandwidth over windows
 * 10..109 (what osu_bw reports) and, for the first round, the median window
 * time of each block of 10: is the first size slow all through or only at
 * its start?  Also the blocks of the second round.  Usage: bwtrace [bytes] [rounds] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define ITERS 110
#define SKIP 10

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int bytes = argc > 1 ? atoi(argv[1]) : 1, rounds = argc > 2 ? atoi(argv[2]) : 4;
    char *buf = calloc(1, (size_t)bytes * WINDOW + 64), ack[4] = {0};
    MPI_Request req[WINDOW];
    double t[ITERS], first[ITERS], second[ITERS];
    for (int r = 0; r < rounds; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < ITERS; i++) {
            double t0 = MPI_Wtime();
            if (rank == 0) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Isend(buf + (size_t)w * bytes, bytes, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                MPI_Recv(ack, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Irecv(buf + (size_t)w * bytes, bytes, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                MPI_Send(ack, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
            }
            t[i] = MPI_Wtime() - t0;
        }
        if (r == 0)
            memcpy(first, t, sizeof t);
        if (r == 1)
            memcpy(second, t, sizeof t);
        if (rank == 0) {
            double sum = 0;
            for (int i = SKIP; i < ITERS; i++)
                sum += t[i];
            printf("round %d: %.2f MB/s (%.3f us/window)\n", r, (double)bytes * WINDOW * (ITERS - SKIP) / sum / 1e6,
                   sum / (ITERS - SKIP) * 1e6);
        }
    }
    for (int k = 0; rank == 0 && k < 2 && k < rounds; k++) {
        double *x = k ? second : first;
        printf("round %d block medians (us/window):", k);
        for (int b = 0; b < ITERS / 10; b++) {
            qsort(x + b * 10, 10, sizeof(double), cmp);
            printf(" %.2f", (x[b * 10 + 4] + x[b * 10 + 5]) / 2 * 1e6);
        }
        printf("\n");
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
