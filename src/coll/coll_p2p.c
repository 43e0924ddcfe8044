/* Point-to-point helpers of the collectives (see coll_p2p.h).
 *
 * A collective's messages are most of its cost at small sizes, so these
 * stay lean: a request is initialised once (p2p_req_alloc + p2p_req_setup,
 * not p2p_req_new, which would initialise it twice), and the blocking forms
 * keep their requests on the calling rank's stack (as MPI_Send/MPI_Recv do)
 * instead of taking them from and returning them to the rank's free list. */
#include "coll/coll_p2p.h"
#include "pt2pt/p2p_api.h"

#include <limits.h>

/* A blocking send of a few host bytes to a rank of another process takes
 * MPI_Send's request-less path (p2p_send_small_remote): no request set-up,
 * completion counting or clean-up, which were more than half of the
 * instructions of the sending side of a two-rank Bcast, Reduce, Allreduce
 * or Barrier (the receive is posted and completes as before).  True, with
 * the peer's world rank, when it applies: the tests cheapest first, so a
 * device buffer (a GPU in use) is classified only for a small message to
 * another process. */
static inline bool small_remote(const core_comm_t *c, const void *buf, size_t bytes, int peer, int *world)
{
    if (bytes > P2P_INLINE_MAX || bytes > p2p_proc.eager_limit || UTIL_UNLIKELY(peer == MPI_PROC_NULL))
        return false;
    int w = core_comm_world_rank(c, peer);
    if (p2p_is_local(w) || p2p_is_device(buf, bytes))
        return false;
    *world = w;
    return true;
}

/* Fills q (fresh or on the stack) for a message on the collective context.
 * In line in every caller: a call with eight arguments (saving and
 * restoring the registers they need) cost a third of what it does. */
static inline __attribute__((always_inline)) void setup(p2p_req_t *q, p2p_rank_t *r, core_comm_t *c,
                                                        p2p_req_kind_t kind, const void *buf, size_t bytes,
                                                        int peer, int tag)
{
    bool fits = bytes <= (size_t)INT_MAX;
    p2p_req_setup(q, r, kind, P2P_MODE_STANDARD, buf, fits ? (int)bytes : 0, MPI_BYTE, peer, tag, c);
    if (UTIL_UNLIKELY(!fits)) { /* an int count cannot say it; the transfer paths use q->bytes */
        q->bytes = bytes;
        q->dev = p2p_is_device(buf, bytes);
    }
    q->ctx = c->ctx + 1;
}

/* Starts q.  A start that fails leaves nothing in flight: the request
 * counts as done, with its error, so a wait does not wait for it forever. */
static void start(p2p_req_t *q)
{
    int err = q->kind == P2P_REQ_SEND ? p2p_send_start(q) : p2p_recv_start(q);
    if (UTIL_UNLIKELY(err)) {
        p2p_req_fail(q, err);
        q->complete = true;
    }
}

static p2p_req_t *start_new(p2p_rank_t *r, core_comm_t *c, p2p_req_kind_t kind, const void *buf, size_t bytes, int peer,
                            int tag, bool pull)
{
    p2p_req_t *q = p2p_req_alloc(r);
    setup(q, r, c, kind, buf, bytes, peer, tag);
    q->pull = pull;
    start(q);
    return q;
}

p2p_req_t *coll_isend(p2p_rank_t *r, core_comm_t *c, const void *buf, size_t bytes, int peer, int tag)
{
    return start_new(r, c, P2P_REQ_SEND, buf, bytes, peer, tag, false);
}

p2p_req_t *coll_irecv(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int peer, int tag)
{
    return start_new(r, c, P2P_REQ_RECV, buf, bytes, peer, tag, false);
}

p2p_req_t *coll_irecv_pull(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int peer, int tag)
{
    return start_new(r, c, P2P_REQ_RECV, buf, bytes, peer, tag, true);
}

p2p_req_t *coll_isendrecv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, size_t sbytes, int dst, void *rbuf,
                          size_t rbytes, int src, int tag)
{
    p2p_req_t *rq = start_new(r, c, P2P_REQ_RECV, rbuf, rbytes, src, tag, false);
    p2p_expect_part(rq);
    p2p_req_t *sq = p2p_req_alloc(r);
    setup(sq, r, c, P2P_REQ_SEND, sbuf, sbytes, dst, tag);
    p2p_start_part(rq, sq);
    return rq;
}

int coll_waitall(p2p_req_t **reqs, int n)
{
    int first = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        p2p_req_t *q = reqs[i];
        if (!q)
            continue;
        p2p_wait_complete(q);
        if (q->status.MPI_ERROR && !first)
            first = q->status.MPI_ERROR;
        p2p_req_release(q);
        reqs[i] = NULL;
    }
    return first;
}

/* Waits for a request on the stack and cleans it up; returns its error. */
static int finish(p2p_req_t *q)
{
    p2p_wait_complete(q);
    int err = q->status.MPI_ERROR;
    p2p_req_cleanup(q);
    return err;
}

/* coll_send with a request (out of line: the small send to another process
 * needs none of its frame). */
static __attribute__((noinline)) int send_with_request(p2p_rank_t *r, core_comm_t *c, const void *buf, size_t bytes,
                                                       int peer, int tag)
{
    p2p_req_t q; /* on the rank's stack: we return only when it is done */
    setup(&q, r, c, P2P_REQ_SEND, buf, bytes, peer, tag);
    start(&q);
    return finish(&q);
}

int coll_send(p2p_rank_t *r, core_comm_t *c, const void *buf, size_t bytes, int peer, int tag)
{
    int world;
    if (small_remote(c, buf, bytes, peer, &world))
        return p2p_send_small_remote(r, c, c->ctx + 1, buf, bytes, world, tag);
    return send_with_request(r, c, buf, bytes, peer, tag);
}

static int recv_blocking(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int peer, int tag, bool pull)
{
    p2p_req_t q;
    setup(&q, r, c, P2P_REQ_RECV, buf, bytes, peer, tag);
    q.pull = pull;
    start(&q);
    return finish(&q);
}

int coll_recv(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int peer, int tag)
{
    return recv_blocking(r, c, buf, bytes, peer, tag, false);
}

int coll_recv_pull(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int peer, int tag)
{
    return recv_blocking(r, c, buf, bytes, peer, tag, true);
}

void coll_xchg_start(coll_xchg_t *x, p2p_rank_t *r, core_comm_t *c, const void *sbuf, size_t sbytes, int dst,
                     void *rbuf, size_t rbytes, int src, int tag)
{
    setup(&x->rq, r, c, P2P_REQ_RECV, rbuf, rbytes, src, tag);
    /* a host exchange's peer core is busy with its own receive: no split
     * (coll_p2p.h); device pushes stay (faster copies, one engine each) */
    x->rq.pull = !x->rq.dev;
    start(&x->rq);
    int world;
    /* a small send to another process is done when this returns (eager:
     * it never waits for the peer, whose receive may come later) */
    x->sent = small_remote(c, sbuf, sbytes, dst, &world);
    if (x->sent) {
        x->serr = p2p_send_small_remote(r, c, c->ctx + 1, sbuf, sbytes, world, tag);
        return;
    }
    setup(&x->sq, r, c, P2P_REQ_SEND, sbuf, sbytes, dst, tag);
    /* nor a medium ring entry (two copies on each core, where the peer's
     * single read leaves ours free for its own) */
    x->sq.pull = x->rq.pull;
    start(&x->sq);
}

int coll_xchg_finish(coll_xchg_t *x)
{
    int err = finish(&x->rq), serr = x->sent ? x->serr : finish(&x->sq);
    return err ? err : serr;
}

int coll_sendrecv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, size_t sbytes, int dst, void *rbuf,
                  size_t rbytes, int src, int tag)
{
    coll_xchg_t x;
    coll_xchg_start(&x, r, c, sbuf, sbytes, dst, rbuf, rbytes, src, tag);
    return coll_xchg_finish(&x);
}
