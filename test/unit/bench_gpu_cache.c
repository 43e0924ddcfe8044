/* Cost of gpu_classify on its hot paths, in ns per call (best of 5 runs).
 *   no-gpu        gpu_classify when no GPU is there: one branch
 *   hit-same      cache hit on the buffer hit last (thread-local check)
 *   hit-rotating  cache hit cycling over 1000 ranges (binary search)
 * With a GPU also: classify of a device and a host buffer alternately, and
 * one driver query (what a miss costs).  Target: hits <= 50 ns.
 * Usage: bench_gpu_cache [--check]   (--check: exit 1 above the target) */
#include "gpu/gpu.h"
#include "gpu/gpu_cache.h"
#include "gpu/gpu_cuda.h"
#include "gpu/gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TARGET_NS 50.0
#define RANGES 1000

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static volatile int sink; /* keeps results alive */

typedef int (*lookup_fn)(const void *const *ptrs, int nptrs, long iters);

static int run_classify(const void *const *ptrs, int nptrs, long iters)
{
    int acc = 0;
    gpu_mem_t m;
    for (long i = 0, j = 0; i < iters; i++, j = j + 1 == nptrs ? 0 : j + 1) {
        gpu_classify(ptrs[j], 64, &m);
        acc += (int)m.kind + m.device;
    }
    return acc;
}

static int run_cache(const void *const *ptrs, int nptrs, long iters)
{
    int acc = 0;
    gpu_mem_t m;
    for (long i = 0, j = 0; i < iters; i++, j = j + 1 == nptrs ? 0 : j + 1) {
        acc += gpu_cache_lookup((uintptr_t)ptrs[j], 64, &m);
        acc += (int)m.kind;
    }
    return acc;
}

static int run_uncached(const void *const *ptrs, int nptrs, long iters)
{
    int acc = 0;
    gpu_mem_t m;
    for (long i = 0, j = 0; i < iters; i++, j = j + 1 == nptrs ? 0 : j + 1) {
        gpu_classify_uncached(ptrs[j], &m);
        acc += (int)m.kind;
    }
    return acc;
}

static double measure(lookup_fn fn, const void *const *ptrs, int nptrs, long iters)
{
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_ns();
        sink = fn(ptrs, nptrs, iters);
        double ns = (now_ns() - t0) / (double)iters;
        if (ns < best)
            best = ns;
    }
    return best;
}

static int over_target;

static void report(const char *name, double ns, bool is_hit)
{
    bool over = is_hit && ns > TARGET_NS;
    over_target += over;
    printf("%-14s %8.1f ns/lookup%s\n", name, ns, over ? "   ABOVE the 50 ns target" : "");
}

int main(int argc, char **argv)
{
    bool check = argc > 1 && !strcmp(argv[1], "--check");
    static char buffer[4096];
    const void *one[1] = { buffer + 100 };
    long iters = 5000000;

    /* Before gpu_init: what every host-only run pays. */
    report("no-gpu", measure(run_classify, one, 1, iters), true);

    /* The cache itself, on synthetic ranges (never dereferenced). */
    gpu_cache_init(false);
    gpu_cache_allow(true, true);
    static const void *ranges[RANGES];
    uintptr_t base = (uintptr_t)1 << 45; /* far above anything mapped here */
    for (int i = 0; i < RANGES; i++) {
        gpu_mem_t m = { (gpu_mem_kind_t)(i % 4), i % 4 == 0 ? -1 : i % 8 };
        uintptr_t s = base + (uintptr_t)i * 65536;
        gpu_cache_insert(s, s + 32768, &m, gpu_cache_epoch());
    }
    /* Visit in a scrambled order so that neighbours do not help. */
    for (int i = 0; i < RANGES; i++)
        ranges[i] = (const void *)(base + (uintptr_t)((i * 617) % RANGES) * 65536 + 1000);
    gpu_cache_stats_t st;
    gpu_cache_stats(&st);
    if (st.entries != RANGES) {
        fprintf(stderr, "bench: %d entries cached, expected %d\n", st.entries, RANGES);
        return 1;
    }
    report("hit-same", measure(run_cache, ranges, 1, iters), true);
    report("hit-rotating", measure(run_cache, ranges, RANGES, iters), true);
    gpu_cache_fini();

    /* gpu_classify end to end, when this machine has a GPU. */
    if (gpu_init(0, 1) == 0 && gpu_enabled()) {
        CUdeviceptr d;
        char *host = malloc(1 << 20);
        if (gpu_drv.MemAlloc(&d, 1 << 20) == GPU_CU_SUCCESS && host) {
            const void *two[2] = { (const void *)(uintptr_t)d, host };
            report("gpu-hit-same", measure(run_classify, two, 1, iters), true);
            report("gpu-hit-2bufs", measure(run_classify, two, 2, iters), true);
            report("driver-query", measure(run_uncached, two, 2, 100000), false);
            printf("(cache: host %s, cuda %s)\n", gpu_state.cache_host ? "on" : "off",
                   gpu_state.cache_cuda ? "on" : "off");
            gpu_drv.MemFree(d);
        }
        free(host);
        gpu_finalize();
    } else {
        printf("(no GPU: gpu_classify hit path measured through the cache only)\n");
    }
    return check && over_target ? 1 : 0;
}
