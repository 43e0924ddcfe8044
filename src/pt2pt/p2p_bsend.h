/* Buffered sends (MPI_Bsend and friends) through the user's attached buffer.
 * Each message takes a segment of that buffer: MPI_BSEND_OVERHEAD bytes of
 * bookkeeping (the segment record itself) followed by a copy of the data,
 * then goes out as an ordinary library-owned send that frees the segment
 * when it completes. */
#ifndef AMPI_P2P_BSEND_H
#define AMPI_P2P_BSEND_H

#include "pt2pt/p2p.h"

int p2p_bsend_attach(p2p_rank_t *r, void *buf, int size);
/* Waits for the buffered sends still using the buffer. */
int p2p_bsend_detach(p2p_rank_t *r, void **buf, int *size);
/* Copies the data of q (a BUFFERED send) and starts it; q completes at once. */
int p2p_bsend_start(p2p_req_t *q);
/* A library-owned buffered send finished: free its segment. */
void p2p_bsend_done(p2p_req_t *internal);

#endif
