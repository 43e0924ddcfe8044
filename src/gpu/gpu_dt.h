/* Derived datatypes on device memory: packing a message's elements out of
 * a device (or managed) buffer into contiguous device memory, and
 * unpacking them back, on the GPU.
 *
 * A layout is built once per datatype from its flattened blocks (the
 * datatype layer keeps it with the type) and copied to the device at its
 * first use.  A message then costs one operation on the PE's copy stream,
 * in order with its other copies:
 *   - the copy engine (cuMemcpy2DAsync) when every block has one length of
 *     at least GPU_DT_2D_MIN bytes at one stride, across elements too (a
 *     vector or a face of a 3D grid with long rows);
 *   - the copy engine in 3D (cuMemcpy3DAsync) when the blocks, of one such
 *     length, form planes of rows at one pitch, the planes at a multiple of
 *     it (a sub-box or a thick face of a 3D grid): one copy for the message
 *     when the elements continue the planes, else one per element (up to
 *     16 elements);
 *   - otherwise one kernel launch for the whole message, a thread block per
 *     long block or a thread per short one, copying in the widest unit that
 *     every offset and length allows;
 *   - memory of another GPU, which our kernels cannot reach, goes by the
 *     copy engine block by block (correct, slow).
 * Host memory is never passed here (dt_pack does that on the CPU). */
#ifndef AMPI_GPU_DT_H
#define AMPI_GPU_DT_H

#include <stdbool.h>
#include <stddef.h>
#include "gpu/gpu.h"

/* Rows shorter than this go to a kernel even when the layout is 2D: the
 * copy engine moves short rows slowly. */
#define GPU_DT_2D_MIN 256

typedef struct gpu_dt_block {
    ptrdiff_t off; /* from the start of the element */
    size_t len;
} gpu_dt_block_t;

typedef struct gpu_dt_layout gpu_dt_layout_t;

/* The library was built with its device kernels (nvcc). */
bool gpu_dt_available(void);

/* The layout of a type whose element has `nblocks` blocks (type-map order)
 * of `size` data bytes in all, elements `extent` bytes apart.  NULL when
 * out of memory. */
gpu_dt_layout_t *gpu_dt_layout_new(const gpu_dt_block_t *blocks, size_t nblocks, ptrdiff_t extent, size_t size);
void gpu_dt_layout_free(gpu_dt_layout_t *l);

/* Gather `count` elements at buf into packed (count * size bytes), or
 * scatter the first `bytes` packed bytes back into the elements at buf;
 * asynchronous, completion in c (gpu_copy_done).  Returns 0 or the
 * driver's error. */
int gpu_dt_pack_start(void *packed, const void *buf, size_t count, gpu_dt_layout_t *l, gpu_copy_t *c);
int gpu_dt_unpack_start(void *buf, const void *packed, size_t count, size_t bytes, gpu_dt_layout_t *l,
                        gpu_copy_t *c);

/* Packing in chunks, for a large message sent while it is packed: the
 * pieces are kernel launches on the PE's main stream (whole elements, or
 * ranges of one element's blocks, about `chunk` packed bytes each), each
 * with its own completion.  gpu_dt_chunks_copy_start then copies the first
 * `bytes` packed bytes to dst on the PE's side stream, each chunk as soon
 * as its pack has run, so that packing and copying overlap.  Returns 0 and
 * *out, or an error (GPU_CU_ERROR_NOT_FOUND: no kernels, or a buffer on
 * another GPU: pack whole instead).  Wait (gpu_dt_chunks_done or _wait)
 * before the packed bytes are read otherwise, then gpu_dt_chunks_free. */
typedef struct gpu_dt_chunks gpu_dt_chunks_t;
int gpu_dt_pack_chunks_start(void *packed, const void *buf, size_t count, gpu_dt_layout_t *l, size_t chunk,
                             gpu_dt_chunks_t **out);
int gpu_dt_chunks_copy_start(void *dst, const void *packed, size_t bytes, gpu_dt_chunks_t *c, gpu_copy_t *done);
bool gpu_dt_chunks_done(gpu_dt_chunks_t *c);
void gpu_dt_chunks_wait(gpu_dt_chunks_t *c);
size_t gpu_dt_chunks_count(const gpu_dt_chunks_t *c);
void gpu_dt_chunks_free(gpu_dt_chunks_t *c);

#endif
