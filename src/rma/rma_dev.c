/* Puts and gets carried by device copies: to device windows of this
 * process's ranks, and to those of the node's other processes that CUDA IPC
 * maps here.  They go onto the PE's copy stream without waiting, and the
 * synchronization that completes operations to the target (flush, unlock,
 * fence, complete, Win_free) waits for them all at once: the stream runs
 * them in order, so one event recorded behind the last covers them all.
 * Waiting for each copy cost a window of 64 puts 64 launch-and-wait round
 * trips (osu_put_bw D D at 0.45-0.60x of Open MPI's on 2 x H200).
 *
 * MPI allows this: an origin buffer may be reused, and a get's result read,
 * only after a synchronization (or the completion of an Rput/Rget, which the
 * last copy's completion gives).  Copies from pageable host memory return
 * once the driver has taken the data, so the origin is free at return
 * anyway.
 *
 * Accumulates into device memory run the collectives' reduction kernels on
 * the target bytes in place (rma_dev_reduce) instead of copying them to the
 * host, combining there and copying back; under an exclusive lock on a
 * window mapped by CUDA IPC the origin applies them itself (rma_dev_acc):
 * osu_get_acc_latency -d cuda D D took 16 ms at 4 MiB through the target's
 * host round trip, 8.9x Open MPI's. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "coll/coll_dev.h"
#include "datatype/dt.h"
#include "gpu/gpu.h"
#include "gpu/gpu_reduce.h"
#include "pt2pt/p2p.h"
#include "rma/rma_internal.h"
#include "util/util_log.h"

int rma_dev_copy(rma_win_t *w, int t, char *target, const rma_seg_t *segs, uint32_t nseg, void *local,
                 size_t len, bool write, p2p_req_t *q)
{
    void *stream = NULL;
    int rc = 0;
    if ((!w->dev_pending && !(w->dev_pending = calloc((size_t)w->size, 1))) || (rc = gpu_copy_stream(&stream))) {
        if (rc)
            util_warn("no device stream for a one-sided operation (CUDA error %d)", rc);
        if (q)
            p2p_req_part_done(q);
        return rc ? MPI_ERR_OTHER : MPI_ERR_NO_MEM;
    }
    if (w->ndev_pending && stream != w->dev_stream)
        rma_dev_drain(w, -1); /* another OS thread's stream (library mode): one stream per fence */
    w->dev_stream = stream;
    if (!w->dev_pending[t]) {
        w->dev_pending[t] = 1;
        w->ndev_pending++;
    }
    rma_seg_t whole = { 0, len };
    if (nseg == 0) {
        segs = &whole;
        nseg = 1;
    }
    char *p = local;
    for (uint32_t i = 0; i < nseg; i++) {
        char *remote = target + segs[i].off;
        void *dst = write ? (void *)remote : (void *)p;
        const void *src = write ? (const void *)p : (const void *)remote;
        p += segs[i].len;
        if (i + 1 == nseg && q) {
            /* the request completes when the last copy has run: the stream ran the others before it */
            p2p_copy_then_complete(dst, src, segs[i].len, q, NULL, NULL);
            return MPI_SUCCESS;
        }
        rc = gpu_copy_enqueue(dst, src, segs[i].len);
        if (rc != 0) {
            util_warn("device copy of %zu bytes for a one-sided operation failed to start (CUDA error %d)",
                      (size_t)segs[i].len, rc);
            if (q)
                p2p_req_part_done(q);
            return MPI_ERR_OTHER;
        }
    }
    return MPI_SUCCESS;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A flush after small puts waits a few microseconds for the copy engine (a
 * peer copy of 8 B and its event take 6.7 us on 2 x H200: osu/gpu_floor,
 * BENCHMARKS.md, 2026-11-27, 95dd1c9): for that long the event alone is
 * watched, because a round of other progress between two looks (two UCX
 * workers, the rings, the hooks) makes the end of the copy seen up to a
 * round late.  osu_put_latency -d cuda D D went from 1.01-1.14x Open MPI's
 * osc ucx at 1 B-8 KiB to 0.86-0.95x from 32 B (same date, a0b8308).
 * Longer copies are then waited for between rounds of progress, so that
 * other ranks of the PE run. */
#define DRAIN_SPIN_NS 30000u

void rma_dev_drain(rma_win_t *w, int t)
{
    if (!w->ndev_pending || (t >= 0 && !w->dev_pending[t]))
        return;
    gpu_copy_t c;
    int rc = gpu_copy_fence(w->dev_stream, &c);
    if (rc != 0)
        util_fatal("waiting for the device copies of one-sided operations failed (CUDA error %d)", rc);
    uint64_t spin_end = now_ns() + DRAIN_SPIN_NS;
    while (!gpu_copy_done(&c) && now_ns() < spin_end)
        ;
    while (!gpu_copy_done(&c))
        rma_wait_poll();
    /* every copy this rank started ran before the fence, whatever its target */
    memset(w->dev_pending, 0, (size_t)w->size);
    w->ndev_pending = 0;
}

void rma_dev_free(rma_win_t *w)
{
    rma_dev_drain(w, -1);
    free(w->dev_pending);
    w->dev_pending = NULL;
}

bool rma_dev_reduce_ok(MPI_Op op, MPI_Datatype basic)
{
    gpu_op_t gop;
    gpu_elem_t elem;
    return dt_is_plain(basic) && coll_dev_kernel_for(op, basic, &gop, &elem);
}

bool rma_dev_reduce(void *inout, const void *in, size_t bytes, MPI_Op op, MPI_Datatype basic, bool yield)
{
    gpu_op_t gop;
    gpu_elem_t elem;
    if (bytes < RMA_DEV_ACC_MIN || !dt_is_plain(basic) || !coll_dev_kernel_for(op, basic, &gop, &elem))
        return false;
    void *stage = NULL;
    const void *a = in;
    if (!p2p_is_device(in, bytes)) {
        if (gpu_dev_alloc(bytes, &stage) != 0)
            return false;
        p2p_copy_sync(stage, in, bytes);
        a = stage;
    }
    gpu_work_t wk;
    int rc = gpu_reduce_start(gop, elem, a, inout, bytes / dt_size(basic), &wk);
    while (rc == 0 && !gpu_work_done(&wk))
        if (yield)
            rma_wait_poll();
    if (stage)
        gpu_dev_free(stage);
    return rc == 0;
}

int rma_dev_acc(void *target, const void *origin, void *result, size_t bytes, MPI_Op op, MPI_Datatype basic)
{
    if (result)
        p2p_copy_sync(result, target, bytes);
    if (op == MPI_NO_OP)
        return MPI_SUCCESS;
    if (op == MPI_REPLACE) {
        p2p_copy_sync(target, origin, bytes);
        return MPI_SUCCESS;
    }
    return rma_dev_reduce(target, origin, bytes, op, basic, true) ? MPI_SUCCESS : MPI_ERR_OTHER;
}
