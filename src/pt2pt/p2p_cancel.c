/* Cancelling sends (MPI 3.1 3.8.4): a send whose message no receive has
 * matched yet is withdrawn, and its request completes with
 * MPI_Test_cancelled true; one already matched completes as usual.
 *
 * A message is named by its sender's world rank and its key (p2p_msg_t):
 * the sequence number of the pair for one to another process, the
 * sender's count of local sends for one within the process.  Within the
 * process the sender takes it out of the receiver's unexpected queue
 * itself.  To another process it sends CANCEL; the receiving process
 * answers CANCEL_REPLY yes when it took the message out of its unexpected
 * queue, no when a receive matched it.  A CANCEL that overtook its message
 * (or whose message waits in the stash for an earlier one) is kept until
 * the message enters matching, where it is decided.  The request waits
 * for the reply, so it completes only once the outcome is known.  A
 * withdrawn message from another process is received into nothing: its
 * protocol still runs to the end (ACKs, a rendezvous payload), so that
 * the sender's request settles as it would have.
 *
 * A buffered send's request names the message of the library's own send
 * that carries its copy (p2p_bsend.c); withdrawn, that send completes and
 * frees its part of the buffer. */
#include "pt2pt/p2p.h"
#include "util/util_log.h"

#include <stdlib.h>

typedef struct p2p_cancel {
    int src_world;
    uint32_t seq;
    uint64_t sreq;
    struct p2p_cancel *next;
} p2p_cancel_t;

enum { CANCEL_NO = 0, CANCEL_YES = 1 };

/* The key the next send of r to dst_world gives its message. */
uint32_t p2p_cancel_next_key(p2p_rank_t *r, int dst_world)
{
    return p2p_is_local(dst_world) ? r->local_sends : *p2p_seq(&r->send_seq, dst_world);
}

static p2p_msg_t *unexp_find_key(p2p_rank_t *r, int src_world, uint32_t key, bool local)
{
    UTIL_DLIST_FOREACH(&r->unexpected.order, it) {
        p2p_msg_t *m = UTIL_CONTAINER_OF(it, p2p_msg_t, m.order);
        if (m->src_world == src_world && m->key == key && (m->lreq != NULL) == local)
            return m;
    }
    return NULL;
}

static void cancel_local(p2p_req_t *q, int dst_world)
{
    p2p_rank_t *dst = p2p_local(dst_world);
    p2p_msg_t *m = unexp_find_key(dst, q->owner->core.world, q->msg_key, true);
    if (!m)
        return; /* matched: the send completes as usual */
    p2p_unexp_remove(&dst->unexpected, &m->m);
    p2p_req_t *waiting = m->kind == P2P_MSG_LOCAL ? m->lreq : NULL; /* q, or a buffered send's carrier */
    p2p_msg_free(m);
    q->status.ampi_cancelled = 1;
    if (waiting)
        p2p_req_part_done(waiting);
}

void p2p_send_cancel(p2p_req_t *q)
{
    if (q->kind != P2P_REQ_SEND || !q->active || q->cancel_asked || q->peer == MPI_PROC_NULL ||
        q->status.ampi_cancelled)
        return;
    q->cancel_asked = true;
    int dst_world = core_comm_world_rank(q->c, q->peer);
    if (p2p_is_local(dst_world)) {
        cancel_local(q, dst_world);
        return;
    }
    /* wait for the reply, even where the send itself is done (eager) */
    q->complete = false;
    q->pending++;
    p2p_wire_hdr_t h = { .kind = P2P_WIRE_CANCEL,
                         .src_world = q->owner->core.world,
                         .dst_world = dst_world,
                         .seq = q->msg_key,
                         .sreq = p2p_reqid_issue(q) };
    p2p_send_ctl(p2p_proc_of(dst_world), &h, "a cancel request");
}

static void reply(int src_world, uint64_t sreq, int answer)
{
    p2p_wire_hdr_t h = { .kind = P2P_WIRE_CANCEL_REPLY, .flags = (uint8_t)answer, .dst_world = src_world,
                         .sreq = sreq };
    p2p_send_ctl(p2p_proc_of(src_world), &h, "a cancel reply");
}

/* Receive msg into nothing: an internal receive of 0 bytes runs the
 * message's protocol to its end, and goes once it has. */
static void drain(p2p_rank_t *r, p2p_msg_t *msg)
{
    p2p_req_t *d = p2p_req_new(r, P2P_REQ_RECV);
    d->internal = true;
    d->buf = NULL;
    d->count = 0;
    d->bytes = 0;
    d->comm = MPI_COMM_NULL;
    d->active = true;
    d->pending = 1;
    r->internal_pending++;
    p2p_deliver(r, msg, d);
}

void p2p_cancel_arrived(const p2p_wire_hdr_t *h)
{
    if (UTIL_UNLIKELY(!p2p_is_local(h->dst_world) || (unsigned)h->src_world >= (unsigned)core_proc.nranks)) {
        util_warn("rejected a cancel request from rank %d to rank %d: no such rank here", h->src_world,
                  h->dst_world);
        return;
    }
    p2p_rank_t *r = p2p_local(h->dst_world);
    p2p_msg_t *m = unexp_find_key(r, h->src_world, h->seq, false);
    if (m) {
        p2p_unexp_remove(&r->unexpected, &m->m);
        drain(r, m);
        reply(h->src_world, h->sreq, CANCEL_YES);
        return;
    }
    uint32_t next = *p2p_seq(&r->recv_seq, h->src_world);
    if ((int32_t)(h->seq - next) < 0) { /* it entered matching, and is not waiting there: matched */
        reply(h->src_world, h->sreq, CANCEL_NO);
        return;
    }
    p2p_cancel_t *c = malloc(sizeof *c);
    if (!c)
        util_fatal("out of memory for a cancel request");
    *c = (p2p_cancel_t){ h->src_world, h->seq, h->sreq, r->cancels };
    r->cancels = c;
}

bool p2p_cancel_at_entry(p2p_rank_t *r, p2p_msg_t *msg)
{
    p2p_cancel_t **pp = &r->cancels;
    while (*pp && !((*pp)->src_world == msg->src_world && (*pp)->seq == msg->key))
        pp = &(*pp)->next;
    p2p_cancel_t *c = *pp;
    if (!c)
        return false;
    *pp = c->next;
    int src_world = c->src_world;
    uint64_t sreq = c->sreq;
    free(c);
    if (p2p_posted_find(&r->posted, msg->m.ctx, msg->m.src, msg->m.tag)) {
        reply(src_world, sreq, CANCEL_NO);
        return false; /* a receive takes it */
    }
    drain(r, msg);
    reply(src_world, sreq, CANCEL_YES);
    return true;
}

void p2p_cancel_reply_arrived(const p2p_wire_hdr_t *h)
{
    p2p_req_t *q = p2p_reply_target(h->sreq, "a cancel reply");
    if (UTIL_UNLIKELY(q == NULL))
        return;
    if (h->flags == CANCEL_YES)
        q->status.ampi_cancelled = 1;
    p2p_req_part_done(q);
}

void p2p_cancel_fini(p2p_rank_t *r)
{
    while (r->cancels) {
        p2p_cancel_t *c = r->cancels;
        r->cancels = c->next;
        free(c);
    }
}
