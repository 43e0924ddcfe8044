/* The compute backends of jacobi3d: one table of entry points, implemented
 * by kernels_cuda.cu (CUDA kernels on streams) and kernels_cpu.c (host
 * loops).  jacobi3d.c drives either through the same calls, so the -cpu run
 * that CI does walks the code path of the GPU runs.
 *
 * Each MPI rank owns one backend object; nothing is shared between ranks
 * (several ranks can be user-level threads of one process).
 *
 * Ordering contract (the CUDA backend keeps it with events, the host
 * backend trivially): pack() reads the current grid after every update
 * enqueued before it; unpack() writes the current grid's halos once the
 * data handed to MPI has arrived (called after MPI_Waitall); update() reads
 * the current grid after the unpack and writes the other one; swap() makes
 * the written grid current.  wait_packed() is the only host wait of an
 * iteration: afterwards the send buffer holds the packed faces and the
 * receive buffer may be overwritten.
 */
#ifndef JACOBI_KERNELS_H
#define JACOBI_KERNELS_H

#include <stddef.h>
#include "stencil.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { JC_ALL, JC_INTERIOR, JC_EXTERIOR } jc_region_t;

typedef struct jc_config {
    int staging;          /* -H: MPI sees pinned host copies of the faces */
    int fuse;             /* -fuse: all faces in one pack and one unpack kernel */
    int graphs;           /* -graphs: unpack+update+pack replayed as a CUDA graph */
    int overlap;          /* -overlap: the step's update is the exterior only */
    int ddt;              /* -ddt: MPI reads and writes the grid's faces itself: pack marks
                             the point the faces are final, unpack has nothing to do */
    int local_rank;       /* picks the GPU: local_rank % device count */
    int (*yield)(void);   /* lets other ranks of this PE run while we wait; may be NULL */
} jc_config_t;

typedef struct jc_backend jc_backend_t;

typedef struct jc_ops {
    const char *name;
    /* NULL on failure, with a message in err. */
    jc_backend_t *(*create)(const jc_block_t *blk, const jc_config_t *cfg, char *err, size_t errlen);
    void (*destroy)(jc_backend_t *be);
    /* Every call below returns 0, or -1 with a message from error(). */
    int (*init)(jc_backend_t *be);                 /* both grids from jc_initial_value */
    int (*pack)(jc_backend_t *be);                 /* current grid's faces -> send buffer */
    int (*wait_packed)(jc_backend_t *be);          /* the iteration's one host wait */
    int (*unpack)(jc_backend_t *be);               /* receive buffer -> current grid's halos */
    int (*update)(jc_backend_t *be, jc_region_t r); /* current grid -> other grid */
    int (*swap)(jc_backend_t *be);
    /* unpack, update (exterior with overlap, else all), swap, pack: as one
     * CUDA graph per grid parity when cfg->graphs. */
    int (*step)(jc_backend_t *be);
    int (*finish)(jc_backend_t *be);               /* wait for all queued work */
    /* The current grid's interior, x fastest, into host memory. */
    int (*copy_out)(jc_backend_t *be, double *interior);
    void *(*send_buffer)(jc_backend_t *be);        /* what MPI sends from */
    void *(*recv_buffer)(jc_backend_t *be);        /* what MPI receives into */
    double *(*grid)(jc_backend_t *be);             /* the current grid, halos included (-ddt) */
    const char *(*error)(jc_backend_t *be);
} jc_ops_t;

extern const jc_ops_t jc_cpu_ops;
#ifndef JACOBI_NO_CUDA
extern const jc_ops_t jc_cuda_ops;
#endif

#ifdef __cplusplus
}
#endif

#endif
