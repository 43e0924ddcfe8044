/* nbc_phases: where each rank's time goes in a nonblocking collective.
 *
 *   nbc_phases COLL BYTES [ITERATIONS [pure]]
 *
 * COLL: Ibcast, Iscatter, Iscatterv, Igather, Igatherv, Ialltoall,
 * Iallreduce, Ireduce (floats, MPI_SUM) or Ibarrier; BYTES a block (as
 * IMB-NBC's sizes).  Like IMB-NBC, it times the collective with nothing to
 * overlap (pure: start + MPI_Wait), then with a computation as long as the
 * slowest rank's pure time between start and wait, and prints the overlap
 * by IMB-NBC's formula -- but also each rank's share: the time inside the
 * starting call and inside MPI_Wait after the computation, which IMB-NBC's
 * maxima hide (for example a root that copies its own block in the call).
 * The computation spins on MPI_Wtime, so it never enters the library.
 * With "pure" it runs the first part only, so that what the library counts
 * while debugging (AMPI_DEBUG=on) belongs to it alone. */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now_us(void) { return MPI_Wtime() * 1e6; }

static void compute(double us)
{
    double end = now_us() + us;
    while (now_us() < end)
        ;
}

typedef struct {
    const char *coll;
    char *sbuf, *rbuf;
    int n, *counts, *displs;
} job_t;

static int start(const job_t *j, MPI_Request *q)
{
    const char *c = j->coll;
    MPI_Comm w = MPI_COMM_WORLD;
    if (!strcmp(c, "Ibcast"))
        return MPI_Ibcast(j->sbuf, j->n, MPI_BYTE, 0, w, q);
    if (!strcmp(c, "Iscatter"))
        return MPI_Iscatter(j->sbuf, j->n, MPI_BYTE, j->rbuf, j->n, MPI_BYTE, 0, w, q);
    if (!strcmp(c, "Iscatterv"))
        return MPI_Iscatterv(j->sbuf, j->counts, j->displs, MPI_BYTE, j->rbuf, j->n, MPI_BYTE, 0, w, q);
    if (!strcmp(c, "Igather"))
        return MPI_Igather(j->sbuf, j->n, MPI_BYTE, j->rbuf, j->n, MPI_BYTE, 0, w, q);
    if (!strcmp(c, "Igatherv"))
        return MPI_Igatherv(j->sbuf, j->n, MPI_BYTE, j->rbuf, j->counts, j->displs, MPI_BYTE, 0, w, q);
    if (!strcmp(c, "Ialltoall"))
        return MPI_Ialltoall(j->sbuf, j->n, MPI_BYTE, j->rbuf, j->n, MPI_BYTE, w, q);
    if (!strcmp(c, "Iallreduce"))
        return MPI_Iallreduce(j->sbuf, j->rbuf, j->n / 4, MPI_FLOAT, MPI_SUM, w, q);
    if (!strcmp(c, "Ireduce"))
        return MPI_Ireduce(j->sbuf, j->rbuf, j->n / 4, MPI_FLOAT, MPI_SUM, 0, w, q);
    if (!strcmp(c, "Ibarrier"))
        return MPI_Ibarrier(w, q);
    return MPI_ERR_ARG;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3) {
        if (me == 0)
            fprintf(stderr, "usage: nbc_phases COLL BYTES [ITERATIONS [pure]]\n");
        MPI_Finalize();
        return 2;
    }
    int it = argc > 3 ? atoi(argv[3]) : 200;
    bool pure_only = argc > 4 && !strcmp(argv[4], "pure");
    job_t j = { .coll = argv[1], .n = atoi(argv[2]) };
    size_t all = (size_t)j.n * (size_t)np + 64;
    j.sbuf = calloc(all, 1);
    j.rbuf = calloc(all, 1);
    j.counts = malloc((size_t)np * sizeof *j.counts);
    j.displs = malloc((size_t)np * sizeof *j.displs);
    if (!j.sbuf || !j.rbuf || !j.counts || !j.displs || it < 1)
        MPI_Abort(MPI_COMM_WORLD, 2);
    /* written, as an application's buffers are: calloc's untouched pages
     * are the kernel's zero page, which a peer's process_vm_readv maps page
     * by page on a slow path (64 KiB: 4.0-5.0 us against 2.5-3.5 written) */
    memset(j.sbuf, 1, all);
    memset(j.rbuf, 2, all);
    for (int i = 0; i < np; i++) {
        j.counts[i] = j.n;
        j.displs[i] = i * j.n;
    }
    MPI_Request q;
    for (int i = 0; i < 20; i++) { /* warm-up */
        if (start(&j, &q) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 2);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double call = 0, pure = 0;
    for (int i = 0; i < it; i++) {
        double t0 = now_us();
        start(&j, &q);
        call += now_us() - t0;
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        pure += now_us() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    pure /= it;
    call /= it;
    double pure_max;
    MPI_Allreduce(&pure, &pure_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double ocall = 0, owait = 0, ovrl = 0;
    for (int i = 0; i < (pure_only ? 0 : it); i++) {
        double t0 = now_us();
        start(&j, &q);
        double t1 = now_us();
        compute(pure_max);
        double t2 = now_us();
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        double t3 = now_us();
        ocall += t1 - t0;
        owait += t3 - t2;
        ovrl += t3 - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (!pure_only) {
        ocall /= it;
        owait /= it;
        ovrl /= it;
    }
    double ovrl_max;
    MPI_Allreduce(&ovrl, &ovrl_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double mine[5] = { pure, call, ocall, owait, ovrl }, *every = malloc(5 * (size_t)np * sizeof *every);
    MPI_Gather(mine, 5, MPI_DOUBLE, every, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me == 0) {
        double f = (2 * pure_max - ovrl_max) / pure_max; /* IMB-NBC's, with t_CPU = t_pure */
        printf("%s %d: pure(max) %.2f ovrl(max) %.2f overlap %.1f%%\n", j.coll, j.n, pure_max, ovrl_max,
               100 * (f < 0 ? 0 : f > 1 ? 1 : f));
        for (int k = 0; k < np; k++) {
            const double *v = every + 5 * k;
            printf("   rank %d: pure %.2f (call %.2f) | ovrl call %.2f wait-after %.2f total %.2f\n", k, v[0], v[1],
                   v[2], v[3], v[4]);
        }
    }
    free(every);
    MPI_Finalize();
    return 0;
}
