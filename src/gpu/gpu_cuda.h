/* The CUDA driver API as this library uses it: the types (from <cuda.h> when
 * configure found it, else declared here with the same names and ABI), the
 * constants (our own GPU_CU_* copies, checked against <cuda.h> when it is
 * there, so a host-only build cannot drift), and a table of entry points that
 * gpu_driver_load() fills with dlsym.  Nothing here links libcuda. */
#ifndef AMPI_GPU_CUDA_H
#define AMPI_GPU_CUDA_H

#include <stdbool.h>
#include <stddef.h>

#ifdef HAVE_CUDA_H
#include <cuda.h>
#else
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 on LP64 */
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef int CUpointer_attribute;
#endif

/* Results */
#define GPU_CU_SUCCESS                 0
#define GPU_CU_ERROR_INVALID_VALUE     1
#define GPU_CU_ERROR_OUT_OF_MEMORY     2
#define GPU_CU_ERROR_NOT_INITIALIZED   3
#define GPU_CU_ERROR_DEINITIALIZED     4
#define GPU_CU_ERROR_NO_DEVICE         100
#define GPU_CU_ERROR_NOT_READY         600
#define GPU_CU_ERROR_ALREADY_MAPPED    208
/* CUpointer_attribute */
#define GPU_CU_PTR_ATTR_MEMORY_TYPE    2
#define GPU_CU_PTR_ATTR_IS_MANAGED     8
#define GPU_CU_PTR_ATTR_DEVICE_ORDINAL 9
#define GPU_CU_PTR_ATTR_RANGE_START    11
#define GPU_CU_PTR_ATTR_RANGE_SIZE     12
/* CUmemorytype; 0 is what the driver reports for memory it does not know */
#define GPU_CU_MEMORYTYPE_HOST         1
#define GPU_CU_MEMORYTYPE_DEVICE       2
#define GPU_CU_MEMORYTYPE_ARRAY        3
#define GPU_CU_MEMORYTYPE_UNIFIED      4
/* Flags */
#define GPU_CU_STREAM_NON_BLOCKING     1
#define GPU_CU_EVENT_DISABLE_TIMING    2
#define GPU_CU_MEM_ATTACH_GLOBAL       1
#define GPU_CU_MEMHOSTALLOC_PORTABLE   1
#define GPU_CU_MEMHOSTALLOC_DEVICEMAP  2

#ifdef HAVE_CUDA_H
_Static_assert(GPU_CU_SUCCESS == CUDA_SUCCESS, "cuda.h");
_Static_assert(GPU_CU_ERROR_INVALID_VALUE == CUDA_ERROR_INVALID_VALUE, "cuda.h");
_Static_assert(GPU_CU_ERROR_OUT_OF_MEMORY == CUDA_ERROR_OUT_OF_MEMORY, "cuda.h");
_Static_assert(GPU_CU_ERROR_NOT_INITIALIZED == CUDA_ERROR_NOT_INITIALIZED, "cuda.h");
_Static_assert(GPU_CU_ERROR_DEINITIALIZED == CUDA_ERROR_DEINITIALIZED, "cuda.h");
_Static_assert(GPU_CU_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE, "cuda.h");
_Static_assert(GPU_CU_ERROR_NOT_READY == CUDA_ERROR_NOT_READY, "cuda.h");
_Static_assert(GPU_CU_ERROR_ALREADY_MAPPED == CUDA_ERROR_ALREADY_MAPPED, "cuda.h");
_Static_assert(GPU_CU_PTR_ATTR_MEMORY_TYPE == CU_POINTER_ATTRIBUTE_MEMORY_TYPE, "cuda.h");
_Static_assert(GPU_CU_PTR_ATTR_IS_MANAGED == CU_POINTER_ATTRIBUTE_IS_MANAGED, "cuda.h");
_Static_assert(GPU_CU_PTR_ATTR_DEVICE_ORDINAL == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, "cuda.h");
_Static_assert(GPU_CU_PTR_ATTR_RANGE_START == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, "cuda.h");
_Static_assert(GPU_CU_PTR_ATTR_RANGE_SIZE == CU_POINTER_ATTRIBUTE_RANGE_SIZE, "cuda.h");
_Static_assert(GPU_CU_MEMORYTYPE_HOST == CU_MEMORYTYPE_HOST, "cuda.h");
_Static_assert(GPU_CU_MEMORYTYPE_DEVICE == CU_MEMORYTYPE_DEVICE, "cuda.h");
_Static_assert(GPU_CU_MEMORYTYPE_ARRAY == CU_MEMORYTYPE_ARRAY, "cuda.h");
_Static_assert(GPU_CU_MEMORYTYPE_UNIFIED == CU_MEMORYTYPE_UNIFIED, "cuda.h");
_Static_assert(GPU_CU_STREAM_NON_BLOCKING == CU_STREAM_NON_BLOCKING, "cuda.h");
_Static_assert(GPU_CU_EVENT_DISABLE_TIMING == CU_EVENT_DISABLE_TIMING, "cuda.h");
_Static_assert(GPU_CU_MEM_ATTACH_GLOBAL == CU_MEM_ATTACH_GLOBAL, "cuda.h");
_Static_assert(GPU_CU_MEMHOSTALLOC_PORTABLE == CU_MEMHOSTALLOC_PORTABLE, "cuda.h");
_Static_assert(GPU_CU_MEMHOSTALLOC_DEVICEMAP == CU_MEMHOSTALLOC_DEVICEMAP, "cuda.h");
_Static_assert(sizeof(CUdeviceptr) == sizeof(unsigned long long), "cuda.h");
_Static_assert(sizeof(CUresult) == sizeof(int), "cuda.h");
#endif

/* CUipcMemHandle: 64 opaque bytes, passed by value. */
typedef struct {
    char reserved[64];
} gpu_cu_ipc_handle_t;
#define GPU_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS 1
#define GPU_CU_PTR_ATTR_BUFFER_ID 7 /* unique per allocation, never reused */
#define GPU_CU_PTR_ATTR_IS_LEGACY_IPC 10 /* 1: cuIpcGetMemHandle describes the allocation */
#ifdef HAVE_CUDA_H
_Static_assert(GPU_CU_PTR_ATTR_IS_LEGACY_IPC == CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, "cuda.h");
_Static_assert(sizeof(gpu_cu_ipc_handle_t) == sizeof(CUipcMemHandle), "cuda.h");
_Static_assert(GPU_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS == CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, "cuda.h");
_Static_assert(GPU_CU_PTR_ATTR_BUFFER_ID == CU_POINTER_ATTRIBUTE_BUFFER_ID, "cuda.h");
#endif

/* Kernel modules (gpu_reduce.c): opaque handles. */
#ifndef HAVE_CUDA_H
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
#endif
#define GPU_CU_ERROR_NOT_FOUND 500 /* cuModuleGetFunction: no such kernel */
#ifdef HAVE_CUDA_H
_Static_assert(GPU_CU_ERROR_NOT_FOUND == CUDA_ERROR_NOT_FOUND, "cuda.h");
#endif

/* CUDA_MEMCPY2D (cuMemcpy2DAsync_v2), for strided copies of derived
 * datatypes (gpu_dt.c); with unified addressing both sides are given as
 * GPU_CU_MEMORYTYPE_UNIFIED addresses in the device fields. */
typedef struct gpu_cu_memcpy2d {
    size_t srcXInBytes, srcY;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    size_t dstPitch;
    size_t WidthInBytes, Height;
} gpu_cu_memcpy2d_t;
#define GPU_CU_MEMORYTYPE_UNIFIED 4
#ifdef HAVE_CUDA_H
_Static_assert(sizeof(gpu_cu_memcpy2d_t) == sizeof(CUDA_MEMCPY2D), "cuda.h");
_Static_assert(offsetof(gpu_cu_memcpy2d_t, dstPitch) == offsetof(CUDA_MEMCPY2D, dstPitch), "cuda.h");
_Static_assert(offsetof(gpu_cu_memcpy2d_t, Height) == offsetof(CUDA_MEMCPY2D, Height), "cuda.h");
_Static_assert(GPU_CU_MEMORYTYPE_UNIFIED == CU_MEMORYTYPE_UNIFIED, "cuda.h");
#endif

/* CUDA_MEMCPY3D (cuMemcpy3DAsync_v2): sub-boxes of 3D grids in one copy
 * (gpu_dt.c), unified addresses as for the 2D form.  A plane starts
 * Pitch * Height bytes after the previous one. */
typedef struct gpu_cu_memcpy3d {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    void *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    void *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} gpu_cu_memcpy3d_t;
#ifdef HAVE_CUDA_H
_Static_assert(sizeof(gpu_cu_memcpy3d_t) == sizeof(CUDA_MEMCPY3D), "cuda.h");
_Static_assert(offsetof(gpu_cu_memcpy3d_t, srcHeight) == offsetof(CUDA_MEMCPY3D, srcHeight), "cuda.h");
_Static_assert(offsetof(gpu_cu_memcpy3d_t, dstDevice) == offsetof(CUDA_MEMCPY3D, dstDevice), "cuda.h");
_Static_assert(offsetof(gpu_cu_memcpy3d_t, dstHeight) == offsetof(CUDA_MEMCPY3D, dstHeight), "cuda.h");
_Static_assert(offsetof(gpu_cu_memcpy3d_t, Depth) == offsetof(CUDA_MEMCPY3D, Depth), "cuda.h");
#endif

/* Entry points, named after the driver function without "cu" so that the
 * <cuda.h> macros (cuMemAlloc -> cuMemAlloc_v2, ...) never rename them.
 * The comment gives the exported symbol that gpu_driver_load() looks up. */
typedef struct gpu_driver {
    CUresult (*Init)(unsigned flags);                                 /* cuInit */
    CUresult (*DeviceGetCount)(int *count);                           /* cuDeviceGetCount */
    CUresult (*DeviceGet)(CUdevice *dev, int ordinal);                /* cuDeviceGet */
    CUresult (*DeviceGetPCIBusId)(char *buf, int len, CUdevice dev);  /* cuDeviceGetPCIBusId */
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev); /* cuDevicePrimaryCtxRetain */
    CUresult (*DevicePrimaryCtxRelease)(CUdevice dev);                /* cuDevicePrimaryCtxRelease_v2 */
    CUresult (*CtxSetCurrent)(CUcontext ctx);                         /* cuCtxSetCurrent */
    CUresult (*CtxGetCurrent)(CUcontext *ctx);                        /* cuCtxGetCurrent */
    CUresult (*CtxGetDevice)(CUdevice *dev);                          /* cuCtxGetDevice */
    CUresult (*PointerGetAttributes)(unsigned n, CUpointer_attribute *attrs, void **data,
                                     CUdeviceptr ptr);                /* cuPointerGetAttributes */
    CUresult (*MemGetAddressRange)(CUdeviceptr *base, size_t *size,
                                   CUdeviceptr ptr);                  /* cuMemGetAddressRange_v2 */
    CUresult (*StreamCreate)(CUstream *s, unsigned flags);            /* cuStreamCreate */
    CUresult (*StreamDestroy)(CUstream s);                            /* cuStreamDestroy_v2 */
    CUresult (*StreamSynchronize)(CUstream s);                        /* cuStreamSynchronize */
    CUresult (*MemcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t n,
                            CUstream s);                              /* cuMemcpyAsync */
    CUresult (*EventCreate)(CUevent *e, unsigned flags);              /* cuEventCreate */
    CUresult (*EventRecord)(CUevent e, CUstream s);                   /* cuEventRecord */
    CUresult (*EventQuery)(CUevent e);                                /* cuEventQuery */
    CUresult (*EventDestroy)(CUevent e);                              /* cuEventDestroy_v2 */
    CUresult (*GetErrorName)(CUresult r, const char **name);          /* cuGetErrorName */
    /* Allocation: the free-hook self-check at init and the tests use these. */
    CUresult (*MemAlloc)(CUdeviceptr *p, size_t n);                   /* cuMemAlloc_v2 */
    CUresult (*MemFree)(CUdeviceptr p);                               /* cuMemFree_v2 */
    CUresult (*MemAllocHost)(void **p, size_t n);                     /* cuMemAllocHost_v2 */
    CUresult (*MemFreeHost)(void *p);                                 /* cuMemFreeHost */
    CUresult (*MemAllocManaged)(CUdeviceptr *p, size_t n, unsigned flags); /* cuMemAllocManaged */
    CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t n);    /* cuMemcpyHtoD_v2 */
    CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t n);          /* cuMemcpyDtoH_v2 */
    /* CUDA IPC: device payloads between processes of one node (gpu_ipc.c). */
    CUresult (*IpcGetMemHandle)(gpu_cu_ipc_handle_t *h, CUdeviceptr p);     /* cuIpcGetMemHandle */
    CUresult (*IpcOpenMemHandle)(CUdeviceptr *p, gpu_cu_ipc_handle_t h, unsigned flags); /* cuIpcOpenMemHandle_v2 */
    CUresult (*IpcCloseMemHandle)(CUdeviceptr p);                          /* cuIpcCloseMemHandle */
    CUresult (*PointerGetAttribute)(void *data, CUpointer_attribute a, CUdeviceptr p); /* cuPointerGetAttribute */
    /* Device reduction kernels of the collectives (gpu_reduce.c). */
    CUresult (*ModuleLoadData)(CUmodule *m, const void *image);             /* cuModuleLoadData */
    CUresult (*ModuleUnload)(CUmodule m);                                   /* cuModuleUnload */
    CUresult (*ModuleGetFunction)(CUfunction *f, CUmodule m, const char *name); /* cuModuleGetFunction */
    CUresult (*LaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shared, CUstream s, void **params,
                             void **extra);                                 /* cuLaunchKernel */
    /* Derived datatypes on device memory (gpu_dt.c). */
    CUresult (*Memcpy2DAsync)(const gpu_cu_memcpy2d_t *p, CUstream s);      /* cuMemcpy2DAsync_v2 */
    CUresult (*Memcpy3DAsync)(const gpu_cu_memcpy3d_t *p, CUstream s);      /* cuMemcpy3DAsync_v2 */
    /* Pipelined packing: a copy stream waits for a pack chunk (gpu_dt.c). */
    CUresult (*StreamWaitEvent)(CUstream s, CUevent e, unsigned flags);     /* cuStreamWaitEvent */
    /* Optional (NULL when the driver lacks them): copy completion through a
     * host flag written by the stream (gpu_copy.c). */
    CUresult (*StreamWriteValue32)(CUstream s, CUdeviceptr addr, unsigned value, unsigned flags); /* cuStreamWriteValue32_v2 */
    CUresult (*StreamQuery)(CUstream s);                                   /* cuStreamQuery */
    CUresult (*MemHostAlloc)(void **p, size_t n, unsigned flags);          /* cuMemHostAlloc */
    CUresult (*MemHostGetDevicePointer)(CUdeviceptr *d, void *p, unsigned flags); /* cuMemHostGetDevicePointer_v2 */
} gpu_driver_t;

/* The table; valid after gpu_driver_load() returned true. */
extern gpu_driver_t gpu_drv;

/* dlopen("libcuda.so.1") and resolve every entry (all or nothing).  Returns
 * false, quietly, when the driver is absent or too old.  Idempotent. */
bool gpu_driver_load(void);

/* Tests: use *fake instead of libcuda from the next gpu_driver_load() on
 * (NULL goes back to libcuda).  Only between gpu_finalize and gpu_init. */
void gpu_driver_use_for_testing(const gpu_driver_t *fake);

/* "CUDA_ERROR_..." for messages; works without a driver. */
const char *gpu_driver_error_name(CUresult r);

#endif
