/* A fake CUDA driver for the unit tests (gpu_driver_use_for_testing).
 *
 * "Device" memory is host memory of its own mappings (no host range covers
 * it), and the driver carries out what the library asks as the real one
 * would: copies (1D, and 2D/3D row by row with their pitches, refusing what
 * the real driver refuses: nbad counts those), the pack/unpack kernels of
 * gpu_kernels.cu (ampi_dt_*: nkernel counts them) and the MPI_SUM on
 * MPI_INT reduction kernel (ampi_sum_i32: nreduce) by the same arithmetic
 * on their parameters.  Other kernels are not found, as in a module that
 * lacks them.  Everything completes at once (events are always done;
 * nwait counts the stream waits on them).
 * One OS thread drives it (one PE). */
#ifndef UNIT_FAKE_CUDA_H
#define UNIT_FAKE_CUDA_H

#include "gpu/gpu.h"
#include "gpu/gpu_cuda.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct {
    uintptr_t start;
    size_t size;
} dev_alloc_t;
#define FAKE_MAX_ALLOCS 1024
static dev_alloc_t allocs[FAKE_MAX_ALLOCS];
static int nallocs;
static long n2d, n3d, nkernel, nreduce, nbad, nwait;
static char ctx_storage;
static _Thread_local CUcontext current;

static CUresult f_Init(unsigned f) { (void)f; return GPU_CU_SUCCESS; }
static CUresult f_DeviceGetCount(int *c) { *c = 1; return GPU_CU_SUCCESS; }
static CUresult f_DeviceGet(CUdevice *d, int o) { *d = o; return GPU_CU_SUCCESS; }
static CUresult f_DeviceGetPCIBusId(char *b, int l, CUdevice d)
{
    snprintf(b, (size_t)l, "0000:%02x:00.0", 0x10 + (int)d);
    return GPU_CU_SUCCESS;
}
static CUresult f_PrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = (CUcontext)(void *)&ctx_storage; return GPU_CU_SUCCESS; }
static CUresult f_PrimaryCtxRelease(CUdevice d) { (void)d; return GPU_CU_SUCCESS; }
static CUresult f_CtxSetCurrent(CUcontext c) { current = c; return GPU_CU_SUCCESS; }
static CUresult f_CtxGetCurrent(CUcontext *c) { *c = current; return GPU_CU_SUCCESS; }
static CUresult f_CtxGetDevice(CUdevice *d) { *d = 0; return GPU_CU_SUCCESS; }

static dev_alloc_t *find(uintptr_t p)
{
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].size && p >= allocs[i].start && p - allocs[i].start < allocs[i].size)
            return &allocs[i];
    return NULL;
}

static CUresult f_PointerGetAttributes(unsigned n, CUpointer_attribute *attrs, void **data, CUdeviceptr ptr)
{
    dev_alloc_t *a = find((uintptr_t)ptr);
    for (unsigned i = 0; i < n; i++) {
        switch ((int)attrs[i]) {
        case GPU_CU_PTR_ATTR_MEMORY_TYPE: *(unsigned *)data[i] = a ? GPU_CU_MEMORYTYPE_DEVICE : 0; break;
        case GPU_CU_PTR_ATTR_IS_MANAGED: *(unsigned *)data[i] = 0; break;
        case GPU_CU_PTR_ATTR_DEVICE_ORDINAL: *(int *)data[i] = a ? 0 : -2; break;
        case GPU_CU_PTR_ATTR_RANGE_START: *(CUdeviceptr *)data[i] = a ? a->start : 0; break;
        case GPU_CU_PTR_ATTR_RANGE_SIZE: *(size_t *)data[i] = a ? a->size : 0; break;
        default: return GPU_CU_ERROR_INVALID_VALUE;
        }
    }
    return GPU_CU_SUCCESS;
}
static CUresult f_MemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    dev_alloc_t *a = find((uintptr_t)p);
    if (!a)
        return GPU_CU_ERROR_INVALID_VALUE;
    *base = a->start;
    *size = a->size;
    return GPU_CU_SUCCESS;
}
static int stream_storage;
static CUresult f_StreamCreate(CUstream *s, unsigned f) { (void)f; *s = (CUstream)(void *)&stream_storage; return GPU_CU_SUCCESS; }
static CUresult f_StreamDestroy(CUstream s) { (void)s; return GPU_CU_SUCCESS; }
static CUresult f_StreamSynchronize(CUstream s) { (void)s; return GPU_CU_SUCCESS; }
static CUresult f_MemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)st;
    memcpy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return GPU_CU_SUCCESS;
}
static CUresult f_EventCreate(CUevent *e, unsigned f) { (void)f; *e = (CUevent)malloc(1); return GPU_CU_SUCCESS; }
static CUresult f_EventRecord(CUevent e, CUstream s) { (void)e, (void)s; return GPU_CU_SUCCESS; }
static CUresult f_EventQuery(CUevent e) { (void)e; return GPU_CU_SUCCESS; }
/* Everything has run by the time it is issued: a wait is only counted. */
static CUresult f_StreamWaitEvent(CUstream s, CUevent e, unsigned f)
{
    (void)s, (void)f;
    nwait++;
    return e ? GPU_CU_SUCCESS : GPU_CU_ERROR_INVALID_VALUE;
}
static CUresult f_EventDestroy(CUevent e) { free((void *)e); return GPU_CU_SUCCESS; }
static CUresult f_GetErrorName(CUresult r, const char **name) { (void)r; *name = "FAKE_ERROR"; return GPU_CU_SUCCESS; }

/* Device memory: its own mapping each, so that no host range covers it. */
static CUresult f_MemAlloc(CUdeviceptr *p, size_t n)
{
    int slot = 0;
    while (slot < nallocs && allocs[slot].size) /* freed slots are reused */
        slot++;
    if (slot == FAKE_MAX_ALLOCS)
        return GPU_CU_ERROR_OUT_OF_MEMORY;
    void *r = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return GPU_CU_ERROR_OUT_OF_MEMORY;
    allocs[slot] = (dev_alloc_t){ (uintptr_t)r, n ? n : 1 };
    if (slot == nallocs)
        nallocs++;
    *p = (uintptr_t)r;
    return GPU_CU_SUCCESS;
}
static CUresult f_MemFree(CUdeviceptr p)
{
    dev_alloc_t *a = find((uintptr_t)p);
    if (!a || a->start != p)
        return GPU_CU_ERROR_INVALID_VALUE;
    munmap((void *)a->start, a->size);
    a->size = 0;
    return GPU_CU_SUCCESS;
}
/* Page-locked host memory: plain host memory here (classified as host). */
static CUresult f_MemAllocHost(void **p, size_t n)
{
    *p = malloc(n ? n : 1);
    return *p ? GPU_CU_SUCCESS : GPU_CU_ERROR_OUT_OF_MEMORY;
}
static CUresult f_MemFreeHost(void *p) { free(p); return GPU_CU_SUCCESS; }
static CUresult f_PointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    return f_PointerGetAttributes(1, &a, &data, p);
}
static CUresult f_MemcpyHtoD(CUdeviceptr d, const void *s, size_t n) { return f_MemcpyAsync(d, (uintptr_t)s, n, NULL); }
static CUresult f_MemcpyDtoH(void *d, CUdeviceptr s, size_t n) { return f_MemcpyAsync((uintptr_t)d, s, n, NULL); }

static CUresult f_Memcpy2DAsync(const gpu_cu_memcpy2d_t *p, CUstream s)
{
    (void)s;
    n2d++;
    if (p->srcMemoryType != GPU_CU_MEMORYTYPE_UNIFIED || p->dstMemoryType != GPU_CU_MEMORYTYPE_UNIFIED ||
        p->srcPitch < p->WidthInBytes || p->dstPitch < p->WidthInBytes || p->srcXInBytes || p->srcY ||
        p->dstXInBytes || p->dstY) {
        nbad++;
        return GPU_CU_ERROR_INVALID_VALUE;
    }
    for (size_t y = 0; y < p->Height; y++)
        memcpy((char *)(uintptr_t)p->dstDevice + y * p->dstPitch, (const char *)(uintptr_t)p->srcDevice + y * p->srcPitch,
               p->WidthInBytes);
    return GPU_CU_SUCCESS;
}

static CUresult f_Memcpy3DAsync(const gpu_cu_memcpy3d_t *p, CUstream s)
{
    (void)s;
    n3d++;
    if (p->srcMemoryType != GPU_CU_MEMORYTYPE_UNIFIED || p->dstMemoryType != GPU_CU_MEMORYTYPE_UNIFIED ||
        p->srcPitch < p->WidthInBytes || p->dstPitch < p->WidthInBytes ||
        (p->Depth > 1 && (p->srcHeight < p->Height || p->dstHeight < p->Height)) || p->srcXInBytes || p->srcY ||
        p->srcZ || p->srcLOD || p->dstXInBytes || p->dstY || p->dstZ || p->dstLOD || p->reserved0 ||
        p->reserved1 || p->srcArray || p->dstArray) {
        nbad++;
        return GPU_CU_ERROR_INVALID_VALUE;
    }
    for (size_t z = 0; z < p->Depth; z++)
        for (size_t y = 0; y < p->Height; y++)
            memcpy((char *)(uintptr_t)p->dstDevice + (z * p->dstHeight + y) * p->dstPitch,
                   (const char *)(uintptr_t)p->srcDevice + (z * p->srcHeight + y) * p->srcPitch, p->WidthInBytes);
    return GPU_CU_SUCCESS;
}

static int module_storage;
static CUresult f_ModuleLoadData(CUmodule *m, const void *image) { (void)image; *m = (CUmodule)(void *)&module_storage; return GPU_CU_SUCCESS; }
static CUresult f_ModuleUnload(CUmodule m) { (void)m; return GPU_CU_SUCCESS; }
/* The function handle is its name (kept: the library holds the pointer). */
static char names[32][32];
static int nnames;
static CUresult f_ModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    for (int i = 0; i < nnames; i++)
        if (!strcmp(names[i], name)) {
            *f = (CUfunction)(void *)names[i];
            return GPU_CU_SUCCESS;
        }
    if (nnames == 32 || (strncmp(name, "ampi_dt_", 8) && strcmp(name, "ampi_sum_i32")))
        return GPU_CU_ERROR_NOT_FOUND;
    snprintf(names[nnames], sizeof names[nnames], "%s", name);
    *f = (CUfunction)(void *)names[nnames++];
    return GPU_CU_SUCCESS;
}

/* What ampi_dt_pack_* / ampi_dt_unpack_* do (gpu_kernels.cu: dt_seg). */
typedef struct {
    long long off;
    unsigned long long len, pos;
} seg_t;
static CUresult f_LaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream s, void **params, void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s, (void)extra;
    const char *name = (const char *)(void *)f;
    if (!strcmp(name, "ampi_sum_i32")) { /* (in, inout, count) */
        nreduce++;
        const int32_t *a = (const int32_t *)(uintptr_t) * (CUdeviceptr *)params[0];
        int32_t *b = (int32_t *)(uintptr_t) * (CUdeviceptr *)params[1];
        size_t count = *(size_t *)params[2];
        for (size_t i = 0; i < count; i++)
            b[i] = (int32_t)((uint32_t)b[i] + (uint32_t)a[i]);
        return GPU_CU_SUCCESS;
    }
    nkernel++;
    bool pack = !strncmp(name, "ampi_dt_pack_", 13);
    char *packed = *(char **)params[0], *buf = *(char **)params[1];
    const seg_t *segs = (const seg_t *)(uintptr_t) * (CUdeviceptr *)params[2];
    unsigned long long nsegs = *(unsigned long long *)params[3], esize = *(unsigned long long *)params[5];
    long long extent = *(long long *)params[4];
    unsigned long long total = *(unsigned long long *)params[6], limit = *(unsigned long long *)params[7];
    for (unsigned long long i = 0; i < total; i++) {
        unsigned long long e = i / nsegs, k = i % nsegs, p0 = e * esize + segs[k].pos, len = segs[k].len;
        if (p0 >= limit)
            continue;
        if (p0 + len > limit)
            len = limit - p0;
        char *u = buf + (long long)e * extent + segs[k].off, *p = packed + p0;
        if (pack)
            memcpy(p, u, len);
        else
            memcpy(u, p, len);
    }
    return GPU_CU_SUCCESS;
}

static const gpu_driver_t fake = {
    .Init = f_Init, .DeviceGetCount = f_DeviceGetCount, .DeviceGet = f_DeviceGet,
    .DeviceGetPCIBusId = f_DeviceGetPCIBusId, .DevicePrimaryCtxRetain = f_PrimaryCtxRetain,
    .DevicePrimaryCtxRelease = f_PrimaryCtxRelease, .CtxSetCurrent = f_CtxSetCurrent,
    .CtxGetCurrent = f_CtxGetCurrent, .CtxGetDevice = f_CtxGetDevice,
    .PointerGetAttributes = f_PointerGetAttributes, .MemGetAddressRange = f_MemGetAddressRange,
    .StreamCreate = f_StreamCreate, .StreamDestroy = f_StreamDestroy, .StreamSynchronize = f_StreamSynchronize,
    .MemcpyAsync = f_MemcpyAsync, .EventCreate = f_EventCreate, .EventRecord = f_EventRecord,
    .EventQuery = f_EventQuery, .EventDestroy = f_EventDestroy, .GetErrorName = f_GetErrorName,
    .MemAlloc = f_MemAlloc, .MemFree = f_MemFree, .MemAllocHost = f_MemAllocHost, .MemFreeHost = f_MemFreeHost,
    .PointerGetAttribute = f_PointerGetAttribute, .MemcpyHtoD = f_MemcpyHtoD, .MemcpyDtoH = f_MemcpyDtoH,
    .ModuleLoadData = f_ModuleLoadData, .ModuleUnload = f_ModuleUnload,
    .ModuleGetFunction = f_ModuleGetFunction, .LaunchKernel = f_LaunchKernel,
    .Memcpy2DAsync = f_Memcpy2DAsync, .Memcpy3DAsync = f_Memcpy3DAsync, .StreamWaitEvent = f_StreamWaitEvent,
};

#endif /* UNIT_FAKE_CUDA_H */
