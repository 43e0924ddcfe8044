/* -v: rank 0 runs the whole grid serially and compares every cell of the
 * distributed result with it.  Small grids only (rank 0 holds everything). */
#ifndef JACOBI_VERIFY_H
#define JACOBI_VERIFY_H

#include <mpi.h>
#include "kernels.h"

/* Largest grid -v accepts: two copies of it live on rank 0. */
#define JC_VERIFY_MAX_CELLS (1L << 25)

/* Collective.  Every rank hands in its backend after `iters` iterations;
 * rank 0 prints VERIFY PASS / VERIFY FAIL.  Returns 0 on every rank when
 * the results match within 1e-12 (relative), 1 on mismatch, -1 on error. */
int jc_verify(MPI_Comm comm, const jc_ops_t *ops, jc_backend_t *be, const long n[3], const int p[3], int iters);

#endif
