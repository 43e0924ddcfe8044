/* Receives: posting, matching arrived envelopes, delivering data, ACKs for
 * synchronous sends, and the ordering of envelopes from other processes. */
#include "pt2pt/p2p.h"
#include "util/util_log.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Remote envelopes are received into [p2p_msg_t][wire header][data]; the
 * struct in front turns the buffer into an unexpected message in place. */
size_t p2p_env_max(void) { return sizeof(p2p_wire_hdr_t) + p2p_proc.eager_limit; }

void *p2p_env_alloc(size_t len)
{
    p2p_msg_t *msg = p2p_proc.env_pool;
    if (msg && len == p2p_env_max()) {
        p2p_proc.env_pool = msg->next_free;
        return msg + 1;
    }
    msg = malloc(sizeof *msg + len);
    if (!msg)
        util_fatal("out of memory for an envelope of %zu bytes", len);
    msg->pooled = len == p2p_env_max();
    return msg + 1;
}

void p2p_env_pool_drain(void)
{
    while (p2p_proc.env_pool) {
        p2p_msg_t *m = p2p_proc.env_pool;
        p2p_proc.env_pool = m->next_free;
        free(m);
    }
}

void p2p_env_free(void *wire) { p2p_msg_free((p2p_msg_t *)wire - 1); }

void p2p_msg_free(p2p_msg_t *msg)
{
    if (msg->pooled) {
        msg->next_free = p2p_proc.env_pool;
        p2p_proc.env_pool = msg;
        return;
    }
    free(msg);
}

/* A control envelope in flight: its header (and descriptor) live here until
 * UCX is done. */
typedef struct p2p_ctl {
    ucx_op_t op;
    p2p_wire_hdr_t h;
    uint8_t desc[]; /* follows the header without a gap: one contiguous envelope */
} p2p_ctl_t;
_Static_assert(offsetof(p2p_ctl_t, desc) == offsetof(p2p_ctl_t, h) + sizeof(p2p_wire_hdr_t), "contiguous");

static void ctl_sent(ucx_op_t *op, int status, size_t len)
{
    (void)status;
    (void)len;
    free(UTIL_CONTAINER_OF(op, p2p_ctl_t, op));
}

void p2p_send_ctl(int proc, const p2p_wire_hdr_t *h, bool via_ucx, const char *what)
{
    p2p_send_ctl_desc(proc, h, NULL, 0, via_ucx, what);
}

void p2p_send_ctl_desc(int proc, const p2p_wire_hdr_t *h, const void *desc, size_t dlen, bool via_ucx,
                       const char *what)
{
    p2p_ctl_t *c = malloc(sizeof *c + dlen);
    if (!c)
        util_fatal("out of memory");
    c->h = *h;
    if (dlen)
        memcpy(c->desc, desc, dlen);
    c->op.done = ctl_sent;
    size_t len = sizeof c->h + dlen;
    int rc = via_ucx ? ucx_send_envelope(proc, &c->h, len, NULL, 0, &c->op)
                     : p2p_env_send(proc, &c->h, len, NULL, 0, &c->op);
    if (rc < 0)
        util_fatal("cannot send %s", what);
    if (rc == 0)
        free(c);
}

static void send_ack(const p2p_msg_t *msg) { p2p_send_ack(msg->src_world, msg->sreq); }

void p2p_send_ack(int src_world, uint64_t sreq)
{
    p2p_wire_hdr_t h = { .kind = P2P_WIRE_ACK, .dst_world = src_world, .sreq = sreq };
    p2p_send_ctl(p2p_proc_of(src_world), &h, false, "a synchronous-send acknowledgement");
}

static void payload_received(ucx_op_t *op, int status, size_t len)
{
    (void)len;
    p2p_req_t *q = UTIL_CONTAINER_OF(op, p2p_req_t, op_data);
    if (status)
        p2p_req_fail(q, MPI_ERR_OTHER);
    if (q->tmp) { /* landed in host memory: keep only what fits */
        void *t = q->tmp;
        q->tmp = NULL;
        size_t n = (size_t)q->status.ampi_count;
        if (q->dev) {
            p2p_copy_then_complete(q->buf, t, n, q, NULL, t);
            return;
        }
        memcpy(q->buf, t, n);
        free(t);
    }
    p2p_req_part_done(q);
}

void p2p_deliver(p2p_rank_t *r, p2p_msg_t *msg, p2p_req_t *q)
{
    (void)r;
    size_t n = p2p_fill_status(q, msg->m.src, msg->m.tag, msg->size);
    switch (msg->kind) {
    case P2P_MSG_EAGER:
        if (msg->sync)
            send_ack(msg);
        if (UTIL_UNLIKELY(q->dev)) {
            p2p_copy_then_complete(q->buf, msg->data, n, q, NULL, msg);
            return;
        }
        if (n)
            memcpy(q->buf, msg->data, n);
        p2p_msg_free(msg);
        p2p_req_part_done(q);
        return;
    case P2P_MSG_LOCAL: {
        p2p_req_t *sender = msg->lreq;
        if (UTIL_UNLIKELY(q->dev || msg->dev)) {
            p2p_copy_then_complete(q->buf, msg->data, n, q, sender, msg);
            return;
        }
        if (n)
            memcpy(q->buf, msg->data, n);
        p2p_msg_free(msg);
        p2p_req_part_done(sender);
        p2p_req_part_done(q);
        return;
    }
    case P2P_MSG_IPC:
        p2p_ipc_deliver(msg, q, n); /* ACKs once copied, also for Ssend */
        return;
    case P2P_MSG_CMA:
        p2p_cma_deliver(msg, q, n); /* ACKs once read, also for Ssend */
        return;
    case P2P_MSG_ERROR: /* a malformed envelope (p2p_env_arrived) */
        p2p_req_fail(q, MPI_ERR_INTERN);
        p2p_msg_free(msg);
        p2p_req_part_done(q);
        return;
    case P2P_MSG_RNDV: {
        if (msg->sync)
            send_ack(msg);
        if (UTIL_UNLIKELY(msg->stage_chunk)) { /* device data staged in chunks */
            p2p_stage_recv(q, msg, n);
            p2p_msg_free(msg);
            return;
        }
        void *target = q->buf;
        ucx_mem_t mem = q->dev ? p2p_ucx_mem(q->buf, n) : UCX_MEM_HOST;
        if (n < msg->size || (q->dev && !p2p_proc.ucx_cuda)) {
            /* a payload longer than the buffer lands whole in a bounce buffer
             * so nothing past the user's buffer is written; without a
             * CUDA-capable UCX device data is staged through host memory */
            q->tmp = malloc(msg->size);
            if (!q->tmp)
                util_fatal("out of memory");
            target = q->tmp;
            mem = UCX_MEM_HOST;
        }
        q->op_data.done = payload_received;
        int rc = ucx_recv_tagged(target, msg->size, msg->payload_tag, mem, &q->op_data);
        p2p_msg_free(msg);
        if (rc == 0)
            payload_received(&q->op_data, 0, 0);
        else if (rc < 0)
            payload_received(&q->op_data, -1, 0);
        return;
    }
    }
}

static void incoming(p2p_rank_t *r, p2p_msg_t *msg)
{
    p2p_mentry_t *e = p2p_posted_find(&r->posted, msg->m.ctx, msg->m.src, msg->m.tag);
    if (e) {
        p2p_req_t *q = UTIL_CONTAINER_OF(e, p2p_req_t, m);
        p2p_posted_take(r, q);
        p2p_deliver(r, msg, q);
        return;
    }
    p2p_unexp_add(&r->unexpected, &msg->m);
    if (r->probing && r->core.ult->state == RANK_ULT_BLOCKED)
        rank_wake(r->core.ult);
}

static inline const p2p_wire_hdr_t *wire_of(const p2p_msg_t *msg) { return (const p2p_wire_hdr_t *)(msg + 1); }

/* Enter envelopes that waited for an earlier one from the same sender. */
static void drain_stash(p2p_rank_t *r)
{
    bool moved = true;
    while (moved) {
        moved = false;
        UTIL_DLIST_FOREACH(&r->stash, it) {
            p2p_msg_t *m = UTIL_CONTAINER_OF(it, p2p_msg_t, stash_link);
            if (wire_of(m)->seq == *p2p_seq(&r->recv_seq, m->src_world)) {
                util_dlist_remove(&m->stash_link);
                (*p2p_seq(&r->recv_seq, m->src_world))++;
                incoming(r, m);
                moved = true;
                break;
            }
        }
    }
}

/* The request a reply names (p2p_wire.h), or NULL after saying why. */
p2p_req_t *p2p_reply_target(uint64_t id, const char *what)
{
    p2p_req_t *q = p2p_reqid_find(id);
    if (UTIL_UNLIKELY(!q))
        util_warn("rejected %s: request id %#llx was never issued or has completed", what, (unsigned long long)id);
    return q;
}

/* A reply whose request was found but whose body does not match its kind:
 * that request fails (the part the reply would have finished ends). */
void p2p_reply_malformed(p2p_req_t *q, const char *what, size_t len)
{
    util_warn("rejected %s of %zu bytes: malformed", what, len);
    p2p_req_fail(q, MPI_ERR_INTERN);
    p2p_req_part_done(q);
}

/* The body that a sequenced envelope of h's kind must have, or -1 for a
 * kind that is not one. */
static long body_len(const p2p_wire_hdr_t *h)
{
    switch (h->kind) {
    case P2P_WIRE_EAGER:
        return h->size <= (uint64_t)LONG_MAX ? (long)h->size : -2;
    case P2P_WIRE_RNDV:
        return (h->flags & P2P_WIRE_STAGED) && h->chunk == 0 ? -2 : 0;
    case P2P_WIRE_CMA:
        return (long)p2p_cma_desc_size();
    case P2P_WIRE_IPC:
        return P2P_IPC_DESC_SIZE;
    default:
        return -1;
    }
}

void p2p_env_arrived(void *wire, size_t len)
{
    const p2p_wire_hdr_t *h = wire;
    p2p_msg_t *msg = (p2p_msg_t *)wire - 1;
    if (UTIL_UNLIKELY(len < sizeof *h)) {
        util_warn("rejected an envelope of %zu bytes: shorter than a header", len);
        p2p_msg_free(msg);
        return;
    }
    switch (h->kind) {
    case P2P_WIRE_CTS:
        p2p_ipc_cts_arrived(h, len);
        p2p_msg_free(msg);
        return;
    case P2P_WIRE_CMA_PUT:
        p2p_cma_put_arrived(h, len);
        p2p_msg_free(msg);
        return;
    case P2P_WIRE_ACK: {
        p2p_req_t *q = p2p_reply_target(h->sreq, "an ACK");
        p2p_msg_free(msg);
        if (UTIL_LIKELY(q != NULL))
            p2p_req_part_done(q);
        return;
    }
    }
    long body = body_len(h);
    if (UTIL_UNLIKELY(body == -1 || !p2p_is_local(h->dst_world) ||
                      (unsigned)h->src_world >= (unsigned)core_proc.nranks)) {
        util_warn("rejected an envelope of kind %d from rank %d to rank %d: %s", h->kind, h->src_world,
                  h->dst_world, body == -1 ? "no such kind" : "no such rank here");
        p2p_msg_free(msg);
        return;
    }
    p2p_rank_t *r = p2p_local(h->dst_world);
    msg->m.ctx = h->ctx;
    msg->m.src = h->src;
    msg->m.tag = h->tag;
    msg->src_world = h->src_world;
    msg->size = h->size;
    msg->sync = h->flags & P2P_WIRE_SYNC;
    msg->sreq = h->sreq;
    msg->lreq = NULL;
    msg->data = h + 1;
    if (UTIL_UNLIKELY(body < 0 || len != sizeof *h + (size_t)body)) {
        /* its envelope is sound: it takes its turn and fails the receive
         * it matches, which then learns of it (MPI_ERR_INTERN) */
        util_warn("rejected an envelope of kind %d and %zu bytes from rank %d: its body does not match its kind",
                  h->kind, len, h->src_world);
        msg->kind = P2P_MSG_ERROR;
        msg->size = 0;
        msg->sync = false;
    } else if (h->kind == P2P_WIRE_EAGER) {
        msg->kind = P2P_MSG_EAGER;
    } else if (h->kind == P2P_WIRE_CMA) {
        msg->kind = P2P_MSG_CMA; /* data: the sender's pid and address */
    } else if (h->kind == P2P_WIRE_IPC) {
        msg->kind = P2P_MSG_IPC; /* data: gpu_ipc_desc_t */
    } else {
        msg->kind = P2P_MSG_RNDV;
        msg->data = NULL;
        msg->payload_tag = h->payload_tag;
        msg->stage_chunk = (h->flags & P2P_WIRE_STAGED) ? h->chunk : 0;
    }
    if (UTIL_UNLIKELY(h->seq != *p2p_seq(&r->recv_seq, h->src_world))) {
        util_dlist_push_back(&r->stash, &msg->stash_link);
        return;
    }
    (*p2p_seq(&r->recv_seq, h->src_world))++;
    incoming(r, msg);
    if (UTIL_UNLIKELY(!util_dlist_empty(&r->stash)))
        drain_stash(r);
}

int p2p_recv_start(p2p_req_t *q)
{
    q->complete = false;
    q->active = true;
    q->pending = 1; /* the data */
    if (UTIL_UNLIKELY(q->dev_dt))
        q->dev_dt = 1; /* a persistent receive's unpack runs again */
    q->status.MPI_ERROR = MPI_SUCCESS;
    q->status.ampi_cancelled = 0;
    q->status.ampi_count = 0;
    if (q->peer == MPI_PROC_NULL) {
        q->status.MPI_SOURCE = MPI_PROC_NULL;
        q->status.MPI_TAG = MPI_ANY_TAG;
        p2p_req_part_done(q);
        return MPI_SUCCESS;
    }
    p2p_rank_t *r = q->owner;
    /* read once, each on its own: after the call the compiler reloaded peer
     * and tag as one 8-byte load across the two 4-byte stores that set them
     * moments ago, a store-forwarding stall that waited for every older
     * store -- the last send's, into a line the peer holds -- and took most
     * of this function's time in osu_latency and osu_bw (perf) */
    uint32_t ctx = q->ctx;
    int peer = q->peer, tag = q->tag;
    p2p_mentry_t *e = p2p_unexp_find(&r->unexpected, ctx, peer, tag);
    if (e) {
        p2p_unexp_remove(&r->unexpected, e);
        p2p_deliver(r, UTIL_CONTAINER_OF(e, p2p_msg_t, m), q);
        return MPI_SUCCESS;
    }
    q->m.ctx = ctx;
    q->m.src = peer;
    q->m.tag = tag;
    q->posted = true;
    p2p_posted_add(&r->posted, &q->m);
    return MPI_SUCCESS;
}
