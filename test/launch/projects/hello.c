/* A plain MPI program of a user's project: says which library it runs on
 * and checks a reduction over all ranks. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, sum = 0, len;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_library_version(version, &len);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("hello from %d ranks on %s: sum %s\n", size, version,
               sum == size * (size - 1) / 2 ? "ok" : "WRONG");
    MPI_Finalize();
    return 0;
}
