/* Buffered sends (MPI_Bsend and friends) through a buffer the user attached:
 * to the communicator (MPI_Comm_attach_buffer), else to the session the
 * communicator came from (MPI_Session_attach_buffer), else to the rank
 * (MPI_Buffer_attach).  Each message takes a segment of that buffer:
 * MPI_BSEND_OVERHEAD bytes of bookkeeping (the segment record itself)
 * followed by a copy of the data, then goes out as an ordinary
 * library-owned send that frees the segment when it completes.  A buffer
 * attached as MPI_BUFFER_AUTOMATIC takes each segment from the heap.
 * Flushing waits until every message copied into a buffer has gone out. */
#ifndef AMPI_P2P_BSEND_H
#define AMPI_P2P_BSEND_H

#include "pt2pt/p2p.h"

/* *slot: the buffer of a rank, communicator or session (NULL: none). */
int p2p_bsend_attach(p2p_bsend_state_t **slot, void *buf, MPI_Count size);
/* Flushes, then detaches; MPI_ERR_BUFFER where none is attached. */
int p2p_bsend_detach(p2p_bsend_state_t **slot, void **buf, MPI_Count *size);
/* Blocks until the messages in the buffer have gone out (none: at once). */
void p2p_bsend_flush(p2p_bsend_state_t *b);
/* The same as a request that completes then. */
int p2p_bsend_iflush(p2p_rank_t *r, p2p_bsend_state_t *b, MPI_Request *req);
/* The buffer that a buffered send of r on c uses, or NULL. */
p2p_bsend_state_t *p2p_bsend_of(p2p_rank_t *r, const core_comm_t *c);
/* A communicator or session goes: its buffer (after its messages went out). */
void p2p_bsend_free(p2p_bsend_state_t *b);
/* Copies the data of q (a BUFFERED send) and starts it; q completes at once. */
int p2p_bsend_start(p2p_req_t *q);
/* A library-owned buffered send finished: free its segment. */
void p2p_bsend_done(p2p_req_t *internal);

#endif
