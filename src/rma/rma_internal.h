/* What the files of the one-sided layer share beyond rma.h. */
#ifndef AMPI_RMA_INTERNAL_H
#define AMPI_RMA_INTERNAL_H

#include "rma/rma.h"

/* Hook the one-sided worker into the ranks' progress (first window). */
void rma_progress_start(void);
/* Delete every attribute of w, calling the delete callbacks (MPI_Win_free). */
void rma_attrs_delete_all(rma_win_t *w);

#endif
