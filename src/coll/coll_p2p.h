/* The point-to-point steps of the collectives: requests on the collective
 * context with byte counts in size_t (collective buffers can pass 2^31
 * bytes, which an int count of MPI_BYTE could not describe). */
#ifndef AMPI_COLL_P2P_H
#define AMPI_COLL_P2P_H

#include <stdbool.h>
#include <stddef.h>
#include "pt2pt/p2p.h"

/* Start a send/receive of `bytes` bytes to/from communicator rank `peer`. */
p2p_req_t *coll_isend(p2p_rank_t *r, core_comm_t *c, const void *buf, size_t bytes, int peer, int tag);
p2p_req_t *coll_irecv(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int peer, int tag);

/* An exchange as one request, returned: the receive, with one more part
 * that the send -- a request of the library's, released when it ends --
 * finishes through its parent link (as MPI_Isendrecv does).  The receive is
 * posted first. */
p2p_req_t *coll_isendrecv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, size_t sbytes, int dst, void *rbuf,
                          size_t rbytes, int src, int tag);

/* Wait for and release n requests (NULL entries are skipped); returns the
 * first error class found, MPI_SUCCESS if none. */
int coll_waitall(p2p_req_t **reqs, int n);

/* One exchange with requests on the caller's stack: start both, do other
 * work (e.g. copy our own block) while the messages travel, then finish.
 * The receive is posted before the send, so two ranks exchanging large
 * messages (completed only when matched) cannot wait on each other. */
typedef struct coll_xchg {
    p2p_req_t rq, sq;
    bool sent; /* the send went without a request (sq unused): its error class in serr */
    int serr;
} coll_xchg_t;
void coll_xchg_start(coll_xchg_t *x, p2p_rank_t *r, core_comm_t *c, const void *sbuf, size_t sbytes, int dst,
                     void *rbuf, size_t rbytes, int src, int tag);
/* Waits for both; returns the first error class (the receive's first). */
int coll_xchg_finish(coll_xchg_t *x);

/* Blocking forms built on the above (requests on the stack). */
int coll_send(p2p_rank_t *r, core_comm_t *c, const void *buf, size_t bytes, int peer, int tag);
int coll_recv(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int peer, int tag);
/* Receives whose payload the receiver copies whole from the sender's
 * buffer, never asking the sender to write a part (p2p_req_t.pull):
 *  - device messages (CUDA IPC, p2p_ipc.c): the receivers of one sender
 *    copy at once instead of queueing behind its pushes (flat Bcast);
 *  - host messages between processes (CMA, p2p_cma.c) that this rank
 *    reduces at once: the half a sender writes sits in its core's cache.
 * coll_xchg_start's receive of host data is always one: in an exchange the
 * peer's core is busy with its own receive, so a split saves nothing. */
int coll_recv_pull(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int peer, int tag);
p2p_req_t *coll_irecv_pull(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int peer, int tag);
/* coll_xchg_start + coll_xchg_finish. */
int coll_sendrecv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, size_t sbytes, int dst, void *rbuf,
                  size_t rbytes, int src, int tag);

#endif
