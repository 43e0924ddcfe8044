/* gpu_floor: what the machine's GPUs themselves cost, as a floor for the library's
 * device messages.  One process, two GPUs with peer access; for 8 B, 64 KiB
 * and 4 MiB it times (median of many round trips, one way = half):
 *   - a peer copy GPU0 -> GPU1 issued on the destination's stream ("pull",
 *     what the IPC route does) and on the source's stream ("push"), finished
 *     by polling an event (cuEventQuery), by cuStreamSynchronize, or by
 *     spinning on a host flag written by cuStreamWriteValue32 after the copy;
 *   - the CPU cost of issuing cuMemcpyAsync + cuEventRecord alone;
 *   - for 8 B and 64 KiB, a copy between pinned host memory and GPU0, each way
 *     (what a small device collective reduced on host copies pays twice);
 *   - for 4 MiB and 32 MiB, windows of 64 peer copies GPU0 -> GPU1 issued back
 *     to back on one stream and waited for together, as osu_bw's window of 64
 *     sends: the streamed copy rate (MB/s, 10^6 bytes) a device osu_bw can reach.
 * Build: cc -O2 -I$CUDA_HOME/include osu/gpu_floor.c -L$CUDA_HOME/lib64 -lcuda -o gpu_floor
 * (links libcuda: a benchmark, not part of the library). */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(call)                                                                          \
    do {                                                                                  \
        CUresult r_ = (call);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                         \
            const char *n_ = "?";                                                         \
            cuGetErrorName(r_, &n_);                                                      \
            fprintf(stderr, "gpu_floor: %s failed: %s (line %d)\n", #call, n_, __LINE__); \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

enum { ITERS = 2000, WARMUP = 200 };

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef enum { WAIT_EVENT, WAIT_SYNC, WAIT_FLAG } wait_kind_t;
static const char *wait_name[] = { "event-poll", "stream-sync", "host-flag" };

typedef struct {
    CUcontext ctx;
    CUstream stream;
    CUevent event;
    CUdeviceptr buf;
} side_t;

static volatile uint32_t *flag;
static CUdeviceptr flag_dev;

/* one copy src -> dst issued in `by`'s context, waited for as `w` */
static double one_copy(side_t *by, CUdeviceptr dst, CUdeviceptr src, size_t n, wait_kind_t w, uint32_t seq)
{
    double t0 = now_us();
    CK(cuCtxSetCurrent(by->ctx));
    CK(cuMemcpyAsync(dst, src, n, by->stream));
    if (w == WAIT_EVENT) {
        CK(cuEventRecord(by->event, by->stream));
        CUresult r;
        while ((r = cuEventQuery(by->event)) == CUDA_ERROR_NOT_READY)
            ;
        CK(r);
    } else if (w == WAIT_SYNC) {
        CK(cuStreamSynchronize(by->stream));
    } else {
        CK(cuStreamWriteValue32(by->stream, flag_dev, seq, 0));
        while (*flag != seq)
            ;
    }
    return now_us() - t0;
}

/* Windows of 64 back-to-back peer copies GPU0 -> GPU1 on GPU0's stream, each
 * window waited for by one event: the median and best window's rate. */
static void streamed(side_t *s)
{
    enum { WINDOW = 64, WINDOWS = 20, WARM = 3 };
    size_t sizes[] = { 4 << 20, 32 << 20 };
    double rate[WINDOWS];
    printf("# streamed peer copies GPU0 -> GPU1, windows of %d, MB/s (10^6 bytes)\n", WINDOW);
    CK(cuCtxSetCurrent(s[0].ctx));
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int w = 0; w < WARM + WINDOWS; w++) {
            double t0 = now_us();
            for (int k = 0; k < WINDOW; k++)
                CK(cuMemcpyAsync(s[1].buf, s[0].buf, sizes[si], s[0].stream));
            CK(cuEventRecord(s[0].event, s[0].stream));
            CK(cuEventSynchronize(s[0].event));
            double us = now_us() - t0;
            if (w >= WARM)
                rate[w - WARM] = (double)sizes[si] * WINDOW / us; /* bytes per us = MB/s */
        }
        qsort(rate, WINDOWS, sizeof rate[0], cmp_double);
        printf("%-10zu 0->1  streamed median %10.0f best %10.0f\n", sizes[si], rate[WINDOWS / 2], rate[WINDOWS - 1]);
    }
}

int main(void)
{
    CK(cuInit(0));
    int ndev = 0;
    CK(cuDeviceGetCount(&ndev));
    if (ndev < 2) {
        fprintf(stderr, "gpu_floor: needs 2 GPUs, found %d\n", ndev);
        return 77;
    }
    side_t s[2];
    size_t maxn = 32 << 20;
    for (int i = 0; i < 2; i++) {
        CUdevice d;
        CK(cuDeviceGet(&d, i));
        CK(cuDevicePrimaryCtxRetain(&s[i].ctx, d));
        CK(cuCtxSetCurrent(s[i].ctx));
        CK(cuStreamCreate(&s[i].stream, CU_STREAM_NON_BLOCKING));
        CK(cuEventCreate(&s[i].event, CU_EVENT_DISABLE_TIMING));
        CK(cuMemAlloc(&s[i].buf, maxn));
    }
    for (int i = 0; i < 2; i++) {
        CK(cuCtxSetCurrent(s[i].ctx));
        CK(cuCtxEnablePeerAccess(s[1 - i].ctx, 0));
    }
    void *hflag;
    CK(cuCtxSetCurrent(s[0].ctx));
    CK(cuMemHostAlloc(&hflag, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    flag = hflag;
    *flag = 0;
    CK(cuMemHostGetDevicePointer(&flag_dev, hflag, 0));

    static double t[ITERS];
    size_t sizes[] = { 8, 65536, 4 << 20 };
    uint32_t seq = 0;
    printf("# gpu_floor: one peer copy, median us (%d iterations)\n", ITERS);
    printf("# %-8s %-5s %-6s %-12s %10s %10s\n", "size", "from", "issuer", "wait", "median", "min");
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int from = 0; from < 2; from++) {
            side_t *src = &s[from], *dst = &s[1 - from];
            for (int pull = 0; pull < 2; pull++) {
                for (int w = 0; w < 3; w++) {
                    if (w == WAIT_SYNC)
                        continue; /* no different from event polling */
                    for (int it = 0; it < WARMUP + ITERS; it++) {
                        double d = one_copy(pull ? dst : src, dst->buf, src->buf, sizes[si], (wait_kind_t)w, ++seq);
                        if (it >= WARMUP)
                            t[it - WARMUP] = d;
                    }
                    qsort(t, ITERS, sizeof t[0], cmp_double);
                    printf("%-10zu %d->%d  %-6s %-12s %10.2f %10.2f\n", sizes[si], from, 1 - from,
                           pull ? "dst" : "src", wait_name[w], t[ITERS / 2], t[0]);
                }
            }
        }
    }
    /* pinned host <-> device copies on GPU0's stream: the floor of a small
     * device collective reduced on host copies (one copy each way) */
    void *pinned;
    CK(cuCtxSetCurrent(s[0].ctx));
    CK(cuMemAllocHost(&pinned, 65536));
    printf("# pinned host <-> device (GPU0), median us\n");
    size_t hsizes[] = { 8, 65536 };
    for (size_t si = 0; si < sizeof hsizes / sizeof hsizes[0]; si++)
        for (int d2h = 0; d2h < 2; d2h++)
            for (int w = 0; w < 3; w++) {
                if (w == WAIT_SYNC)
                    continue;
                CUdeviceptr h = (CUdeviceptr)(uintptr_t)pinned;
                for (int it = 0; it < WARMUP + ITERS; it++) {
                    double d = one_copy(&s[0], d2h ? h : s[0].buf, d2h ? s[0].buf : h, hsizes[si], (wait_kind_t)w,
                                        ++seq);
                    if (it >= WARMUP)
                        t[it - WARMUP] = d;
                }
                qsort(t, ITERS, sizeof t[0], cmp_double);
                printf("%-10zu %-6s %-6s %-12s %10.2f %10.2f\n", hsizes[si], d2h ? "D->H" : "H->D", "GPU0",
                       wait_name[w], t[ITERS / 2], t[0]);
            }
    CK(cuMemFreeHost(pinned));
    streamed(s);
    /* CPU cost of issuing a copy and an event record (no wait), per context */
    for (int i = 0; i < 2; i++) {
        CK(cuCtxSetCurrent(s[i].ctx));
        double t0 = now_us();
        for (int it = 0; it < ITERS; it++) {
            CK(cuMemcpyAsync(s[i].buf, s[1 - i].buf, 8, s[i].stream));
            CK(cuEventRecord(s[i].event, s[i].stream));
            CK(cuStreamSynchronize(s[i].stream));
        }
        double total = (now_us() - t0) / ITERS;
        t0 = now_us();
        for (int it = 0; it < ITERS; it++) {
            CK(cuMemcpyAsync(s[i].buf, s[1 - i].buf, 8, s[i].stream));
            CK(cuEventRecord(s[i].event, s[i].stream));
        }
        double issue = (now_us() - t0) / ITERS;
        CK(cuStreamSynchronize(s[i].stream));
        t0 = now_us();
        for (int it = 0; it < ITERS; it++)
            (void)cuEventQuery(s[i].event);
        double query = (now_us() - t0) / ITERS;
        printf("# GPU%d: issue copy+event %.2f us (back to back), with sync %.2f us; cuEventQuery %.3f us\n", i,
               issue, total, query);
    }
    return 0;
}
