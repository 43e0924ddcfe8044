/* gpu_classify: the cache first, the driver on a miss. */
#include "gpu/gpu_cache.h"
#include "gpu/gpu_internal.h"
#include "ucx/ucx.h"

#include <stdatomic.h>

static atomic_uint_fast64_t misses;

enum query_result {
    QUERY_HOST,    /* memory the driver does not know: plain host memory */
    QUERY_CUDA,    /* pinned, device or managed; the range is set when known */
    QUERY_UNKNOWN  /* the driver failed (e.g. shutting down): say host, cache nothing */
};

static enum query_result query(const void *ptr, gpu_mem_t *m, uintptr_t *start, uintptr_t *end)
{
    unsigned memory_type = 0, is_managed = 0;
    int ordinal = -1;
    CUdeviceptr range_start = 0;
    size_t range_size = 0;
    CUpointer_attribute attrs[] = { GPU_CU_PTR_ATTR_MEMORY_TYPE, GPU_CU_PTR_ATTR_IS_MANAGED,
                                    GPU_CU_PTR_ATTR_DEVICE_ORDINAL, GPU_CU_PTR_ATTR_RANGE_START,
                                    GPU_CU_PTR_ATTR_RANGE_SIZE };
    void *data[] = { &memory_type, &is_managed, &ordinal, &range_start, &range_size };
    CUdeviceptr p = (CUdeviceptr)(uintptr_t)ptr;

    m->kind = GPU_MEM_HOST;
    m->device = -1;
    *start = *end = 0;
    CUresult r = gpu_drv.PointerGetAttributes(sizeof attrs / sizeof attrs[0], attrs, data, p);
    if (r == GPU_CU_ERROR_INVALID_VALUE)
        return QUERY_HOST; /* how drivers before CUDA 11 answer for unknown memory */
    if (r != GPU_CU_SUCCESS)
        return QUERY_UNKNOWN;
    if (is_managed) {
        m->kind = GPU_MEM_MANAGED;
        m->device = ordinal;
    } else if (memory_type == GPU_CU_MEMORYTYPE_DEVICE) {
        m->kind = GPU_MEM_DEVICE;
        m->device = ordinal;
    } else if (memory_type == GPU_CU_MEMORYTYPE_HOST) {
        m->kind = GPU_MEM_HOST_PINNED;
    } else if (memory_type == 0) {
        return QUERY_HOST;
    } else {
        return QUERY_UNKNOWN; /* arrays and future types: not a buffer we send */
    }
    if (!(range_size && range_start <= p && p - range_start < range_size)) {
        CUdeviceptr base;
        if (gpu_drv.MemGetAddressRange(&base, &range_size, p) != GPU_CU_SUCCESS)
            return QUERY_CUDA; /* kind known, range not: answer without caching */
        range_start = base;
    }
    *start = (uintptr_t)range_start;
    *end = (uintptr_t)(range_start + range_size);
    return QUERY_CUDA;
}

static void classify_miss(const void *ptr, size_t len, gpu_mem_t *out)
{
    if (!ptr) {
        /* MPI_Send(NULL, 0, ...) is common and never a device buffer. */
        out->kind = GPU_MEM_HOST;
        out->device = -1;
        return;
    }
    atomic_fetch_add_explicit(&misses, 1, memory_order_relaxed);
    uint64_t epoch = gpu_cache_epoch(); /* before the driver speaks */
    uintptr_t start, end;
    switch (query(ptr, out, &start, &end)) {
    case QUERY_CUDA:
        if (end > start)
            gpu_cache_insert(start, end, out, epoch);
        /* an allocation seen for the first time (or since a free): whatever
         * UCX kept of earlier memory at these addresses is no longer true */
        if (end > start && (out->kind == GPU_MEM_DEVICE || out->kind == GPU_MEM_MANAGED))
            ucx_memtype_recheck(start, end - start);
        break;
    case QUERY_HOST:
        /* The driver has no range for memory it does not know: cache the
         * whole mapping instead, so that every buffer of the heap, a stack
         * or an mmap'ed region is one entry. */
        gpu_cache_insert_host_mapping((uintptr_t)ptr, len, epoch);
        break;
    case QUERY_UNKNOWN:
        break;
    }
}

void gpu_classify(const void *ptr, size_t len, gpu_mem_t *out)
{
    if (!gpu_state.on) {
        out->kind = GPU_MEM_HOST;
        out->device = -1;
        return;
    }
    if (gpu_cache_lookup((uintptr_t)ptr, len, out))
        return;
    classify_miss(ptr, len, out);
}

void gpu_classify_uncached(const void *ptr, gpu_mem_t *out)
{
    uintptr_t start, end;
    if (!gpu_state.on) {
        out->kind = GPU_MEM_HOST;
        out->device = -1;
        return;
    }
    query(ptr, out, &start, &end);
}

void gpu_cuda_free_seen(uintptr_t addr, size_t size)
{
    /* size 0 or 1: the hook could not size the allocation (memory of another
     * GPU than the current context's), so UCX forgot its first bytes only;
     * the driver still knows it (the hook runs before the free) */
    gpu_mem_t m;
    uintptr_t start, end;
    if (size > 1 || !gpu_state.on || !addr)
        return;
    if (query((const void *)addr, &m, &start, &end) == QUERY_CUDA && end > start)
        ucx_memtype_forget(start, end - start);
}

uint64_t gpu_classify_misses(void)
{
    return atomic_load_explicit(&misses, memory_order_relaxed);
}
