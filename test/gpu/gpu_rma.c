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
 *     compare and result buffers are device memory,
 *   - 64 puts of sizes from 1 byte to 256 KiB from pageable, pinned and
 *     device origins completed by one flush (and by unlock, and by fence),
 *     the origins overwritten right after it; 64 gets likewise; a put then
 *     a get of the same bytes after a flush, an accumulate after a flushed
 *     put, and Rput/Rget requests completing before any flush,
 *   - accumulates and get_accumulates of 256 KiB from device buffers under
 *     exclusive and shared locks (SUM, NO_OP, REPLACE, PROD), behind a
 *     small accumulate to the same place.
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

/* ---- many operations completed together ---------------------------------
 * Puts and gets to device windows start copies and return; the flush,
 * unlock or fence completes them all.  The pieces vary in size and origin
 * kind, gaps between them stay untouched, and the origins are overwritten
 * right after the synchronization: a copy still running then would carry
 * the new bytes. */
enum { PIECES = 64, BIG = 3 << 20 };

static size_t piece_len(int k) { return k % 8 == 7 ? (size_t)64 << 10 << (k / 8 % 3) : 1 + (size_t)(k * 97) % 1500; }

/* Offset of piece k; gaps of 0-2 bytes between pieces stay zero. */
static size_t piece_off(int k)
{
    size_t off = 0;
    for (int j = 0; j < k; j++)
        off += piece_len(j) + (size_t)(j % 3);
    return off;
}

static unsigned char pat(int writer, int round, size_t i)
{
    return (unsigned char)((i * 2654435761u >> 7) ^ (unsigned)(writer * 37 + round * 101 + 1));
}

typedef struct {
    unsigned char *host, *pinned, *dev; /* BIG bytes each: the origin kinds, piece k in kind k % 3 */
    unsigned char *stage;               /* BIG host bytes for checking */
} kinds_t;

static void *kind_buf(const kinds_t *b, int k) { return k % 3 == 0 ? b->host : k % 3 == 1 ? b->pinned : b->dev; }

/* Every origin kind holds pat(rank, round, i) (or the byte `fill` when fill >= 0). */
static void kinds_fill(kinds_t *b, int rank, int round, int fill)
{
    for (size_t i = 0; i < BIG; i++)
        b->host[i] = fill >= 0 ? (unsigned char)fill : pat(rank, round, i);
    memcpy(b->pinned, b->host, BIG);
    GT_CUDA(cudaMemcpy(b->dev, b->host, BIG, cudaMemcpyHostToDevice));
    gt_sync();
}

/* The BIG bytes at `got` (host) hold pat(writer, round) in every piece, 0 in the gaps. */
static int check_pieces(int rank, const unsigned char *got, int writer, int round, const char *what)
{
    size_t end = piece_off(PIECES);
    for (int k = 0; k < PIECES; k++) {
        size_t off = piece_off(k), n = piece_len(k);
        for (size_t j = 0; j < n; j++)
            if (got[off + j] != pat(writer, round, off + j))
                return gt_fail(rank, "%s: piece %d (%zu bytes, %s origin) byte %zu is %d, expected %d", what, k,
                               n, k % 3 == 0 ? "pageable" : k % 3 == 1 ? "pinned" : "device", j, got[off + j],
                               pat(writer, round, off + j));
        for (size_t g = off + n; g < off + n + (size_t)(k % 3) && g < end; g++)
            if (got[g] != 0)
                return gt_fail(rank, "%s: gap byte %zu after piece %d is %d, expected 0", what, g, k, got[g]);
    }
    return 0;
}

/* The destination kinds of gets: piece k landed in kind k % 3 at its offset. */
static int check_got(int rank, kinds_t *b, int writer, int round, const char *what)
{
    GT_CUDA(cudaMemcpy(b->stage, b->dev, BIG, cudaMemcpyDeviceToHost));
    for (int k = 0; k < PIECES; k++) {
        size_t off = piece_off(k), n = piece_len(k);
        const unsigned char *src = k % 3 == 0 ? b->host : k % 3 == 1 ? b->pinned : b->stage;
        for (size_t j = 0; j < n; j++)
            if (src[off + j] != pat(writer, round, off + j))
                return gt_fail(rank, "%s: piece %d (%zu bytes, into %s memory) byte %zu is %d, expected %d", what,
                               k, n, k % 3 == 0 ? "pageable" : k % 3 == 1 ? "pinned" : "device", j, src[off + j],
                               pat(writer, round, off + j));
    }
    return 0;
}

static int many_ops(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size, errs = 0;
    unsigned char *wmem;
    GT_CUDA(cudaMalloc((void **)&wmem, BIG));
    kinds_t b = { .host = gt_malloc(BIG), .stage = gt_malloc(BIG) };
    GT_CUDA(cudaMallocHost((void **)&b.pinned, BIG));
    GT_CUDA(cudaMalloc((void **)&b.dev, BIG));
    MPI_Win win;
    MPI_Win_create(wmem, BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    static const char *const how[3] = { "64 puts, one flush", "64 puts, unlock", "64 puts, fence" };
    for (int mode = 0; mode < 3; mode++) {
        int round = mode + 1;
        GT_CUDA(cudaMemset(wmem, 0, BIG));
        kinds_fill(&b, rank, round, -1);
        MPI_Barrier(MPI_COMM_WORLD);
        if (mode == 0)
            MPI_Win_lock_all(0, win);
        else if (mode == 1)
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
        else
            MPI_Win_fence(0, win);
        for (int k = 0; k < PIECES; k++)
            errs += GT_MPI(rank, how[mode],
                           MPI_Put((unsigned char *)kind_buf(&b, k) + piece_off(k), (int)piece_len(k), MPI_BYTE,
                                   right, (MPI_Aint)piece_off(k), (int)piece_len(k), MPI_BYTE, win));
        if (mode == 0)
            MPI_Win_flush(right, win);
        else if (mode == 1)
            MPI_Win_unlock(right, win);
        else
            MPI_Win_fence(0, win);
        kinds_fill(&b, rank, round, 0xEE); /* the origins are free again */
        if (mode == 0)
            MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        GT_CUDA(cudaMemcpy(b.stage, wmem, BIG, cudaMemcpyDeviceToHost));
        errs += check_pieces(rank, b.stage, left, round, how[mode]);
    }

    /* 64 gets of the right neighbour's window (it holds our round-3 pieces), one flush */
    kinds_fill(&b, rank, 0, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < PIECES; k++)
        errs += GT_MPI(rank, "64 gets, one flush",
                       MPI_Get((unsigned char *)kind_buf(&b, k) + piece_off(k), (int)piece_len(k), MPI_BYTE, right,
                               (MPI_Aint)piece_off(k), (int)piece_len(k), MPI_BYTE, win));
    MPI_Win_flush(right, win);
    errs += check_got(rank, &b, rank, 3, "64 gets, one flush");
    MPI_Win_unlock_all(win);

    /* Rput/Rget: each request completes by itself (no flush before the checks) */
    kinds_fill(&b, rank, 4, -1);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    MPI_Request rq[PIECES];
    for (int k = 0; k < PIECES; k++)
        MPI_Rput((unsigned char *)kind_buf(&b, k) + piece_off(k), (int)piece_len(k), MPI_BYTE, right,
                 (MPI_Aint)piece_off(k), (int)piece_len(k), MPI_BYTE, win, &rq[k]);
    MPI_Waitall(PIECES, rq, MPI_STATUSES_IGNORE);
    kinds_fill(&b, rank, 4, 0xEE); /* local completion: the origins are free */
    MPI_Win_flush(right, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    GT_CUDA(cudaMemcpy(b.stage, wmem, BIG, cudaMemcpyDeviceToHost));
    errs += check_pieces(rank, b.stage, left, 4, "Rput, Waitall");
    kinds_fill(&b, rank, 0, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < PIECES; k++)
        MPI_Rget((unsigned char *)kind_buf(&b, k) + piece_off(k), (int)piece_len(k), MPI_BYTE, right,
                 (MPI_Aint)piece_off(k), (int)piece_len(k), MPI_BYTE, win, &rq[k]);
    MPI_Waitall(PIECES, rq, MPI_STATUSES_IGNORE);
    errs += check_got(rank, &b, rank, 4, "Rget, Waitall");
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* a put, a flush, then a get of the same bytes sees the put; an
     * accumulate after a flushed put adds to what the put stored */
    enum { M = 1 << 16 }; /* ints */
    int *hint = gt_malloc(M * sizeof(int)), *dint;
    GT_CUDA(cudaMalloc((void **)&dint, M * sizeof(int)));
    for (int i = 0; i < M; i++)
        hint[i] = rank * 1000 + i;
    GT_CUDA(cudaMemcpy(dint, hint, M * sizeof(int), cudaMemcpyHostToDevice));
    gt_sync();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(dint, M, MPI_INT, right, 0, M, MPI_INT, win);
    MPI_Win_flush(right, win);
    memset(hint, 0, M * sizeof(int));
    MPI_Get(hint, M, MPI_INT, right, 0, M, MPI_INT, win);
    MPI_Win_flush(right, win);
    for (int i = 0; i < M; i++)
        if (hint[i] != rank * 1000 + i) {
            errs += gt_fail(rank, "get after a flushed put: int %d is %d, expected %d", i, hint[i], rank * 1000 + i);
            break;
        }
    for (int i = 0; i < M; i++)
        hint[i] = 3;
    MPI_Accumulate(hint, M, MPI_INT, right, 0, M, MPI_INT, MPI_SUM, win);
    MPI_Win_flush(right, win);
    MPI_Get(dint, M, MPI_INT, right, 0, M, MPI_INT, win);
    MPI_Win_unlock(right, win);
    GT_CUDA(cudaMemcpy(hint, dint, M * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < M; i++)
        if (hint[i] != rank * 1000 + i + 3) {
            errs += gt_fail(rank, "accumulate after a flushed put: int %d is %d, expected %d", i, hint[i],
                            rank * 1000 + i + 3);
            break;
        }
    MPI_Barrier(MPI_COMM_WORLD);

    /* accumulates of M ints with device origin and result buffers, under an
     * exclusive lock (where CUDA IPC maps the target, the origin applies
     * them itself) and a shared one (the target does): a small accumulate
     * before a large one to the same place applies first, as MPI orders
     * accumulates of one origin; then MPI_NO_OP and MPI_REPLACE */
    int *cur = gt_malloc(M * sizeof(int)), *dorg, *dres;
    GT_CUDA(cudaMalloc((void **)&dorg, M * sizeof(int)));
    GT_CUDA(cudaMalloc((void **)&dres, M * sizeof(int)));
    for (int i = 0; i < M; i++)
        cur[i] = rank * 1000 + i + 3; /* what the right neighbour's window holds now */
    for (int excl = 1; excl >= 0; excl--) {
        const char *lk = excl ? "exclusive lock" : "shared lock";
        for (int i = 0; i < M; i++)
            hint[i] = 2 + (i % 7);
        GT_CUDA(cudaMemcpy(dorg, hint, M * sizeof(int), cudaMemcpyHostToDevice));
        gt_sync();
        int five = 5;
        MPI_Win_lock(excl ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, right, 0, win);
        MPI_Accumulate(&five, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win);
        MPI_Get_accumulate(dorg, M, MPI_INT, dres, M, MPI_INT, right, 0, M, MPI_INT, MPI_SUM, win);
        MPI_Win_flush(right, win);
        GT_CUDA(cudaMemcpy(hint, dres, M * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < M; i++) {
            int want = cur[i] + (i == 0 ? 5 : 0);
            if (hint[i] != want) {
                errs += gt_fail(rank, "get_accumulate under an %s: result int %d is %d, expected %d", lk, i,
                                hint[i], want);
                break;
            }
            cur[i] = want + 2 + (i % 7);
        }
        MPI_Get_accumulate(NULL, 0, MPI_INT, dres, M, MPI_INT, right, 0, M, MPI_INT, MPI_NO_OP, win);
        MPI_Win_flush(right, win);
        GT_CUDA(cudaMemcpy(hint, dres, M * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < M; i++)
            if (hint[i] != cur[i]) {
                errs += gt_fail(rank, "get_accumulate (MPI_NO_OP) under an %s: int %d is %d, expected %d", lk, i,
                                hint[i], cur[i]);
                break;
            }
        MPI_Accumulate(dorg, M, MPI_INT, right, 0, M, MPI_INT, MPI_REPLACE, win);
        MPI_Accumulate(dorg, M / 2, MPI_INT, right, 0, M / 2, MPI_INT, MPI_PROD, win);
        MPI_Win_unlock(right, win);
        for (int i = 0; i < M; i++)
            cur[i] = (2 + (i % 7)) * (i < M / 2 ? 2 + (i % 7) : 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    GT_CUDA(cudaMemcpy(hint, wmem, M * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < M; i++) {
        int want = (2 + (i % 7)) * (i < M / 2 ? 2 + (i % 7) : 1);
        if (hint[i] != want) {
            errs += gt_fail(rank, "accumulate (MPI_REPLACE, then MPI_PROD): int %d is %d, expected %d", i, hint[i],
                            want);
            break;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    GT_CUDA(cudaFree(dorg));
    GT_CUDA(cudaFree(dres));
    free(cur);

    MPI_Win_free(&win);
    GT_CUDA(cudaFree(dint));
    free(hint);
    GT_CUDA(cudaFree(wmem));
    GT_CUDA(cudaFree(b.dev));
    GT_CUDA(cudaFreeHost(b.pinned));
    free(b.host);
    free(b.stage);
    return errs;
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
    errs += many_ops(rank, size);
    GT_CUDA(cudaFree(win_mem));
    GT_CUDA(cudaFree(dsrc));
    GT_CUDA(cudaFree(ddst));
    free(hsrc);
    free(hgot);
    mt_finish(errs, "gpu_rma: OK");
    MPI_Finalize();
    return 0;
}
