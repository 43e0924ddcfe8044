/* Shared by the large-count entry points of MPI 4.0 (env_large_*.c), which
 * turn MPI_Count arguments into the int calls. */
#ifndef AMPI_ENV_LARGE_H
#define AMPI_ENV_LARGE_H

#include "core/core_err.h"
#include "mpi.h"

#define ENV_UNPAREN(...) __VA_ARGS__
#define ENV_STR(x) #x
#define ENV_WEAK(name) ENV_STR(weak MPI_##name##_c = PMPI_##name##_c)

/* A committed contiguous type of count elements of dt (the caller frees
 * it), or an MPI error class. */
int env_large_type(MPI_Count count, MPI_Datatype dt, MPI_Datatype *big);

/* An int copy of n counts (or MPI_Aint displacements), NULL when a value
 * does not fit an int or memory runs out (*err says which) or a is NULL. */
int *env_large_ints(const MPI_Count *a, int n, int *err);
int *env_large_disps(const MPI_Aint *a, int n, int *err);

#endif
