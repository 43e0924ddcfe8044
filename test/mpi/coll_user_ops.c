/* coll_user_ops.c - user-defined reduction operations.
 *
 * A non-commutative op (product of 2x2 matrices [[p q][0 1]], i.e. the
 * composition of maps x -> p*x + q, stored as MPI_2INT) through Reduce
 * (root 0 and last), Allreduce, Scan, Exscan, Reduce_scatter_block and
 * Reduce_local, each checked against the product taken in rank order,
 * which the op must follow; a commutative user sum through Allreduce;
 * MPI_Op_commutative and MPI_Op_free. */
#include "mpitest.h"

typedef struct { int p, q; } affine_t; /* the matrix [[p q][0 1]]: x -> p*x + q */

/* inout = in then inout (the matrix product inout * in): not commutative. */
static void compose(void *in_, void *inout_, int *len, MPI_Datatype *dt)
{
    const affine_t *a = in_;
    affine_t *b = inout_;
    for (int k = 0; k < *len; k++) {
        affine_t c = {a[k].p * b[k].p, b[k].p * a[k].q + b[k].q};
        b[k] = *dt == MPI_2INT ? c : (affine_t){0x7fff, 0x7fff}; /* wrong type: poison the result */
    }
}

static void user_sum(void *in_, void *inout_, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = in_;
    int *b = inout_;
    for (int k = 0; k < *len; k++)
        b[k] += a[k];
}

static affine_t affine_in(int r, int i)
{
    uint32_t x = mt_hash((uint32_t)r, (uint32_t)i, 5, 6);
    affine_t m = {(r + i) % 4 == 0 ? 2 : (x & 1) ? -1 : 1, (int)(x >> 8 & 7) - 3};
    return m;
}

/* a_lo then ... then a_(hi-1), element i. */
static affine_t affine_seq(int lo, int hi, int i)
{
    affine_t acc = affine_in(lo, i);
    for (int r = lo + 1; r < hi; r++) {
        affine_t v = affine_in(r, i);
        int len = 1;
        MPI_Datatype dt = MPI_2INT;
        compose(&acc, &v, &len, &dt);
        acc = v;
    }
    return acc;
}

static int affine_check(int rank, const char *what, const affine_t *got, int lo, int hi, int first, int n)
{
    for (int i = 0; i < n; i++) {
        affine_t w = affine_seq(lo, hi, first + i);
        if (got[i].p != w.p || got[i].q != w.q)
            return mt_fail(rank, "%s: element %d is (%d,%d), expected (%d,%d) (ranks %d..%d in order)", what,
                           first + i, got[i].p, got[i].q, w.p, w.q, lo, hi - 1);
    }
    return 0;
}

static int check_user_ops(int rank, int size)
{
    enum { M = 3000, BLK = 5 };
    int errs = 0, root = size - 1;
    MPI_Op comp, sum;
    MPI_Op_create(compose, 0, &comp);
    MPI_Op_create(user_sum, 1, &sum);
    affine_t *in = mt_malloc(sizeof(affine_t) * M * (size_t)size), *out = mt_malloc(sizeof(affine_t) * M);
    for (int i = 0; i < M; i++)
        in[i] = affine_in(rank, i);
    MPI_Allreduce(in, out, M, MPI_2INT, comp, MPI_COMM_WORLD);
    errs += affine_check(rank, "Allreduce(non-commutative)", out, 0, size, 0, M);
    for (int k = 0; k < 2; k++) {
        int rt = k ? root : 0;
        MPI_Reduce(in, out, M, MPI_2INT, comp, rt, MPI_COMM_WORLD);
        if (rank == rt)
            errs += affine_check(rank, k ? "Reduce(non-commutative, root last)" : "Reduce(non-commutative, root 0)",
                                 out, 0, size, 0, M);
    }
    MPI_Scan(in, out, M, MPI_2INT, comp, MPI_COMM_WORLD);
    errs += affine_check(rank, "Scan(non-commutative)", out, 0, rank + 1, 0, M);
    MPI_Exscan(in, out, M, MPI_2INT, comp, MPI_COMM_WORLD);
    if (rank > 0)
        errs += affine_check(rank, "Exscan(non-commutative)", out, 0, rank, 0, M);
    for (int i = 0; i < BLK * size; i++)
        in[i] = affine_in(rank, i);
    MPI_Reduce_scatter_block(in, out, BLK, MPI_2INT, comp, MPI_COMM_WORLD);
    errs += affine_check(rank, "Reduce_scatter_block(non-commutative)", out, 0, size, BLK * rank, BLK);

    int *a = mt_malloc(sizeof(int) * M), *b = mt_malloc(sizeof(int) * M);
    for (int i = 0; i < M; i++)
        a[i] = (int)(mt_hash((uint32_t)rank, (uint32_t)i, 8, 9) % 1000);
    MPI_Allreduce(a, b, M, MPI_INT, sum, MPI_COMM_WORLD);
    for (int i = 0; i < M; i++) {
        int w = 0;
        for (int r = 0; r < size; r++)
            w += (int)(mt_hash((uint32_t)r, (uint32_t)i, 8, 9) % 1000);
        if (b[i] != w) {
            errs += mt_fail(rank, "Allreduce(user sum): element %d is %d, expected %d", i, b[i], w);
            break;
        }
    }
    int comm_comp = -1, comm_sum = -1, comm_max = -1;
    MPI_Op_commutative(comp, &comm_comp);
    MPI_Op_commutative(sum, &comm_sum);
    MPI_Op_commutative(MPI_MAX, &comm_max);
    if (comm_comp != 0 || comm_sum != 1 || comm_max != 1)
        errs += mt_fail(rank, "MPI_Op_commutative: %d %d %d, expected 0 1 1", comm_comp, comm_sum, comm_max);
    for (int i = 0; i < BLK; i++) { /* Reduce_local: out = in then out */
        in[i] = affine_in(0, i);
        out[i] = affine_in(1, i);
    }
    MPI_Reduce_local(in, out, BLK, MPI_2INT, comp);
    errs += affine_check(rank, "Reduce_local(non-commutative)", out, 0, 2, 0, BLK);
    MPI_Op_free(&comp);
    MPI_Op_free(&sum);
    if (comp != MPI_OP_NULL || sum != MPI_OP_NULL)
        errs += mt_fail(rank, "MPI_Op_free did not set the handle to MPI_OP_NULL");
    free(in), free(out), free(a), free(b);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size();
    int errs = check_user_ops(rank, size);
    char ok[80];
    snprintf(ok, sizeof ok, "coll_user_ops: %d ranks OK", size);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
