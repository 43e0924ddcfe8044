/* dtype_halo.c - the halo exchange of a 3D 7-point stencil with subarray
 * types: every rank owns a (NZ, NY, NX) block of doubles with one ghost
 * layer and, for each dimension in turn, sends its two boundary faces to
 * the ranks before and after it (a periodic ring) and receives theirs into
 * its ghost faces.  Checks: each ghost face holds the neighbour's values,
 * interior cells and the ghost edges/corners (no face covers them) keep
 * theirs.  Then the faces once more, received as plain MPI_DOUBLE arrays. */
#include "mpitest.h"

enum { NZ = 5, NY = 6, NX = 7, N = NZ * NY * NX };
static const int dims[3] = { NZ, NY, NX };

#define GHOST (-1.0)

static int idx(const int c[3]) { return (c[0] * NY + c[1]) * NX + c[2]; }

static double value(int rank, const int c[3])
{
    return (double)(mt_hash((uint32_t)rank, (uint32_t)c[0], (uint32_t)c[1], (uint32_t)c[2]) & 0xffffff);
}

static int interior(const int c[3])
{
    for (int d = 0; d < 3; d++)
        if (c[d] == 0 || c[d] == dims[d] - 1)
            return 0;
    return 1;
}

/* Face of dimension d at index `at`, interior in the other dimensions. */
static MPI_Datatype face(int d, int at)
{
    int sub[3], start[3];
    for (int k = 0; k < 3; k++) {
        sub[k] = k == d ? 1 : dims[k] - 2;
        start[k] = k == d ? at : 1;
    }
    MPI_Datatype t;
    MPI_Type_create_subarray(3, dims, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Which neighbour's cell (and which of its cells) ghost cell c mirrors
 * after the exchange of dimensions 0..upto; -1 if it stays a ghost. */
static int source_of(const int c[3], int upto, int prev, int next, int from[3])
{
    int rank = -1;
    for (int d = 0; d < 3; d++) {
        from[d] = c[d];
        if (c[d] == 0 || c[d] == dims[d] - 1) {
            if (rank != -1 || d > upto)
                return -1; /* an edge or corner, or a later dimension */
            rank = c[d] == 0 ? prev : next;
            from[d] = c[d] == 0 ? dims[d] - 2 : 1;
        }
    }
    return rank;
}

static int check_block(int rank, const double *a, int upto, int prev, int next, const char *what)
{
    int errs = 0, c[3], from[3];
    for (c[0] = 0; c[0] < NZ; c[0]++)
        for (c[1] = 0; c[1] < NY; c[1]++)
            for (c[2] = 0; c[2] < NX; c[2]++) {
                double want = GHOST;
                if (interior(c))
                    want = value(rank, c);
                else {
                    int src = source_of(c, upto, prev, next, from);
                    if (src >= 0)
                        want = value(src, from);
                }
                if (a[idx(c)] != want && errs < 5)
                    errs += mt_fail(rank, "%s, after dim %d: cell (%d,%d,%d) is %g, expected %g", what, upto, c[0],
                                    c[1], c[2], a[idx(c)], want);
            }
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double *a = mt_malloc(N * sizeof(double));
    int c[3];
    for (c[0] = 0; c[0] < NZ; c[0]++)
        for (c[1] = 0; c[1] < NY; c[1]++)
            for (c[2] = 0; c[2] < NX; c[2]++)
                a[idx(c)] = interior(c) ? value(rank, c) : GHOST;

    for (int d = 0; d < 3; d++) {
        MPI_Datatype lo_in = face(d, 1), hi_in = face(d, dims[d] - 2);
        MPI_Datatype lo_ghost = face(d, 0), hi_ghost = face(d, dims[d] - 1);
        /* low interior face to prev, whose high ghost takes it; and back */
        MPI_Sendrecv(a, 1, lo_in, prev, 10 + d, a, 1, hi_ghost, next, 10 + d, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(a, 1, hi_in, next, 20 + d, a, 1, lo_ghost, prev, 20 + d, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        errs += check_block(rank, a, d, prev, next, "subarray halo");

        /* the same face received as a contiguous array */
        int fn = 1, k = 0, from[3];
        for (int e = 0; e < 3; e++)
            fn *= e == d ? 1 : dims[e] - 2;
        double *flat = mt_malloc((size_t)fn * sizeof(double));
        MPI_Sendrecv(a, 1, lo_in, prev, 30 + d, flat, fn, MPI_DOUBLE, next, 30 + d, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (c[0] = 0; c[0] < NZ; c[0]++)
            for (c[1] = 0; c[1] < NY; c[1]++)
                for (c[2] = 0; c[2] < NX; c[2]++) {
                    if (c[d] != dims[d] - 1 || source_of(c, d, prev, next, from) < 0)
                        continue; /* row-major order over the high ghost face */
                    if (flat[k] != value(next, from) && errs < 5)
                        errs += mt_fail(rank, "face %d as doubles: item %d is %g", d, k, flat[k]);
                    k++;
                }
        if (k != fn)
            errs += mt_fail(rank, "face %d: %d cells, expected %d", d, k, fn);
        free(flat);
        MPI_Type_free(&lo_in);
        MPI_Type_free(&hi_in);
        MPI_Type_free(&lo_ghost);
        MPI_Type_free(&hi_ghost);
    }
    free(a);
    mt_finish(errs, "dtype_halo OK");
    MPI_Finalize();
    return 0;
}
