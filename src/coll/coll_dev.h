/* Device (CUDA) buffers in the collectives.
 *
 * The algorithms are the host ones: their messages already move device data
 * (the point-to-point layer handles device buffers), and the three places
 * where they touch data themselves become device-aware here:
 *  - copies (coll_copy in coll.h) go through the device when either side is
 *    device memory;
 *  - scratch space follows the memory kind of the user's buffer
 *    (coll_scratch), so that device data never takes a host round trip;
 *  - reductions (coll_op_apply) run a CUDA kernel of gpu_kernels.cu on the
 *    data's GPU when an operand is device memory.
 * Blocking Allreduce, Reduce, Bcast, Allgather and Reduce_scatter_block may
 * instead hand the whole operation to NCCL (coll_dev_nccl.c).
 * Device work is waited for by polling while the other ranks of the PE run. */
#ifndef AMPI_COLL_DEV_H
#define AMPI_COLL_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include "gpu/gpu.h"
#include "gpu/gpu_reduce.h"
#include "pt2pt/p2p.h"
#include "util/util_log.h"

struct coll_op;

/* Copy between any memory kinds (the buffers must not overlap unless both
 * are host memory). */
void coll_dev_copy(void *dst, const void *src, size_t bytes);

/* Scratch space of `bytes` in the memory kind of `like` (device memory from
 * the GPU pool, host memory from the rank's cache: coll_host_scratch);
 * never NULL (aborts the job when out of memory).  coll_scratch_free
 * takes either kind, and NULL. */
void *coll_scratch(size_t bytes, const void *like);
void coll_scratch_free_any(void *p);
/* NULL (no scratch was needed: the common case of small reductions) in line. */
static inline void coll_scratch_free(void *p)
{
    if (p)
        coll_scratch_free_any(p);
}

/* MPI_SUCCESS, or MPI_ERR_UNSUPPORTED_OPERATION (with a message saying why)
 * when buffer a or b (either may be NULL) is device memory and the op has
 * no device kernel: user-defined ops, long double types, a library built
 * without nvcc.  Called by the reductions' argument checks. */
int coll_dev_check_op_any(const struct coll_op *o, const void *a, const void *b);
/* Without a GPU every buffer is host memory: answered in line (the
 * reductions' argument checks run on every call). */
static inline int coll_dev_check_op(const struct coll_op *o, const void *a, const void *b)
{
    return UTIL_UNLIKELY(gpu_enabled()) ? coll_dev_check_op_any(o, a, b) : MPI_SUCCESS;
}

/* inout = in op inout on the device when either operand is device memory
 * (a host operand is staged through device scratch); returns false, doing
 * nothing, when both are host memory. */
bool coll_dev_apply(const struct coll_op *o, const void *in, void *inout, size_t count);

/* gpu_elem_t of a predefined datatype (signed kinds as they are), -1 when
 * it has no device representation (long double types, derived types). */
int coll_dev_elem(MPI_Datatype dt);

/* Wait for device work while the other ranks of the PE run. */
void coll_dev_wait(gpu_work_t *w);

/* The NCCL fast path of a blocking collective.  Returns true when NCCL ran
 * it (*err: its MPI error class); false when it does not apply: no GPU,
 * AMPI_NCCL=0, host buffers, an op or type NCCL lacks, or a communicator
 * whose ranks do not each own a process and a GPU (decided once per
 * communicator, collectively, at its first eligible call).
 *  ALLREDUCE, REDUCE (root), REDUCE_SCATTER: `count` elements per rank
 *  block (REDUCE_SCATTER: recvcount), `op` an MPI_Op; in == MPI_IN_PLACE
 *  allowed where MPI allows it.  BCAST, ALLGATHER: `count` bytes (per rank
 *  for ALLGATHER), dt and op unused. */
typedef enum { COLL_NCCL_ALLREDUCE, COLL_NCCL_REDUCE, COLL_NCCL_BCAST, COLL_NCCL_ALLGATHER,
               COLL_NCCL_REDUCE_SCATTER } coll_nccl_kind_t;
typedef struct {
    coll_nccl_kind_t kind;
    const void *in;
    void *out;
    size_t count;
    MPI_Datatype dt;
    MPI_Op op;
    int root;
} coll_nccl_call_t;
bool coll_nccl_run(p2p_rank_t *r, core_comm_t *c, const coll_nccl_call_t *call, int *err);
static inline bool coll_nccl_try(p2p_rank_t *r, core_comm_t *c, const coll_nccl_call_t *call, int *err)
{
    return UTIL_UNLIKELY(gpu_enabled()) && c->size > 1 && call->count > 0 && coll_nccl_run(r, c, call, err);
}

/* Small device collectives on host copies (coll_dev_host.c): a blocking
 * Allreduce or Reduce of at most AMPI_GPU_COLL_HOST_MAX bytes (Bcast: 8 KiB
 * at most) whose buffers include device memory copies its device operands
 * to pinned host memory, runs the host algorithm and copies the result
 * back.  Any op and type the host path takes works there, user ops
 * included.  `a`, `b`: the buffers that take part on this rank (NULL or
 * MPI_IN_PLACE: none). */
bool coll_stage_wanted_any(const core_comm_t *c, const void *a, const void *b, size_t bytes);
static inline bool coll_stage_wanted(const core_comm_t *c, const void *a, const void *b, size_t bytes)
{
    return UTIL_UNLIKELY(gpu_enabled()) && coll_stage_wanted_any(c, a, b, bytes);
}
bool coll_stage_bcast_wanted(const core_comm_t *c, const void *buf, size_t bytes);
int coll_staged_allreduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                          const struct coll_op *op, int tag);
int coll_staged_reduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                       const struct coll_op *op, int root, int tag);
int coll_staged_bcast(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int root, int tag);

#endif
