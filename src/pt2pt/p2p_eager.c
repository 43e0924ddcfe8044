/* The envelope routes: SHORT (its request-free starts are in line in
 * p2p_short.h; here are the request's start and UCX's way when the ring
 * is full), EAGER (envelope and data in one message) and MEDIUM (eager
 * through the peer's ring while streaming one way).  Each goes through the
 * peer's shared-memory ring when it has room, else as a UCX active
 * message (p2p_env_send). */
#include "pt2pt/p2p.h"
#include "util/util_log.h"

#include <stddef.h>
#include <string.h>

/* The envelope of a small blocking send, built on the sender's stack. */
typedef struct small_send {
    ucx_op_t op;
    rank_ult_t *waiter;
    int status;
    bool done;
    p2p_wire_short_t h; /* followed by the data: one contiguous envelope */
    uint8_t data[P2P_INLINE_MAX];
} small_send_t;
_Static_assert(offsetof(small_send_t, data) == offsetof(small_send_t, h) + sizeof(p2p_wire_short_t),
               "the data must follow the envelope without a gap");

static void small_sent(ucx_op_t *op, int status, size_t len)
{
    (void)len;
    small_send_t *s = UTIL_CONTAINER_OF(op, small_send_t, op);
    s->status = status;
    s->done = true;
    if (s->waiter && s->waiter->state == RANK_ULT_BLOCKED)
        rank_wake(s->waiter);
}

__attribute__((noinline)) int p2p_short_send_ucx(int proc, const p2p_wire_short_t *h, const void *buf, size_t bytes)
{
    small_send_t s;
    s.h = *h;
    if (bytes) /* a 0-byte send may pass NULL */
        memcpy(s.data, buf, bytes);
    s.op.done = small_sent;
    s.done = false;
    s.waiter = rank_self();
    int rc = ucx_send_envelope(proc, &s.h, sizeof s.h + bytes, NULL, 0, &s.op);
    if (UTIL_UNLIKELY(rc == 1)) { /* UCX kept it: wait, the bytes live on this stack */
        while (!s.done)
            p2p_idle();
        rc = s.status;
    }
    return UTIL_UNLIKELY(rc < 0) ? MPI_ERR_OTHER : MPI_SUCCESS;
}

int p2p_send_small_remote(p2p_rank_t *r, const core_comm_t *c, uint32_t ctx, const void *buf, size_t bytes,
                          int dst_world, int tag)
{
    return p2p_short_send(r, c, ctx, buf, bytes, dst_world, tag);
}

/* SHORT with a request (a send the entry points did not take themselves:
 * persistent, ready mode, packed datatypes, collectives): the compact
 * envelope is built over the filled full one, with the data behind it. */
void p2p_short_start(p2p_req_t *q, int proc)
{
    const p2p_wire_hdr_t *h = &q->hdr;
    p2p_wire_short_t s = { .kind = P2P_WIRE_EAGER_SHORT, .ctx = h->ctx, .src = h->src, .tag = h->tag,
                           .src_world = h->src_world, .dst_world = h->dst_world, .seq = h->seq };
    q->pending++;
    memcpy(q->wire, &s, sizeof s);
    if (q->bytes) /* a 0-byte send may pass NULL */
        memcpy(q->wire + sizeof s, q->buf, q->bytes);
    p2p_ucx_started(q, p2p_env_send(proc, q->wire, sizeof s + q->bytes, NULL, 0, &q->op_env));
}

/* EAGER: the full envelope, the data copied behind it up to
 * P2P_INLINE_MAX bytes (one contiguous message), else as the message's
 * second part.  data: q's bytes, or a host copy of device ones (p2p_stage.c). */
void p2p_eager_start(p2p_req_t *q, int proc, const void *data)
{
    p2p_wire_hdr_t *h = &q->hdr;
    h->kind = P2P_WIRE_EAGER;
    q->pending++;
    if (q->bytes <= P2P_INLINE_MAX) {
        if (q->bytes)
            memcpy(q->inl, data, q->bytes);
        p2p_ucx_started(q, p2p_env_send(proc, h, sizeof *h + q->bytes, NULL, 0, &q->op_env));
    } else {
        p2p_ucx_started(q, p2p_env_send(proc, h, sizeof *h, data, q->bytes, &q->op_env));
    }
}

/* MEDIUM: streaming one way (the receiver has yet to take our earlier
 * envelopes, and this rank waits for no message itself), up to 32 KiB go
 * eager through its ring.  Its core then copies out of the ring while
 * ours, otherwise idle, copies the next one in; by process_vm_readv its
 * core alone copies, and osu_bw's 16-32 KiB windows ran at 0.7-0.9x Open
 * MPI's rate.  The selector keeps a lone message on the single copy (lower
 * latency), and so a rank with receives posted (osu_bibw: both cores
 * already copy, and two copies a message halved its 32 KiB rate) or a
 * collective's exchange (q->pull, coll_xchg_start).  Declines when the ring
 * has no room. */
bool p2p_medium_start(p2p_req_t *q, int proc)
{
    p2p_wire_hdr_t *h = &q->hdr;
    h->kind = P2P_WIRE_EAGER;
    if (!shm_send(proc, h, sizeof *h, q->buf, q->bytes))
        return false;
    shm_mark(proc);
    return true; /* done: the envelope holds the data */
}
