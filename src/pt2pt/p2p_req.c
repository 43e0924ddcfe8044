/* Request objects: a per-rank free list, and completion by counting the
 * outstanding parts of an operation (UCX sends, payload receive, ACK, a
 * local receiver's copy).  The starter holds one part itself while it sets
 * the operation up, so nothing completes half-started. */
#include "pt2pt/p2p.h"
#include "pt2pt/p2p_bsend.h"
#include "util/util_log.h"

#include <stdlib.h>
#include <string.h>

p2p_req_t *p2p_req_new(p2p_rank_t *r, p2p_req_kind_t kind)
{
    p2p_req_t *q = r->free_reqs;
    if (q) {
        r->free_reqs = q->next_free;
    } else {
        q = malloc(sizeof *q);
        if (!q)
            util_fatal("out of memory for a request");
    }
    memset(q, 0, offsetof(p2p_req_t, hdr));
    q->kind = (uint8_t)kind;
    q->owner = r;
    return q;
}

void p2p_req_release(p2p_req_t *q)
{
    p2p_rank_t *r = q->owner;
    free(q->tmp);
    q->tmp = NULL;
    q->next_free = r->free_reqs;
    r->free_reqs = q;
}

static inline void wake(p2p_rank_t *r)
{
    if (r->ult && r->ult->state == RANK_ULT_BLOCKED)
        rank_wake(r->ult);
}

void p2p_req_part_done(p2p_req_t *q)
{
    if (--q->pending > 0)
        return;
    q->complete = true;
    p2p_rank_t *r = q->owner;
    if (q->internal) {
        p2p_bsend_done(q);
        r->internal_pending--;
        p2p_req_release(q);
    } else if (q->freed) {
        p2p_req_release(q);
    }
    wake(r);
}

void p2p_req_fail(p2p_req_t *q, int mpi_err)
{
    if (q->status.MPI_ERROR == MPI_SUCCESS)
        q->status.MPI_ERROR = mpi_err;
}
