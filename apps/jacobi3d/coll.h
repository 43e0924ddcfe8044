/* The few collective operations jacobi3d needs, built from MPI_Isend /
 * MPI_Irecv / MPI_Waitall only: our library does not have MPI_Reduce,
 * MPI_Bcast or MPI_Gather yet.  Linear in the number of ranks, which is
 * fine for a summary at the end of a run. */
#ifndef JACOBI_COLL_H
#define JACOBI_COLL_H

#include <mpi.h>

/* Both return MPI_SUCCESS, or another value on failure. */

/* Rank 0 gets all[r * n + i] = vals[i] of rank r (all may be NULL elsewhere). */
int jc_gather_doubles(MPI_Comm comm, const double *vals, int n, double *all, int tag);

/* Every rank gets rank 0's vals[0..n). */
int jc_bcast_ints(MPI_Comm comm, int *vals, int n, int tag);

#endif
