/* rma_fetch_large.c - large fetching one-sided operations on windows of
 * MPI_Win_create (another process's window is reached by messages): the
 * target answers from buffers it keeps for the next answer, and the origin
 * receives an answer straight into the result when the result is contiguous.
 *
 * Each rank fetches from the next rank (its window filled with a pattern of
 * the target) and is fetched from by the previous one, for sizes around the
 * kept buffers' limits (64 KiB, 1 MiB + 4 B and, with at most 4 ranks,
 * 9 MiB: larger than a kept buffer):
 * - Get_accumulate SUM: the fetched ints are the pattern, the window then
 *   holds pattern + the previous rank's addend;
 * - Get_accumulate NO_OP right after (an answer buffer used again): the sum;
 * - six Rget_accumulate SUM of a sixth each, waited in reverse order (more
 *   answers in flight than buffers kept);
 * - Get of every other int (a derived target type: the answer is packed);
 * - Get_accumulate NO_OP into a strided result (received aside, unpacked). */
#include "mpitest.h"

#define PIECES 6

static int base_of(int rank, int i) { return (int)(mt_hash((uint32_t)rank, 5, (uint32_t)i, 11) & 0xffff); }
static int add_of(int rank, int i, int round) { return (rank + i) % 7 + 1 + round * 3; }

/* got[i] == want(who, adder, i) for every i < n */
static int check_ints(int rank, const char *what, size_t n, const int *got, int (*want)(int, int, int), int who,
                      int adder)
{
    for (size_t i = 0; i < n; i++) {
        int w = want(who, adder, (int)i);
        if (got[i] != w)
            return mt_fail(rank, "%s: %zu ints, int %zu is %d, expected %d", what, n, i, got[i], w);
    }
    return 0;
}

static int want_base(int who, int adder, int i) { (void)adder; return base_of(who, i); }
static int want_sum1(int who, int adder, int i) { return base_of(who, i) + add_of(adder, i, 0); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    size_t sizes[] = { 16384, 262145, 2359296 };
    int nsizes = size <= 4 ? 3 : 2;
    for (int s = 0; s < nsizes && !errs; s++) {
        size_t n = sizes[s];
        int *mem = mt_malloc(n * sizeof(int)), *add = mt_malloc(n * sizeof(int));
        int *res = mt_malloc(n * sizeof(int)), *strided = mt_malloc(2 * n * sizeof(int));
        for (size_t i = 0; i < n; i++)
            mem[i] = base_of(rank, (int)i);
        MPI_Win win;
        MPI_Win_create(mem, (MPI_Aint)(n * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

        /* Get_accumulate SUM: the pattern comes back, the sum stays */
        for (size_t i = 0; i < n; i++)
            add[i] = add_of(rank, (int)i, 0);
        MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
        MPI_Get_accumulate(add, (int)n, MPI_INT, res, (int)n, MPI_INT, next, 0, (int)n, MPI_INT, MPI_SUM, win);
        MPI_Win_unlock(next, win);
        errs += check_ints(rank, "Get_accumulate SUM result", n, res, want_base, next, -1);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
        MPI_Win_sync(win);
        errs += check_ints(rank, "window after Get_accumulate SUM", n, mem, want_sum1, rank, prev);
        MPI_Win_unlock(rank, win);
        MPI_Barrier(MPI_COMM_WORLD);

        /* NO_OP right after: the answer buffer is used again */
        MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
        MPI_Get_accumulate(NULL, 0, MPI_INT, res, (int)n, MPI_INT, next, 0, (int)n, MPI_INT, MPI_NO_OP, win);
        MPI_Win_unlock(next, win);
        errs += check_ints(rank, "Get_accumulate NO_OP result", n, res, want_sum1, next, rank);
        MPI_Barrier(MPI_COMM_WORLD);

        /* more answers in flight than buffers kept, waited in reverse order */
        size_t piece = n / PIECES;
        MPI_Request rq[PIECES];
        for (size_t i = 0; i < n; i++)
            add[i] = add_of(rank, (int)i, 1);
        MPI_Win_lock_all(0, win);
        for (int k = 0; k < PIECES; k++)
            MPI_Rget_accumulate(add + k * piece, (int)piece, MPI_INT, res + k * piece, (int)piece, MPI_INT, next,
                                (MPI_Aint)(k * piece), (int)piece, MPI_INT, MPI_SUM, win, &rq[k]);
        for (int k = PIECES - 1; k >= 0; k--)
            MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
        MPI_Win_unlock_all(win);
        errs += check_ints(rank, "Rget_accumulate SUM results", piece * PIECES, res, want_sum1, next, rank);
        MPI_Barrier(MPI_COMM_WORLD);

        /* a derived target type: the target packs every other int */
        MPI_Datatype every_other;
        MPI_Type_vector((int)(n / 2), 1, 2, MPI_INT, &every_other);
        MPI_Type_commit(&every_other);
        MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
        MPI_Get(res, (int)(n / 2), MPI_INT, next, 0, 1, every_other, win);
        MPI_Win_unlock(next, win);
        for (size_t j = 0; j < n / 2 && !errs; j++) {
            size_t i = 2 * j;
            int w = base_of(next, (int)i) + add_of(rank, (int)i, 0) + (i < piece * PIECES ? add_of(rank, (int)i, 1) : 0);
            if (res[j] != w)
                errs += mt_fail(rank, "Get of a vector type: %zu ints, int %zu is %d, expected %d", n / 2, j, res[j], w);
        }

        /* a strided result: received aside, then unpacked */
        for (size_t i = 0; i < 2 * n; i++)
            strided[i] = -7;
        MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
        MPI_Get_accumulate(NULL, 0, MPI_INT, strided, 1, every_other, next, 0, (int)(n / 2), MPI_INT,
                           MPI_NO_OP, win);
        MPI_Win_unlock(next, win);
        for (size_t j = 0; j < n / 2 && !errs; j++) {
            int w = base_of(next, (int)j) + add_of(rank, (int)j, 0) + (j < piece * PIECES ? add_of(rank, (int)j, 1) : 0);
            if (strided[2 * j] != w || strided[2 * j + 1] != -7)
                errs += mt_fail(rank, "Get_accumulate into a vector: int %zu is %d (gap %d), expected %d (gap -7)",
                                2 * j, strided[2 * j], strided[2 * j + 1], w);
        }
        MPI_Type_free(&every_other);
        MPI_Win_free(&win);
        free(mem);
        free(add);
        free(res);
        free(strided);
    }
    mt_finish(errs, "rma_fetch_large OK");
    MPI_Finalize();
    return 0;
}
