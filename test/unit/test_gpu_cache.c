/* src/gpu: the range cache, gpu_classify, device choice and copies.
 *
 * 1. The cache alone: lookups, overlaps, cuts, the epoch race rule, the
 *    capacity flush, real munmap hooks from UCM, and readers racing a writer.
 * 2. The real driver.  Without one: gpu_init succeeds, everything is host,
 *    copies are memcpy; the device checks are then skipped (exit 77).  With
 *    one: kinds, ordinals, interior pointers, copies, and a freed buffer
 *    whose address is reused must be classified by the driver again.
 * 3. A fake driver (always): the same logic driven deterministically, incl.
 *    device selection, the stale cases and a free racing a query.
 * Classification results are always compared with the driver's own answer
 * (gpu_classify_uncached) or with what the fake knows it handed out.
 */
#include "ucx/ucx.h"
#include "gpu/gpu.h"
#include "gpu/gpu_cache.h"
#include "gpu/gpu_cuda.h"
#include "gpu/gpu_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucm/api/ucm.h>
#include <unistd.h>

/* libucm internals (exported, not in ucm.h): what libucm_cuda calls when
 * cuMemFree runs.  The fake driver's free does the same. */
void ucm_event_enter(void);
void ucm_event_leave(void);
void ucm_event_dispatch(ucm_event_type_t type, ucm_event_t *event);

#include "unit_check.h"

/* libucs's memory-type cache (its header does not compile as strict C11) */
void ucs_memtype_cache_update(const void *address, size_t size, ucs_memory_type_t mem_type, uint8_t sys_dev,
                              uint8_t mem_flags);
void ucs_memtype_cache_remove(const void *address, size_t size);
ucs_status_t ucs_memtype_cache_lookup(const void *address, size_t size, void *mem_info);

#define KiB ((uintptr_t)1024)
#define MiB (1024 * KiB)
static size_t page;

static const char *kind_name(int k)
{
    static const char *names[] = { "HOST", "HOST_PINNED", "DEVICE", "MANAGED" };
    return k >= 0 && k < 4 ? names[k] : "?";
}

static bool looked_up(uintptr_t p, size_t len, int kind, int device)
{
    gpu_mem_t m;
    return gpu_cache_lookup(p, len, &m) && (int)m.kind == kind && m.device == device;
}

static bool missing(uintptr_t p, size_t len)
{
    gpu_mem_t m;
    return !gpu_cache_lookup(p, len, &m);
}

/* ------------------------------------------------------- 1. the cache */

static void cache_insert(uintptr_t s, uintptr_t e, int kind, int dev)
{
    gpu_mem_t m = { (gpu_mem_kind_t)kind, dev };
    CHECK(gpu_cache_insert(s, e, &m, gpu_cache_epoch()), "insert [%#lx,%#lx)", (unsigned long)s,
          (unsigned long)e);
}

typedef struct {
    uintptr_t a, b;
    atomic_bool stop;
    atomic_long bad, hits;
} race_t;

static void *race_reader(void *arg)
{
    race_t *r = arg;
    gpu_mem_t m;
    while (!atomic_load(&r->stop)) {
        /* Entries at a are always (DEVICE, 3) and at b (MANAGED, 5); a torn
         * read would mix them or report a range that was never inserted. */
        if (gpu_cache_lookup(r->a + 100, 8, &m)) {
            atomic_fetch_add(&r->hits, 1);
            if (m.kind != GPU_MEM_DEVICE || m.device != 3)
                atomic_fetch_add(&r->bad, 1);
        }
        if (gpu_cache_lookup(r->b + 100, 8, &m)) {
            atomic_fetch_add(&r->hits, 1);
            if (m.kind != GPU_MEM_MANAGED || m.device != 5)
                atomic_fetch_add(&r->bad, 1);
        }
    }
    return NULL;
}

/* gpu_hostmap_find against a plain reading of /proc/self/maps: every line,
 * its first and last byte. */
static void test_hostmap(void)
{
    static char snapshot[1 << 20];
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL, "open maps");
    if (!f)
        return;
    size_t len = fread(snapshot, 1, sizeof snapshot - 1, f);
    fclose(f);
    snapshot[len] = '\0';
    int lines = 0, host = 0;
    for (char *line = strtok(snapshot, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long start, end;
        char perms[8] = "", path[512] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %511s", &start, &end, perms, path) < 3)
            continue;
        bool want = (perms[0] == 'r' || perms[1] == 'w' || perms[2] == 'x') &&
                    strncmp(path, "/dev/nvidia", 11) != 0;
        uintptr_t probes[2] = { start, end - 1 };
        for (int i = 0; i < 2; i++) {
            uintptr_t s = 0, e = 0;
            bool got = gpu_hostmap_find(probes[i], &s, &e);
            CHECK(got == want && (!got || (s == start && e == end)),
                  "maps line '%s': got %d [%#lx,%#lx)", line, got, (unsigned long)s,
                  (unsigned long)e);
        }
        lines++;
        host += want;
    }
    CHECK(lines > 5 && host > 3, "%d lines, %d host", lines, host);
    uintptr_t s, e;
    CHECK(!gpu_hostmap_find(0, &s, &e), "address 0 found in a mapping");
}

static void test_cache(void)
{
    unsigned hooks = gpu_cache_init(false);
    CHECK(hooks & GPU_CACHE_HOOK_HOST, "UCM host unmap hook did not register");
    gpu_cache_allow(true, true);

    /* Synthetic "device" ranges inside an address range we reserve, so that
     * no real unmap elsewhere in the process can touch them. */
    size_t rsize = 64 * MiB;
    char *res = mmap(NULL, rsize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(res != MAP_FAILED, "reserve");
    uintptr_t R = (uintptr_t)res;

    cache_insert(R, R + MiB, GPU_MEM_DEVICE, 1);
    cache_insert(R + 2 * MiB, R + 3 * MiB, GPU_MEM_MANAGED, 0);
    CHECK(looked_up(R, 1, GPU_MEM_DEVICE, 1), "start of a range");
    CHECK(looked_up(R + MiB - 1, 1, GPU_MEM_DEVICE, 1), "last byte");
    CHECK(looked_up(R + 4096, 0, GPU_MEM_DEVICE, 1), "interior, len 0");
    CHECK(looked_up(R + 2 * MiB + 77, 1000, GPU_MEM_MANAGED, 0), "second range");
    CHECK(looked_up(R + 2 * MiB + 77, 1000, GPU_MEM_MANAGED, 0), "again (last-hit path)");
    CHECK(looked_up(R + 5, 1, GPU_MEM_DEVICE, 1), "back to the first");
    CHECK(missing(R + MiB, 1), "one past the end");
    CHECK(missing(R - 1, 1), "below");
    CHECK(missing(R + MiB / 2, MiB), "buffer longer than the range");
    CHECK(missing(R + 3 * MiB / 2, 1), "gap");

    /* An insert overlapping cached ranges: the driver's newer answer wins. */
    cache_insert(R + MiB / 2, R + 5 * MiB / 2, GPU_MEM_HOST_PINNED, -1);
    CHECK(missing(R, 1), "overlapped entry dropped");
    CHECK(missing(R + 11 * MiB / 4, 1), "overlapped entry dropped (2)");
    CHECK(looked_up(R + MiB, 1, GPU_MEM_HOST_PINNED, -1), "new entry");

    /* A hook firing between the driver query and the insert refuses it. */
    gpu_cache_stats_t st0, st1;
    gpu_cache_stats(&st0);
    uint64_t epoch = gpu_cache_epoch();
    gpu_cache_invalidate(R + 40 * MiB, 1); /* unrelated address: still counts */
    gpu_mem_t dev7 = { GPU_MEM_DEVICE, 7 };
    CHECK(!gpu_cache_insert(R + 30 * MiB, R + 31 * MiB, &dev7, epoch), "stale insert accepted");
    gpu_cache_stats(&st1);
    CHECK(st1.insert_races == st0.insert_races + 1, "race not counted");
    CHECK(missing(R + 30 * MiB, 1), "refused insert visible");

    /* A free overlapping a non-host entry removes it whole. */
    gpu_cache_invalidate(R + MiB, 1);
    CHECK(missing(R + MiB / 2, 1) && missing(R + 2 * MiB, 1), "freed allocation still cached");

    /* Host entries are mappings: an unmap cuts out just its part. */
    cache_insert(R + 8 * MiB, R + 12 * MiB, GPU_MEM_HOST, -1);
    gpu_cache_invalidate(R + 9 * MiB, MiB);
    CHECK(looked_up(R + 8 * MiB, 1, GPU_MEM_HOST, -1), "left part kept");
    CHECK(missing(R + 9 * MiB, 1) && missing(R + 10 * MiB - 1, 1), "cut part still cached");
    CHECK(looked_up(R + 10 * MiB, 1, GPU_MEM_HOST, -1), "right part kept");
    CHECK(looked_up(R + 12 * MiB - 1, 1, GPU_MEM_HOST, -1), "right part kept to its end");
    CHECK(missing(R + 9 * MiB - 10, 20), "buffer across the cut");

    /* Filling the cache past its capacity empties it instead of failing. */
    gpu_cache_clear();
    gpu_cache_stats(&st0);
    uintptr_t base = R + 16 * MiB;
    for (int i = 0; i <= GPU_CACHE_CAPACITY; i++)
        cache_insert(base + (uintptr_t)i * 4 * KiB, base + (uintptr_t)i * 4 * KiB + 2 * KiB,
                     GPU_MEM_DEVICE, i % 4);
    gpu_cache_stats(&st1);
    CHECK(st1.flushes == st0.flushes + 1, "capacity flush");
    CHECK(st1.entries >= 1 && st1.entries <= GPU_CACHE_CAPACITY, "entries %d", st1.entries);
    int last = GPU_CACHE_CAPACITY;
    CHECK(looked_up(base + (uintptr_t)last * 4 * KiB + 100, 1, GPU_MEM_DEVICE, last % 4),
          "latest entry after the flush");
    gpu_cache_clear();
    for (int i = 0; i < 500; i++) /* sorted insertion in reverse order */
        cache_insert(base + (uintptr_t)(499 - i) * 4 * KiB,
                     base + (uintptr_t)(499 - i) * 4 * KiB + 2 * KiB, GPU_MEM_DEVICE, i % 3);
    int wrong = 0;
    for (int j = 0; j < 500; j++) {
        uintptr_t p = base + (uintptr_t)j * 4 * KiB;
        wrong += !looked_up(p + 1000, 1, GPU_MEM_DEVICE, (499 - j) % 3) || !missing(p + 3000, 1);
    }
    CHECK(wrong == 0, "%d of 500 lookups wrong in a full array", wrong);

    /* Real UCM hooks: munmap must reach the cache. */
    gpu_cache_clear();
    char *h = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(h != MAP_FAILED, "mmap");
    uintptr_t H = (uintptr_t)h;
    CHECK(gpu_cache_insert_host_mapping(H + 100, 10, gpu_cache_epoch()), "host mapping");
    CHECK(looked_up(H, 4 * page, GPU_MEM_HOST, -1), "whole mapping cached");
    CHECK(!gpu_cache_insert_host_mapping(R + 100, 10, gpu_cache_epoch()),
          "PROT_NONE (device address space) cached as host");
    gpu_cache_stats(&st0);
    munmap(h + page, page);
    gpu_cache_stats(&st1);
    CHECK(st1.host_unmaps > st0.host_unmaps, "munmap hook did not fire");
    CHECK(looked_up(H, page, GPU_MEM_HOST, -1), "page 0 kept");
    CHECK(missing(H + page, 1), "unmapped page still cached");
    CHECK(looked_up(H + 2 * page, 2 * page, GPU_MEM_HOST, -1), "pages 2-3 kept");
    munmap(h, 4 * page);
    CHECK(missing(H, 1) && missing(H + 3 * page, 1), "unmapped mapping still cached");
    gpu_cache_probe_arm(GPU_CACHE_HOOK_HOST, 0);
    CHECK(!gpu_cache_probe_seen(), "probe seen without an unmap");

    /* Readers racing a writer that keeps moving the array. */
    gpu_cache_clear();
    race_t race = { .a = R + 20 * MiB, .b = R + 21 * MiB };
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, race_reader, &race);
    /* Time-bound (0.3 s): a torn read needs a reader inside a writer's
     * few-ns copy of one entry, so catching a broken sequence lock is a
     * matter of chances; a correct one never reports anything. */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0;; i++) {
        if (i % 1000 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 300000000L)
                break;
        }
        cache_insert(race.a, race.a + 4 * KiB, GPU_MEM_DEVICE, 3);
        cache_insert(race.b, race.b + 4 * KiB, GPU_MEM_MANAGED, 5);
        uintptr_t other = R + (uintptr_t)(i % 64) * 64 * KiB; /* below a and b: shifts them */
        cache_insert(other, other + KiB, GPU_MEM_HOST_PINNED, -1);
        if (i % 3 == 0)
            gpu_cache_invalidate(race.a, 1);
        if (i % 5 == 0)
            gpu_cache_invalidate(other, 1);
    }
    atomic_store(&race.stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    CHECK(atomic_load(&race.bad) == 0, "%ld torn lookups", atomic_load(&race.bad));
    printf("cache: race readers saw %ld hits, %ld wrong\n", atomic_load(&race.hits),
           atomic_load(&race.bad));

    munmap(res, rsize);
    gpu_cache_fini();
}

/* -------------------------------------------- 2. the real driver, if any */

static void expect_classify(const void *p, size_t len, int kind, int device, bool new_range,
                            const char *what)
{
    uint64_t m0 = gpu_classify_misses();
    gpu_mem_t a, b, truth;
    gpu_classify(p, len, &a);
    uint64_t m1 = gpu_classify_misses();
    gpu_classify(p, len, &b); /* the second time from the cache */
    uint64_t m2 = gpu_classify_misses();
    gpu_classify_uncached(p, &truth);
    CHECK((int)a.kind == kind && a.device == device, "%s: got %s/%d, want %s/%d", what,
          kind_name(a.kind), a.device, kind_name(kind), device);
    CHECK(a.kind == b.kind && a.device == b.device, "%s: cached answer differs", what);
    CHECK(a.kind == truth.kind && a.device == truth.device, "%s: driver says %s/%d", what,
          kind_name(truth.kind), truth.device);
    if (new_range)
        CHECK(m1 == m0 + 1, "%s: first lookup did not ask the driver", what);
    CHECK(m2 == m1, "%s: second lookup missed the cache", what);
}

static bool same_as_driver(const void *p, size_t len)
{
    gpu_mem_t a, truth;
    gpu_classify(p, len, &a);
    gpu_classify_uncached(p, &truth);
    return a.kind == truth.kind && a.device == truth.device;
}

static void copy_and_wait(void *dst, const void *src, size_t n, const char *what)
{
    gpu_copy_t c;
    int r = gpu_copy_start(dst, src, n, &c);
    CHECK(r == 0, "%s: gpu_copy_start = %d", what, r);
    if (r)
        return;
    while (!gpu_copy_done(&c))
        ;
    CHECK(c.event == NULL, "%s: event kept after done", what);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31 + seed);
}

static void host_only_checks(void)
{
    int on_stack[64];
    char *heap = malloc(100), *big = malloc(4 * MiB);
    char *mapped = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(heap && big && mapped != MAP_FAILED, "allocations");
    CHECK(gpu_device() == -1, "device %d without GPU", gpu_device());
    CHECK(!strcmp(gpu_device_pci_bus_id(), ""), "bus id without GPU");
    const void *ptrs[] = { on_stack, heap, big + MiB, mapped, NULL };
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) {
        gpu_mem_t m = { GPU_MEM_DEVICE, 5 };
        gpu_classify(ptrs[i], 64, &m);
        CHECK(m.kind == GPU_MEM_HOST && m.device == -1, "pointer %zu: %s/%d", i,
              kind_name(m.kind), m.device);
    }
    fill((unsigned char *)big, 4 * MiB, 7);
    copy_and_wait(big + 2 * MiB, big, MiB, "host copy");
    CHECK(!memcmp(big + 2 * MiB, big, MiB), "host copy data");
    CHECK(gpu_thread_attach() == 0, "attach without GPU");
    munmap(mapped, 2 * page);
    free(heap);
    free(big);
}

static void device_checks(void)
{
    const char *want_env = getenv("AMPI_GPU_DEVICE");
    int want = want_env && *want_env ? atoi(want_env) : 0;
    printf("driver: device %d (%s), cache host %s, cuda %s\n", gpu_device(),
           gpu_device_pci_bus_id(), gpu_state.cache_host ? "on" : "off",
           gpu_state.cache_cuda ? "on" : "off");
    CHECK(gpu_device() == want, "device %d, want %d", gpu_device(), want);
    CHECK(strlen(gpu_device_pci_bus_id()) > 0, "no PCI bus id");
    CHECK(gpu_state.cache_host, "host unmap hook not working: host buffers ask the driver");
    CHECK(gpu_state.cache_cuda,
          "cuMemFree hook (UCX libucm_cuda) not working: device buffers ask the driver every "
          "time; is UCX's lib/ucx/libucm_cuda.so loadable?");
    int dev = gpu_device();

    CUdeviceptr d = 0, d2 = 0, managed = 0;
    void *pinned = NULL;
    size_t n = 2 * MiB;
    CHECK(gpu_drv.MemAlloc(&d, n) == GPU_CU_SUCCESS, "cuMemAlloc");
    CHECK(gpu_drv.MemAlloc(&d2, n) == GPU_CU_SUCCESS, "cuMemAlloc");
    CHECK(gpu_drv.MemAllocHost(&pinned, n) == GPU_CU_SUCCESS, "cuMemAllocHost");
    CHECK(gpu_drv.MemAllocManaged(&managed, n, GPU_CU_MEM_ATTACH_GLOBAL) == GPU_CU_SUCCESS,
          "cuMemAllocManaged");
    unsigned char *h = malloc(n), *h2 = malloc(n);
    int on_stack[16];
    char *mapped = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!d || !d2 || !pinned || !managed || !h || !h2 || mapped == MAP_FAILED)
        return;

    expect_classify((void *)(uintptr_t)d, n, GPU_MEM_DEVICE, dev, true, "device");
    expect_classify((void *)(uintptr_t)(d + 12345), 100, GPU_MEM_DEVICE, dev, false, "interior");
    expect_classify(pinned, n, GPU_MEM_HOST_PINNED, -1, true, "pinned");
    expect_classify((char *)pinned + n - 1, 1, GPU_MEM_HOST_PINNED, -1, false, "pinned end");
    expect_classify((void *)(uintptr_t)managed, n, GPU_MEM_MANAGED, dev, true, "managed");
    expect_classify(mapped + 100, 100, GPU_MEM_HOST, -1, true, "mmap");
    expect_classify(mapped + 5000, 100, GPU_MEM_HOST, -1, false, "same mapping");
    expect_classify(h, n, GPU_MEM_HOST, -1, false, "malloc");
    expect_classify(on_stack, sizeof on_stack, GPU_MEM_HOST, -1, false, "stack");

    /* Copies: host -> device -> device -> host, and through managed. */
    fill(h, n, 3);
    memset(h2, 0, n);
    copy_and_wait((void *)(uintptr_t)d, h, n, "H->D");
    copy_and_wait((void *)(uintptr_t)d2, (void *)(uintptr_t)d, n, "D->D");
    copy_and_wait((void *)(uintptr_t)managed, (void *)(uintptr_t)d2, n, "D->M");
    copy_and_wait(h2, (void *)(uintptr_t)managed, n, "M->H");
    CHECK(!memcmp(h, h2, n), "data after H->D->D->M->H");

    /* Stale: free a 2 MiB buffer, allocate 1 MiB (the driver hands out the
     * same address); the second half is no longer device memory. */
    uintptr_t old = (uintptr_t)d;
    gpu_cache_stats_t s0, s1;
    gpu_cache_stats(&s0);
    gpu_drv.MemFree(d);
    gpu_cache_stats(&s1);
    CHECK(s1.cuda_frees > s0.cuda_frees, "cuMemFree hook did not fire");
    CHECK(gpu_drv.MemAlloc(&d, MiB) == GPU_CU_SUCCESS, "cuMemAlloc");
    printf("stale: old %#lx new %#lx\n", (unsigned long)old, (unsigned long)d);
    CHECK(same_as_driver((void *)(uintptr_t)d, 1), "new buffer");
    CHECK(same_as_driver((void *)(old + 3 * MiB / 2), 1), "freed half");
    /* Free device memory, then reuse its address for managed memory when
     * the driver does so (it often does not: then only the check above). */
    gpu_drv.MemFree(d);
    CUdeviceptr m2 = 0;
    if (gpu_drv.MemAllocManaged(&m2, MiB, GPU_CU_MEM_ATTACH_GLOBAL) == GPU_CU_SUCCESS) {
        printf("stale: managed after free at %#lx (%s address)\n", (unsigned long)m2,
               m2 == old ? "same" : "other");
        CHECK(same_as_driver((void *)(uintptr_t)m2, 1), "managed after device free");
        CHECK(same_as_driver((void *)(uintptr_t)old, 1), "old address");
        gpu_drv.MemFree(m2);
    }
    CHECK(same_as_driver((void *)(uintptr_t)old, 1), "old address after all frees");

    gpu_drv.MemFree(d2);
    gpu_drv.MemFree(managed);
    gpu_drv.MemFreeHost(pinned);
    CHECK(same_as_driver(pinned, 1), "freed pinned memory");
    munmap(mapped, MiB);
    free(h);
    free(h2);
}

/* ------------------------------------------------- 3. the fake driver */

typedef struct {
    uintptr_t start;
    size_t size;
    unsigned memory_type; /* 0 free, else GPU_CU_MEMORYTYPE_* */
    unsigned managed;
    int ordinal;
    bool reserved; /* device address space: stays mapped PROT_NONE when freed */
} fake_alloc_t;

static struct {
    fake_alloc_t a[32];
    int n;
    long attr_calls, init_calls;
    int devices;
    bool unmap_during_query;
} fake;
static char fake_ctx_storage[4];
static _Thread_local CUcontext fake_current;

static fake_alloc_t *fake_find(uintptr_t p)
{
    for (int i = 0; i < fake.n; i++)
        if (fake.a[i].memory_type && p >= fake.a[i].start && p - fake.a[i].start < fake.a[i].size)
            return &fake.a[i];
    return NULL;
}

static CUresult fake_Init(unsigned f)
{
    (void)f;
    fake.init_calls++;
    return GPU_CU_SUCCESS;
}
static CUresult fake_DeviceGetCount(int *c)
{
    *c = fake.devices;
    return GPU_CU_SUCCESS;
}
static CUresult fake_DeviceGet(CUdevice *d, int o)
{
    *d = o;
    return o >= 0 && o < fake.devices ? GPU_CU_SUCCESS : GPU_CU_ERROR_INVALID_VALUE;
}
static CUresult fake_DeviceGetPCIBusId(char *b, int l, CUdevice d)
{
    snprintf(b, (size_t)l, "0000:%02x:00.0", 0x10 + (int)d);
    return GPU_CU_SUCCESS;
}
static CUresult fake_DevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    *c = (CUcontext)(void *)&fake_ctx_storage[d];
    return GPU_CU_SUCCESS;
}
static CUresult fake_DevicePrimaryCtxRelease(CUdevice d)
{
    (void)d;
    return GPU_CU_SUCCESS;
}
static CUresult fake_CtxSetCurrent(CUcontext c)
{
    fake_current = c;
    return GPU_CU_SUCCESS;
}
static CUresult fake_CtxGetCurrent(CUcontext *c)
{
    *c = fake_current;
    return GPU_CU_SUCCESS;
}
static int current_ordinal(void)
{
    return fake_current ? (int)((char *)(void *)fake_current - fake_ctx_storage) : -1;
}

static CUresult fake_PointerGetAttributes(unsigned n, CUpointer_attribute *attrs, void **data,
                                          CUdeviceptr ptr)
{
    fake.attr_calls++;
    if (fake.unmap_during_query) {
        /* Another thread frees something while the driver answers. */
        void *p = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        munmap(p, page);
    }
    fake_alloc_t *a = fake_find((uintptr_t)ptr);
    for (unsigned i = 0; i < n; i++) {
        switch ((int)attrs[i]) {
        case GPU_CU_PTR_ATTR_MEMORY_TYPE: *(unsigned *)data[i] = a ? a->memory_type : 0; break;
        case GPU_CU_PTR_ATTR_IS_MANAGED: *(unsigned *)data[i] = a ? a->managed : 0; break;
        case GPU_CU_PTR_ATTR_DEVICE_ORDINAL: *(int *)data[i] = a ? a->ordinal : -2; break;
        case GPU_CU_PTR_ATTR_RANGE_START: *(CUdeviceptr *)data[i] = a ? a->start : 0; break;
        case GPU_CU_PTR_ATTR_RANGE_SIZE: *(size_t *)data[i] = a ? a->size : 0; break;
        default: return GPU_CU_ERROR_INVALID_VALUE;
        }
    }
    return GPU_CU_SUCCESS;
}
static CUresult fake_MemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    fake_alloc_t *a = fake_find((uintptr_t)p);
    if (!a)
        return GPU_CU_ERROR_INVALID_VALUE;
    *base = a->start;
    *size = a->size;
    return GPU_CU_SUCCESS;
}

static int fake_stream_storage;
static CUresult fake_StreamCreate(CUstream *s, unsigned f)
{
    (void)f;
    *s = (CUstream)(void *)&fake_stream_storage;
    return GPU_CU_SUCCESS;
}
static CUresult fake_StreamDestroy(CUstream s)
{
    (void)s;
    return GPU_CU_SUCCESS;
}
static CUresult fake_StreamSynchronize(CUstream s)
{
    (void)s;
    return GPU_CU_SUCCESS;
}
static CUresult fake_MemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    return GPU_CU_SUCCESS;
}
static long events_live;
static CUresult fake_EventCreate(CUevent *e, unsigned f)
{
    (void)f;
    int *countdown = malloc(sizeof *countdown);
    *countdown = 0;
    events_live++;
    *e = (CUevent)(void *)countdown;
    return GPU_CU_SUCCESS;
}
static CUresult fake_EventRecord(CUevent e, CUstream s)
{
    (void)s;
    *(int *)(void *)e = 2; /* "completes" on the third query */
    return GPU_CU_SUCCESS;
}
static CUresult fake_EventQuery(CUevent e)
{
    int *countdown = (int *)(void *)e;
    if (*countdown > 0) {
        (*countdown)--;
        return GPU_CU_ERROR_NOT_READY;
    }
    return GPU_CU_SUCCESS;
}
static CUresult fake_EventDestroy(CUevent e)
{
    events_live--;
    free((void *)e);
    return GPU_CU_SUCCESS;
}
static CUresult fake_GetErrorName(CUresult r, const char **name)
{
    (void)r;
    *name = "FAKE_ERROR";
    return GPU_CU_SUCCESS;
}

/* Device address space: reserved PROT_NONE, reused first-fit after frees as
 * the real driver does, so that a new allocation lands on a freed one. */
static CUresult fake_alloc_device(CUdeviceptr *p, size_t n, unsigned managed)
{
    for (int i = 0; i < fake.n; i++) {
        fake_alloc_t *a = &fake.a[i];
        if (a->reserved && !a->memory_type && a->size >= n) {
            a->memory_type = GPU_CU_MEMORYTYPE_DEVICE;
            a->managed = managed;
            a->ordinal = current_ordinal();
            a->size = n; /* the rest of the reservation is lost: fine for a test */
            *p = a->start;
            return GPU_CU_SUCCESS;
        }
    }
    void *r = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED || fake.n == 32)
        return GPU_CU_ERROR_OUT_OF_MEMORY;
    fake.a[fake.n++] = (fake_alloc_t){ (uintptr_t)r, n, GPU_CU_MEMORYTYPE_DEVICE, managed,
                                       current_ordinal(), true };
    *p = (uintptr_t)r;
    return GPU_CU_SUCCESS;
}
static CUresult fake_MemAlloc(CUdeviceptr *p, size_t n)
{
    return fake_alloc_device(p, n, 0);
}
static CUresult fake_MemAllocManaged(CUdeviceptr *p, size_t n, unsigned f)
{
    (void)f;
    return fake_alloc_device(p, n, 1);
}

/* What libucm_cuda's cuMemFree replacement does before the real free. */
static void ucm_cuda_free_event(uintptr_t p, size_t size)
{
    ucm_event_t ev;
    memset(&ev, 0, sizeof ev);
    ev.mem_type.address = (void *)p;
    ev.mem_type.size = size;
    ev.mem_type.mem_type = UCS_MEMORY_TYPE_CUDA;
    ucm_event_enter();
    ucm_event_dispatch(UCM_EVENT_MEM_TYPE_FREE, &ev);
    ucm_event_leave();
}

static CUresult fake_MemFree(CUdeviceptr p)
{
    fake_alloc_t *a = fake_find((uintptr_t)p);
    if (!a || a->start != p)
        return GPU_CU_ERROR_INVALID_VALUE;
    ucm_cuda_free_event(a->start, a->size);
    a->memory_type = 0; /* address space stays reserved, as with the driver */
    return GPU_CU_SUCCESS;
}
static CUresult fake_MemAllocHost(void **p, size_t n)
{
    void *r = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED || fake.n == 32)
        return GPU_CU_ERROR_OUT_OF_MEMORY;
    fake.a[fake.n++] = (fake_alloc_t){ (uintptr_t)r, n, GPU_CU_MEMORYTYPE_HOST, 0, -2, false };
    *p = r;
    return GPU_CU_SUCCESS;
}
static CUresult fake_MemFreeHost(void *p)
{
    fake_alloc_t *a = fake_find((uintptr_t)p);
    if (!a)
        return GPU_CU_ERROR_INVALID_VALUE;
    ucm_cuda_free_event(a->start, a->size);
    a->memory_type = 0;
    munmap(p, a->size);
    return GPU_CU_SUCCESS;
}
static CUresult fake_MemcpyHtoD(CUdeviceptr d, const void *s, size_t n)
{
    return fake_MemcpyAsync(d, (uintptr_t)s, n, NULL);
}
static CUresult fake_MemcpyDtoH(void *d, CUdeviceptr s, size_t n)
{
    return fake_MemcpyAsync((uintptr_t)d, s, n, NULL);
}

static const gpu_driver_t fake_driver = {
    .Init = fake_Init,
    .DeviceGetCount = fake_DeviceGetCount,
    .DeviceGet = fake_DeviceGet,
    .DeviceGetPCIBusId = fake_DeviceGetPCIBusId,
    .DevicePrimaryCtxRetain = fake_DevicePrimaryCtxRetain,
    .DevicePrimaryCtxRelease = fake_DevicePrimaryCtxRelease,
    .CtxSetCurrent = fake_CtxSetCurrent,
    .CtxGetCurrent = fake_CtxGetCurrent,
    .PointerGetAttributes = fake_PointerGetAttributes,
    .MemGetAddressRange = fake_MemGetAddressRange,
    .StreamCreate = fake_StreamCreate,
    .StreamDestroy = fake_StreamDestroy,
    .StreamSynchronize = fake_StreamSynchronize,
    .MemcpyAsync = fake_MemcpyAsync,
    .EventCreate = fake_EventCreate,
    .EventRecord = fake_EventRecord,
    .EventQuery = fake_EventQuery,
    .EventDestroy = fake_EventDestroy,
    .GetErrorName = fake_GetErrorName,
    .MemAlloc = fake_MemAlloc,
    .MemFree = fake_MemFree,
    .MemAllocHost = fake_MemAllocHost,
    .MemFreeHost = fake_MemFreeHost,
    .MemAllocManaged = fake_MemAllocManaged,
    .MemcpyHtoD = fake_MemcpyHtoD,
    .MemcpyDtoH = fake_MemcpyDtoH,
};

/* Classify twice; the driver must be asked `calls` times in all. */
static void fake_expect(const void *p, size_t len, int kind, int device, long calls,
                        const char *what)
{
    long c0 = fake.attr_calls;
    gpu_mem_t a, b;
    gpu_classify(p, len, &a);
    gpu_classify(p, len, &b);
    CHECK((int)a.kind == kind && a.device == device && a.kind == b.kind && a.device == b.device,
          "fake %s: got %s/%d then %s/%d, want %s/%d", what, kind_name(a.kind), a.device,
          kind_name(b.kind), b.device, kind_name(kind), device);
    CHECK(fake.attr_calls - c0 == calls, "fake %s: %ld driver calls, want %ld", what,
          fake.attr_calls - c0, calls);
}

static void test_fake_driver(void)
{
    unsetenv("AMPI_GPU_DEVICE");
    unsetenv("AMPI_GPU");
    unsetenv("AMPI_GPU_CACHE");
    fake.devices = 2;
    gpu_driver_use_for_testing(&fake_driver);

    /* Selection: local rank 3 with 2 devices -> 1. */
    CHECK(gpu_init(3, 4) == 0 && gpu_enabled(), "fake init");
    CHECK(gpu_device() == 1, "local rank 3 -> device %d", gpu_device());
    CHECK(!strcmp(gpu_device_pci_bus_id(), "0000:11:00.0"), "bus id %s", gpu_device_pci_bus_id());
    CHECK(current_ordinal() == 1, "context of device 1 not current");
    CHECK(gpu_state.cache_host && gpu_state.cache_cuda, "hooks: host %d cuda %d",
          gpu_state.cache_host, gpu_state.cache_cuda);

    size_t n = 2 * MiB;
    CUdeviceptr d = 0;
    CHECK(fake_MemAlloc(&d, n) == GPU_CU_SUCCESS, "alloc");
    void *dp = (void *)(uintptr_t)d;
    fake_expect(dp, n, GPU_MEM_DEVICE, 1, 1, "device");
    fake_expect((char *)dp + MiB, 4096, GPU_MEM_DEVICE, 1, 0, "interior");
    char *h1 = malloc(64), *h2 = malloc(64);
    int on_stack[8];
    fake_expect(h1, 64, GPU_MEM_HOST, -1, 1, "heap");
    /* Only when both lie in one mapping (they should: the main heap). */
    uintptr_t ms, me;
    if (gpu_hostmap_find((uintptr_t)h1, &ms, &me) && (uintptr_t)h2 >= ms && (uintptr_t)h2 < me)
        fake_expect(h2, 64, GPU_MEM_HOST, -1, 0, "same heap mapping");
    fake_expect(on_stack, sizeof on_stack, GPU_MEM_HOST, -1, 1, "stack");
    fake_expect(NULL, 0, GPU_MEM_HOST, -1, 0, "NULL");

    /* Stale 1: device memory freed without an unmap (as cuMemFree does) and
     * its address reused for managed memory: only MEM_TYPE_FREE tells us. */
    CHECK(fake_MemFree(d) == GPU_CU_SUCCESS, "free");
    CUdeviceptr m = 0;
    CHECK(fake_MemAllocManaged(&m, MiB, 1) == GPU_CU_SUCCESS && m == d, "same address");
    fake_expect(dp, MiB, GPU_MEM_MANAGED, 1, 1, "managed at a freed device address");
    /* the freed upper half: reserved, PROT_NONE, unknown to the driver */
    fake_expect((char *)dp + 3 * MiB / 2, 1, GPU_MEM_HOST, -1, 2, "freed half (not cached)");

    /* Stale 2: host mapping unmapped, pinned memory mapped at its address. */
    char *hm = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    fake_expect(hm + 10, 10, GPU_MEM_HOST, -1, 1, "mmap");
    munmap(hm, MiB);
    char *again = mmap(hm, MiB, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (again == hm) {
        fake.a[fake.n++] =
            (fake_alloc_t){ (uintptr_t)hm, MiB, GPU_CU_MEMORYTYPE_HOST, 0, -2, false };
        fake_expect(hm + 10, 10, GPU_MEM_HOST_PINNED, -1, 1, "pinned at an unmapped address");
        CHECK(fake_MemFreeHost(hm) == GPU_CU_SUCCESS, "free host");
        fake_expect(hm + 10, 10, GPU_MEM_HOST, -1, 2, "after cuMemFreeHost (unmapped: not cached)");
    } else {
        CHECK(0, "could not map at the same address (%p)", (void *)again);
    }

    /* A free while the driver answers: that answer is not cached. */
    CUdeviceptr d3;
    CHECK(fake_MemAlloc(&d3, MiB) == GPU_CU_SUCCESS, "alloc");
    fake.unmap_during_query = true;
    fake_expect((void *)(uintptr_t)d3, 1, GPU_MEM_DEVICE, 1, 2, "query racing a free");
    fake.unmap_during_query = false;
    fake_expect((void *)(uintptr_t)d3, 1, GPU_MEM_DEVICE, 1, 1, "after the race");

    /* Pinned memory from the driver. */
    void *pinned;
    CHECK(fake_MemAllocHost(&pinned, MiB) == GPU_CU_SUCCESS, "alloc host");
    fake_expect((char *)pinned + 5, 5, GPU_MEM_HOST_PINNED, -1, 1, "pinned");

    /* Copies: the event reports "not ready" twice before it is done. */
    unsigned char *src = malloc(MiB), *dst = calloc(1, MiB);
    fill(src, MiB, 9);
    gpu_copy_t c;
    CHECK(gpu_copy_start(dst, src, MiB, &c) == 0 && c.event, "copy start");
    int polls = 0;
    while (!gpu_copy_done(&c) && polls < 100)
        polls++;
    CHECK(polls == 2, "copy done after %d polls, want 2", polls);
    CHECK(!memcmp(src, dst, MiB) && c.event == NULL, "copy data");
    gpu_copy_t c2;
    CHECK(gpu_copy_start(dst, src, MiB, &c2) == 0 && c2.event, "second copy");
    while (!gpu_copy_done(&c2))
        ;
    CHECK(events_live == 1, "%ld events live: the pool should reuse one", events_live);
    fake_CtxSetCurrent(NULL); /* a PE thread without a context */
    copy_and_wait(dst, src, 16, "copy without a current context");
    CHECK(current_ordinal() == 1, "copy did not leave our context current");
    fake_CtxSetCurrent(NULL);
    CHECK(gpu_thread_attach() == 0 && current_ordinal() == 1, "gpu_thread_attach");
    fake_CtxSetCurrent((CUcontext)(void *)&fake_ctx_storage[0]); /* user picked device 0 */
    copy_and_wait(dst, src, 16, "copy with another context current");
    CHECK(current_ordinal() == 0, "the user's context was not restored");
    gpu_finalize();
    CHECK(events_live == 0, "%ld events leaked by gpu_finalize", events_live);
    CHECK(!gpu_enabled() && gpu_device() == -1, "finalize");

    /* AMPI_GPU_DEVICE overrides the local rank, and must be a visible
     * device (a value that is no integer never gets here: the settings
     * parser refuses it, test_settings). */
    printf("fake: one AMPI_GPU_DEVICE error is expected next\n");
    setenv("AMPI_GPU_DEVICE", "0", 1);
    CHECK(gpu_init(1, 2) == 0 && gpu_device() == 0, "AMPI_GPU_DEVICE=0 -> %d", gpu_device());
    gpu_finalize();
    setenv("AMPI_GPU_DEVICE", "2", 1);
    CHECK(gpu_init(0, 1) != 0 && !gpu_enabled(), "AMPI_GPU_DEVICE=2 of 2 accepted");
    unsetenv("AMPI_GPU_DEVICE");

    /* AMPI_GPU=off: the driver is not even initialised. */
    setenv("AMPI_GPU", "off", 1);
    long inits = fake.init_calls;
    CHECK(gpu_init(0, 1) == 0 && !gpu_enabled() && fake.init_calls == inits, "AMPI_GPU=off");
    unsetenv("AMPI_GPU");

    /* No device at all: a host-only run. */
    fake.devices = 0;
    CHECK(gpu_init(0, 1) == 0 && !gpu_enabled(), "zero devices");
    fake.devices = 2;

    /* AMPI_GPU_CACHE=0: every classification asks the driver. */
    setenv("AMPI_GPU_CACHE", "0", 1);
    CHECK(gpu_init(0, 1) == 0 && gpu_enabled(), "init");
    fake_expect(pinned, 1, GPU_MEM_HOST_PINNED, -1, 2, "cache off");
    fake_expect(h1, 1, GPU_MEM_HOST, -1, 2, "cache off, host");
    gpu_finalize();
    unsetenv("AMPI_GPU_CACHE");

    /* A device allocation whose free UCM could not size (another GPU's
     * memory, freed under this device's context) leaves UCX's memory-type
     * cache describing the rest of its range as that GPU's memory, and UCX
     * later copies into memory of this GPU there in the wrong context: the
     * library makes UCX forget the whole allocation.  (UCX inserts as when
     * it looked at the buffer; UCM reports the free with size 1.) */
    CHECK(gpu_init(0, 1) == 0 && gpu_enabled(), "init for the free hook");
    CUdeviceptr dgone = 0;
    CHECK(fake_MemAlloc(&dgone, 4 * 4096) == GPU_CU_SUCCESS, "fake cuMemAlloc");
    void *gone = (void *)(uintptr_t)dgone;
    char info[64]; /* a ucs_memory_info_t, and room to spare */
    ucs_memtype_cache_lookup(gone, 1, info); /* creates UCX's cache, as ucp_init does */
    ucs_memtype_cache_update(gone, 4 * 4096, UCS_MEMORY_TYPE_CUDA, 1, 1 /* registrable */);
    CHECK(ucs_memtype_cache_lookup((char *)gone + 8192, 64, info) == UCS_OK, "UCX's cache did not take the range");
    ucs_memtype_cache_remove(gone, 1); /* UCX's own hook, unable to size it */
    gpu_cuda_free_seen((uintptr_t)gone, 1);
    CHECK(ucs_memtype_cache_lookup((char *)gone + 8192, 64, info) == UCS_ERR_NO_ELEM,
          "UCX still describes a freed allocation past its first bytes");
    /* However UCX came to keep another device on part of a new allocation,
     * the library's first look at the allocation makes UCX ask again. */
    CUdeviceptr dfresh = 0;
    CHECK(fake_MemAlloc(&dfresh, 4 * 4096) == GPU_CU_SUCCESS, "fake cuMemAlloc");
    char *fresh = (char *)(uintptr_t)dfresh;
    ucs_memtype_cache_update(fresh + 8192, 8192, UCS_MEMORY_TYPE_CUDA, 1, 1); /* stale: device 1 */
    gpu_mem_t fm;
    gpu_classify(fresh + 100, 64, &fm);
    struct { /* ucs_memory_info_t */
        ucs_memory_type_t type;
        uint8_t sys_dev;
        void *base_address;
        size_t alloc_length;
        uint8_t mem_flags;
    } mi = { UCS_MEMORY_TYPE_CUDA, 1, NULL, 0, 1 };
    ucs_status_t st = ucs_memtype_cache_lookup(fresh + 12288, 64, &mi);
    CHECK(fm.kind == GPU_MEM_DEVICE && (st != UCS_OK || mi.type == UCS_MEMORY_TYPE_UNKNOWN),
          "UCX keeps device %d (type %d) on a new allocation the library has classified", mi.sys_dev, mi.type);
    gpu_finalize();

    gpu_driver_use_for_testing(NULL);
    free(src);
    free(dst);
    free(h1);
    free(h2);
}

int main(void)
{
    page = (size_t)sysconf(_SC_PAGESIZE);
    setvbuf(stdout, NULL, _IONBF, 0);

    test_hostmap();
    test_cache();

    const char *skip = NULL;
    int r = gpu_init(0, 1);
    CHECK(r == 0, "gpu_init = %d", r);
    if (gpu_enabled()) {
        device_checks();
    } else {
        host_only_checks();
        skip = "no CUDA driver or no device: device checks skipped (ran the fake-driver ones)";
    }
    gpu_finalize();

    test_fake_driver();

    if (unit_check_summary("test_gpu_cache")) {
        return 1;
    }
    if (skip) {
        printf("%s\n", skip);
        return 77;
    }
    printf("test_gpu_cache: all passed\n");
    return 0;
}
