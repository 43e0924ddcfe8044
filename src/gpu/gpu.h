/* GPU support: the CUDA driver loaded at run time, where a buffer lives, the
 * device of this process, and asynchronous copies between ranks of one
 * process.
 *
 * The library never links libcuda or cudart: gpu_init() dlopens the driver,
 * so the same build runs on machines without a GPU (everything is then host
 * memory and gpu_classify costs one branch).  The pt2pt layer classifies
 * every send and receive buffer, so classification is served from a
 * process-wide cache of allocation ranges (see docs/gpu.md); only the first
 * use of an allocation asks the driver.
 */
#ifndef AMPI_GPU_H
#define AMPI_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include "util/util_log.h"

typedef enum {
    GPU_MEM_HOST = 0,     /* pageable host memory (also: anything without a GPU) */
    GPU_MEM_HOST_PINNED,  /* page-locked host memory known to the driver */
    GPU_MEM_DEVICE,       /* device memory: the CPU cannot touch it */
    GPU_MEM_MANAGED       /* unified (managed) memory */
} gpu_mem_kind_t;

typedef struct {
    gpu_mem_kind_t kind;
    int device; /* CUDA ordinal, -1 for host */
} gpu_mem_t;

/* Once per process, before any other gpu_ call.  Loads the driver, picks the
 * device (AMPI_GPU_DEVICE=<ordinal>, else local_rank modulo the visible
 * devices), retains its primary context and makes it current on the calling
 * thread.  Returns 0 also when there is no driver or no device (then
 * gpu_enabled() is false); nonzero only for a bad AMPI_GPU_DEVICE or a failing
 * driver once a device was found.  AMPI_GPU=0 skips the driver entirely. */
int gpu_init(int local_rank, int local_size);
/* Called by MPI_Init: warns once per process when the program made another
 * GPU current than the one gpu_init chose (see gpu_device.c). */
void gpu_check_app_device(void);
void gpu_finalize(void);
/* Gives back everything this library made in the device's context (IPC
 * mappings, streams, events, the kernels' module, scratch blocks) while the
 * context still holds them; the context itself stays retained until
 * gpu_finalize.  MPI_Finalize of the process's last rank calls it: programs
 * reset the device after MPI_Finalize (the OSU benchmarks call
 * cudaDeviceReset), which destroys those objects, and destroying them again
 * afterwards crashed.  Any later use re-creates what it needs. */
void gpu_release(void);
/* True when the device's context was reset or destroyed behind our back
 * (a probe allocation made at gpu_init is gone): then the objects UCX made
 * in it are gone too, and tearing them down would touch dead handles. */
bool gpu_context_lost(void);

/* driver loaded and >= 1 device; inline because every send and receive asks */
extern bool gpu_is_on UTIL_HIDDEN;
static inline bool gpu_enabled(void) { return gpu_is_on; }
int gpu_device(void);   /* this process's device ordinal, -1 none */
const char *gpu_device_pci_bus_id(void); /* "0000:3b:00.0", "" when none */

/* Make this process's context current on the calling OS thread.  gpu_init()
 * does it for its own thread; a PE running on another thread calls this once
 * (gpu_copy_start also does it lazily).  All ranks of a PE share it. */
int gpu_thread_attach(void);

/* Where [ptr, ptr+len) lives.  Host when !gpu_enabled(); otherwise a cached
 * lookup (<= 50 ns on a hit) that asks the driver on a miss.  Classification
 * is by ptr: a buffer is expected to lie inside one allocation. */
void gpu_classify(const void *ptr, size_t len, gpu_mem_t *out);

/* Device memory the legacy CUDA IPC calls cannot export: stream-ordered
 * pool memory (cudaMallocAsync) and VMM allocations (one driver query). */
bool gpu_is_pool_memory(const void *ptr);

/* Asynchronous copy of n bytes (device or host, any direction) on the calling
 * PE's stream, for ranks of one process.  Returns 0 when started (or, without
 * a GPU, already done by memcpy); otherwise the driver's error code, and c
 * holds nothing.  Poll with gpu_copy_done(). */
typedef struct gpu_copy {
    void *event; /* recorded after the copy; NULL: done already */
} gpu_copy_t;
int gpu_copy_start(void *dst, const void *src, size_t n, gpu_copy_t *c);
/* The same on the PE's second ("side") stream: for a copy that should run
 * beside the message copies of the main stream instead of queueing behind
 * or ahead of them -- a collective placing its own block while its
 * messages travel. */
int gpu_copy_start_side(void *dst, const void *src, size_t n, gpu_copy_t *c);
/* A copy on the PE's main stream that records no event of its own (an
 * event per copy costs a driver call): for a batch of copies that complete
 * together, behind one gpu_copy_fence.  0 or the driver's error code. */
int gpu_copy_enqueue(void *dst, const void *src, size_t n);
/* The calling PE's main stream (a CUstream; NULL without a GPU), made on
 * first use: what gpu_copy_enqueue and gpu_copy_start use.  0 or the
 * driver's error code. */
int gpu_copy_stream(void **stream);
/* Record c's completion behind everything enqueued so far on `stream` (one
 * that gpu_copy_stream named; its copies finish in order), or on the
 * calling PE's main stream when stream is NULL; poll gpu_copy_done.  Any
 * thread may fence another's stream: a program in library mode calls MPI
 * from several OS threads.  0 or the driver's error code. */
int gpu_copy_fence(void *stream, gpu_copy_t *c);
/* Page-locked host memory for staging (NULL when unavailable); free
 * returns false if p was not allocated here. */
void *gpu_host_pinned_alloc(size_t n);
bool gpu_host_pinned_free(void *p);
bool gpu_copy_done(gpu_copy_t *c); /* true once finished (and then releases c's resources) */

#endif
