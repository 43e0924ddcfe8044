/* gpu_rma.c - one-sided communication on device windows.
 *
 * Every rank exposes a window of N ints (and two counter words) in device
 * memory (MPI_Win_create on cudaMalloc'ed memory) and, under fence and
 * under lock/unlock:
 *   - puts host and device origin buffers into its right neighbour's window,
 *   - gets its left neighbour's window into host and device buffers,
 *   - many small puts and gets, vector target types, Rput/Rget (lock_all,
 *     flush): between processes of one node by the CUDA IPC mapping of the
 *     target's window, else by driver copies at the target,
 *   - accumulates (SUM) into rank 0's window, fetch_and_op on a counter,
 *   - compare_and_swap, fetch_and_op and get_accumulate whose origin,
 *     compare and result buffers are device memory.
 * Data is checked through cudaMemcpy on every rank.  Run by test/gpu/run.sh
 * (skipped with the reason where there is no GPU). */
#include "gputest.h"

enum { N = 4096 };

static int val(int writer, int i) { return writer * 100000 + i; }

static int check(int rank, const int *got, int writer, const char *what)
{
    for (int i = 0; i < N; i++)
        if (got[i] != val(writer, i))
            return gt_fail(rank, "%s: element %d is %d, expected %d", what, i, got[i], val(writer, i));
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    size_t bytes = N * sizeof(int);
    int *win_mem, *dsrc, *ddst;
    GT_CUDA(cudaMalloc((void **)&win_mem, bytes + 64));
    GT_CUDA(cudaMalloc((void **)&dsrc, bytes));
    GT_CUDA(cudaMalloc((void **)&ddst, bytes));
    GT_CUDA(cudaMemset(win_mem, 0, bytes + 64));
    int *hsrc = gt_malloc(bytes), *hgot = gt_malloc(bytes);
    for (int i = 0; i < N; i++)
        hsrc[i] = val(rank, i);
    GT_CUDA(cudaMemcpy(dsrc, hsrc, bytes, cudaMemcpyHostToDevice));
    gt_sync();

    MPI_Win win;
    MPI_Win_create(win_mem, bytes + 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    for (int src_dev = 0; src_dev < 2; src_dev++) {
        /* fence: put into the right neighbour (the window cleared first) */
        GT_CUDA(cudaMemset(win_mem, 0, bytes));
        gt_sync();
        MPI_Win_fence(0, win);
        MPI_Put(src_dev ? dsrc : hsrc, N, MPI_INT, right, 0, N, MPI_INT, win);
        MPI_Win_fence(0, win);
        GT_CUDA(cudaMemcpy(hgot, win_mem, bytes, cudaMemcpyDeviceToHost));
        errs += check(rank, hgot, left, src_dev ? "fence put from device" : "fence put from host");

        /* lock: get the left neighbour's window (written by its left) */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
        MPI_Get(src_dev ? (void *)ddst : (void *)hgot, N, MPI_INT, left, 0, N, MPI_INT, win);
        MPI_Win_unlock(left, win);
        if (src_dev)
            GT_CUDA(cudaMemcpy(hgot, ddst, bytes, cudaMemcpyDeviceToHost));
        errs += check(rank, hgot, (left + size - 1) % size, src_dev ? "lock get into device" : "lock get into host");
        MPI_Win_fence(0, win);
    }

    /* many small puts from a device buffer and a vector-typed Rput under
     * lock_all/flush, then Rget into device memory and a vector-typed Get:
     * between processes of one node these take the CUDA IPC mapping of the
     * target's window (AMPI_GPU_IPC=0: the driver copies at the target) */
    enum { SMALL = 64, PIECE = 4 };
    MPI_Datatype vec; /* N/8 ints, every other one */
    MPI_Type_vector(N / 8, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    GT_CUDA(cudaMemset(win_mem, 0, bytes));
    gt_sync();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request rq;
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < SMALL; k++)
        MPI_Put(dsrc + PIECE * k, PIECE, MPI_INT, right, (MPI_Aint)(PIECE * k * sizeof(int)), PIECE, MPI_INT, win);
    MPI_Win_flush(right, win);
    MPI_Rput(hsrc + N / 2, N / 8, MPI_INT, right, (MPI_Aint)(N / 2 * sizeof(int)), 1, vec, win, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    GT_CUDA(cudaMemcpy(hgot, win_mem, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        int want = i < SMALL * PIECE ? val(left, i)
                   : i >= N / 2 && i < N / 2 + N / 4 && (i - N / 2) % 2 == 0 ? val(left, N / 2 + (i - N / 2) / 2)
                                                                         : 0;
        if (hgot[i] != want) {
            errs += gt_fail(rank, "small/vector puts: element %d is %d, expected %d", i, hgot[i], want);
            break;
        }
    }
    int *hvec = gt_malloc(N / 8 * sizeof(int));
    GT_CUDA(cudaMemset(ddst, 0, bytes));
    gt_sync();
    MPI_Win_lock_all(0, win);
    MPI_Rget(ddst, SMALL * PIECE, MPI_INT, right, 0, SMALL * PIECE, MPI_INT, win, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Get(hvec, N / 8, MPI_INT, right, (MPI_Aint)(N / 2 * sizeof(int)), 1, vec, win);
    MPI_Win_flush(right, win);
    MPI_Win_unlock_all(win);
    GT_CUDA(cudaMemcpy(hgot, ddst, SMALL * PIECE * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < SMALL * PIECE; i++)
        if (hgot[i] != val(rank, i)) {
            errs += gt_fail(rank, "Rget into device: element %d is %d, expected %d", i, hgot[i], val(rank, i));
            break;
        }
    for (int j = 0; j < N / 8; j++)
        if (hvec[j] != val(rank, N / 2 + j)) {
            errs += gt_fail(rank, "vector get: element %d is %d, expected %d", j, hvec[j], val(rank, N / 2 + j));
            break;
        }
    free(hvec);
    MPI_Type_free(&vec);
    MPI_Barrier(MPI_COMM_WORLD);

    /* accumulate into rank 0's counter word, and fetch_and_op */
    MPI_Win_fence(0, win);
    int one = 1, fetched = -1;
    MPI_Accumulate(&one, 1, MPI_INT, 0, bytes, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Fetch_and_op(&one, &fetched, MPI_INT, 0, bytes + sizeof(int), MPI_SUM, win);
    MPI_Win_unlock(0, win);
    if (fetched < 0 || fetched >= size)
        errs += gt_fail(rank, "fetch_and_op fetched %d", fetched);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the atomics with every origin, compare and result buffer in device
     * memory (OSU's -d cuda one-sided runs pass them so): each rank claims
     * one step of a counter by compare-and-swap (retrying with the value it
     * saw), adds one by fetch_and_op and by get_accumulate */
    int *datom; /* origin, compare, result */
    GT_CUDA(cudaMalloc((void **)&datom, 3 * sizeof(int)));
    int seen = 0, tries = 0, dev_fetched = -1, dev_gacc = -1;
    for (;;) {
        int h[2] = { seen + 1, seen };
        GT_CUDA(cudaMemcpy(datom, h, sizeof h, cudaMemcpyHostToDevice));
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Compare_and_swap(datom, datom + 1, datom + 2, MPI_INT, 0, bytes + 2 * sizeof(int), win);
        MPI_Win_unlock(0, win);
        int got;
        GT_CUDA(cudaMemcpy(&got, datom + 2, sizeof got, cudaMemcpyDeviceToHost));
        if (got == seen)
            break;
        if (got < 0 || got >= size || ++tries > 4 * size) {
            errs += gt_fail(rank, "device compare_and_swap saw %d after %d tries", got, tries);
            break;
        }
        seen = got;
    }
    GT_CUDA(cudaMemcpy(datom, &one, sizeof one, cudaMemcpyHostToDevice));
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Fetch_and_op(datom, datom + 2, MPI_INT, 0, bytes + 3 * sizeof(int), MPI_SUM, win);
    MPI_Win_unlock(0, win);
    GT_CUDA(cudaMemcpy(&dev_fetched, datom + 2, sizeof(int), cudaMemcpyDeviceToHost));
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Get_accumulate(datom, 1, MPI_INT, datom + 1, 1, MPI_INT, 0, bytes + 4 * sizeof(int), 1, MPI_INT, MPI_SUM,
                       win);
    MPI_Win_unlock(0, win);
    GT_CUDA(cudaMemcpy(&dev_gacc, datom + 1, sizeof(int), cudaMemcpyDeviceToHost));
    if (dev_fetched < 0 || dev_fetched >= size || dev_gacc < 0 || dev_gacc >= size)
        errs += gt_fail(rank, "device fetch_and_op fetched %d, get_accumulate %d", dev_fetched, dev_gacc);
    GT_CUDA(cudaFree(datom));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int w[5];
        GT_CUDA(cudaMemcpy(w, (char *)win_mem + bytes, sizeof w, cudaMemcpyDeviceToHost));
        for (int k = 0; k < 5; k++)
            if (w[k] != size)
                errs += gt_fail(rank, "device counter %d (accumulate, fetch_and_op, compare_and_swap, "
                                      "fetch_and_op and get_accumulate from device) is %d, expected %d",
                                k, w[k], size);
    }
    MPI_Win_free(&win);
    GT_CUDA(cudaFree(win_mem));
    GT_CUDA(cudaFree(dsrc));
    GT_CUDA(cudaFree(ddst));
    free(hsrc);
    free(hgot);
    mt_finish(errs, "gpu_rma: OK");
    MPI_Finalize();
    return 0;
}
