/* Reduction kernels on device memory (see gpu_reduce.h): the embedded fatbin
 * of gpu_kernels.cu, loaded once, kernels looked up by name and cached, and
 * launches on a collective stream per thread with pooled events.
 *
 * The stream is our own rather than gpu_copy.c's PE stream: every piece of
 * collective work is waited for before the next one starts, so nothing needs
 * ordering against the copies, and a separate non-blocking stream keeps a
 * long NCCL kernel from delaying the point-to-point copies of other ranks. */
#include "gpu/gpu_internal.h"
#include "gpu/gpu_reduce.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fatbin, generated at build time (gpu.am); size 0 without nvcc. */
extern const unsigned char gpu_kernels_image[];
extern const size_t gpu_kernels_image_size;

#define THREADS 256
#define MAX_BLOCKS 4096 /* grid-stride loops cover the rest */
#define EVENT_POOL_MAX 32

static const char *const op_names[GPU_OP_COUNT] = {
    "max", "min", "sum", "prod", "land", "lor", "lxor", "band", "bor", "bxor", "maxloc", "minloc",
};
static const char *const elem_names[GPU_EK_COUNT] = {
    "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64", "cf32", "cf64", "bool",
    "float_int", "double_int", "long_int", "2int", "short_int", "2float", "2double",
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUmodule module;
static unsigned module_generation; /* gpu_state.generation the module belongs to */
static bool module_failed;
static CUfunction functions[GPU_OP_COUNT][GPU_EK_COUNT];
static unsigned char looked_up[GPU_OP_COUNT][GPU_EK_COUNT]; /* 1 found, 2 missing */
static CUevent events[EVENT_POOL_MAX];
static int nevents;
static CUstream streams[64]; /* every thread's stream, for gpu_reduce_fini */
static int nstreams;

static _Thread_local struct {
    CUstream stream;
    unsigned generation;
} work_stream;

static int complain(const char *call, CUresult r)
{
    fprintf(stderr, "ampi: %s failed: %s\n", call, gpu_driver_error_name(r));
    return (int)r;
}

/* Forget handles of an earlier gpu_init: they died with its context. */
static void drop_stale(void)
{
    if (module_generation == gpu_state.generation)
        return;
    module = NULL;
    module_failed = false;
    memset(looked_up, 0, sizeof looked_up);
    nevents = 0;
    nstreams = 0;
    module_generation = gpu_state.generation;
}

gpu_reduce_status_t gpu_reduce_check(gpu_op_t op, gpu_elem_t elem)
{
    if (gpu_kernels_image_size == 0)
        return GPU_REDUCE_NOT_BUILT;
    if ((unsigned)op >= GPU_OP_COUNT || (unsigned)elem >= GPU_EK_COUNT)
        return GPU_REDUCE_NO_KERNEL;
    pthread_mutex_lock(&lock);
    drop_stale();
    gpu_reduce_status_t st = GPU_REDUCE_OK;
    CUcontext prev;
    if (looked_up[op][elem]) {
        st = looked_up[op][elem] == 1 ? GPU_REDUCE_OK : GPU_REDUCE_NO_KERNEL;
    } else if (module_failed || !gpu_state.on || gpu_ctx_enter(&prev) != 0) {
        st = GPU_REDUCE_DRIVER;
    } else {
        CUresult r = GPU_CU_SUCCESS;
        if (!module && (r = gpu_drv.ModuleLoadData(&module, gpu_kernels_image)) != GPU_CU_SUCCESS) {
            complain("cuModuleLoadData (the library's reduction kernels)", r);
            module = NULL;
            module_failed = true;
            st = GPU_REDUCE_DRIVER;
        }
        if (st == GPU_REDUCE_OK) {
            char name[64];
            snprintf(name, sizeof name, "ampi_%s_%s", op_names[op], elem_names[elem]);
            r = gpu_drv.ModuleGetFunction(&functions[op][elem], module, name);
            if (r != GPU_CU_SUCCESS && r != GPU_CU_ERROR_NOT_FOUND)
                complain("cuModuleGetFunction", r);
            st = r == GPU_CU_SUCCESS ? GPU_REDUCE_OK : GPU_REDUCE_NO_KERNEL;
            looked_up[op][elem] = st == GPU_REDUCE_OK ? 1 : 2;
        }
        gpu_ctx_leave(prev);
    }
    pthread_mutex_unlock(&lock);
    return st;
}

int gpu_kernel_get(const char *name, CUfunction *f)
{
    if (gpu_kernels_image_size == 0)
        return GPU_CU_ERROR_NOT_FOUND;
    pthread_mutex_lock(&lock);
    drop_stale();
    CUresult r = GPU_CU_SUCCESS;
    if (module_failed) {
        r = GPU_CU_ERROR_NOT_FOUND;
    } else if (!module && (r = gpu_drv.ModuleLoadData(&module, gpu_kernels_image)) != GPU_CU_SUCCESS) {
        complain("cuModuleLoadData (the library's kernels)", r);
        module = NULL;
        module_failed = true;
    }
    if (r == GPU_CU_SUCCESS)
        r = gpu_drv.ModuleGetFunction(f, module, name);
    pthread_mutex_unlock(&lock);
    return (int)r;
}

/* The calling thread's stream; our context must be current. */
static CUresult get_stream(CUstream *out)
{
    if (work_stream.stream && work_stream.generation == gpu_state.generation) {
        *out = work_stream.stream;
        return GPU_CU_SUCCESS;
    }
    CUstream s;
    CUresult r = gpu_drv.StreamCreate(&s, GPU_CU_STREAM_NON_BLOCKING);
    if (r != GPU_CU_SUCCESS)
        return r;
    pthread_mutex_lock(&lock);
    drop_stale();
    if (nstreams < (int)(sizeof streams / sizeof streams[0]))
        streams[nstreams++] = s; /* beyond that, a thread's stream lives until exit */
    pthread_mutex_unlock(&lock);
    work_stream.stream = s;
    work_stream.generation = gpu_state.generation;
    *out = s;
    return GPU_CU_SUCCESS;
}

int gpu_work_stream(void **stream)
{
    CUcontext prev;
    int r = gpu_ctx_enter(&prev);
    if (r)
        return complain("cuCtxSetCurrent", (CUresult)r);
    CUstream s = NULL;
    CUresult cr = get_stream(&s);
    gpu_ctx_leave(prev);
    if (cr != GPU_CU_SUCCESS)
        return complain("cuStreamCreate", cr);
    *stream = s;
    return 0;
}

/* Event recorded on our stream; context current. */
static CUresult record(CUstream s, gpu_work_t *w)
{
    pthread_mutex_lock(&lock);
    drop_stale();
    CUevent e = nevents ? events[--nevents] : NULL;
    pthread_mutex_unlock(&lock);
    CUresult r = GPU_CU_SUCCESS;
    if (!e && (r = gpu_drv.EventCreate(&e, GPU_CU_EVENT_DISABLE_TIMING)) != GPU_CU_SUCCESS)
        return complain("cuEventCreate", r);
    if ((r = gpu_drv.EventRecord(e, s)) != GPU_CU_SUCCESS) {
        gpu_drv.EventDestroy(e);
        return complain("cuEventRecord", r);
    }
    w->event = e;
    return GPU_CU_SUCCESS;
}

int gpu_work_record(gpu_work_t *w)
{
    w->event = NULL;
    CUcontext prev;
    int r = gpu_ctx_enter(&prev);
    if (r)
        return complain("cuCtxSetCurrent", (CUresult)r);
    CUstream s;
    CUresult cr = get_stream(&s);
    if (cr != GPU_CU_SUCCESS)
        complain("cuStreamCreate", cr);
    else
        cr = record(s, w);
    gpu_ctx_leave(prev);
    return (int)cr;
}

int gpu_reduce_start(gpu_op_t op, gpu_elem_t elem, const void *in, void *inout, size_t count, gpu_work_t *w)
{
    w->event = NULL;
    if (count == 0)
        return 0;
    gpu_reduce_status_t st = gpu_reduce_check(op, elem);
    if (st != GPU_REDUCE_OK) {
        fprintf(stderr, "ampi: no device kernel ampi_%s_%s (%s)\n", op_names[op % GPU_OP_COUNT],
                elem_names[elem % GPU_EK_COUNT], st == GPU_REDUCE_NOT_BUILT ? "built without nvcc" : "missing");
        return GPU_CU_ERROR_NOT_FOUND;
    }
    CUcontext prev;
    int r = gpu_ctx_enter(&prev);
    if (r)
        return complain("cuCtxSetCurrent", (CUresult)r);
    CUstream s;
    CUresult cr = get_stream(&s);
    if (cr != GPU_CU_SUCCESS) {
        gpu_ctx_leave(prev);
        return complain("cuStreamCreate", cr);
    }
    size_t blocks = (count + THREADS - 1) / THREADS;
    if (blocks > MAX_BLOCKS)
        blocks = MAX_BLOCKS;
    CUdeviceptr a = (CUdeviceptr)(uintptr_t)in, b = (CUdeviceptr)(uintptr_t)inout;
    void *params[] = { &a, &b, &count };
    cr = gpu_drv.LaunchKernel(functions[op][elem], (unsigned)blocks, 1, 1, THREADS, 1, 1, 0, s, params, NULL);
    if (cr != GPU_CU_SUCCESS)
        complain("cuLaunchKernel", cr);
    else
        cr = record(s, w);
    gpu_ctx_leave(prev);
    return (int)cr;
}

bool gpu_work_done(gpu_work_t *w)
{
    if (!w->event)
        return true;
    CUevent e = w->event;
    CUresult r = gpu_drv.EventQuery(e);
    if (r == GPU_CU_ERROR_NOT_READY)
        return false;
    if (r != GPU_CU_SUCCESS) {
        /* a kernel fault is sticky: the context (and our data) is gone */
        complain("cuEventQuery (collective device work)", r);
        abort();
    }
    pthread_mutex_lock(&lock);
    bool kept = module_generation == gpu_state.generation && nevents < EVENT_POOL_MAX;
    if (kept)
        events[nevents++] = e;
    pthread_mutex_unlock(&lock);
    if (!kept)
        gpu_drv.EventDestroy(e);
    w->event = NULL;
    return true;
}

void gpu_reduce_fini(void)
{
    pthread_mutex_lock(&lock);
    if (module_generation == gpu_state.generation && gpu_state.on) {
        while (nevents > 0)
            gpu_drv.EventDestroy(events[--nevents]);
        while (nstreams > 0)
            gpu_drv.StreamDestroy(streams[--nstreams]);
        if (module)
            gpu_drv.ModuleUnload(module);
    }
    module = NULL;
    module_failed = false;
    memset(looked_up, 0, sizeof looked_up);
    nevents = nstreams = 0;
    module_generation = 0;
    pthread_mutex_unlock(&lock);
}
