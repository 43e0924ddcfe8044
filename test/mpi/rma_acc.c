/* rma_acc.c - accumulate operations: every predefined op, atomicity under
 * shared locks, ordering, fetch_and_op, compare_and_swap, get_accumulate,
 * derived target types; data checked on every rank.
 *
 * - ops: every rank accumulates into rank 0's window with each predefined
 *   op on ints (and MAXLOC on MPI_2INT, SUM on doubles); rank 0 checks the
 *   combined result.
 * - atomicity: K fetch_and_op(+1) per rank on one counter under shared locks
 *   (lock_all): the fetched values across all ranks must be exactly
 *   0 .. K*size-1, each once; the final counter K*size.
 * - compare_and_swap: a spin lock taken and released by every rank in turn
 *   protects a non-atomic read-modify-write of a second word.
 * - ordering: one origin's REPLACE accumulates to one location land in
 *   program order (the last value stays).
 * - get_accumulate with MPI_NO_OP reads atomically; Raccumulate/Rget_accumulate. */
#include "mpitest.h"

enum { K = 50, W = 16 };

typedef struct { int v, i; } int2;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int *base;
    MPI_Win win;
    MPI_Win_allocate(W * sizeof(long long) * 4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    int *iw = base; /* ints 0..W-1: op results; W, W+1: counter, lock, word */

    /* ---- every op on ints ---- */
    const MPI_Op ops[] = { MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR,
                           MPI_LAND, MPI_LOR, MPI_LXOR, MPI_REPLACE };
    const char *names[] = { "SUM", "PROD", "MAX", "MIN", "BAND", "BOR", "BXOR", "LAND", "LOR", "LXOR", "REPLACE" };
    for (int o = 0; o < 11; o++) {
        int init = ops[o] == MPI_PROD ? 1 : ops[o] == MPI_BAND ? -1 : ops[o] == MPI_LAND ? 1 : 0;
        MPI_Win_fence(0, win);
        if (rank == 0)
            for (int i = 0; i < W; i++)
                iw[i] = init;
        MPI_Win_fence(0, win);
        int mine[W];
        for (int i = 0; i < W; i++)
            mine[i] = ops[o] == MPI_PROD ? (rank % 3) + 1 : ops[o] >= MPI_LAND && ops[o] <= MPI_LXOR ? (rank + i) % 2
                                                                                                    : rank * 3 + i + 1;
        if (ops[o] != MPI_REPLACE || rank == size - 1) /* one writer for REPLACE */
            MPI_Accumulate(mine, W, MPI_INT, 0, 0, W, MPI_INT, ops[o], win);
        MPI_Win_fence(0, win);
        if (rank == 0)
            for (int i = 0; i < W; i++) {
                long long want = init;
                for (int r = 0; r < size; r++) {
                    int x = ops[o] == MPI_PROD ? (r % 3) + 1 : ops[o] >= MPI_LAND && ops[o] <= MPI_LXOR ? (r + i) % 2
                                                                                                     : r * 3 + i + 1;
                    int w = (int)want;
                    switch (ops[o]) {
                    case MPI_SUM: want = w + x; break;
                    case MPI_PROD: want = w * x; break;
                    case MPI_MAX: want = w > x ? w : x; break;
                    case MPI_MIN: want = w < x ? w : x; break;
                    case MPI_BAND: want = w & x; break;
                    case MPI_BOR: want = w | x; break;
                    case MPI_BXOR: want = w ^ x; break;
                    case MPI_LAND: want = w && x; break;
                    case MPI_LOR: want = w || x; break;
                    case MPI_LXOR: want = !w != !x; break;
                    default: if (r == size - 1) want = x; break;
                    }
                }
                if (iw[i] != (int)want) {
                    errs += mt_fail(rank, "MPI_%s: element %d is %d, expected %lld", names[o], i, iw[i], want);
                    break;
                }
            }
    }

    /* ---- MAXLOC on MPI_2INT, SUM on doubles ---- */
    MPI_Win_fence(0, win);
    if (rank == 0) {
        int2 *p = (int2 *)base;
        p[0].v = -1, p[0].i = -1;
        ((double *)base)[2] = 0.5;
    }
    MPI_Win_fence(0, win);
    int2 me = { rank % 2 ? 100 : rank, rank };
    MPI_Accumulate(&me, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_MAXLOC, win);
    double d = 0.25 * (rank + 1);
    MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, 2 * sizeof(double), 1, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        int2 *p = (int2 *)base;
        int2 want = size > 1 ? (int2){ 100, 1 } : (int2){ 0, 0 };
        if (p[0].v != want.v || p[0].i != want.i)
            errs += mt_fail(rank, "MAXLOC gave (%d, %d), expected (%d, %d)", p[0].v, p[0].i, want.v, want.i);
        double dw = 0.5;
        for (int r = 0; r < size; r++)
            dw += 0.25 * (r + 1);
        if (((double *)base)[2] != dw)
            errs += mt_fail(rank, "double SUM gave %g, expected %g", ((double *)base)[2], dw);
        iw[W] = 0, iw[W + 1] = 0, iw[W + 2] = 0;
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    /* ---- MAXLOC on MPI_LONG_DOUBLE_INT: kernels load the pairs aligned, whatever
     * address the message arrived at; and operations that move nothing ---- */
    {
        typedef struct { long double a; int b; } ldi_t;
        ldi_t *t = (ldi_t *)(base + 32); /* 128 bytes into the window: aligned */
        MPI_Win_fence(0, win);
        if (rank == 0)
            for (int i = 0; i < 3; i++)
                t[i].a = -1, t[i].b = -1;
        MPI_Win_fence(0, win);
        ldi_t mine[3];
        for (int i = 0; i < 3; i++)
            mine[i].a = rank % 2 ? 100 + i : rank, mine[i].b = rank;
        MPI_Accumulate(mine, 3, MPI_LONG_DOUBLE_INT, 0, 128, 3, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, win);
        MPI_Win_fence(0, win);
        if (rank == 0)
            for (int i = 0; i < 3; i++) {
                long double wa = size > 1 ? 100 + i : 0;
                int wb = size > 1 ? 1 : 0;
                if (t[i].a != wa || t[i].b != wb)
                    errs += mt_fail(rank, "MAXLOC on MPI_LONG_DOUBLE_INT: element %d is (%Lg, %d), expected (%Lg, %d)",
                                    i, t[i].a, t[i].b, wa, wb);
            }
        MPI_Datatype empty;
        MPI_Type_contiguous(0, MPI_INT, &empty);
        MPI_Type_commit(&empty);
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        int dummy = 0, rc[3];
        rc[0] = MPI_Put(&dummy, 1, empty, (rank + 1) % size, 0, 1, empty, win);
        rc[1] = MPI_Accumulate(&dummy, 1, empty, (rank + 1) % size, 0, 2, empty, MPI_SUM, win);
        rc[2] = MPI_Get_accumulate(NULL, 0, MPI_INT, &dummy, 1, empty, (rank + 1) % size, 0, 0, MPI_INT, MPI_SUM,
                                   win);
        for (int i = 0; i < 3; i++)
            if (rc[i] != MPI_SUCCESS)
                errs += mt_fail(rank, "operation %d moving nothing returned error %d", i, rc[i]);
        MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
        MPI_Type_free(&empty);
        MPI_Win_fence(0, win);
        if (rank == 0)
            iw[W] = 0, iw[W + 1] = 0, iw[W + 2] = 0;
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    }

    /* ---- fetch_and_op atomicity under shared locks ---- */
    MPI_Win_lock_all(0, win);
    int *got = mt_malloc(K * sizeof(int));
    for (int k = 0; k < K; k++) {
        int one = 1;
        MPI_Fetch_and_op(&one, &got[k], MPI_INT, 0, W * sizeof(int), MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    int *all = rank == 0 ? mt_malloc((size_t)K * size * sizeof(int)) : NULL;
    MPI_Gather(got, K, MPI_INT, all, K, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        char *seen = mt_zalloc((size_t)K * size);
        for (int i = 0; i < K * size; i++) {
            if (all[i] < 0 || all[i] >= K * size || seen[all[i]]++) {
                errs += mt_fail(rank, "fetch_and_op handed out %d twice or out of range", all[i]);
                break;
            }
        }
        free(seen);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    int final = -1;
    MPI_Get_accumulate(NULL, 0, MPI_INT, &final, 1, MPI_INT, 0, W * sizeof(int), 1, MPI_INT, MPI_NO_OP, win);
    MPI_Win_unlock(0, win);
    if (final != K * size)
        errs += mt_fail(rank, "counter reads %d after %d increments", final, K * size);

    /* ---- compare_and_swap spin lock around a plain read-modify-write ---- */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < 5; k++) {
        int unlocked = 0, mine = rank + 1, prev = -1;
        do {
            MPI_Compare_and_swap(&mine, &unlocked, &prev, MPI_INT, 0, (W + 1) * sizeof(int), win);
            MPI_Win_flush(0, win);
        } while (prev != 0);
        int word;
        MPI_Get(&word, 1, MPI_INT, 0, (W + 2) * sizeof(int), 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        word++;
        MPI_Put(&word, 1, MPI_INT, 0, (W + 2) * sizeof(int), 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        MPI_Compare_and_swap(&unlocked, &mine, &prev, MPI_INT, 0, (W + 1) * sizeof(int), win);
        MPI_Win_flush(0, win);
        if (prev != mine)
            errs += mt_fail(rank, "the CAS lock held %d while I (%d) held it", prev, mine);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        if (iw[W + 2] != 5 * size)
            errs += mt_fail(rank, "the CAS-protected word is %d, expected %d", iw[W + 2], 5 * size);
        MPI_Win_unlock(0, win);
    }

    /* ---- ordering: one origin's REPLACEs to one location; Raccumulate, Rget_accumulate ---- */
    MPI_Barrier(MPI_COMM_WORLD);
    int target = (rank + 1) % size;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
    for (int k = 0; k <= K; k++) {
        int v = rank * 1000 + k;
        MPI_Accumulate(&v, 1, MPI_INT, target, (W + 3) * sizeof(int), 1, MPI_INT, MPI_REPLACE, win);
    }
    MPI_Request rq[2];
    int add = 5, before = -1;
    MPI_Raccumulate(&add, 1, MPI_INT, target, (W + 3) * sizeof(int), 1, MPI_INT, MPI_SUM, win, &rq[0]);
    MPI_Rget_accumulate(&add, 1, MPI_INT, &before, 1, MPI_INT, target, (W + 3) * sizeof(int), 1, MPI_INT,
                        MPI_SUM, win, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Win_unlock(target, win);
    if (before != rank * 1000 + K + 5)
        errs += mt_fail(rank, "after ordered REPLACEs and +5 the word read %d, expected %d", before,
                        rank * 1000 + K + 5);

    /* ---- derived target type: accumulate into every third int ---- */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Datatype vec;
    MPI_Type_vector(4, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Win_fence(0, win);
    for (int i = 0; i < 12; i++)
        iw[i] = 1;
    MPI_Win_fence(0, win);
    int four[4] = { 1, 2, 3, 4 };
    MPI_Accumulate(four, 4, MPI_INT, target, 0, 1, vec, MPI_SUM, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    for (int i = 0; i < 12; i++) {
        int want = i % 3 ? 1 : 1 + (i / 3 + 1);
        if (iw[i] != want) {
            errs += mt_fail(rank, "vector accumulate: element %d is %d, expected %d", i, iw[i], want);
            break;
        }
    }
    MPI_Type_free(&vec);

    free(got);
    free(all);
    MPI_Win_free(&win);
    mt_finish(errs, "rma_acc OK");
    MPI_Finalize();
    return 0;
}
