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
 *    data's GPU when an operand is device memory (ops without one run on
 *    host copies).
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
void *coll_dev_scratch(size_t bytes); /* device memory alone (a GPU in use) */
void coll_scratch_free_any(void *p);
/* NULL (no scratch was needed: the common case of small reductions) in line. */
static inline void coll_scratch_free(void *p)
{
    if (p)
        coll_scratch_free_any(p);
}

/* inout = in op inout when either operand is device memory: a kernel on
 * the device (a host operand is staged through device scratch), or, for an
 * op without one (user ops, long double types, a library built without
 * nvcc), the CPU on host copies.  Any op works on any buffers, so no rank
 * of a reduction refuses what another accepts.  Returns false, doing
 * nothing, when both are host memory. */
bool coll_dev_apply(const struct coll_op *o, const void *in, void *inout, size_t count);

/* gpu_elem_t of a predefined datatype (signed kinds as they are), -1 when
 * it has no device representation (long double types, derived types). */
int coll_dev_elem(MPI_Datatype dt);

/* Whether the device algorithms of a collective (the flat Bcast, NCCL) run
 * on this call.  They exchange other messages than the host algorithms, so
 * every rank must choose alike, and a rank cannot see the others' buffers:
 * the caller asks only on calls that every rank finds eligible from the
 * values they share (count, type, op, communicator), passing whether its
 * own buffers of the call are device memory, and the ranks agree (a host
 * allreduce of that flag) on the 1st, 2nd, 4th, 8th, ... such call of the
 * communicator until one finds device buffers on every rank.  From then on
 * the answer is yes without a message, and a rank whose buffers are host
 * memory takes part with them (NCCL stages them through device memory).
 * A program with host buffers only pays a few agreements per
 * communicator; one with device buffers pays one. */
bool coll_dev_agreed(p2p_rank_t *r, core_comm_t *c, bool mine);

/* The device kernel of predefined op on dt, loaded: true with *gop and
 * *elem set; false where there is none (user ops, long double types, a
 * build without nvcc, a module that did not load).  One-sided accumulates
 * into device windows use it. */
bool coll_dev_kernel_for(MPI_Op op, MPI_Datatype dt, gpu_op_t *gop, gpu_elem_t *elem);

/* Wait for device work while the other ranks of the PE run. */
void coll_dev_wait(gpu_work_t *w);

/* The NCCL fast path of a blocking collective.  Returns true when NCCL ran
 * it (*err: its MPI error class); false when it does not apply, alike on
 * every rank: no GPU, AMPI_NCCL=0, an op or type NCCL lacks, ranks that
 * have not agreed on device buffers (coll_dev_agreed), or a communicator
 * whose ranks do not each own a process and a GPU (decided once per
 * communicator, collectively).  A rank's host buffers are staged through
 * device memory.
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

/* Small collectives on host copies (coll_dev_host.c): a blocking Allreduce
 * or Reduce of at most AMPI_GPU_COLL_HOST_MAX bytes (Bcast: 8 KiB at most)
 * runs the host algorithm on every rank, decided from the byte count alone;
 * a rank copies its device operands to pinned host memory and the result
 * back.  Any op and type the host path takes works there. */
size_t coll_stage_max(void);
#define COLL_BCAST_STAGE_MAX 8192 /* above it one device message (CUDA IPC, one copy) beats two copies */
static inline bool coll_stage_wanted(const core_comm_t *c, size_t bytes)
{
    return UTIL_UNLIKELY(gpu_enabled()) && c->size > 1 && bytes > 0 && bytes <= coll_stage_max();
}
static inline bool coll_stage_bcast_wanted(const core_comm_t *c, size_t bytes)
{
    return UTIL_UNLIKELY(gpu_enabled()) && c->size > 1 && bytes > 0 && bytes <= COLL_BCAST_STAGE_MAX;
}
int coll_staged_allreduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                          const struct coll_op *op, int tag);
int coll_staged_reduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                       const struct coll_op *op, int root, int tag);
int coll_staged_bcast(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int root, int tag);

#endif
