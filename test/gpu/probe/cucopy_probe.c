/* cucopy_probe.c - an LD_PRELOAD diagnostic: when cuMemcpyAsync fails for a
 * library that calls it through its dynamic symbol (UCX's cuda_copy does),
 * says which context was current, which context the stream belongs to and
 * what the driver knows of both pointers, so that a copy issued in the wrong
 * device's context is told apart from a copy of freed or foreign memory.
 * Build: cc -shared -fPIC -I$CUDA/include cucopy_probe.c -o cucopy_probe.so
 *        -L$CUDA/lib64/stubs -lcuda -ldl
 * PROBE_MAX (default 40) caps the reports per process. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef CUresult (*copy_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);

static atomic_int reports;

static int device_of_context(CUcontext ctx)
{
    CUdevice dev = -1;
    if (ctx && cuCtxPushCurrent(ctx) == CUDA_SUCCESS) {
        cuCtxGetDevice(&dev);
        cuCtxPopCurrent(NULL);
    }
    return (int)dev;
}

static void describe(const char *which, CUdeviceptr p)
{
    CUmemorytype type = 0;
    int ordinal = -1, managed = 0;
    CUdeviceptr start = 0;
    size_t size = 0;
    CUmemoryPool pool = NULL;
    CUcontext ctx = NULL;
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,     CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   CU_POINTER_ATTRIBUTE_IS_MANAGED,      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE,      CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                                   CU_POINTER_ATTRIBUTE_CONTEXT};
    void *data[] = {&type, &ordinal, &managed, &start, &size, &pool, &ctx};
    CUresult r = cuPointerGetAttributes(7, attrs, data, p);
    fprintf(stderr,
            "probe[%d]: %s %#llx: query %d, type %d (1 host, 2 device), device %d, managed %d, "
            "range %#llx + %zu, pool %p, context %p (device %d)\n",
            (int)getpid(), which, (unsigned long long)p, (int)r, (int)type, ordinal, managed,
            (unsigned long long)start, size, (void *)pool, (void *)ctx, device_of_context(ctx));
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream)
{
    static copy_fn real;
    if (!real)
        real = (copy_fn)dlsym(RTLD_NEXT, "cuMemcpyAsync");
    CUresult r = real(dst, src, n, stream);
    static int cap = -1;
    if (cap < 0)
        cap = getenv("PROBE_MAX") ? atoi(getenv("PROBE_MAX")) : 40;
    if (r != CUDA_SUCCESS && atomic_fetch_add(&reports, 1) < cap) {
        CUcontext cur = NULL, sctx = NULL;
        cuCtxGetCurrent(&cur);
        CUresult sr = cuStreamGetCtx(stream, &sctx);
        fprintf(stderr,
                "probe[%d]: cuMemcpyAsync(%#llx <- %#llx, %zu B) = %d; current context %p (device %d), "
                "stream's context %p (query %d, device %d)\n",
                (int)getpid(), (unsigned long long)dst, (unsigned long long)src, n, (int)r, (void *)cur,
                device_of_context(cur), (void *)sctx, (int)sr, device_of_context(sctx));
        describe("dst", dst);
        describe("src", src);
    }
    return r;
}
