/* NCCL, loaded at run time (dlopen "libnccl.so.2"; never linked), for the
 * collectives' fast path between processes that each drive one GPU.  Only
 * the few NCCL types and values used are declared here (gpu_nccl.c checks
 * them against <nccl.h> when that header is there).  Operations go on the
 * collective stream of gpu_reduce.h and complete through a gpu_work_t. */
#ifndef AMPI_GPU_NCCL_H
#define AMPI_GPU_NCCL_H

#include <stdbool.h>
#include <stddef.h>
#include "gpu/gpu_reduce.h"

#define GPU_NCCL_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */

/* ncclDataType_t and ncclRedOp_t values. */
typedef enum {
    GPU_NCCL_INT8 = 0, GPU_NCCL_UINT8 = 1, GPU_NCCL_INT32 = 2, GPU_NCCL_UINT32 = 3,
    GPU_NCCL_INT64 = 4, GPU_NCCL_UINT64 = 5, GPU_NCCL_FLOAT16 = 6, GPU_NCCL_FLOAT32 = 7,
    GPU_NCCL_FLOAT64 = 8
} gpu_nccl_type_t;
typedef enum { GPU_NCCL_SUM = 0, GPU_NCCL_PROD = 1, GPU_NCCL_MAX = 2, GPU_NCCL_MIN = 3 } gpu_nccl_op_t;

typedef enum {
    GPU_NCCL_ALLREDUCE, GPU_NCCL_REDUCE, GPU_NCCL_BCAST, GPU_NCCL_ALLGATHER, GPU_NCCL_REDUCE_SCATTER
} gpu_nccl_coll_t;

typedef struct gpu_nccl_comm gpu_nccl_comm_t; /* an ncclComm_t */

/* dlopen and resolve (once); false, quietly, when NCCL is not there. */
bool gpu_nccl_load(void);

/* ncclGetUniqueId into id[GPU_NCCL_ID_BYTES]; 0 or -1 (message printed). */
int gpu_nccl_unique_id(void *id);
/* ncclCommInitRank on this process's device (blocking, collective over the
 * nranks callers); 0 or -1 (message printed). */
int gpu_nccl_comm_init(gpu_nccl_comm_t **comm, int nranks, const void *id, int rank);
void gpu_nccl_comm_destroy(gpu_nccl_comm_t *comm);

/* Enqueue one collective on the collective stream and record w after it.
 * count is in elements of `type`; for REDUCE_SCATTER and ALLGATHER the
 * per-rank count.  `op` and `root` are ignored where meaningless.  Returns
 * 0, or -1 with a message naming the failed call. */
int gpu_nccl_start(gpu_nccl_comm_t *comm, gpu_nccl_coll_t coll, const void *in, void *out, size_t count,
                   gpu_nccl_type_t type, gpu_nccl_op_t op, int root, gpu_work_t *w);

/* An asynchronous error of comm (a peer died, a network failure): 0 while
 * all is well, else -1 with a message. */
int gpu_nccl_check(gpu_nccl_comm_t *comm);

#endif
