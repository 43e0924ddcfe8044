/* Channels, the sender's side and what both sides share (see p2p_channel.h
 * for the protocol). */
#include "pt2pt/p2p_channel.h"
#include "ucx/ucx_tag.h"
#include "util/util_env.h"
#include "util/util_log.h"

#include <stdlib.h>
#include <time.h>

typedef struct p2p_chan_tx {
    uint64_t id, tag;
    p2p_req_t *q;          /* the persistent send */
    int dst_world, proc;
    uint64_t rx_id;        /* the receive it serves, from its first credit (0: none yet) */
    bool credit;           /* a receive is pre-posted for our next round */
    uint32_t credit_round;
    uint32_t credit_seq;   /* E: our send_seq must still be this to use it */
    uint32_t nsent;        /* payloads sent on the channel */
    uint32_t nfill;        /* credits answered with a fill (AMPI_DEBUG counts) */
} p2p_chan_tx_t;

bool p2p_chan_enabled(void)
{
    static int on = -1; /* read once: the same answer on every call */
    if (on < 0)
        on = util_env_long("AMPI_CHANNEL", 0) != 0; /* off until measured on a GPU machine */
    return on;
}

/* ---- id tables: a credit names its sender by id, never by pointer, so a
 * send freed meanwhile is recognised (and the credit still answered) */
static struct {
    void **obj;
    uint64_t cap, next;
} tables[2];

uint64_t p2p_chan_table_add(int side, void *obj)
{
    if (tables[side].next == 0)
        tables[side].next = 1;
    uint64_t id = tables[side].next++;
    if (id >= tables[side].cap) {
        uint64_t cap = tables[side].cap ? 2 * tables[side].cap : 64;
        void **t = realloc(tables[side].obj, cap * sizeof *t);
        if (!t)
            util_fatal("out of memory for the channel table");
        for (uint64_t i = tables[side].cap; i < cap; i++)
            t[i] = NULL;
        tables[side].obj = t;
        tables[side].cap = cap;
    }
    tables[side].obj[id] = obj;
    return id;
}

void *p2p_chan_table_get(int side, uint64_t id) { return id < tables[side].cap ? tables[side].obj[id] : NULL; }
void p2p_chan_table_del(int side, uint64_t id) { tables[side].obj[id] = NULL; }

/* ---- control messages and fills (like ACKs: fire and forget) */

void p2p_chan_ctl(int op, int from, int to, uint64_t tx_id, uint64_t rx_id, uint32_t round, uint64_t e)
{
    /* UCX only: channel control messages carry no sequence number, so they
     * keep the order of one transport (p2p_env_send) */
    p2p_wire_hdr_t h = { .kind = P2P_WIRE_CHAN, .flags = (uint8_t)op, .src_world = from, .dst_world = to,
                         .sreq = tx_id, .payload_tag = rx_id, .seq = round, .size = e };
    p2p_send_ctl(p2p_proc_of(to), &h, true, "a channel control message");
}

static void fill_sent(ucx_op_t *op, int status, size_t len)
{
    (void)status;
    (void)len;
    free(op);
}

void p2p_chan_fill(int proc, uint64_t tag)
{
    static char nothing;
    ucx_op_t *op = malloc(sizeof *op);
    if (!op)
        util_fatal("out of memory");
    op->done = fill_sent;
    int rc = ucx_send_tagged(proc, &nothing, 0, tag, UCX_MEM_HOST, op);
    if (rc < 0)
        util_fatal("cannot answer a channel credit of process %d", proc);
    if (rc == 0)
        free(op);
}

/* ---- the sender */
static bool tx_eligible(const p2p_req_t *q)
{
    if (q->mode != P2P_MODE_STANDARD || q->ubuf || q->bytes == 0 || !p2p_chan_enabled())
        return false;
    if (q->dev) /* only where UCX moves device memory itself (no staging, no IPC) */
        return p2p_proc.ucx_cuda;
    return q->bytes > p2p_proc.eager_limit;
}

static void chan_sent(ucx_op_t *op, int status, size_t len)
{
    (void)len;
    p2p_req_t *q = UTIL_CONTAINER_OF(op, p2p_req_t, op_data);
    if (status)
        p2p_req_fail(q, MPI_ERR_OTHER);
    p2p_req_part_done(q);
}

/* A receive that took our rounds before usually grants the next one within
 * a message latency of ours: wait that long (AMPI_CHANNEL_WAIT_US, polling
 * the network) rather than fall back to the envelope at once. */
static void wait_for_credit(p2p_chan_tx_t *t)
{
    static long wait_us = -1;
    if (wait_us < 0)
        wait_us = util_env_long("AMPI_CHANNEL_WAIT_US", 0);
    if (wait_us == 0)
        return;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        p2p_progress(NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (!t->credit && t->rx_id &&
             (now.tv_sec - t0.tv_sec) * 1000000L + (now.tv_nsec - t0.tv_nsec) / 1000 < wait_us);
}

bool p2p_chan_send(p2p_req_t *q, int dst_world)
{
    p2p_chan_tx_t *t = q->chan;
    if (!t) {
        if (!tx_eligible(q))
            return false;
        t = calloc(1, sizeof *t);
        if (!t)
            util_fatal("out of memory for a channel");
        t->id = p2p_chan_table_add(0, t);
        t->proc = p2p_proc_of(dst_world);
        t->tag = ucx_tag_make(UCX_TAG_CHANNEL, (uint32_t)p2p_proc.proc, t->id);
        t->q = q;
        t->dst_world = dst_world;
        q->chan = t;
    }
    if (!t->credit && t->rx_id)
        wait_for_credit(t);
    if (!t->credit)
        return false;
    t->credit = false;
    if (q->owner->send_seq[dst_world] != t->credit_seq) {
        /* an envelope of ours went since the receiver looked: it may be the
         * one its receive is owed, so this round goes by envelope too */
        p2p_chan_fill(t->proc, t->tag);
        t->nfill++;
        return false;
    }
    t->nsent++;
    q->pending++;
    q->op_data.done = chan_sent;
    int rc = ucx_send_tagged(t->proc, q->buf, q->bytes, t->tag, q->dev ? UCX_MEM_CUDA : UCX_MEM_HOST, &q->op_data);
    if (rc != 1) {
        if (rc < 0)
            p2p_req_fail(q, MPI_ERR_OTHER);
        q->pending--;
    }
    return true;
}

void p2p_chan_mark(p2p_req_t *q, p2p_wire_hdr_t *h)
{
    const p2p_chan_tx_t *t = q->chan;
    h->flags |= P2P_WIRE_CHANNEL;
    h->sreq = t->id;
    h->chunk = t->nsent;
}

/* A credit, nudge or close for one of our sends. */
static void tx_control(const p2p_wire_hdr_t *h)
{
    p2p_chan_tx_t *t = p2p_chan_table_get(0, h->sreq);
    uint64_t tag = ucx_tag_make(UCX_TAG_CHANNEL, (uint32_t)p2p_proc.proc, h->sreq);
    switch (h->flags) {
    case P2P_CHAN_CREDIT:
        if (!t || (t->rx_id && t->rx_id != h->payload_tag)) {
            /* freed, or serving another receive: answer, and say so */
            p2p_chan_fill(p2p_proc_of(h->src_world), tag);
            p2p_chan_ctl(P2P_CHAN_CLOSE_TX, h->dst_world, h->src_world, h->sreq, h->payload_tag, 0, 0);
            return;
        }
        t->rx_id = h->payload_tag;
        if (t->q->owner->send_seq[t->dst_world] != (uint32_t)h->size) {
            p2p_chan_fill(t->proc, t->tag); /* envelopes crossed the credit */
            t->nfill++;
            return;
        }
        t->credit = true;
        t->credit_round = h->seq;
        t->credit_seq = (uint32_t)h->size;
        return;
    case P2P_CHAN_NUDGE: /* the receiver holds a message that may be for it */
        if (t && t->credit && t->credit_round == h->seq) {
            t->credit = false;
            p2p_chan_fill(t->proc, t->tag);
            t->nfill++;
        }
        return;
    case P2P_CHAN_CLOSE_RX: /* free for the next receive that matches us */
        if (t && t->rx_id == h->payload_tag)
            t->rx_id = 0;
        return;
    }
}

void p2p_chan_control(const p2p_wire_hdr_t *h, size_t len)
{
    if (UTIL_UNLIKELY(len != sizeof *h))
        util_fatal("channel control message of %zu bytes", len);
    if (h->flags == P2P_CHAN_CLOSE_TX)
        p2p_chan_rx_control(h);
    else
        tx_control(h);
}

static void tx_release(p2p_chan_tx_t *t)
{
    util_debug("channel %llu, rank %d -> %d: %u rounds on it, %u credits filled", (unsigned long long)t->id,
               t->q->owner->world, t->dst_world, t->nsent, t->nfill + t->credit);
    if (t->credit)
        p2p_chan_fill(t->proc, t->tag);
    if (t->rx_id)
        p2p_chan_ctl(P2P_CHAN_CLOSE_TX, t->q->owner->world, t->dst_world, t->id, t->rx_id, 0, 0);
    p2p_chan_table_del(0, t->id);
    free(t);
}

void p2p_chan_release(p2p_req_t *q)
{
    if (q->kind == P2P_REQ_SEND)
        tx_release(q->chan);
    else
        p2p_chan_rx_release(q->chan);
    q->chan = NULL;
}
