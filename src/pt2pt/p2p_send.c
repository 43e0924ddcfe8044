/* Starting sends: to a rank of this process (direct match/copy) or to
 * another process (eager envelope, or envelope + payload tag).  The
 * protocols are described in p2p.h. */
#include "pt2pt/p2p.h"
#include "ucx/ucx_tag.h"
#include "util/util_log.h"

#include <stdlib.h>
#include <string.h>

static inline void wake_if_probing(p2p_rank_t *r)
{
    if (r->probing && r->core.ult->state == RANK_ULT_BLOCKED)
        rank_wake(r->core.ult);
}

static void send_local(p2p_req_t *q, p2p_rank_t *dst)
{
    const core_comm_t *c = q->c;
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
    msg->dev = q->dev;
    msg->pooled = false;
    msg->lreq = NULL;
    if (eager) {
        msg->kind = P2P_MSG_EAGER;
        if (q->bytes)
            memcpy(msg + 1, q->buf, q->bytes);
        msg->data = msg + 1;
    } else {
        /* zero-copy: the receiver copies from our buffer and completes us */
        msg->kind = P2P_MSG_LOCAL;
        msg->data = q->buf;
        msg->lreq = q;
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

static void payload_sent(ucx_op_t *op, int status, size_t len)
{
    (void)len;
    p2p_req_t *q = UTIL_CONTAINER_OF(op, p2p_req_t, op_data);
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

/* Account for a UCX operation's start: rc 0 = done already, 1 = callback later. */
static void ucx_started(p2p_req_t *q, int rc)
{
    if (rc == 1)
        return;
    if (rc < 0)
        p2p_req_fail(q, MPI_ERR_OTHER);
    q->pending--;
}

static void send_remote(p2p_req_t *q, int dst_world)
{
    p2p_rank_t *me = q->owner;
    p2p_wire_hdr_t *h = &q->hdr;
    int proc = p2p_proc_of(dst_world);
    h->ctx = q->ctx;
    h->src = q->c->rank;
    h->tag = q->tag;
    h->src_world = me->core.world;
    h->dst_world = dst_world;
    h->seq = (*p2p_seq(&me->send_seq, dst_world))++;
    h->size = q->bytes;
    h->flags = 0;
    h->sreq = 0;
    if (q->mode == P2P_MODE_SYNC) {
        h->flags = P2P_WIRE_SYNC;
        h->sreq = p2p_reqid_issue(q);
        q->pending++; /* the ACK */
    }
    q->op_env.done = p2p_env_sent;
    const void *data = q->buf;
    ucx_mem_t mem = UCX_MEM_HOST;
    int tag_type = UCX_TAG_PAYLOAD;
    if (UTIL_UNLIKELY(q->dev)) {
        h->flags |= P2P_WIRE_DEVICE;
        if (p2p_proc.gpu_ipc && p2p_ipc_send(q, proc))
            return;
        if (p2p_proc.ucx_cuda) {
            /* the device payload goes to UCX as is, always by rendezvous */
            mem = p2p_ucx_mem(q->buf, q->bytes);
            tag_type = UCX_TAG_DEVICE;
            goto rendezvous;
        }
        /* host-staging fallback: this UCX cannot read device memory */
        if (q->bytes > p2p_proc.eager_limit) {
            p2p_stage_send(q, proc, h);
            return;
        }
        q->tmp = malloc(q->bytes);
        if (!q->tmp)
            util_fatal("out of memory for a staging buffer of %zu bytes", q->bytes);
        p2p_copy_sync(q->tmp, q->buf, q->bytes);
        data = q->tmp;
    }
    if (q->bytes > p2p_proc.eager_limit && !q->dev) {
        /* Streaming one way (the receiver has yet to take our earlier
         * envelopes, and this rank waits for no message itself): up to 32
         * KiB go eager through its ring, if it has room.  Its core then
         * copies out of the ring while ours, otherwise idle, copies the
         * next one in; by process_vm_readv its core alone copies, and
         * osu_bw's 16-32 KiB windows ran at 0.7-0.9x Open MPI's rate.  A
         * lone message still takes the single copy (lower latency), and so
         * does a rank with receives posted (osu_bibw: both cores already
         * copy, and two copies a message halved its 32 KiB rate here) or
         * a collective's exchange (q->pull, coll_xchg_start). */
        if (q->bytes <= SHM_MEDIUM_MAX - sizeof *h && !q->pull && me->posted.count == 0 && shm_streaming(proc)) {
            h->kind = P2P_WIRE_EAGER;
            if (shm_send(proc, h, sizeof *h, data, q->bytes)) {
                shm_mark(proc);
                return; /* done: the envelope holds the data */
            }
        }
        if (p2p_cma_send(q, proc)) {
            shm_mark(proc);
            return; /* the receiver reads our buffer (p2p_cma.c) */
        }
    }
    if (q->bytes <= p2p_proc.eager_limit) {
        h->kind = P2P_WIRE_EAGER;
        q->pending++;
        if (q->bytes <= P2P_INLINE_MAX && h->flags == 0) {
            /* the compact envelope (p2p.h), built over the full one */
            p2p_wire_short_t s = { .kind = P2P_WIRE_EAGER_SHORT, .ctx = h->ctx, .src = h->src, .tag = h->tag,
                                   .src_world = h->src_world, .dst_world = h->dst_world, .seq = h->seq };
            memcpy(q->wire, &s, sizeof s);
            if (q->bytes) /* a 0-byte send may pass NULL */
                memcpy(q->wire + sizeof s, data, q->bytes);
            ucx_started(q, p2p_env_send(proc, q->wire, sizeof s + q->bytes, NULL, 0, &q->op_env));
        } else if (q->bytes <= P2P_INLINE_MAX) {
            memcpy(q->inl, data, q->bytes);
            ucx_started(q, p2p_env_send(proc, h, sizeof *h + q->bytes, NULL, 0, &q->op_env));
        } else {
            ucx_started(q, p2p_env_send(proc, h, sizeof *h, data, q->bytes, &q->op_env));
        }
        return;
    }
rendezvous:
    h->kind = P2P_WIRE_RNDV;
    h->payload_tag = ucx_fresh_tag(tag_type);
    q->pending += 2;
    ucx_started(q, p2p_env_send(proc, h, sizeof *h, NULL, 0, &q->op_env));
    q->op_data.done = payload_sent;
    ucx_started(q, ucx_send_tagged(proc, data, q->bytes, h->payload_tag, mem, &q->op_data));
}

int p2p_send_start(p2p_req_t *q)
{
    p2p_req_pack(q);
    q->complete = false;
    q->active = true;
    q->pending = 1; /* held by us until set up */
    q->status.MPI_SOURCE = MPI_ANY_SOURCE;
    q->status.MPI_TAG = MPI_ANY_TAG;
    q->status.MPI_ERROR = MPI_SUCCESS;
    q->status.ampi_cancelled = 0;
    q->status.ampi_count = 0;
    if (q->peer != MPI_PROC_NULL) {
        int dst = core_comm_world_rank(q->c, q->peer);
        if (p2p_is_local(dst))
            send_local(q, p2p_local(dst));
        else
            send_remote(q, dst);
    }
    p2p_req_part_done(q);
    return MPI_SUCCESS;
}
