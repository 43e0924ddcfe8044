/* Starting sends: the route selector and the start of each send on its
 * route (p2p_routes.h lists the routes and their files), and the LOCAL
 * route.  The protocols are described in p2p.h. */
#include "pt2pt/p2p.h"
#include "gpu/gpu_dt.h"
#include "util/util_log.h"

#include <stdlib.h>
#include <string.h>

static inline void wake_if_probing(p2p_rank_t *r)
{
    if (r->probing && r->core.ult && r->core.ult->state == RANK_ULT_BLOCKED)
        rank_wake(r->core.ult);
}

/* LOCAL: match against the receiver's posted queue and copy once; else a
 * small standard send is copied into an unexpected message, a large or
 * synchronous one leaves a message pointing at our buffer. */
void p2p_local_start(p2p_req_t *q, p2p_rank_t *dst)
{
    const core_comm_t *c = q->c;
    q->msg_key = q->owner->local_sends++;
    p2p_mentry_t *e = p2p_posted_match(&dst->posted, q->ctx, c->rank, q->tag);
    if (e) {
        p2p_req_t *rq = UTIL_CONTAINER_OF(e, p2p_req_t, m);
        rq->posted = false;
        size_t n = p2p_fill_status(rq, c->rank, q->tag, q->bytes);
        if (UTIL_UNLIKELY(q->dev || rq->dev)) {
            q->pending++;
            p2p_copy_then_complete(rq->buf, q->buf, n, rq, q, NULL);
            return;
        }
        if (n)
            memcpy(rq->buf, q->buf, n);
        p2p_req_part_done(rq);
        return;
    }
    /* device data is never copied by the CPU: the receiver copies it */
    bool eager = !q->dev && q->bytes <= p2p_proc.eager_limit && q->mode != P2P_MODE_SYNC;
    p2p_msg_t *msg = malloc(sizeof *msg + (eager ? q->bytes : 0));
    if (!msg)
        util_fatal("out of memory for a message");
    msg->m.ctx = q->ctx;
    msg->m.src = c->rank;
    msg->m.tag = q->tag;
    msg->size = q->bytes;
    msg->src_world = q->owner->core.world;
    msg->sync = q->mode == P2P_MODE_SYNC;
    msg->packing = false;
    msg->dev = q->dev;
    msg->pooled = false;
    msg->lreq = q;
    msg->key = q->msg_key;
    if (eager) {
        msg->kind = P2P_MSG_EAGER;
        if (q->bytes)
            memcpy(msg + 1, q->buf, q->bytes);
        msg->data = msg + 1;
    } else {
        /* zero-copy: the receiver copies from our buffer and completes us */
        msg->kind = P2P_MSG_LOCAL;
        msg->data = q->buf;
        q->pending++;
    }
    p2p_unexp_add(&dst->unexpected, &msg->m);
    wake_if_probing(dst);
}

void p2p_env_sent(ucx_op_t *op, int status, size_t len)
{
    (void)len;
    p2p_req_t *q = UTIL_CONTAINER_OF(op, p2p_req_t, op_env);
    if (status)
        p2p_req_fail(q, MPI_ERR_OTHER);
    p2p_req_part_done(q);
}

/* Sends q's envelope followed by a descriptor of desc_len bytes already in
 * q->inl (the CUDA IPC and CMA routes): the receiver copies from our buffer
 * and settles the request with 1 + extra ACKs (an Ssend counted one
 * already). */
void p2p_send_desc_envelope(p2p_req_t *q, int proc, uint8_t kind, size_t desc_len, int extra)
{
    p2p_wire_hdr_t *h = &q->hdr;
    h->kind = kind;
    if (!(h->flags & P2P_WIRE_SYNC)) { /* an Ssend counted its ACK already */
        h->sreq = p2p_reqid_issue(q);
        q->pending++;
    }
    q->pending += extra + 1; /* + the envelope's own send */
    int rc = p2p_env_send(proc, h, sizeof *h + desc_len, NULL, 0, &q->op_env);
    if (rc == 1)
        return;
    if (rc < 0) {
        /* the receiver will never ACK what it never saw */
        p2p_req_fail(q, MPI_ERR_OTHER);
        q->pending -= extra + 1;
    }
    q->pending--;
}

void p2p_ucx_started(p2p_req_t *q, int rc)
{
    if (rc == 1)
        return;
    if (rc < 0)
        p2p_req_fail(q, MPI_ERR_OTHER);
    q->pending--;
}

#define DECLINED(rt) (declined & (1u << (rt)))

p2p_route_t p2p_route_select(const p2p_req_t *q, int dst_world, unsigned declined)
{
    p2p_route_t rt = p2p_route_first(dst_world, q->bytes, q->dev, q->mode == P2P_MODE_SYNC);
    if (rt != P2P_ROUTE_OTHER)
        return rt;
    if (!q->dev) {
        if (q->bytes <= p2p_proc.eager_limit)
            return P2P_ROUTE_EAGER;
        if (!DECLINED(P2P_ROUTE_MEDIUM) && q->bytes <= SHM_MEDIUM_MAX - sizeof(p2p_wire_hdr_t) && !q->pull &&
            q->owner->posted.count == 0 && shm_streaming(p2p_proc_of(dst_world)))
            return P2P_ROUTE_MEDIUM;
        return DECLINED(P2P_ROUTE_CMA) ? P2P_ROUTE_RNDV : P2P_ROUTE_CMA;
    }
    if (p2p_proc.gpu_ipc && !DECLINED(P2P_ROUTE_IPC))
        return P2P_ROUTE_IPC;
    if (p2p_proc.ucx_cuda)
        return P2P_ROUTE_RNDV; /* UCX moves the device payload itself */
    return q->bytes > p2p_proc.eager_limit ? P2P_ROUTE_STAGED : P2P_ROUTE_STAGED_EAGER;
}

/* The envelope header of q to dst_world, for every route to another
 * process: it takes q's place in the pair's sequence. */
static void header_fill(p2p_req_t *q, int dst_world)
{
    p2p_rank_t *me = q->owner;
    p2p_wire_hdr_t *h = &q->hdr;
    h->ctx = q->ctx;
    h->src = q->c->rank;
    h->tag = q->tag;
    h->src_world = me->core.world;
    h->dst_world = dst_world;
    h->seq = (*p2p_seq(&me->send_seq, dst_world))++;
    q->msg_key = h->seq;
    h->size = q->bytes;
    h->flags = 0;
    h->sreq = 0;
    if (q->mode == P2P_MODE_SYNC) {
        h->flags = P2P_WIRE_SYNC;
        h->sreq = p2p_reqid_issue(q);
        q->pending++; /* the ACK */
    }
    if (UTIL_UNLIKELY(q->dev))
        h->flags |= P2P_WIRE_DEVICE;
    q->op_env.done = p2p_env_sent;
}

/* Starts q on route rt; false when the route declined (nothing done). */
static bool route_start(p2p_req_t *q, p2p_route_t rt, int proc)
{
    switch (rt) {
    case P2P_ROUTE_SHORT:
        p2p_short_start(q, proc);
        return true;
    case P2P_ROUTE_EAGER:
        p2p_eager_start(q, proc, q->buf);
        return true;
    case P2P_ROUTE_MEDIUM:
        return p2p_medium_start(q, proc);
    case P2P_ROUTE_CMA:
        return p2p_cma_start(q, proc);
    case P2P_ROUTE_IPC:
        return p2p_ipc_start(q, proc);
    case P2P_ROUTE_RNDV:
        p2p_rndv_start(q, proc);
        return true;
    case P2P_ROUTE_STAGED:
        p2p_stage_start(q, proc);
        return true;
    case P2P_ROUTE_STAGED_EAGER:
        p2p_stage_eager_start(q, proc);
        return true;
    case P2P_ROUTE_LOCAL:
    case P2P_ROUTE_OTHER:
        break;
    }
    util_fatal("send route %d has no start", (int)rt);
}

static void send_to(p2p_req_t *q, int dst_world)
{
    unsigned declined = 0;
    p2p_route_t rt = p2p_route_select(q, dst_world, declined);
    if (UTIL_UNLIKELY(q->chunks != NULL) && rt != P2P_ROUTE_IPC)
        p2p_dev_pack_finish(q); /* only the IPC route sends while packing */
    if (rt == P2P_ROUTE_LOCAL) {
        p2p_local_start(q, p2p_local(dst_world));
        return;
    }
    int proc = p2p_proc_of(dst_world);
    header_fill(q, dst_world);
    while (!route_start(q, rt, proc)) {
        declined |= 1u << rt;
        rt = p2p_route_select(q, dst_world, declined);
        if (UTIL_UNLIKELY(q->chunks != NULL) && rt != P2P_ROUTE_IPC)
            p2p_dev_pack_finish(q);
    }
    if (UTIL_UNLIKELY(util_debug_enabled) && q->dev)
        p2p_tally_device(rt, proc);
}

int p2p_send_start(p2p_req_t *q)
{
    if (UTIL_UNLIKELY(q->dev_dt)) {
        if (q->chunks) { /* a persistent send started again: its last pack has run (its send completed) */
            gpu_dt_chunks_wait(q->chunks);
            gpu_dt_chunks_free(q->chunks);
            q->chunks = NULL;
        }
        if (!p2p_dev_pack_chunks_start(q))
            p2p_req_pack(q);
    } else {
        p2p_req_pack(q);
    }
    q->complete = false;
    q->active = true;
    q->pending = 1; /* held by us until set up */
    q->status.MPI_SOURCE = MPI_ANY_SOURCE;
    q->status.MPI_TAG = MPI_ANY_TAG;
    q->status.MPI_ERROR = MPI_SUCCESS;
    q->status.ampi_cancelled = 0;
    q->status.ampi_count = 0;
    q->cancel_asked = false;
    if (q->peer != MPI_PROC_NULL)
        send_to(q, core_comm_world_rank(q->c, q->peer));
    p2p_req_part_done(q);
    return MPI_SUCCESS;
}
