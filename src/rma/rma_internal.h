/* What the files of the one-sided layer share beyond rma.h. */
#ifndef AMPI_RMA_INTERNAL_H
#define AMPI_RMA_INTERNAL_H

#include "rma/rma.h"

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

#endif
