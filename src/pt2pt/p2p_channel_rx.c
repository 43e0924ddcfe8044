/* Channels, the receiver's side (the protocol is in p2p_channel.h). */
#include "pt2pt/p2p_channel.h"
#include "ucx/ucx_tag.h"
#include "util/util_log.h"

#include <stdlib.h>

typedef enum {
    RX_IDLE,     /* no round pre-posted */
    RX_POSTED,   /* pre-posted: placeholder queued, credit sent */
    RX_OPEN,     /* the sender filled: the placeholder takes the next message */
    RX_FILL_DUE, /* took the sender's round by envelope; its fill is still to come */
} rx_state_t;

typedef struct p2p_chan_rx {
    uint64_t id, tx_id, tag;
    p2p_req_t *q;       /* the persistent receive */
    int src_world, proc;
    bool closed;        /* the send went away: the usual way from now on */
    bool nudged;        /* this round asked the sender to settle */
    rx_state_t state;
    uint32_t round;
    uint32_t nrecv;     /* channel payloads the sender had sent to us, as far as we know */
    uint32_t npayload, nheld; /* AMPI_DEBUG counts */
    p2p_msg_t *held;    /* entered, then put back until the round settles */
    ucx_op_t op;        /* the pre-posted receive */
    p2p_req_t ph;       /* the placeholder: the receive's place in the posted queue */
} p2p_chan_rx_t;

void p2p_chan_bind(p2p_req_t *q, const p2p_wire_hdr_t *h)
{
    p2p_chan_rx_t *x = q->chan;
    if (!q->persistent || (x && (!x->closed || x->state != RX_IDLE)) || !p2p_chan_enabled())
        return;
    /* a specific source and tag (wildcards cannot be pre-matched), room for
     * the whole message, no packing, memory UCX can write */
    if (q->peer < 0 || q->tag < 0 || q->ubuf || q->bytes < h->size || (q->dev && !p2p_proc.ucx_cuda))
        return;
    if (!x) {
        x = calloc(1, sizeof *x);
        if (!x)
            util_fatal("out of memory for a channel");
        x->id = p2p_chan_table_add(1, x);
        x->q = q;
        q->chan = x;
    }
    x->tx_id = h->sreq;
    x->src_world = h->src_world;
    x->proc = p2p_proc_of(h->src_world);
    x->tag = ucx_tag_make(UCX_TAG_CHANNEL, (uint32_t)x->proc, h->sreq);
    x->nrecv = h->chunk;
    x->closed = false;
}

static void rx_done(ucx_op_t *op, int status, size_t len);

bool p2p_chan_recv_start(p2p_req_t *q)
{
    p2p_chan_rx_t *x = q->chan;
    p2p_rank_t *r = q->owner;
    if (x->closed || x->state != RX_IDLE)
        return false;
    /* a receive or message with our source and tag ahead of us would take
     * the sender's next message: the usual way this round */
    if (p2p_posted_find(&r->posted, q->ctx, q->peer, q->tag) ||
        p2p_unexp_find(&r->unexpected, q->ctx, q->peer, q->tag))
        return false;
    x->op.done = rx_done;
    int rc = ucx_recv_tagged(q->buf, q->bytes, x->tag, q->dev ? UCX_MEM_CUDA : UCX_MEM_HOST, &x->op);
    if (rc == 0)
        util_fatal("channel from rank %d: a message before its credit", x->src_world);
    if (rc < 0)
        return false;
    x->state = RX_POSTED;
    x->nudged = false;
    x->round++;
    p2p_req_t *ph = &x->ph;
    ph->kind = P2P_REQ_CHANNEL;
    ph->dev = true; /* keeps the envelope intake (p2p_proc.c) from filling it */
    ph->chan = x;
    ph->m.ctx = q->ctx;
    ph->m.src = q->peer;
    ph->m.tag = q->tag;
    p2p_posted_add(&r->posted, &ph->m);
    p2p_chan_ctl(P2P_CHAN_CREDIT, r->world, x->src_world, x->tx_id, x->id, x->round, r->recv_seq[x->src_world]);
    return true;
}

void p2p_chan_claim(p2p_rank_t *r, p2p_msg_t *msg, p2p_req_t *ph)
{
    p2p_chan_rx_t *x = ph->chan;
    p2p_req_t *q = x->q;
    if (x->state == RX_OPEN) { /* as if posted the usual way */
        p2p_posted_remove(&r->posted, &ph->m);
        x->state = RX_IDLE;
        p2p_deliver(r, msg, q);
        return;
    }
    const p2p_wire_hdr_t *h = (const p2p_wire_hdr_t *)(msg + 1);
    bool ours = (h->flags & P2P_WIRE_CHANNEL) && h->src_world == x->src_world && h->sreq == x->tx_id;
    if (ours && h->chunk == x->nrecv) {
        /* the sender's own round, sent before any payload for our credit --
         * and after it the credit can no longer be used: this is our
         * message, and the credit's fill is on its way */
        p2p_posted_remove(&r->posted, &ph->m);
        x->state = RX_FILL_DUE;
        q->pending++;
        p2p_deliver(r, msg, q);
        return;
    }
    /* older or younger than the channel data, we cannot tell yet: put it
     * back unentered, which also stops everything after it from its sender */
    if (x->held)
        util_fatal("channel from rank %d: a second message held", x->src_world);
    x->held = msg;
    x->nheld++;
    r->recv_seq[msg->src_world]--;
    if (!ours && !x->nudged) { /* (our sender's later round: the payload is coming) */
        x->nudged = true;
        p2p_chan_ctl(P2P_CHAN_NUDGE, r->world, x->src_world, x->tx_id, x->id, x->round, 0);
    }
}

/* The pre-posted receive finished: the round's data, or its fill. */
static void rx_done(ucx_op_t *op, int status, size_t len)
{
    p2p_chan_rx_t *x = UTIL_CONTAINER_OF(op, p2p_chan_rx_t, op);
    p2p_req_t *q = x->q;
    p2p_rank_t *r = q->owner;
    if (x->state == RX_FILL_DUE) {
        if (len)
            util_fatal("channel from rank %d: data after its round went by envelope", x->src_world);
        x->state = RX_IDLE;
        p2p_req_part_done(q);
        return;
    }
    p2p_msg_t *held = x->held;
    x->held = NULL;
    if (len == 0 && status == 0) { /* filled */
        if (!held) {
            x->state = RX_OPEN;
            return;
        }
        p2p_posted_remove(&r->posted, &x->ph.m);
        x->state = RX_IDLE;
        p2p_enter(r, held, q); /* the first message after our credit is ours */
        return;
    }
    x->nrecv++;
    x->npayload++;
    p2p_posted_remove(&r->posted, &x->ph.m);
    x->state = RX_IDLE;
    if (status)
        p2p_req_fail(q, MPI_ERR_OTHER);
    p2p_fill_status(q, q->peer, q->tag, len);
    p2p_req_part_done(q); /* may free q and x (MPI_Request_free'd) */
    if (held)
        p2p_enter(r, held, NULL); /* younger than our data: the next receive's */
}

void p2p_chan_rx_control(const p2p_wire_hdr_t *h)
{
    p2p_chan_rx_t *x = p2p_chan_table_get(1, h->payload_tag);
    if (x && x->tx_id == h->sreq && x->src_world == h->src_world)
        x->closed = true; /* a round still pre-posted gets its fill regardless */
}

void p2p_chan_rx_release(void *rx)
{
    p2p_chan_rx_t *x = rx;
    if (x->state != RX_IDLE || x->held)
        util_fatal("a channel released in the middle of a round");
    util_debug("channel %llu of rank %d, rank %d -> %d: %u rounds pre-posted, %u by channel, %u held", (unsigned long long)x->tx_id,
               x->src_world, x->src_world, x->q->owner->world, x->round, x->npayload, x->nheld);
    if (!x->closed)
        p2p_chan_ctl(P2P_CHAN_CLOSE_RX, x->q->owner->world, x->src_world, x->tx_id, x->id, 0, 0);
    p2p_chan_table_del(1, x->id);
    free(x);
}
