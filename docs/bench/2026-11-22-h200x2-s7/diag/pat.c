#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
/* patterns: 0 ping-pong; 1 rank1 sends a then b, root recvs a,b, sends c (skew pattern); 2 = reduce+barrier */
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me; MPI_Comm_rank(MPI_COMM_WORLD, &me);
    double rtt = 0; int N = argc > 2 ? atoi(argv[2]) : 200000; float a = 1, b = 0; int pat = argc > 1 ? argv[1][0]-'0' : 0;
    for (int rep = 0; rep < 2; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(); rtt = 0;
    for (int i = 0; i < N; i++) {
        if (pat == 0) {
            if (me == 1) { MPI_Send(&a, 1, MPI_FLOAT, 0, 1, MPI_COMM_WORLD); MPI_Recv(&b, 1, MPI_FLOAT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
            else { MPI_Recv(&b, 1, MPI_FLOAT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(&a, 1, MPI_FLOAT, 1, 3, MPI_COMM_WORLD); }
        } else if (pat == 1) {
            if (me == 1) { MPI_Send(&a, 1, MPI_FLOAT, 0, 1, MPI_COMM_WORLD); MPI_Send(&a, 0, MPI_FLOAT, 0, 2, MPI_COMM_WORLD); MPI_Recv(&b, 0, MPI_FLOAT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
            else { MPI_Recv(&b, 1, MPI_FLOAT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Recv(&b, 0, MPI_FLOAT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(&a, 0, MPI_FLOAT, 1, 3, MPI_COMM_WORLD); }
        } else if (pat == 3) { /* rank1: send a, then sendrecv(bar) ; root: recv a, sendrecv(bar) */
            if (me == 1) MPI_Send(&a, 1, MPI_FLOAT, 0, 1, MPI_COMM_WORLD); else MPI_Recv(&b, 1, MPI_FLOAT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Sendrecv(&a, 0, MPI_FLOAT, 1-me, 2, &b, 0, MPI_FLOAT, 1-me, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (pat == 4) {
            MPI_Sendrecv(&a, 0, MPI_FLOAT, 1-me, 2, &b, 0, MPI_FLOAT, 1-me, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (pat == 6 || pat == 7) {
            if (pat == 6) MPI_Barrier(MPI_COMM_WORLD);
            else MPI_Sendrecv(&a, 0, MPI_FLOAT, 1-me, 2, &b, 0, MPI_FLOAT, 1-me, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (me == 0) { double s = MPI_Wtime(); MPI_Send(&a, 1, MPI_FLOAT, 1, 1, MPI_COMM_WORLD); MPI_Recv(&b, 1, MPI_FLOAT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); rtt += MPI_Wtime() - s; }
            else { MPI_Recv(&b, 1, MPI_FLOAT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(&a, 1, MPI_FLOAT, 0, 1, MPI_COMM_WORLD); }
        } else if (pat == 5) {
            MPI_Barrier(MPI_COMM_WORLD);
        } else {
            MPI_Reduce(&a, &b, 1, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    double t = (MPI_Wtime() - t0) / N * 1e6;
    if (me == 0 && rep) printf("pattern %d: %.3f us/iter, timed half-rtt %.3f\n", pat, t, rtt / N / 2 * 1e6);
    }
    MPI_Finalize();
}
