/* Point-to-point helpers of the collectives (see coll_p2p.h). */
#include "coll/coll_p2p.h"
#include "pt2pt/p2p_api.h"

#include <limits.h>

/* A start that fails leaves nothing in flight: the request counts as done,
 * with its error, so coll_waitall does not wait for it forever. */
static void start_failed(p2p_req_t *q, int err)
{
    p2p_req_fail(q, err);
    q->complete = true;
}

static p2p_req_t *prepare(p2p_rank_t *r, comm_t *c, p2p_req_kind_t kind, const void *buf, size_t bytes,
                          int peer, int tag)
{
    bool fits = bytes <= (size_t)INT_MAX;
    p2p_req_t *q = p2p_req_prepare(r, kind, P2P_MODE_STANDARD, buf, fits ? (int)bytes : 0, MPI_BYTE, peer, tag, c);
    if (!fits) { /* an int count cannot say it; the transfer paths use q->bytes */
        q->bytes = bytes;
        q->dev = p2p_is_device(buf, bytes);
    }
    q->ctx = c->ctx + 1;
    return q;
}

p2p_req_t *coll_isend(p2p_rank_t *r, comm_t *c, const void *buf, size_t bytes, int peer, int tag)
{
    p2p_req_t *q = prepare(r, c, P2P_REQ_SEND, buf, bytes, peer, tag);
    int err = p2p_send_start(q);
    if (UTIL_UNLIKELY(err))
        start_failed(q, err);
    return q;
}

p2p_req_t *coll_irecv(p2p_rank_t *r, comm_t *c, void *buf, size_t bytes, int peer, int tag)
{
    p2p_req_t *q = prepare(r, c, P2P_REQ_RECV, buf, bytes, peer, tag);
    int err = p2p_recv_start(q);
    if (UTIL_UNLIKELY(err))
        start_failed(q, err);
    return q;
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

int coll_send(p2p_rank_t *r, comm_t *c, const void *buf, size_t bytes, int peer, int tag)
{
    p2p_req_t *q = coll_isend(r, c, buf, bytes, peer, tag);
    return coll_waitall(&q, 1);
}

int coll_recv(p2p_rank_t *r, comm_t *c, void *buf, size_t bytes, int peer, int tag)
{
    p2p_req_t *q = coll_irecv(r, c, buf, bytes, peer, tag);
    return coll_waitall(&q, 1);
}

int coll_sendrecv(p2p_rank_t *r, comm_t *c, const void *sbuf, size_t sbytes, int dst, void *rbuf,
                  size_t rbytes, int src, int tag)
{
    p2p_req_t *q[2];
    q[0] = coll_irecv(r, c, rbuf, rbytes, src, tag);
    q[1] = coll_isend(r, c, sbuf, sbytes, dst, tag);
    return coll_waitall(q, 2);
}
