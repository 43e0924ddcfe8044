/* rma_batch.c - many small puts and gets on windows of user memory
 * (MPI_Win_create), under every synchronization that completes them:
 * between processes of one node they wait in a batch per target until then
 * (or until the batch is full), so every kind of completion and both limits
 * of a batch (operations, bytes) are crossed here; data checked on every
 * rank.
 *
 * For each mode (fence, lock/unlock, lock_all + flush, lock_all +
 * flush_local then flush_all, post/start/complete/wait):
 *   - every rank puts M single ints, one MPI_Put each, into its slot of its
 *     right neighbour's window, then the target checks them by local loads;
 *   - every rank gets them back one int at a time from the neighbour, and
 *     gets of a word it put in the same epoch before a flush see the put;
 * then BIG puts of 4 KiB (more bytes than a batch holds) and a Get with a
 * request (Rget: never batched) mixed with batched ones. */
#include "mpitest.h"

enum { M = 150, BIG = 80, PAGE = 1024 /* ints: 4 KiB */ };

static int val(int writer, int mode, int i) { return writer * 1000000 + mode * 10000 + i; }

enum { FENCE, LOCK, FLUSH, FLUSH_LOCAL, PSCW, NMODES };
static const char *names[] = { "fence", "lock", "lock_all+flush", "flush_local", "pscw" };

static void open_epoch(int mode, MPI_Win win, int right, MPI_Group rg, MPI_Group lg)
{
    switch (mode) {
    case FENCE: MPI_Win_fence(0, win); break;
    case LOCK: MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win); break;
    case FLUSH:
    case FLUSH_LOCAL: MPI_Win_lock_all(0, win); break;
    case PSCW:
        MPI_Win_post(lg, 0, win);
        MPI_Win_start(rg, 0, win);
        break;
    }
}

static void mid_epoch(int mode, MPI_Win win, int right)
{
    if (mode == FLUSH)
        MPI_Win_flush(right, win);
    else if (mode == FLUSH_LOCAL) {
        MPI_Win_flush_local(right, win);
        MPI_Win_flush_all(win);
    }
}

static void close_epoch(int mode, MPI_Win win, int right)
{
    switch (mode) {
    case FENCE: MPI_Win_fence(0, win); break;
    case LOCK: MPI_Win_unlock(right, win); break;
    case FLUSH:
    case FLUSH_LOCAL:
        mid_epoch(mode, win, right);
        MPI_Win_unlock_all(win);
        break;
    case PSCW:
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    size_t n = (size_t)BIG * PAGE; /* ints of the window: room for the big puts, M fits too */
    int *mem = mt_zalloc(n * sizeof(int));
    MPI_Win win;
    MPI_Win_create(mem, (MPI_Aint)(n * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Group world, rg, lg;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &right, &rg);
    MPI_Group_incl(world, 1, &left, &lg);
    int *src = mt_malloc(M * sizeof(int)), *got = mt_malloc(M * sizeof(int));

    for (int mode = 0; mode < NMODES && !errs; mode++) {
        for (int i = 0; i < M; i++)
            src[i] = val(rank, mode, i);
        MPI_Barrier(MPI_COMM_WORLD);
        open_epoch(mode, win, right, rg, lg);
        for (int i = 0; i < M; i++)
            MPI_Put(&src[i], 1, MPI_INT, right, i, 1, MPI_INT, win);
        close_epoch(mode, win, right);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win); /* MPI_Win_sync needs an epoch */
        MPI_Win_sync(win);
        MPI_Win_unlock(rank, win);
        for (int i = 0; i < M; i++)
            if (mem[i] != val(left, mode, i)) {
                errs += mt_fail(rank, "%s: int %d put by %d is %d, expected %d", names[mode], i, left, mem[i],
                                val(left, mode, i));
                break;
            }
        MPI_Barrier(MPI_COMM_WORLD);

        /* gets back, one int each; the last word is first overwritten by a put of this epoch */
        memset(got, 0xff, M * sizeof(int));
        int last = -7 - mode;
        open_epoch(mode, win, right, rg, lg);
        if (mode == FLUSH || mode == FLUSH_LOCAL) {
            MPI_Put(&last, 1, MPI_INT, right, M - 1, 1, MPI_INT, win);
            MPI_Win_flush(right, win);
        }
        for (int i = 0; i < M; i++)
            MPI_Get(&got[i], 1, MPI_INT, right, i, 1, MPI_INT, win);
        close_epoch(mode, win, right);
        for (int i = 0; i < M; i++) {
            int want = (mode == FLUSH || mode == FLUSH_LOCAL) && i == M - 1 ? last : val(rank, mode, i);
            if (got[i] != want) {
                errs += mt_fail(rank, "%s: get of int %d from %d gave %d, expected %d", names[mode], i, right,
                                got[i], want);
                break;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* 4 KiB puts, more bytes in all than a batch holds, and an Rget among batched gets */
    int *pages = mt_malloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        pages[i] = val(rank, 9, (int)(i % 9973));
    MPI_Win_lock_all(0, win);
    for (int p = 0; p < BIG; p++)
        MPI_Put(pages + (size_t)p * PAGE, PAGE, MPI_INT, right, (MPI_Aint)p * PAGE, PAGE, MPI_INT, win);
    MPI_Win_flush(right, win);
    int one[3] = { -1, -1, -1 };
    MPI_Request rq;
    MPI_Get(&one[0], 1, MPI_INT, right, 5, 1, MPI_INT, win);
    MPI_Rget(&one[1], 1, MPI_INT, right, PAGE + 5, 1, MPI_INT, win, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (one[1] != val(rank, 9, (PAGE + 5) % 9973))
        errs += mt_fail(rank, "Rget after 4 KiB puts gave %d", one[1]);
    MPI_Get(&one[2], 1, MPI_INT, right, (MPI_Aint)n - 1, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
    if (one[0] != val(rank, 9, 5) || one[2] != val(rank, 9, (int)((n - 1) % 9973)))
        errs += mt_fail(rank, "gets after 4 KiB puts gave %d and %d", one[0], one[2]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    MPI_Win_sync(win);
    MPI_Win_unlock(rank, win);
    for (size_t i = 0; i < n; i++)
        if (mem[i] != val(left, 9, (int)(i % 9973))) {
            errs += mt_fail(rank, "4 KiB puts: int %zu is %d, expected %d", i, mem[i], val(left, 9, (int)(i % 9973)));
            break;
        }

    MPI_Group_free(&rg);
    MPI_Group_free(&lg);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    free(pages);
    free(src);
    free(got);
    free(mem);
    mt_finish(errs, "rma_batch OK");
    MPI_Finalize();
    return 0;
}
