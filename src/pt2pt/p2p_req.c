/* Request objects: a per-rank free list, and completion by counting the
 * outstanding parts of an operation (UCX sends, payload receive, ACK, a
 * local receiver's copy).  The starter holds one part itself while it sets
 * the operation up, so nothing completes half-started. */
#include "pt2pt/p2p.h"
#include "gpu/gpu_dt.h"
#include "pt2pt/p2p_bsend.h"
#include "datatype/dt.h"
#include "gpu/gpu_reduce.h" /* gpu_dev_free */
#include "util/util_log.h"

#include <stdlib.h>
#include <string.h>

p2p_req_t *p2p_req_alloc(p2p_rank_t *r)
{
    p2p_req_t *q = r->free_reqs;
    if (UTIL_LIKELY(q != NULL)) {
        r->free_reqs = q->next_free;
        return q;
    }
    q = malloc(sizeof *q);
    if (!q)
        util_fatal("out of memory for a request");
    return q;
}

p2p_req_t *p2p_req_new(p2p_rank_t *r, p2p_req_kind_t kind)
{
    p2p_req_t *q = p2p_req_alloc(r);
    p2p_req_init(q, r, kind);
    return q;
}

void p2p_req_cleanup(p2p_req_t *q)
{
    if (UTIL_UNLIKELY(q->persistent) && q->pcoll)
        q->pcoll->free(q);
    if (UTIL_UNLIKELY(q->kind == P2P_REQ_GREQ))
        p2p_greq_cleanup(q);
    if (UTIL_UNLIKELY(q->tmp != NULL)) {
        free(q->tmp);
        q->tmp = NULL;
    }
    if (q->c && UTIL_UNLIKELY(!q->c->predefined)) {
        core_comm_release(q->c);
        q->c = NULL;
    }
    if (UTIL_UNLIKELY(q->bounce != NULL)) { /* a receive that ended before its FIN */
        gpu_dev_free(q->bounce);
        q->bounce = NULL;
    }
    if (UTIL_UNLIKELY(!dt_is_plain(q->dt))) {
        if (q->chunks) { /* the kernels read the user's buffer and write pack */
            gpu_dt_chunks_wait(q->chunks);
            gpu_dt_chunks_free(q->chunks);
            q->chunks = NULL;
        }
        if (q->dev_dt)
            gpu_dev_free(q->pack);
        else
            free(q->pack);
        q->dev_dt = 0;
        q->pack = q->ubuf = NULL;
        dt_release(q->dt);
        q->dt = MPI_BYTE;
    }
}

void p2p_req_release(p2p_req_t *q)
{
    p2p_rank_t *r = q->owner;
    p2p_req_cleanup(q);
    q->kind = P2P_REQ_DEAD;
    q->next_free = r->free_reqs;
    r->free_reqs = q;
}

static inline void wake(rank_ult_t *u)
{
    if (u && u->state == RANK_ULT_BLOCKED)
        rank_wake(u);
}

void p2p_req_pack(p2p_req_t *q)
{
    if (UTIL_UNLIKELY(q->pack != NULL)) { /* pack, not ubuf: ubuf is NULL for MPI_BOTTOM */
        if (q->dev_dt)
            p2p_dev_pack(q);
        else
            dt_pack(q->ubuf, q->count, q->dt, q->pack);
    }
}

void p2p_req_part_done(p2p_req_t *q)
{
    if (--q->pending > 0)
        return;
    if (UTIL_UNLIKELY(q->pack != NULL) && q->kind == P2P_REQ_RECV && !q->status.ampi_cancelled) {
        if (q->dev_dt == 1) { /* the GPU scatters; this runs again once it has */
            q->dev_dt = 2;
            q->pending = 1;
            p2p_dev_unpack_then_complete(q);
            return;
        }
        if (!q->dev_dt)
            dt_unpack(q->pack, (size_t)q->status.ampi_count, q->ubuf, q->count, q->dt);
    }
    q->complete = true;
    if (UTIL_UNLIKELY((q->cma_proc | (int)q->wire_slot) != 0)) { /* peers named it: they are done with it */
        if (q->wire_slot)
            p2p_reqid_retire(q);
        if (q->cma_proc)
            p2p_cma_settled(q);
    }
    p2p_rank_t *r = q->owner;
    rank_ult_t *waiter = q->waiter ? q->waiter : r->core.ult; /* q may be released below */
    if (q->internal) {
        if (q->bsend_seg)
            p2p_bsend_done(q);
        r->internal_pending--;
        p2p_req_release(q);
    } else if (q->freed) {
        p2p_req_t *parent = q->parent;
        p2p_req_release(q);
        if (UTIL_UNLIKELY(parent != NULL))
            p2p_req_part_done(parent);
    }
    wake(waiter);
}

void p2p_req_fail(p2p_req_t *q, int mpi_err)
{
    if (q->status.MPI_ERROR == MPI_SUCCESS)
        q->status.MPI_ERROR = mpi_err;
}
