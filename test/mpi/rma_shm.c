/* rma_shm.c - windows whose memory the node's other processes map
 * (MPI_Win_allocate, MPI_Win_allocate_shared): puts, gets, accumulates
 * through the mappings, data checked on every rank.
 *
 * - every rank puts a pattern into its slot of every other rank's window
 *   (contiguous and vector target types) and gets it back (Get and Rget);
 * - MPI_Win_shared_query hands out every member's memory where it is
 *   mapped: all members unless AMPI_RMA_SHM=0 (then at least the caller's
 *   own); what a rank stores through such a pointer, the owner loads;
 * - atomicity across routes: every rank (ranks of the owner's process,
 *   other processes, the owner itself) fetch_and_ops one counter K times
 *   and accumulates K doubles into one word; the fetched values are
 *   0..K*size-1, each once, and the sums exact;
 * - compare_and_swap guards a non-atomic read-modify-write (a spin lock);
 * - the same counter test on an MPI_Win_allocate_shared window. */
#include "mpitest.h"

enum { N = 64, K = 40 };

static int fetch_test(MPI_Win win, int target, MPI_Aint disp, int rank, int size, const char *what)
{
    int errs = 0;
    int *got = mt_malloc(K * sizeof(int));
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < K; k++) {
        int one = 1;
        double d = 0.5;
        MPI_Fetch_and_op(&one, &got[k], MPI_INT, target, disp, MPI_SUM, win);
        MPI_Accumulate(&d, 1, MPI_DOUBLE, target, disp + 2, 1, MPI_DOUBLE, MPI_SUM, win);
        MPI_Win_flush(target, win);
    }
    MPI_Win_unlock_all(win);
    int *all = mt_malloc((size_t)K * size * sizeof(int));
    MPI_Allgather(got, K, MPI_INT, all, K, MPI_INT, MPI_COMM_WORLD);
    char *seen = mt_zalloc((size_t)K * size);
    for (int i = 0; i < K * size; i++)
        if (all[i] < 0 || all[i] >= K * size || seen[all[i]]++) {
            errs += mt_fail(rank, "%s: fetch_and_op handed out %d twice or out of range", what, all[i]);
            break;
        }
    MPI_Barrier(MPI_COMM_WORLD);
    int final = -1;
    double dsum = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    MPI_Get_accumulate(NULL, 0, MPI_INT, &final, 1, MPI_INT, target, disp, 1, MPI_INT, MPI_NO_OP, win);
    MPI_Get_accumulate(NULL, 0, MPI_DOUBLE, &dsum, 1, MPI_DOUBLE, target, disp + 2, 1, MPI_DOUBLE, MPI_NO_OP, win);
    MPI_Win_unlock(target, win);
    if (final != K * size)
        errs += mt_fail(rank, "%s: counter reads %d after %d increments", what, final, K * size);
    if (dsum != 0.5 * K * size)
        errs += mt_fail(rank, "%s: double sum %g, expected %g", what, dsum, 0.5 * K * size);
    free(seen);
    free(all);
    free(got);
    return errs;
}

static int shm_off(void)
{
    const char *s = getenv("AMPI_RMA_SHM");
    return s && (!strcmp(s, "0") || !strcmp(s, "off") || !strcmp(s, "no") || !strcmp(s, "false"));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    /* N ints per slot, one slot per rank; then 8 words for the counters */
    MPI_Aint bytes = (MPI_Aint)size * N * sizeof(int) + 8 * sizeof(double);
    int *base;
    MPI_Win win;
    MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, (size_t)bytes);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- puts (contiguous and every other int by a vector) ---- */
    MPI_Datatype vec;
    MPI_Type_vector(N / 4, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *mine = mt_malloc(N * sizeof(int)), *back = mt_malloc(N * sizeof(int));
    int *out = mt_malloc((size_t)size * N * sizeof(int)); /* an origin buffer per target: untouched until the flush */
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < size; t++) {
        int *o = out + (size_t)t * N;
        mt_fill_int(o, N, rank, t, 1);
        MPI_Put(o, N / 2, MPI_INT, t, (MPI_Aint)rank * N, N / 2, MPI_INT, win);
        MPI_Put(o + N / 2, N / 4, MPI_INT, t, (MPI_Aint)rank * N + N / 2, 1, vec, win); /* odd ones stay 0 */
    }
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    free(out);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    for (int o = 0; o < size && !errs; o++) {
        mt_fill_int(mine, N, o, rank, 1);
        const int *s = base + (size_t)o * N;
        for (int i = 0; i < N; i++) {
            int want = i < N / 2 ? mine[i] : (i - N / 2) % 2 ? 0 : mine[N / 2 + (i - N / 2) / 2];
            if (s[i] != want) {
                errs += mt_fail(rank, "put from %d: int %d is %d, expected %d", o, i, s[i], want);
                break;
            }
        }
    }

    /* ---- gets back: Get of the contiguous half, Rget through the vector ---- */
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < size && !errs; t++) {
        MPI_Request rq;
        memset(back, 0xff, N * sizeof(int));
        MPI_Get(back, N / 2, MPI_INT, t, (MPI_Aint)rank * N, N / 2, MPI_INT, win);
        MPI_Rget(back + N / 2, N / 4, MPI_INT, t, (MPI_Aint)rank * N + N / 2, 1, vec, win, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Win_flush(t, win);
        mt_fill_int(mine, N, rank, t, 1);
        if (memcmp(back, mine, N / 2 * sizeof(int)) || memcmp(back + N / 2, mine + N / 2, N / 4 * sizeof(int)))
            errs += mt_fail(rank, "get from %d differs from what was put", t);
    }
    MPI_Win_unlock_all(win);

    /* ---- shared_query: direct loads and stores ---- */
    int mapped = 0;
    for (int t = 0; t < size; t++) {
        MPI_Aint qs = -1;
        int du = 0;
        int *qb = NULL;
        MPI_Win_shared_query(win, t, &qs, &du, &qb);
        if (!qb)
            continue;
        mapped++;
        if (qs != bytes || du != (int)sizeof(int))
            errs += mt_fail(rank, "shared_query(%d): size %ld unit %d", t, (long)qs, du);
        mt_fill_int(mine, N, rank, t, 1);
        if (memcmp(qb + (size_t)rank * N, mine, N / 2 * sizeof(int)))
            errs += mt_fail(rank, "rank %d's memory, loaded directly, differs from what was put", t);
    }
    if (mapped < (shm_off() ? 1 : size))
        errs += mt_fail(rank, "shared_query handed out %d of %d members' memory", mapped, size);
    /* each rank stores its rank into the next rank's last counter word directly (where mapped) */
    int next = (rank + 1) % size;
    MPI_Aint qs;
    int du;
    int *qn = NULL;
    MPI_Win_shared_query(win, next, &qs, &du, &qn);
    MPI_Win_lock_all(0, win);
    if (qn)
        ((double *)(qn + (size_t)size * N))[7] = rank + 100.0;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    int prev = (rank + size - 1) % size, prev_stored = qn != NULL;
    MPI_Sendrecv_replace(&prev_stored, 1, MPI_INT, next, 5, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double w7 = ((double *)(base + (size_t)size * N))[7];
    if (prev_stored && w7 != prev + 100.0)
        errs += mt_fail(rank, "rank %d stored into my memory: I load %g", prev, w7);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- atomicity across routes, on the last rank's counters ---- */
    MPI_Aint cdisp = (MPI_Aint)size * N; /* in ints: the counters start here */
    if (rank == size - 1)
        memset(base + cdisp, 0, 8 * sizeof(double));
    MPI_Barrier(MPI_COMM_WORLD);
    /* the int counter at cdisp, the double at (cdisp + 2) ints = one double further */
    errs += fetch_test(win, size - 1, cdisp, rank, size, "allocate (int)");

    /* ---- compare_and_swap spin lock on rank 0 guarding a plain read-modify-write ---- */
    MPI_Aint lockw = cdisp + 4, word = cdisp + 6;
    if (rank == 0)
        base[lockw] = 0, base[word] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < 5; k++) {
        int one = 1, zero = 0, old = 1, v = 0;
        while (old != 0) {
            MPI_Compare_and_swap(&one, &zero, &old, MPI_INT, 0, lockw, win);
            MPI_Win_flush(0, win);
        }
        MPI_Get(&v, 1, MPI_INT, 0, word, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        v++;
        MPI_Put(&v, 1, MPI_INT, 0, word, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        MPI_Compare_and_swap(&zero, &one, &old, MPI_INT, 0, lockw, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_sync(win);
        if (base[word] != 5 * size)
            errs += mt_fail(rank, "CAS-guarded counter is %d, expected %d", base[word], 5 * size);
    }
    MPI_Type_free(&vec);
    MPI_Win_free(&win);

    /* ---- Win_allocate_shared ---- */
    double *sb;
    MPI_Win sw;
    MPI_Win_allocate_shared(8 * sizeof(double), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &sb, &sw);
    memset(sb, 0, 8 * sizeof(double));
    MPI_Barrier(MPI_COMM_WORLD);
    errs += fetch_test(sw, size / 2, 0, rank, size, "allocate_shared");
    MPI_Win_free(&sw);

    free(mine);
    free(back);
    mt_finish(errs, "rma_shm OK");
    MPI_Finalize();
    return 0;
}
