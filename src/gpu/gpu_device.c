/* gpu_init/gpu_finalize: driver, device choice, primary context, and the
 * check that the memory hooks the cache relies on really fire. */
#include "core/core_settings.h"
#include "gpu/gpu_cache.h"
#include "gpu/gpu_ipc.h"
#include "gpu/gpu_reduce.h"
#include "gpu/gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

gpu_state_t gpu_state = { .device = -1 };

static bool verbose(void)
{
    return core_setting_bool(CORE_SET_GPU_VERBOSE);
}

/* AMPI_GPU_DEVICE wins; else local rank modulo the visible devices, which
 * spreads the ranks of a node evenly (the driver already applied
 * CUDA_VISIBLE_DEVICES, so ordinals are the visible ones). */
static int choose_device(int local_rank, int count, int *ordinal)
{
    long long d;
    if (core_setting_int(CORE_SET_GPU_DEVICE, &d)) {
        if (d >= count) {
            fprintf(stderr, "ampi: AMPI_GPU_DEVICE=%lld is not a device ordinal (0..%d visible)\n", d,
                    count - 1);
            return -1;
        }
        *ordinal = (int)d;
        return 0;
    }
    *ordinal = (local_rank < 0 ? 0 : local_rank) % count;
    return 0;
}

static bool host_hook_fires(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return false;
    gpu_cache_probe_arm(GPU_CACHE_HOOK_HOST, (uintptr_t)p);
    munmap(p, page);
    return gpu_cache_probe_seen();
}

/* libucm_cuda patches cuMemFree_v2 itself (bistro mode), so a free through
 * our dlsym'ed pointer must reach the hook like the application's frees. */
static bool cuda_hook_fires(void)
{
    CUdeviceptr d;
    if (gpu_drv.MemAlloc(&d, 256) != GPU_CU_SUCCESS)
        return false;
    gpu_cache_probe_arm(GPU_CACHE_HOOK_CUDA, (uintptr_t)d);
    gpu_drv.MemFree(d);
    return gpu_cache_probe_seen();
}

static void cache_setup(void)
{
    unsigned hooks = gpu_cache_init(true);
    bool host = (hooks & GPU_CACHE_HOOK_HOST) && host_hook_fires();
    bool cuda = (hooks & GPU_CACHE_HOOK_CUDA) && cuda_hook_fires();
    if (!core_setting_bool(CORE_SET_GPU_CACHE))
        host = cuda = false;
    gpu_cache_allow(host, cuda);
    gpu_state.cache_host = host;
    gpu_state.cache_cuda = cuda;
}

static int fail(const char *what, CUresult r)
{
    fprintf(stderr, "ampi: %s failed: %s\n", what, gpu_driver_error_name(r));
    return -1;
}

static bool released;      /* gpu_release ran since gpu_init */
static CUdeviceptr sentinel; /* a small allocation that only a reset frees */
static uint64_t sentinel_id; /* its buffer id: unique, never reused */

int gpu_init(int local_rank, int local_size)
{
    if (gpu_state.on)
        return 0;
    gpu_state.device = -1;
    gpu_state.bus_id[0] = '\0';
    if (!core_setting_bool(CORE_SET_GPU) || !gpu_driver_load())
        return 0;
    CUresult r = gpu_drv.Init(0);
    int count = 0;
    if (r == GPU_CU_SUCCESS)
        r = gpu_drv.DeviceGetCount(&count);
    if (r != GPU_CU_SUCCESS || count <= 0) {
        /* A driver without devices (or a container without /dev/nvidia*) is
         * an ordinary host-only run. */
        if (verbose())
            fprintf(stderr, "ampi: no GPU (%s, %d devices)\n", gpu_driver_error_name(r), count);
        return 0;
    }
    int ordinal;
    if (choose_device(local_rank, count, &ordinal) != 0)
        return -1;
    CUdevice dev;
    CUcontext ctx;
    if ((r = gpu_drv.DeviceGet(&dev, ordinal)) != GPU_CU_SUCCESS)
        return fail("cuDeviceGet", r);
    /* The primary context is the one cudart and UCX use too: sharing it
     * avoids a second context (memory, and pointers valid in one only). */
    if ((r = gpu_drv.DevicePrimaryCtxRetain(&ctx, dev)) != GPU_CU_SUCCESS)
        return fail("cuDevicePrimaryCtxRetain", r);
    if ((r = gpu_drv.CtxSetCurrent(ctx)) != GPU_CU_SUCCESS) {
        gpu_drv.DevicePrimaryCtxRelease(dev);
        return fail("cuCtxSetCurrent", r);
    }
    if (gpu_drv.DeviceGetPCIBusId(gpu_state.bus_id, (int)sizeof gpu_state.bus_id, dev) !=
        GPU_CU_SUCCESS)
        gpu_state.bus_id[0] = '\0';
    gpu_state.device = ordinal;
    gpu_state.cu_device = dev;
    gpu_state.ctx = ctx;
    gpu_state.generation++;
    released = false;
    cache_setup();
    /* (the unit tests' fake drivers have no PointerGetAttribute: no probe) */
    if (!gpu_drv.PointerGetAttribute || gpu_drv.MemAlloc(&sentinel, 64) != GPU_CU_SUCCESS)
        sentinel = 0;
    else if (gpu_drv.PointerGetAttribute(&sentinel_id, GPU_CU_PTR_ATTR_BUFFER_ID, sentinel) != GPU_CU_SUCCESS)
        sentinel_id = 0;
    gpu_state.on = gpu_is_on = true;
    if (verbose())
        fprintf(stderr,
                "ampi: local rank %d of %d -> GPU %d of %d (%s); cache: host %s, cuda %s\n",
                local_rank, local_size, ordinal, count, gpu_state.bus_id,
                gpu_state.cache_host ? "on" : "off", gpu_state.cache_cuda ? "on" : "off");
    return 0;
}

/* A program may pick its GPU itself before MPI_Init (cudaSetDevice by a
 * local rank it reads from MPI_LOCALRANKID or AMPI_LOCAL_RANK, which
 * AMPI_Run sets, or a launcher's variable).  If it picked another one than
 * ours, point-to-point still works (copies reach any device), but device
 * reductions and NCCL run on our device and fault on the other's buffers:
 * say so once, with the fix. */
void gpu_check_app_device(void)
{
    static bool said;
    CUcontext cur = NULL;
    CUdevice dev;
    if (!gpu_state.on || said || gpu_drv.CtxGetCurrent(&cur) != GPU_CU_SUCCESS || !cur || cur == gpu_state.ctx ||
        gpu_drv.CtxGetDevice(&dev) != GPU_CU_SUCCESS || dev == gpu_state.cu_device)
        return;
    said = true;
    fprintf(stderr,
            "ampi: warning: this process uses GPU %d, but the program made GPU %d current before MPI_Init; "
            "device reductions and collectives would fault on its buffers: select the GPU from "
            "MPI_LOCALRANKID (or AMPI_LOCAL_RANK), or run with AMPI_GPU_DEVICE=%d\n",
            gpu_state.device, (int)dev, (int)dev);
}

void gpu_release(void)
{
    if (!gpu_state.on)
        return;
    released = true;
    CUcontext previous;
    bool entered = gpu_ctx_enter(&previous) == 0;
    gpu_ipc_fini();
    gpu_reduce_fini(); /* the collectives' kernels, streams and scratch */
    gpu_mem_fini();
    gpu_copy_fini();
    if (entered)
        gpu_ctx_leave(previous);
    /* per-thread streams and attachments of before are gone: a later use
     * makes new ones */
    gpu_state.generation++;
}

bool gpu_context_lost(void)
{
    uint64_t id = 0;
    return gpu_state.on && sentinel &&
           (gpu_drv.PointerGetAttribute(&id, GPU_CU_PTR_ATTR_BUFFER_ID, sentinel) != GPU_CU_SUCCESS ||
            id != sentinel_id);
}

void gpu_finalize(void)
{
    if (!gpu_state.on)
        return;
    /* after MPI_Finalize's release the program may have reset the device:
     * then nothing of ours is left, and the old handles must not be used */
    bool lost = gpu_context_lost();
    if (!released && !lost)
        gpu_release();
    if (sentinel && !lost)
        gpu_drv.MemFree(sentinel);
    sentinel = 0;
    gpu_state.on = gpu_is_on = false;
    gpu_cache_fini();
    CUcontext cur = NULL;
    if (gpu_drv.CtxGetCurrent(&cur) == GPU_CU_SUCCESS && cur == gpu_state.ctx)
        gpu_drv.CtxSetCurrent(NULL);
    gpu_drv.DevicePrimaryCtxRelease(gpu_state.cu_device);
    gpu_state.ctx = NULL;
    gpu_state.device = -1;
    gpu_state.bus_id[0] = '\0';
    gpu_state.cache_host = gpu_state.cache_cuda = false;
}

bool gpu_is_on;

int gpu_device(void)
{
    return gpu_state.on ? gpu_state.device : -1;
}

const char *gpu_device_pci_bus_id(void)
{
    return gpu_state.on ? gpu_state.bus_id : "";
}

static _Thread_local unsigned attached_generation;

int gpu_thread_attach(void)
{
    if (!gpu_state.on || attached_generation == gpu_state.generation)
        return 0;
    CUresult r = gpu_drv.CtxSetCurrent(gpu_state.ctx);
    if (r != GPU_CU_SUCCESS)
        return (int)r;
    attached_generation = gpu_state.generation;
    return 0;
}

int gpu_ctx_enter(CUcontext *previous)
{
    CUcontext cur = NULL;
    CUresult r = gpu_drv.CtxGetCurrent(&cur);
    if (r != GPU_CU_SUCCESS)
        return (int)r;
    *previous = cur;
    if (cur == gpu_state.ctx)
        return 0;
    return (int)gpu_drv.CtxSetCurrent(gpu_state.ctx);
}

void gpu_ctx_leave(CUcontext previous)
{
    /* A thread that had no context keeps ours: the PE will need it again. */
    if (previous && previous != gpu_state.ctx)
        gpu_drv.CtxSetCurrent(previous);
}
