#include <stdlib.h>
#include <string.h>
#include "coll.h"

int jc_gather_doubles(MPI_Comm comm, const double *vals, int n, double *all, int tag)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank != 0) {
        MPI_Request req;
        MPI_Isend(vals, n, MPI_DOUBLE, 0, tag, comm, &req);
        return MPI_Waitall(1, &req, MPI_STATUSES_IGNORE);
    }
    memcpy(all, vals, (size_t)n * sizeof(double));
    if (size == 1)
        return MPI_SUCCESS;
    MPI_Request *reqs = malloc((size_t)(size - 1) * sizeof(*reqs));
    if (!reqs)
        return -1;
    for (int r = 1; r < size; r++)
        MPI_Irecv(all + (size_t)r * n, n, MPI_DOUBLE, r, tag, comm, &reqs[r - 1]);
    int rc = MPI_Waitall(size - 1, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
    return rc;
}

int jc_bcast_ints(MPI_Comm comm, int *vals, int n, int tag)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank != 0) {
        MPI_Request req;
        MPI_Irecv(vals, n, MPI_INT, 0, tag, comm, &req);
        return MPI_Waitall(1, &req, MPI_STATUSES_IGNORE);
    }
    if (size == 1)
        return MPI_SUCCESS;
    MPI_Request *reqs = malloc((size_t)(size - 1) * sizeof(*reqs));
    if (!reqs)
        return -1;
    for (int r = 1; r < size; r++)
        MPI_Isend(vals, n, MPI_INT, r, tag, comm, &reqs[r - 1]);
    int rc = MPI_Waitall(size - 1, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
    return rc;
}
