/* The range cache behind gpu_classify (interface and design: gpu_cache.h).
 *
 * Readers never lock: they read the sequence counter, search, and read it
 * again; an odd or changed value means a writer was active and they retry.
 * Entry fields are read and written with relaxed atomics so that a torn
 * read is merely retried, never undefined.  The array has a fixed size and
 * never moves, so a reader racing a writer can not touch freed memory.
 *
 * Writers (misses and UCM hooks) take one mutex.  Hooks run inside munmap,
 * cuMemFree & co., maybe within malloc: they must not allocate, and nothing
 * done under the mutex may allocate, unmap or call the driver.
 */
#include "gpu/gpu_cache.h"
#include "gpu/gpu_internal.h"
#include "gpu/gpu_ipc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <ucm/api/ucm.h>

/* Entry i is [start[i], e[i].end).  The starts have an array of their own:
 * the binary search then walks 8 KiB instead of 24 KiB. */
typedef struct {
    uintptr_t end;
    int kind, device;
} cache_entry_t;

static struct {
    atomic_uint_fast64_t seq;   /* odd while a writer modifies the array */
    atomic_uint_fast64_t epoch; /* +1 on every hook call */
    atomic_int n;
    bool allow_host, allow_cuda;
    pthread_mutex_t lock;
    unsigned hooks;
    uintptr_t start[GPU_CACHE_CAPACITY];
    cache_entry_t e[GPU_CACHE_CAPACITY];
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct {
    atomic_uint_fast64_t host_unmaps, cuda_frees, cuda_allocs, invalidations, flushes, inserts,
        insert_races;
} counters;

static struct {
    atomic_uint hook; /* GPU_CACHE_HOOK_* armed, 0 when idle */
    atomic_uintptr_t addr;
    atomic_bool seen;
} probe;

/* The last range this thread hit, valid while the sequence counter is
 * unchanged.  initial-exec: in a shared library the default TLS model calls
 * __tls_get_addr on every access (~20 ns here); this one is a %fs load.  It
 * takes a few bytes of static TLS, which glibc reserves even for dlopen. */
static _Thread_local __attribute__((tls_model("initial-exec"))) struct {
    uint_fast64_t seq;
    uintptr_t start, end;
    gpu_mem_t mem;
} last_hit;

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define COUNT(c) atomic_fetch_add_explicit(&counters.c, 1, memory_order_relaxed)

/* ---------------------------------------------------------------- readers */

/* Index of the last entry with start <= p, or -1.  Branch-free halving (the
 * compiler emits cmov): a lookup that cycles over many buffers would
 * otherwise mispredict about half of its ~10 steps. */
static int find_floor(int n, uintptr_t p)
{
    if (n <= 0)
        return -1;
    int base = 0;
    while (n > 1) {
        int half = n / 2;
        base = LOAD(cache.start[base + half]) <= p ? base + half : base;
        n -= half;
    }
    return LOAD(cache.start[base]) <= p ? base : -1;
}

bool gpu_cache_lookup(uintptr_t ptr, size_t len, gpu_mem_t *out)
{
    for (;;) {
        uint_fast64_t seq = atomic_load_explicit(&cache.seq, memory_order_acquire);
        if (seq & 1)
            continue; /* a writer is moving entries: a few ns */
        if (last_hit.seq == seq && ptr >= last_hit.start && ptr < last_hit.end &&
            len <= last_hit.end - ptr) {
            *out = last_hit.mem;
            return true;
        }
        int n = atomic_load_explicit(&cache.n, memory_order_relaxed);
        int i = find_floor(n, ptr);
        uintptr_t start = 0, end = 0;
        int kind = 0, device = 0;
        if (i >= 0) {
            start = LOAD(cache.start[i]);
            end = LOAD(cache.e[i].end);
            kind = LOAD(cache.e[i].kind);
            device = LOAD(cache.e[i].device);
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&cache.seq, memory_order_relaxed) != seq)
            continue;
        if (i < 0 || ptr >= end || len > end - ptr)
            return false;
        out->kind = (gpu_mem_kind_t)kind;
        out->device = device;
        last_hit.seq = seq;
        last_hit.start = start;
        last_hit.end = end;
        last_hit.mem = *out;
        return true;
    }
}

uint64_t gpu_cache_epoch(void)
{
    return atomic_load_explicit(&cache.epoch, memory_order_acquire);
}

/* ------------------------------------------------- writers (mutex held) */

static void write_begin(void)
{
    uint_fast64_t s = atomic_load_explicit(&cache.seq, memory_order_relaxed);
    atomic_store_explicit(&cache.seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void write_end(void)
{
    uint_fast64_t s = atomic_load_explicit(&cache.seq, memory_order_relaxed);
    atomic_store_explicit(&cache.seq, s + 1, memory_order_release);
}

static void entry_copy(int to, int from)
{
    STORE(cache.start[to], LOAD(cache.start[from]));
    STORE(cache.e[to].end, LOAD(cache.e[from].end));
    STORE(cache.e[to].kind, LOAD(cache.e[from].kind));
    STORE(cache.e[to].device, LOAD(cache.e[from].device));
}

static void entry_set(int i, uintptr_t start, uintptr_t end, int kind, int device)
{
    STORE(cache.start[i], start);
    STORE(cache.e[i].end, end);
    STORE(cache.e[i].kind, kind);
    STORE(cache.e[i].device, device);
}

/* Replace entries [lo, hi) by `add` slots left uninitialised for the caller;
 * moves the tail of the array.  Within write_begin/write_end. */
static void replace_span(int lo, int hi, int add)
{
    int n = atomic_load_explicit(&cache.n, memory_order_relaxed);
    int shift = add - (hi - lo);
    if (shift > 0) {
        for (int i = n - 1; i >= hi; i--)
            entry_copy(i + shift, i);
    } else if (shift < 0) {
        for (int i = hi; i < n; i++)
            entry_copy(i + shift, i);
    }
    atomic_store_explicit(&cache.n, n + shift, memory_order_relaxed);
}

/* First entry with end > start (ends ascend since entries are disjoint). */
static int first_overlap(uintptr_t start)
{
    int i = find_floor(atomic_load_explicit(&cache.n, memory_order_relaxed), start);
    if (i >= 0 && LOAD(cache.e[i].end) > start)
        return i;
    return i + 1;
}

/* Entries [lo, *hi) overlap [start, end). */
static int overlap_span(uintptr_t start, uintptr_t end, int *hi)
{
    int n = atomic_load_explicit(&cache.n, memory_order_relaxed);
    int lo = first_overlap(start), j = lo;
    while (j < n && LOAD(cache.start[j]) < end)
        j++;
    *hi = j;
    return lo;
}

static bool kind_allowed(int kind)
{
    return kind == GPU_MEM_HOST ? cache.allow_host : cache.allow_cuda;
}

static void insert_locked(uintptr_t start, uintptr_t end, int kind, int device)
{
    int hi, lo = overlap_span(start, end, &hi);
    write_begin();
    if (hi == lo && atomic_load_explicit(&cache.n, memory_order_relaxed) == GPU_CACHE_CAPACITY) {
        /* Full: start over rather than pick victims; the working set of a
         * real code is far smaller, and refilling costs one miss each. */
        atomic_store_explicit(&cache.n, 0, memory_order_relaxed);
        COUNT(flushes);
        lo = hi = 0;
    }
    replace_span(lo, hi, 1);
    entry_set(lo, start, end, kind, device);
    write_end();
    COUNT(inserts);
}

bool gpu_cache_insert(uintptr_t start, uintptr_t end, const gpu_mem_t *mem, uint64_t epoch)
{
    if (end <= start)
        return false;
    bool done = false;
    pthread_mutex_lock(&cache.lock);
    if (!kind_allowed(mem->kind)) {
        /* not cacheable */
    } else if (atomic_load_explicit(&cache.epoch, memory_order_relaxed) != epoch) {
        COUNT(insert_races);
    } else {
        insert_locked(start, end, mem->kind, mem->device);
        done = true;
    }
    pthread_mutex_unlock(&cache.lock);
    return done;
}

bool gpu_cache_insert_host_mapping(uintptr_t ptr, size_t len, uint64_t epoch)
{
    bool done = false;
    pthread_mutex_lock(&cache.lock);
    if (!cache.allow_host) {
        /* not cacheable */
    } else if (atomic_load_explicit(&cache.epoch, memory_order_relaxed) != epoch) {
        COUNT(insert_races);
    } else {
        /* Read the maps under the lock: an unmap of this mapping cannot slip
         * between the read and the insert, as its hook waits for the lock and
         * runs before the unmap itself. */
        uintptr_t start, end;
        if (gpu_hostmap_find(ptr, &start, &end) && len <= end - ptr) {
            insert_locked(start, end, GPU_MEM_HOST, -1);
            done = true;
        }
    }
    pthread_mutex_unlock(&cache.lock);
    return done;
}

void gpu_cache_invalidate(uintptr_t start, size_t len)
{
    uintptr_t end = start + (len ? len : 1);
    if (end < start)
        end = UINTPTR_MAX;
    pthread_mutex_lock(&cache.lock);
    atomic_fetch_add_explicit(&cache.epoch, 1, memory_order_release);
    int hi, lo = overlap_span(start, end, &hi);
    if (lo < hi) {
        /* Host entries are whole mappings of which only [start, end) went
         * away: keep what is left on either side.  Other kinds are single
         * allocations: any overlap means the allocation is gone. */
        uintptr_t left_start = LOAD(cache.start[lo]);
        bool keep_left = LOAD(cache.e[lo].kind) == GPU_MEM_HOST && left_start < start;
        uintptr_t right_end = LOAD(cache.e[hi - 1].end);
        bool keep_right = LOAD(cache.e[hi - 1].kind) == GPU_MEM_HOST && right_end > end;
        int add = keep_left + keep_right;
        int n = atomic_load_explicit(&cache.n, memory_order_relaxed);
        if (n - (hi - lo) + add > GPU_CACHE_CAPACITY)
            keep_right = false, add--; /* only when splitting into a full cache */
        write_begin();
        replace_span(lo, hi, add);
        int at = lo;
        if (keep_left)
            entry_set(at++, left_start, start, GPU_MEM_HOST, -1);
        if (keep_right)
            entry_set(at, end, right_end, GPU_MEM_HOST, -1);
        write_end();
        atomic_fetch_add_explicit(&counters.invalidations, (uint_fast64_t)(hi - lo),
                                  memory_order_relaxed);
    }
    pthread_mutex_unlock(&cache.lock);
}

void gpu_cache_clear(void)
{
    pthread_mutex_lock(&cache.lock);
    atomic_fetch_add_explicit(&cache.epoch, 1, memory_order_release);
    write_begin();
    atomic_store_explicit(&cache.n, 0, memory_order_relaxed);
    write_end();
    pthread_mutex_unlock(&cache.lock);
}

void gpu_cache_allow(bool host_kinds, bool cuda_kinds)
{
    pthread_mutex_lock(&cache.lock);
    cache.allow_host = host_kinds;
    cache.allow_cuda = cuda_kinds;
    pthread_mutex_unlock(&cache.lock);
    gpu_cache_clear(); /* entries of a kind no longer allowed must go */
}

void gpu_cache_stats(gpu_cache_stats_t *out)
{
    out->host_unmaps = counters.host_unmaps;
    out->cuda_frees = counters.cuda_frees;
    out->cuda_allocs = counters.cuda_allocs;
    out->invalidations = counters.invalidations;
    out->flushes = counters.flushes;
    out->inserts = counters.inserts;
    out->insert_races = counters.insert_races;
    out->entries = atomic_load(&cache.n);
}

/* ------------------------------------------------------------ UCM hooks */

#define HOST_EVENTS UCM_EVENT_VM_UNMAPPED
#define CUDA_EVENTS (UCM_EVENT_MEM_TYPE_FREE | UCM_EVENT_MEM_TYPE_ALLOC)

/* VM_UNMAPPED runs before the unmap (munmap, brk/sbrk shrink, mremap's old
 * range, shmdt, madvise DONTNEED/FREE/REMOVE); MEM_TYPE_FREE before cuMemFree,
 * cudaFree, cuMemFreeHost, cuMemFreeAsync, cuMemUnmap; MEM_TYPE_ALLOC after an
 * allocation, which we only use to drop a stale entry we somehow kept. */
static void probe_check(unsigned hook, uintptr_t addr)
{
    if (atomic_load_explicit(&probe.hook, memory_order_acquire) == hook &&
        atomic_load_explicit(&probe.addr, memory_order_relaxed) == addr)
        atomic_store(&probe.seen, true);
}

static void cache_mem_event(ucm_event_type_t type, ucm_event_t *event, void *arg)
{
    (void)arg;
    if (type & UCM_EVENT_VM_UNMAPPED) {
        COUNT(host_unmaps);
        probe_check(GPU_CACHE_HOOK_HOST, (uintptr_t)event->vm_unmapped.address);
        gpu_cache_invalidate((uintptr_t)event->vm_unmapped.address, event->vm_unmapped.size);
    } else if (type & (UCM_EVENT_MEM_TYPE_FREE | UCM_EVENT_MEM_TYPE_ALLOC)) {
        if (type & UCM_EVENT_MEM_TYPE_FREE) {
            COUNT(cuda_frees);
            probe_check(GPU_CACHE_HOOK_CUDA, (uintptr_t)event->mem_type.address);
            gpu_ipc_invalidate((uintptr_t)event->mem_type.address, event->mem_type.size);
            gpu_cuda_free_seen((uintptr_t)event->mem_type.address, event->mem_type.size);
        } else {
            COUNT(cuda_allocs);
        }
        gpu_cache_invalidate((uintptr_t)event->mem_type.address, event->mem_type.size);
    }
}

void gpu_cache_probe_arm(unsigned hook, uintptr_t addr)
{
    atomic_store(&probe.seen, false);
    atomic_store(&probe.addr, addr);
    atomic_store_explicit(&probe.hook, hook, memory_order_release);
}

bool gpu_cache_probe_seen(void)
{
    bool seen = atomic_load(&probe.seen);
    atomic_store(&probe.hook, 0u);
    return seen;
}

unsigned gpu_cache_init(bool cuda_events)
{
    gpu_cache_fini();
    unsigned hooks = 0;
    /* Priority -1: with the callbacks that run before the real call. */
    if (ucm_set_event_handler(HOST_EVENTS, -1, cache_mem_event, NULL) == UCS_OK)
        hooks |= GPU_CACHE_HOOK_HOST;
    /* UCS_OK here only means "registered": when libucm_cuda cannot be loaded
     * nothing will ever fire, which is why gpu_init checks by freeing. */
    if (cuda_events && ucm_set_event_handler(CUDA_EVENTS, -1, cache_mem_event, NULL) == UCS_OK)
        hooks |= GPU_CACHE_HOOK_CUDA;
    cache.hooks = hooks;
    return hooks;
}

void gpu_cache_fini(void)
{
    if (cache.hooks & GPU_CACHE_HOOK_HOST)
        ucm_unset_event_handler(HOST_EVENTS, cache_mem_event, NULL);
    if (cache.hooks & GPU_CACHE_HOOK_CUDA)
        ucm_unset_event_handler(CUDA_EVENTS, cache_mem_event, NULL);
    cache.hooks = 0;
    gpu_cache_allow(false, false);
}
