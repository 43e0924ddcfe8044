/* Receives: the intake of envelopes from other processes (checked, put back
 * into send order, delivered at once where a receive is posted), posting,
 * matching and delivering data. */
#include "pt2pt/p2p.h"
#include "util/util_copy.h"
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

static void send_ack(const p2p_msg_t *msg) { p2p_send_ack(msg->src_world, msg->sreq); }

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
        if (n) /* (a receive of nothing may name a NULL buffer) */
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
    if (UTIL_UNLIKELY(r->cancels != NULL) && p2p_cancel_at_entry(r, msg))
        return; /* cancelled by its sender before it got here */
    p2p_mentry_t *e = p2p_posted_find(&r->posted, msg->m.ctx, msg->m.src, msg->m.tag);
    if (e) {
        p2p_req_t *q = UTIL_CONTAINER_OF(e, p2p_req_t, m);
        p2p_posted_take(r, q);
        p2p_deliver(r, msg, q);
        return;
    }
    p2p_unexp_add(&r->unexpected, &msg->m);
    if (r->probing && r->core.ult && r->core.ult->state == RANK_ULT_BLOCKED)
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
    case P2P_WIRE_ACK:
        p2p_ack_arrived(h);
        p2p_msg_free(msg);
        return;
    case P2P_WIRE_CANCEL:
        p2p_cancel_arrived(h);
        p2p_msg_free(msg);
        return;
    case P2P_WIRE_CANCEL_REPLY:
        p2p_cancel_reply_arrived(h);
        p2p_msg_free(msg);
        return;
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
    msg->packing = h->flags & P2P_WIRE_PACKING;
    msg->sreq = h->sreq;
    msg->lreq = NULL;
    msg->key = h->seq;
    msg->data = h + 1;
    if (UTIL_UNLIKELY(body < 0 || len != sizeof *h + (size_t)body)) {
        /* its envelope is sound: it takes its turn and fails the receive
         * it matches, which then learns of it (MPI_ERR_INTERN) */
        util_warn("rejected an envelope of kind %d and %zu bytes from rank %d: its body does not match its kind",
                  h->kind, len, h->src_world);
        msg->kind = P2P_MSG_ERROR;
        msg->size = 0;
        msg->sync = false;
        msg->packing = false;
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

/* ---- envelope intake (runs inside UCX's AM callback, see ucx.h) ----
 * An eager envelope without flags whose receive is already posted goes
 * straight from UCX's receive buffer into the user's buffer: no envelope
 * buffer, no second copy, no queueing, and the receiver sees it complete
 * within the same progress call.  Nothing here may call UCX (a SYNC send's
 * ACK would): every other envelope is copied into a buffer for
 * p2p_env_arrived, which runs after ucp_worker_progress has returned. */

/* What matching needs of an eager envelope, from either wire format. */
typedef struct env_key {
    uint32_t ctx, seq;
    int src, tag, src_world, dst_world;
} env_key_t;

/* inlined into both callers: the key then lives in registers */
static inline __attribute__((always_inline)) bool deliver_now(const env_key_t *k, const void *payload, size_t size)
{
    /* one branch for both ranks: a bad one goes to p2p_env_arrived, which
     * rejects it (recv_seq is indexed by the sender's) */
    if (UTIL_UNLIKELY(!p2p_is_local(k->dst_world) | ((unsigned)k->src_world >= (unsigned)core_proc.nranks)))
        return false;
    p2p_rank_t *r = p2p_local(k->dst_world);
    uint32_t *seq = p2p_seq(&r->recv_seq, k->src_world);
    /* an earlier envelope from the same sender still has to enter first */
    if (k->seq != *seq || UTIL_UNLIKELY(!util_dlist_empty(&r->stash) || r->cancels != NULL))
        return false;
    p2p_mentry_t *e = p2p_posted_find(&r->posted, k->ctx, k->src, k->tag);
    if (!e)
        return false;
    p2p_req_t *q = UTIL_CONTAINER_OF(e, p2p_req_t, m);
    /* device copies are p2p_deliver's business */
    if (UTIL_UNLIKELY(q->dev))
        return false;
    p2p_posted_take(r, q);
    (*seq)++;
    size_t n = p2p_fill_status(q, k->src, k->tag, size);
    util_copy_small(q->buf, payload, n);
    p2p_req_part_done(q);
    return true;
}

/* A compact envelope that could not be delivered at once becomes a full
 * P2P_WIRE_EAGER one, so that p2p_env_arrived knows a single format. */
static void *expand_short(const p2p_wire_short_t *s, const void *payload, size_t size, size_t *len)
{
    *len = sizeof(p2p_wire_hdr_t) + size;
    p2p_wire_hdr_t *h = p2p_env_alloc(*len <= p2p_env_max() ? p2p_env_max() : *len);
    *h = (p2p_wire_hdr_t){
        .kind = P2P_WIRE_EAGER,
        .ctx = s->ctx,
        .src = s->src,
        .tag = s->tag,
        .src_world = s->src_world,
        .dst_world = s->dst_world,
        .seq = s->seq,
        .size = size,
    };
    if (size)
        memcpy(h + 1, payload, size);
    return h;
}

/* A field of an envelope that may sit unaligned in UCX's buffer, read on
 * its own: copying the whole envelope to the stack and building the key
 * from that copy made the compiler reload it across two of its stores, a
 * store-forwarding stall that took 6% of a one-byte osu_bw receiver's time
 * (perf). */
#define WIRE_U32(base, type, field) wire_u32((const uint8_t *)(base) + offsetof(type, field))
#define WIRE_U64(base, type, field) wire_u64((const uint8_t *)(base) + offsetof(type, field))
static inline uint32_t wire_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline uint64_t wire_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

#define WIRE_KEY(base, type)                                                                                     \
    ((env_key_t){ WIRE_U32(base, type, ctx), WIRE_U32(base, type, seq), (int32_t)WIRE_U32(base, type, src),    \
                  (int32_t)WIRE_U32(base, type, tag), (int32_t)WIRE_U32(base, type, src_world),                 \
                  (int32_t)WIRE_U32(base, type, dst_world) })

void *p2p_env_intake(const void *hdr, size_t hlen, const void *data, size_t dlen, bool in_order, size_t *len)
{
    const uint8_t *first = hlen ? hdr : data;
    size_t total = hlen + dlen;
    if (total >= sizeof(p2p_wire_short_t) && first[0] == P2P_WIRE_EAGER_SHORT && hlen == 0) {
        const uint8_t *payload = (const uint8_t *)data + sizeof(p2p_wire_short_t);
        size_t size = dlen - sizeof(p2p_wire_short_t);
        env_key_t k = WIRE_KEY(data, p2p_wire_short_t);
        if (in_order && deliver_now(&k, payload, size))
            return NULL;
        p2p_wire_short_t s;
        memcpy(&s, data, sizeof s);
        return expand_short(&s, payload, size, len);
    }
    if (total >= sizeof(p2p_wire_hdr_t) && first[0] == P2P_WIRE_EAGER && in_order) {
        const uint8_t *payload = hlen ? data : first + sizeof(p2p_wire_hdr_t);
        uint64_t size = WIRE_U64(first, p2p_wire_hdr_t, size);
        if (first[offsetof(p2p_wire_hdr_t, flags)] == 0 && size == total - sizeof(p2p_wire_hdr_t)) {
            env_key_t k = WIRE_KEY(first, p2p_wire_hdr_t);
            if (deliver_now(&k, payload, size))
                return NULL;
        }
    }
    /* anything else: into an envelope buffer (the pool's size when it fits) */
    *len = total;
    void *buf = p2p_env_alloc(total <= p2p_env_max() ? p2p_env_max() : total);
    if (hlen)
        memcpy(buf, hdr, hlen);
    if (dlen)
        memcpy((char *)buf + hlen, data, dlen);
    return buf;
}

/* An envelope from a shared-memory ring (shm_poll): the same intake as
 * UCX's callback, then at once what ucx_progress does with a queued one.
 * in_order holds: shm_poll runs outside ucx_progress, whose queue is then
 * empty, and each ring envelope is entered before the next is looked at.
 * The poll ends after an envelope that took the last receive a rank had
 * posted: that rank runs and posts its next receive before the envelope
 * behind this one (often written while we took this one) is looked at, so
 * that it lands in the receive instead of the unexpected queue.  A barrier
 * followed by a ping-pong (osu_multi_lat) takes 0.28 us a leg this way
 * against 0.40 where the ping becomes unexpected (2-core machine, 343bb73). */
bool p2p_shm_envelope(const void *env, size_t len)
{
    size_t wire_len;
    p2p_proc.rank_fed = false;
    void *wire = p2p_env_intake(NULL, 0, env, len, true, &wire_len);
    if (wire)
        p2p_env_arrived(wire, wire_len);
    return p2p_proc.rank_fed;
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
