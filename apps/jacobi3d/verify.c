#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "coll.h"
#include "decomp.h"
#include "verify.h"

enum { TAG_BLOCK = 1000, TAG_VERDICT = 1001 };

/* A plain serial Jacobi over the global grid: its own indexing and loops,
 * sharing only the start values and the stencil arithmetic (which must be
 * shared for the comparison to be exact). */
static double *serial_reference(const long n[3], int iters)
{
    size_t sy = (size_t)n[0] + 2, sz = sy * ((size_t)n[1] + 2), cells = sz * ((size_t)n[2] + 2);
    double *a = malloc(cells * sizeof(double)), *b = malloc(cells * sizeof(double));
    if (!a || !b) {
        free(a);
        free(b);
        return NULL;
    }
    for (long z = -1; z <= n[2]; z++)
        for (long y = -1; y <= n[1]; y++)
            for (long x = -1; x <= n[0]; x++) {
                size_t c = (size_t)(x + 1) + sy * (size_t)(y + 1) + sz * (size_t)(z + 1);
                a[c] = b[c] = jc_initial_value(x, y, z, n[0], n[1], n[2]);
            }
    for (int it = 0; it < iters; it++) {
        for (long z = 0; z < n[2]; z++)
            for (long y = 0; y < n[1]; y++)
                for (long x = 0; x < n[0]; x++) {
                    size_t c = (size_t)(x + 1) + sy * (size_t)(y + 1) + sz * (size_t)(z + 1);
                    b[c] = jc_stencil(a, c, sy, sz);
                }
        double *t = a;
        a = b;
        b = t;
    }
    free(b);
    return a;
}

static double compare_block(const double *ref, const long n[3], const jc_block_t *blk, const double *got)
{
    size_t sy = (size_t)n[0] + 2, sz = sy * ((size_t)n[1] + 2);
    double worst = 0.0;
    for (int k = 0; k < blk->lz; k++)
        for (int j = 0; j < blk->ly; j++)
            for (int i = 0; i < blk->lx; i++) {
                size_t c = (size_t)(blk->gx0 + i + 1) + sy * (size_t)(blk->gy0 + j + 1) + sz * (size_t)(blk->gz0 + k + 1);
                double want = ref[c], have = *got++;
                double rel = fabs(have - want) / fabs(want); /* start values keep every cell >= 0.5 */
                if (!(rel <= worst)) /* also catches NaN */
                    worst = rel;
            }
    return worst;
}

int jc_verify(MPI_Comm comm, const jc_ops_t *ops, jc_backend_t *be, const long n[3], const int p[3], int iters)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    jc_block_t mine;
    jc_block_of_rank(n, p, rank, &mine);
    size_t own = (size_t)mine.lx * mine.ly * mine.lz;
    double *buf = malloc(own * sizeof(double));
    int verdict = -1;
    if (!buf || ops->copy_out(be, buf)) {
        fprintf(stderr, "jacobi3d: rank %d: verify: cannot read the grid back: %s\n", rank,
                buf ? ops->error(be) : "out of memory");
        MPI_Abort(comm, 2);
    }
    if (rank != 0) {
        MPI_Request req;
        MPI_Isend(buf, (int)own, MPI_DOUBLE, 0, TAG_BLOCK, comm, &req);
        MPI_Waitall(1, &req, MPI_STATUSES_IGNORE);
    } else {
        double *ref = serial_reference(n, iters);
        double *blockbuf = malloc((size_t)(n[0] / p[0] + 1) * (n[1] / p[1] + 1) * (n[2] / p[2] + 1) * sizeof(double));
        if (!ref || !blockbuf) {
            fprintf(stderr, "jacobi3d: verify: out of memory for the reference grid\n");
            MPI_Abort(comm, 2);
        }
        double worst = compare_block(ref, n, &mine, buf);
        for (int r = 1; r < size; r++) {
            jc_block_t blk;
            jc_block_of_rank(n, p, r, &blk);
            MPI_Request req;
            MPI_Irecv(blockbuf, blk.lx * blk.ly * blk.lz, MPI_DOUBLE, r, TAG_BLOCK, comm, &req);
            MPI_Waitall(1, &req, MPI_STATUSES_IGNORE);
            double w = compare_block(ref, n, &blk, blockbuf);
            if (!(w <= worst))
                worst = w;
        }
        verdict = worst <= 1e-12 ? 0 : 1;
        if (verdict == 0)
            printf("VERIFY PASS max_rel_err=%.3g\n", worst);
        else
            printf("VERIFY FAIL max_rel_err=%.3g\n", worst);
        fflush(stdout);
        free(ref);
        free(blockbuf);
    }
    free(buf);
    jc_bcast_ints(comm, &verdict, 1, TAG_VERDICT);
    return verdict;
}
