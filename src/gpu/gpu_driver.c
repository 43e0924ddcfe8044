/* Loading the CUDA driver with dlopen: a host-only machine has no libcuda,
 * and linking it (or cudart) would make the whole library unusable there. */
#include "gpu/gpu_cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

gpu_driver_t gpu_drv;

static bool driver_loaded;
static const gpu_driver_t *driver_fake;

#define DRV_ENTRY(field, symbol) { symbol, offsetof(gpu_driver_t, field) }
static const struct {
    const char *symbol;
    size_t offset;
} driver_entries[] = {
    /* The _v2 names are what <cuda.h> maps the plain names to since CUDA
     * 3.2/4.0; the plain ones keep the old 32-bit ABI. */
    DRV_ENTRY(Init, "cuInit"),
    DRV_ENTRY(DeviceGetCount, "cuDeviceGetCount"),
    DRV_ENTRY(DeviceGet, "cuDeviceGet"),
    DRV_ENTRY(DeviceGetPCIBusId, "cuDeviceGetPCIBusId"),
    DRV_ENTRY(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    DRV_ENTRY(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    DRV_ENTRY(CtxSetCurrent, "cuCtxSetCurrent"),
    DRV_ENTRY(CtxGetCurrent, "cuCtxGetCurrent"),
    DRV_ENTRY(CtxGetDevice, "cuCtxGetDevice"),
    DRV_ENTRY(PointerGetAttributes, "cuPointerGetAttributes"),
    DRV_ENTRY(MemGetAddressRange, "cuMemGetAddressRange_v2"),
    DRV_ENTRY(StreamCreate, "cuStreamCreate"),
    DRV_ENTRY(StreamDestroy, "cuStreamDestroy_v2"),
    DRV_ENTRY(StreamSynchronize, "cuStreamSynchronize"),
    DRV_ENTRY(MemcpyAsync, "cuMemcpyAsync"),
    DRV_ENTRY(EventCreate, "cuEventCreate"),
    DRV_ENTRY(EventRecord, "cuEventRecord"),
    DRV_ENTRY(EventQuery, "cuEventQuery"),
    DRV_ENTRY(EventDestroy, "cuEventDestroy_v2"),
    DRV_ENTRY(GetErrorName, "cuGetErrorName"),
    DRV_ENTRY(MemAlloc, "cuMemAlloc_v2"),
    DRV_ENTRY(MemFree, "cuMemFree_v2"),
    DRV_ENTRY(MemAllocHost, "cuMemAllocHost_v2"),
    DRV_ENTRY(MemFreeHost, "cuMemFreeHost"),
    DRV_ENTRY(MemAllocManaged, "cuMemAllocManaged"),
    DRV_ENTRY(MemcpyHtoD, "cuMemcpyHtoD_v2"),
    DRV_ENTRY(MemcpyDtoH, "cuMemcpyDtoH_v2"),
    DRV_ENTRY(IpcGetMemHandle, "cuIpcGetMemHandle"),
    DRV_ENTRY(IpcOpenMemHandle, "cuIpcOpenMemHandle_v2"),
    DRV_ENTRY(IpcCloseMemHandle, "cuIpcCloseMemHandle"),
    DRV_ENTRY(PointerGetAttribute, "cuPointerGetAttribute"),
    DRV_ENTRY(ModuleLoadData, "cuModuleLoadData"),
    DRV_ENTRY(ModuleUnload, "cuModuleUnload"),
    DRV_ENTRY(ModuleGetFunction, "cuModuleGetFunction"),
    DRV_ENTRY(LaunchKernel, "cuLaunchKernel"),
    DRV_ENTRY(Memcpy2DAsync, "cuMemcpy2DAsync_v2"),
    DRV_ENTRY(Memcpy3DAsync, "cuMemcpy3DAsync_v2"),
    DRV_ENTRY(StreamWaitEvent, "cuStreamWaitEvent"),
};

bool gpu_driver_load(void)
{
    if (driver_loaded)
        return true;
    if (driver_fake) {
        gpu_drv = *driver_fake;
        driver_loaded = true;
        return true;
    }
    /* RTLD_GLOBAL: UCX's libucm_cuda (which patches cuMemFree & co. so that
     * we hear about frees) and cudart must see this very copy. */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
        return false;
    gpu_driver_t table;
    for (size_t i = 0; i < sizeof driver_entries / sizeof driver_entries[0]; i++) {
        void *sym = dlsym(lib, driver_entries[i].symbol);
        if (!sym) {
            /* A driver without one of these predates CUDA 7: treat as none.
             * The handle stays open; libcuda does not like being unloaded. */
            return false;
        }
        /* POSIX guarantees a function address survives a trip through void*. */
        memcpy((char *)&table + driver_entries[i].offset, &sym, sizeof sym);
    }
    /* optional entry points: callers check for NULL */
    static const char *const optional[] = { "cuStreamWriteValue32_v2", "cuStreamQuery", "cuMemHostAlloc",
                                            "cuMemHostGetDevicePointer_v2" };
    void **slots[] = { (void **)&table.StreamWriteValue32, (void **)&table.StreamQuery,
                       (void **)&table.MemHostAlloc, (void **)&table.MemHostGetDevicePointer };
    for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++) {
        void *sym = dlsym(lib, optional[i]);
        memcpy(slots[i], &sym, sizeof sym);
    }
    gpu_drv = table;
    driver_loaded = true;
    return true;
}

void gpu_driver_use_for_testing(const gpu_driver_t *fake)
{
    driver_fake = fake;
    driver_loaded = false;
}

const char *gpu_driver_error_name(CUresult r)
{
    const char *name = NULL;
    if (driver_loaded && gpu_drv.GetErrorName && gpu_drv.GetErrorName(r, &name) == GPU_CU_SUCCESS &&
        name)
        return name;
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "CUDA error %d", (int)r);
    return buf;
}
