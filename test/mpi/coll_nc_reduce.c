/* coll_nc_reduce.c - reductions on a derived datatype with gaps: one int
 * out of every two (a resized vector), so the gaps must stay untouched.
 * MPI_SUM (a predefined op on the type's basic elements) through Reduce,
 * Allreduce (also in place), Reduce_scatter_block, Reduce_scatter, Scan and
 * Exscan (and MPI_Reduce_local), and a non-commutative user op ("keep the left operand": the
 * result is rank 0's data only if the ranks are combined in MPI's order).
 * COLL_MODE picks the form of every call as in coll_noncontig.c (0
 * blocking, 1 nonblocking, 2 persistent); coll_nc_reduce_nb.c and
 * coll_nc_reduce_persist.c set it. */
#include "mpitest.h"

#ifndef COLL_MODE
#define COLL_MODE 0
#endif

#define K 3
#define HOLE -77


/* A strided buffer of n elements: element e (at 2e) is first + e. */
static int *strided(int n, int first)
{
    int *b = mt_malloc(sizeof(int) * (size_t)(2 * n + 1));
    for (int e = 0; e < n; e++) {
        b[2 * e] = first + e;
        b[2 * e + 1] = HOLE;
    }
    b[2 * n] = HOLE;
    return b;
}

static int holes(int *b, int n, int fill)
{
    for (int e = 0; e < n; e++)
        b[2 * e] = fill;
    return 0;
}

/* Element e of b (n elements) must be want(first + e); the gaps HOLE and
 * the int after the data `after`. */
static int check(int rank, const char *what, const int *b, int n, long (*want)(int e, int me, int size), int size,
                 int first, int after)
{
    for (int e = 0; e < n; e++) {
        if (b[2 * e] != want(first + e, rank, size))
            return mt_fail(rank, "%s: element %d is %d, expected %ld", what, e, b[2 * e],
                           want(first + e, rank, size));
        if (b[2 * e + 1] != HOLE)
            return mt_fail(rank, "%s: the gap after element %d holds %d", what, e, b[2 * e + 1]);
    }
    return b[2 * n] == after ? 0 : mt_fail(rank, "%s: the int after the data holds %d", what, b[2 * n]);
}

/* input of rank r, element e: r + 1 + e */
static long sum_all(int e, int me, int n) { (void)me; return (long)n * (n + 1) / 2 + (long)n * e; }
static long scan_sum(int e, int me, int n) { (void)n; return (long)(me + 1) * (me + 2) / 2 + (long)(me + 1) * e; }
static long exscan_sum(int e, int me, int n) { (void)n; return (long)me * (me + 1) / 2 + (long)me * e; }
static long rank0(int e, int me, int n) { (void)me, (void)n; return 1 + e; }

static void keep_left(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout, size;
    MPI_Aint lb, extent;
    MPI_Type_size(*dt, &size);
    MPI_Type_get_extent(*dt, &lb, &extent);
    if (size != sizeof(int) || extent != 2 * sizeof(int)) /* the op must see the user's type */
        MPI_Abort(MPI_COMM_WORLD, 9);
    for (int i = 0; i < *len; i++)
        b[2 * i] = a[2 * i];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), n = mt_size(), errs = 0, root = n - 1;
    MPI_Datatype vec, every_other;
    MPI_Type_vector(1, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 2 * sizeof(int), &every_other);
    MPI_Type_commit(&every_other);
    MPI_Type_free(&vec);
    MPI_Op left;
    MPI_Op_create(keep_left, 0, &left);

    int *in = strided(n * K, rank + 1), *out = strided((n + 1) * K, 0);
    holes(out, (n + 1) * K, -1);
    MT_COLL(MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, in, out, K, every_other, MPI_SUM, root);
    if (rank == root)
        errs += check(rank, "reduce", out, K, sum_all, n, 0, -1);
    holes(out, (n + 1) * K, -1);
    MT_COLL(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, in, out, K, every_other, MPI_SUM);
    errs += check(rank, "allreduce", out, K, sum_all, n, 0, -1);
    int *inplace = strided(K, rank + 1);
    MT_COLL(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, MPI_IN_PLACE, inplace, K, every_other, MPI_SUM);
    errs += check(rank, "allreduce in place", inplace, K, sum_all, n, 0, HOLE);
    holes(out, (n + 1) * K, -1);
    MT_COLL(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, in, out, K, every_other, left);
    errs += check(rank, "allreduce, user op", out, K, rank0, n, 0, -1);

    holes(out, (n + 1) * K, -1);
    MT_COLL(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, in, out, K,
         every_other, MPI_SUM);
    errs += check(rank, "reduce_scatter_block", out, K, sum_all, n, rank * K, -1);
    int *counts = mt_malloc(sizeof(int) * (size_t)n), total = 0;
    for (int i = 0; i < n; i++) {
        counts[i] = 1 + i % 2;
        total += counts[i];
    }
    int first = 0;
    for (int i = 0; i < rank; i++)
        first += counts[i];
    int *vin = strided(total, rank + 1);
    holes(out, (n + 1) * K, -1);
    MT_COLL(MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init, vin, out, counts, every_other, MPI_SUM);
    errs += check(rank, "reduce_scatter", out, counts[rank], sum_all, n, first, -1);

    holes(out, (n + 1) * K, -1);
    MT_COLL(MPI_Scan, MPI_Iscan, MPI_Scan_init, in, out, K, every_other, MPI_SUM);
    errs += check(rank, "scan", out, K, scan_sum, n, 0, -1);
    holes(out, (n + 1) * K, -5);
    MT_COLL(MPI_Exscan, MPI_Iexscan, MPI_Exscan_init, in, out, K, every_other, MPI_SUM);
    if (rank > 0)
        errs += check(rank, "exscan", out, K, exscan_sum, n, 0, -5);

    /* MPI_Reduce_local: inout = in op inout, element by element */
    int *x = strided(K, 10), *y = strided(K, 100);
    MPI_Reduce_local(x, y, K, every_other, MPI_SUM);
    for (int e = 0; e < K; e++)
        if (y[2 * e] != 110 + 2 * e || y[2 * e + 1] != HOLE)
            errs += mt_fail(rank, "reduce_local: element %d is %d (gap %d)", e, y[2 * e], y[2 * e + 1]);
    free(x), free(y);

    free(in), free(out), free(inplace), free(counts), free(vin);
    MPI_Op_free(&left);
    MPI_Type_free(&every_other);
    mt_finish(errs, COLL_MODE == 0 ? "coll_nc_reduce: OK" : COLL_MODE == 1 ? "coll_nc_reduce_nb: OK"
                                                                        : "coll_nc_reduce_persist: OK");
    MPI_Finalize();
    return 0;
}
