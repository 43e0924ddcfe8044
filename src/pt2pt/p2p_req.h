/* Requests: their life (new, init, release), starting a prepared one, and
 * delivering an arrived message into a matched receive. */
#ifndef AMPI_P2P_REQ_H
#define AMPI_P2P_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include "mpi.h"
#include "pt2pt/p2p_match.h"
#include "pt2pt/p2p_types.h"
#include "rank/rank_ult.h"

p2p_req_t *p2p_req_new(p2p_rank_t *r, p2p_req_kind_t kind);
p2p_req_t *p2p_req_alloc(p2p_rank_t *r); /* not initialised: p2p_req_setup (p2p_api.h) does that */
void p2p_req_release(p2p_req_t *q);
/* Blocking calls keep their request on the rank's stack: init, then cleanup
 * (what release does, without returning the memory to the free list). */
/* inline: it is on every request's path, and a call costs a fifth of it */
static inline void p2p_req_init(p2p_req_t *q, p2p_rank_t *r, p2p_req_kind_t kind)
{
    /* field by field: a memset of the whole request costs more than the
     * rest of a small send (the caller fills in the arguments) */
    q->kind = (uint8_t)kind;
    q->mode = P2P_MODE_STANDARD;
    q->persistent = q->active = q->complete = q->freed = false;
    q->posted = q->internal = q->dev = q->pull = q->cancel_asked = false;
    q->pending = 0;
    q->cma_proc = 0;
    q->wire_slot = 0;
    q->owner = r;
    /* usually the rank's own thread; a helper thread of the rank (e.g. one
     * running a nonblocking collective) waits on its own requests */
    q->waiter = rank_self();
    q->status.MPI_SOURCE = MPI_ANY_SOURCE;
    q->status.MPI_TAG = MPI_ANY_TAG;
    q->status.MPI_ERROR = MPI_SUCCESS;
    q->status.ampi_cancelled = 0;
    q->status.ampi_count = 0;
    q->tmp = NULL;
    q->bsend_seg = NULL;
    q->ubuf = q->pack = NULL;
    q->dev_dt = 0;
    q->chunks = NULL;
    q->bounce = NULL;
    q->dt = MPI_BYTE;
    q->c = NULL;
}
void p2p_req_cleanup(p2p_req_t *q);
void p2p_greq_cleanup(p2p_req_t *q); /* a generalized request's part of it (p2p_greq.c) */
/* A generalized request the library completes (p2p_req_part_done), with an
 * empty status, e.g. MPI_Buffer_iflush's; NULL: out of memory. */
p2p_req_t *p2p_greq_internal(p2p_rank_t *r);
void p2p_req_part_done(p2p_req_t *q); /* one outstanding part finished */
void p2p_req_fail(p2p_req_t *q, int mpi_err);
/* Non-contiguous datatypes travel packed: gather the user's data before a
 * send starts (p2p_req_pack), scatter it after a receive (done in part_done). */
void p2p_req_pack(p2p_req_t *q);

/* starting an operation on a prepared request */
int p2p_send_start(p2p_req_t *q);
int p2p_recv_start(p2p_req_t *q);
/* A receive and a send as one request (MPI_Isendrecv, two-rank
 * MPI_Ibarrier): the started receive rq takes one more part
 * (p2p_expect_part), then the prepared send sq starts as that part
 * (p2p_start_part) -- a request of the library's, released when it ends,
 * which finishes rq's part through its parent link. */
void p2p_expect_part(p2p_req_t *rq);
void p2p_start_part(p2p_req_t *rq, p2p_req_t *sq);
/* deliver an arrived message into a matched receive (frees msg) */
void p2p_deliver(p2p_rank_t *r, p2p_msg_t *msg, p2p_req_t *q);
void p2p_msg_free(p2p_msg_t *msg);
/* Fill a matched receive's status; returns the bytes to copy (truncated).
 * In line: every delivery does it, and a call cost as much. */
static inline size_t p2p_fill_status(p2p_req_t *rq, int src, int tag, size_t size)
{
    size_t n = size;
    rq->status.MPI_SOURCE = src;
    rq->status.MPI_TAG = tag;
    if (__builtin_expect(n > rq->bytes, 0)) {
        n = rq->bytes;
        rq->status.MPI_ERROR = MPI_ERR_TRUNCATE;
    }
    rq->status.ampi_count = (long long)n;
    return n;
}

/* Takes posted receive q out of r's queue for an arriving message, noting
 * when it was r's last (p2p_shm_envelope then ends its poll: p2p_recv.c). */
static inline void p2p_posted_take(p2p_rank_t *r, p2p_req_t *q)
{
    p2p_posted_remove(&r->posted, &q->m);
    q->posted = false;
    p2p_proc.rank_fed |= r->posted.count == 0;
}

#endif
