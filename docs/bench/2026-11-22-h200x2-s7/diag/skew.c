#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double mono(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec*1e-3;}
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me; MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int N = 20000; float a = 1, b;
    double *ex = malloc(N * sizeof *ex), *rt = malloc(N * sizeof *rt);
    for (int i = 0; i < N; i++) {
        double t0 = mono();
        MPI_Reduce(&a, &b, 1, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        rt[i] = mono() - t0;
        if (argc > 1) MPI_Sendrecv(NULL, 0, MPI_BYTE, 1 - me, 9, NULL, 0, MPI_BYTE, 1 - me, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else MPI_Barrier(MPI_COMM_WORLD);
        ex[i] = mono();
    }
    double *ex1 = malloc(N * sizeof *ex1), *rt1 = malloc(N * sizeof *rt1);
    if (me == 1) { MPI_Send(ex, N, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD); MPI_Send(rt, N, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD); }
    else {
        MPI_Recv(ex1, N, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(rt1, N, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double sk = 0, r0 = 0, r1 = 0; int n = 0;
        for (int i = N / 2; i < N - 1; i++) { sk += ex1[i] - ex[i]; r0 += rt[i + 1]; r1 += rt1[i + 1]; n++; }
        printf("barrier exit: rank1 - rank0 = %.3f us; reduce time rank0 %.3f rank1 %.3f avg %.3f\n", sk / n, r0 / n, r1 / n, (r0 + r1) / 2 / n);
    }
    MPI_Finalize();
}
