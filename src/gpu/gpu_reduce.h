/* Device-side work of the collectives: reduction kernels (built by nvcc into
 * a fatbin embedded in the library, loaded with cuModuleLoadData at first
 * use), a cached pool of device scratch memory, and the stream and events
 * that this work (and NCCL's) runs on.
 *
 * Everything here is asynchronous: a start enqueues work on the collective
 * stream of the calling thread and records an event in a gpu_work_t; the
 * caller polls gpu_work_done() and lets other ranks run in between (a rank
 * must never block its PE).  Nothing here knows MPI: the coll layer maps MPI
 * ops and types to gpu_op_t / gpu_elem_t. */
#ifndef AMPI_GPU_REDUCE_H
#define AMPI_GPU_REDUCE_H

#include <stdbool.h>
#include <stddef.h>

/* The predefined reduction operations. */
typedef enum {
    GPU_OP_MAX, GPU_OP_MIN, GPU_OP_SUM, GPU_OP_PROD,
    GPU_OP_LAND, GPU_OP_LOR, GPU_OP_LXOR, GPU_OP_BAND, GPU_OP_BOR, GPU_OP_BXOR,
    GPU_OP_MAXLOC, GPU_OP_MINLOC,
    GPU_OP_COUNT
} gpu_op_t;

/* Element representations that have kernels.  Signed integers matter only
 * to MIN/MAX: sums, products, logical and bitwise ops use the unsigned
 * kernels for both (two's complement wraps the same way).  The pair kinds
 * are the MINLOC/MAXLOC types, laid out as the C structs {value, index}. */
typedef enum {
    GPU_EK_I8, GPU_EK_U8, GPU_EK_I16, GPU_EK_U16, GPU_EK_I32, GPU_EK_U32, GPU_EK_I64, GPU_EK_U64,
    GPU_EK_F32, GPU_EK_F64, GPU_EK_CF32, GPU_EK_CF64, GPU_EK_BOOL,
    GPU_EK_FLOAT_INT, GPU_EK_DOUBLE_INT, GPU_EK_LONG_INT, GPU_EK_2INT, GPU_EK_SHORT_INT,
    GPU_EK_2FLOAT, GPU_EK_2DOUBLE,
    GPU_EK_COUNT
} gpu_elem_t;

/* Completion of asynchronous device work: an event to poll. */
typedef struct gpu_work {
    void *event;
} gpu_work_t;

/* Why a reduction cannot run on the device (gpu_reduce_check). */
typedef enum {
    GPU_REDUCE_OK = 0,
    GPU_REDUCE_NOT_BUILT, /* the library was built without nvcc */
    GPU_REDUCE_NO_KERNEL, /* no kernel for this (op, element) pair */
    GPU_REDUCE_DRIVER     /* loading the module failed (message printed) */
} gpu_reduce_status_t;

/* Whether (op, elem) has a kernel; loads the module at the first call. */
gpu_reduce_status_t gpu_reduce_check(gpu_op_t op, gpu_elem_t elem);

/* inout[i] = op(in[i], inout[i]) for i < count, both device pointers.
 * Returns 0 when started (w then holds an event; count == 0 starts
 * nothing), else a CUDA error code, with a message naming the call. */
int gpu_reduce_start(gpu_op_t op, gpu_elem_t elem, const void *in, void *inout, size_t count, gpu_work_t *w);

/* The calling thread's collective stream (a CUstream), made on first use
 * in this process's context.  Returns 0 or a CUDA error code.  Callers
 * enqueue with gpu_ctx_enter()/gpu_ctx_leave() around (gpu_internal.h). */
int gpu_work_stream(void **stream);

/* Record an event after what is now enqueued on the collective stream
 * (used after NCCL calls).  Returns 0 or a CUDA error code. */
int gpu_work_record(gpu_work_t *w);

/* true once the work of w has finished (then w's event is released);
 * aborts the job on a device error, which leaves the context unusable. */
bool gpu_work_done(gpu_work_t *w);

/* Device scratch memory from a process-wide pool that keeps freed blocks
 * for reuse (collectives call this per operation: cuMemAlloc each time
 * would cost more than small transfers).  gpu_dev_alloc returns 0 or a
 * CUDA error code; gpu_dev_free returns false (doing nothing) when p did
 * not come from gpu_dev_alloc. */
int gpu_dev_alloc(size_t bytes, void **p);
bool gpu_dev_free(void *p);
/* The same for page-locked host memory: the staging buffers of small
 * device collectives, which copy their operands to the host and back. */
int gpu_pinned_alloc(size_t bytes, void **p);
bool gpu_pinned_free(void *p);

/* Release the pool, the module, the streams and events.  Belongs in
 * gpu_finalize (while the context is alive); safe to call more than once. */
void gpu_reduce_fini(void);
void gpu_mem_fini(void);

#endif
