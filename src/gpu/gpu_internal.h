/* State shared by the files of src/gpu (and read by its tests). */
#ifndef AMPI_GPU_INTERNAL_H
#define AMPI_GPU_INTERNAL_H

#include <stdint.h>
#include "gpu/gpu.h"
#include "gpu/gpu_cuda.h"

typedef struct {
    bool on;             /* gpu_enabled(): read by gpu_classify on every call */
    int device;          /* ordinal, -1 none */
    CUdevice cu_device;
    CUcontext ctx;       /* retained primary context of `device` */
    unsigned generation; /* +1 per gpu_init: per-thread state of an older one is stale */
    bool cache_host;     /* host ranges are cached (host unmap hook works) */
    bool cache_cuda;     /* CUDA ranges are cached (CUDA free hook works) */
    char bus_id[32];
} gpu_state_t;

extern gpu_state_t gpu_state;

/* Ask the driver, bypassing the cache: the truth that tests compare with. */
void gpu_classify_uncached(const void *ptr, gpu_mem_t *out);
uint64_t gpu_classify_misses(void); /* gpu_classify calls that asked the driver */
/* A CUDA free that the memory hooks saw at addr with size bytes (0 or 1: not
 * known), before the memory goes: makes UCX forget all of the allocation
 * (ucx_memtype_forget). */
void gpu_cuda_free_seen(uintptr_t addr, size_t size);

/* Make gpu_state.ctx current on this thread if it is not; returns the one
 * that was current so that gpu_ctx_leave can restore it (user code on this
 * thread may have chosen another device with cudaSetDevice). */
int gpu_ctx_enter(CUcontext *previous);
void gpu_ctx_leave(CUcontext previous);

void gpu_copy_fini(void); /* destroy the PE streams and pooled events */
/* Run issue(stream, arg) on the calling PE's main copy stream (in order
 * with gpu_copy_start's copies) and record c's completion behind it; poll
 * with gpu_copy_done.  Returns 0 or the driver's error. */
int gpu_copy_issue(CUresult (*issue)(CUstream, void *), void *arg, gpu_copy_t *c);
/* The same on the PE's side stream (gpu_copy_start_side's). */
int gpu_copy_issue_side(CUresult (*issue)(CUstream, void *), void *arg, gpu_copy_t *c);
/* A kernel of the library's module (gpu_kernels.cu), loading it on first
 * use; 0 or the driver's error (GPU_CU_ERROR_NOT_FOUND: no such kernel, or
 * a build without nvcc).  Our context must be current. */
int gpu_kernel_get(const char *name, CUfunction *f);

#endif
