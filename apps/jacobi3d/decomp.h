/* The 3D decomposition: how many blocks along each axis, which part of the
 * global grid a rank owns, and who its six neighbours are.  Our library has
 * no MPI_Dims_create or Cartesian communicators (yet), so this is computed
 * here, identically on every rank. */
#ifndef JACOBI_DECOMP_H
#define JACOBI_DECOMP_H

#include "stencil.h"

/* Choose p[0]*p[1]*p[2] == nranks minimising the summed surface area of the
 * blocks of an n[0] x n[1] x n[2] grid (that area is what the halo exchange
 * moves).  With fit != 0 every block must hold at least one cell.  Ties go
 * to fewer cuts along x, so the contiguous z faces are cut first.
 * Returns 0, or -1 when no decomposition fits. */
int jc_choose_dims(int nranks, const long n[3], int fit, int p[3]);

/* Ranks are numbered with x slowest: rank = iz + pz * (iy + py * ix).  With
 * the usual placement of consecutive ranks on one process / GPU, a process
 * then owns a slab along x, matching how the grid is split between GPUs. */
int jc_rank_of(const int p[3], int ix, int iy, int iz);

/* The block of `rank`: sizes differ by at most one cell along each axis;
 * faces with a neighbour get consecutive places in the packed buffers. */
void jc_block_of_rank(const long n[3], const int p[3], int rank, jc_block_t *blk);

#endif
