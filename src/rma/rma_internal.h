/* What the files of the one-sided layer share beyond rma.h. */
#ifndef AMPI_RMA_INTERNAL_H
#define AMPI_RMA_INTERNAL_H

#include "pt2pt/p2p_api.h"
#include "rma/rma.h"

/* In an MPI_Win_* call: the calling rank's window W of handle H, or
 * return MPI_ERR_WIN (there is no window whose error handler could run). */
#define RMA_WIN(W, H, FN)                                                                                      \
    P2P_ENTER(r_, FN);                                                                                         \
    (void)r_;                                                                                                  \
    rma_win_t *W = rma_win_of(H);                                                                              \
    if (!W)                                                                                                    \
    return core_error(NULL, MPI_ERR_WIN, FN)

/* Hook the one-sided worker into the ranks' progress (first window). */
void rma_progress_start(void);
/* Delete every attribute of w, calling the delete callbacks (MPI_Win_free). */
void rma_attrs_delete_all(rma_win_t *w);

/* Puts and gets to host windows of other processes of the node: the origin
 * copies with process_vm_writev/readv itself (rma_cma.c), so they complete at
 * once and the target does nothing.  Off with the point-to-point CMA route
 * (AMPI_CMA=0, or where ptrace rules forbid it).  MPI_SUCCESS or an error class. */
int rma_cma_copy(rma_win_t *w, int t, bool write, void *local, uint64_t remote, const rma_seg_t *segs,
                 uint32_t nseg, size_t len);

/* Small contiguous puts and gets by CMA wait in a batch per target until a
 * synchronization completes them (rma_cma.c); MPI_SUCCESS or an error class. */
bool rma_cma_batchable(size_t len);
int rma_cma_defer(rma_win_t *w, int t, bool write, void *local, uint64_t remote, size_t len);
int rma_cma_drain(rma_win_t *w, int t); /* t < 0: every target */
void rma_cma_free(rma_win_t *w);

/* Puts and gets to device windows this process reaches (its ranks', or
 * mapped by CUDA IPC) start device copies and return (rma_dev.c).
 * rma_dev_copy: len bytes between local and the target's segments (NULL:
 * one at target); q (Rput/Rget) completes once they ran.  rma_dev_drain
 * waits for them (t < 0: every target): at each synchronization that
 * completes operations to t, and before anything else touches t's memory
 * (accumulates).  MPI_SUCCESS or an error class. */
int rma_dev_copy(rma_win_t *w, int t, char *target, const rma_seg_t *segs, uint32_t nseg, void *local,
                 size_t len, bool write, struct AMPI_Request_s *q);
void rma_dev_drain(rma_win_t *w, int t);

/* rma_buf.c: buffers a target answers from, kept for the next answer;
 * rma_buf_put takes any buffer a send frees (others go to free). */
void *rma_buf_get(size_t len);
void rma_buf_put(void *p);
void rma_buf_fini(void);
void rma_dev_free(rma_win_t *w); /* MPI_Win_free */

/* Accumulates into device memory of at least RMA_DEV_ACC_MIN bytes run
 * the reduction kernels of the collectives on the GPU (rma_dev.c); smaller
 * ones combine on the host, whose two small copies cost less than a kernel
 * launch (osu_get_acc_latency D D: the host route beat Open MPI's up to
 * 2 KiB and lost from 8 KiB on 2 x H200).  rma_dev_reduce: inout (device)
 * op= in (host or device) for plain predefined types; false, doing nothing,
 * where no kernel applies; yield: let the PE's other ranks run while the
 * kernel does (never while holding a window's mutex).  rma_dev_acc: an
 * accumulate (result: get_accumulate's, else NULL) applied by the origin
 * itself to target memory mapped here; MPI_SUCCESS or an error class. */
#define RMA_DEV_ACC_MIN 4096
bool rma_dev_reduce_ok(MPI_Op op, MPI_Datatype basic);
bool rma_dev_reduce(void *inout, const void *in, size_t bytes, MPI_Op op, MPI_Datatype basic, bool yield);
int rma_dev_acc(void *target, const void *origin, void *result, size_t bytes, MPI_Op op, MPI_Datatype basic);

/* Window memory shared with the other processes of the node (rma_shm.c). */
bool rma_shm_wanted(rma_win_t *w);               /* members in other processes of this node? */
int rma_shm_alloc(rma_win_t *w, size_t size);    /* our memory in a named object: 0, or -1 */
void rma_shm_map_peer(rma_win_t *w, int i, size_t size); /* map member i's (leaves map NULL on failure) */
void rma_shm_unlink_own(rma_win_t *w);           /* once every peer mapped it */
void rma_shm_release(rma_win_t *w);              /* MPI_Win_free: unmap everything */
void rma_acc_lock_init(pthread_mutex_t *m);      /* process-shared, robust */
void rma_acc_lock(pthread_mutex_t *m);
void rma_acc_unlock(pthread_mutex_t *m);

#endif
