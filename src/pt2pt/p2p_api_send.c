/* MPI send entry points: standard, synchronous, ready and buffered, blocking
 * and nonblocking. */
#include "pt2pt/p2p_api.h"
#include "pt2pt/p2p_bsend.h"

#include <stddef.h>
#include <string.h>

/* A nonblocking standard send of a few host bytes to another process
 * (osu_bw's case, and halo exchanges'): what p2p_req_setup + p2p_send_start
 * do, once -- no second initialisation, no datatype, device or mode
 * branches, no full header: the compact envelope (p2p.h) is built in the
 * request and usually gone before we return, so the request is complete at
 * once.  p2p_req_init stays the one place that gives every field its
 * default; only the arguments are set here. */
static void isend_small_remote(p2p_req_t *q, p2p_rank_t *r, core_comm_t *c, const void *buf, int count,
                               MPI_Datatype dt, size_t bytes, int dest, int dst_world, int tag)
{
    p2p_req_init(q, r, P2P_REQ_SEND);
    q->active = true;
    q->pending = 1; /* the envelope */
    q->buf = (void *)buf;
    q->count = count;
    q->dt = dt;
    q->peer = dest;
    q->tag = tag;
    q->comm = c->handle;
    q->c = c;
    q->ctx = c->ctx;
    q->bytes = bytes;
    if (UTIL_UNLIKELY(!c->predefined))
        core_comm_retain(c); /* MPI_Comm_free may come before the request ends */
    int proc = p2p_proc_of(dst_world);
    if (UTIL_LIKELY(p2p_short_to_ring(proc, r, c->ctx, c->rank, tag, dst_world, buf, bytes))) {
        q->pending = 0;
        q->complete = true;
        return;
    }
    /* UCX: the envelope and data, contiguous in the request until sent */
    p2p_wire_short_t h = p2p_wire_short_next(r, c, tag, dst_world);
    memcpy(q->wire, &h, sizeof h);
    if (bytes) /* a 0-byte send may pass NULL */
        memcpy(q->wire + sizeof h, buf, bytes);
    q->op_env.done = p2p_env_sent;
    int rc = ucx_send_envelope(proc, q->wire, sizeof h + bytes, NULL, 0, &q->op_env);
    if (rc == 0) {
        q->pending = 0;
        q->complete = true;
    } else if (rc < 0) {
        p2p_req_fail(q, MPI_ERR_OTHER);
        q->pending = 0;
        q->complete = true;
    } /* rc == 1: p2p_env_sent completes it */
}

static int isend_common(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                        MPI_Request *request, p2p_mode_t mode, const char *func)
{
    P2P_ENTER(r, func);
    core_comm_t *c;
    int err = p2p_check_args(r, buf, count, dt, dest, tag, comm, false, &c, func);
    if (UTIL_UNLIKELY(err))
        return err;
    if (UTIL_UNLIKELY(!request))
        return core_error(c, MPI_ERR_REQUEST, func);
    if (mode == P2P_MODE_STANDARD && dt_is_predefined(dt) && dest != MPI_PROC_NULL) {
        size_t bytes = (size_t)count * dt_size(dt);
        int dst = core_comm_world_rank(c, dest);
        if (!p2p_is_local(dst) && bytes <= P2P_INLINE_MAX && bytes <= p2p_proc.eager_limit &&
            !p2p_is_device(buf, bytes)) {
            p2p_req_t *q = p2p_req_alloc(r);
            isend_small_remote(q, r, c, buf, count, dt, bytes, dest, dst, tag);
            *request = q;
            return MPI_SUCCESS;
        }
    }
    p2p_req_t *q = p2p_req_alloc(r); /* p2p_req_prepare would initialise it twice */
    p2p_req_setup(q, r, P2P_REQ_SEND, mode, buf, count, dt, dest, tag, c);
    err = mode == P2P_MODE_BUFFERED ? p2p_bsend_start(q) : p2p_send_start(q);
    if (UTIL_UNLIKELY(err)) {
        p2p_req_release(q);
        *request = MPI_REQUEST_NULL;
        return core_error(c, err, func);
    }
    *request = q;
    return MPI_SUCCESS;
}

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

/* send_small_remote's way when the ring to the destination is full or
 * absent: UCX, from a contiguous copy of envelope and data on this stack
 * (out of line: the ring's way needs none of this frame). */
static __attribute__((noinline)) int send_small_ucx(int proc, const p2p_wire_short_t *h, const void *buf,
                                                    size_t bytes)
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

/* A blocking standard send of a few host bytes to another process: the
 * commonest latency-bound case.  It needs no request -- the call returns once
 * UCX has the bytes, which for a short message is before ucx_send_envelope
 * returns -- so it skips request set-up, completion counting and clean-up
 * (about a third of the instructions of a small MPI_Send).  The envelope is
 * the compact one (p2p_wire_short_t), as send_remote's for small data.
 * p2p_env_send, spelt out: envelope and data go straight into the ring's
 * cell (p2p_short_to_ring), no copy onto this stack first.  Also the
 * collectives' small steps (p2p_send_small_remote, below), on their
 * context; always inlined, so that MPI_Send keeps it in line. */
static inline __attribute__((always_inline)) int send_small_remote(p2p_rank_t *r, const core_comm_t *c, uint32_t ctx,
                                                                  const void *buf, size_t bytes, int dst_world,
                                                                  int tag)
{
    int proc = p2p_proc_of(dst_world);
    if (UTIL_LIKELY(p2p_short_to_ring(proc, r, ctx, c->rank, tag, dst_world, buf, bytes)))
        return MPI_SUCCESS;
    p2p_wire_short_t h = p2p_wire_short_next(r, c, tag, dst_world);
    h.ctx = ctx;
    return send_small_ucx(proc, &h, buf, bytes);
}

int p2p_send_small_remote(p2p_rank_t *r, const core_comm_t *c, uint32_t ctx, const void *buf, size_t bytes,
                          int dst_world, int tag)
{
    return send_small_remote(r, c, ctx, buf, bytes, dst_world, tag);
}

/* A blocking send to a rank of this process whose matching receive is
 * already posted: copy straight into it, no request of our own.  Returns
 * false (nothing done) when no receive is posted; the general path then
 * leaves an unexpected message. */
static bool send_local_posted(const core_comm_t *c, const void *buf, size_t bytes, p2p_rank_t *dst, int tag)
{
    p2p_mentry_t *e = p2p_posted_find(&dst->posted, c->ctx, c->rank, tag);
    if (!e)
        return false;
    p2p_req_t *rq = UTIL_CONTAINER_OF(e, p2p_req_t, m);
    p2p_posted_remove(&dst->posted, e);
    rq->posted = false;
    size_t n = p2p_fill_status(rq, c->rank, tag, bytes);
    if (UTIL_UNLIKELY(rq->dev))
        p2p_copy_sync(rq->buf, buf, n); /* our buffer is free again when we return */
    else if (n)
        memcpy(rq->buf, buf, n);
    p2p_req_part_done(rq);
    return true;
}

static int send_common(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                       p2p_mode_t mode, const char *func)
{
    P2P_ENTER(r, func);
    core_comm_t *c;
    int err = p2p_check_args(r, buf, count, dt, dest, tag, comm, false, &c, func);
    if (UTIL_UNLIKELY(err))
        return err;
    if ((mode == P2P_MODE_STANDARD || mode == P2P_MODE_READY) && dt_is_predefined(dt) && dest != MPI_PROC_NULL) {
        size_t bytes = (size_t)count * dt_size(dt);
        int dst = core_comm_world_rank(c, dest);
        if (p2p_is_local(dst)) {
            if (!p2p_is_device(buf, bytes) && send_local_posted(c, buf, bytes, p2p_local(dst), tag))
                return MPI_SUCCESS;
        } else if (bytes <= P2P_INLINE_MAX && bytes <= p2p_proc.eager_limit && !p2p_is_device(buf, bytes)) {
            err = send_small_remote(r, c, c->ctx, buf, bytes, dst, tag);
            return UTIL_UNLIKELY(err) ? core_error(c, err, func) : MPI_SUCCESS;
        }
    }
    p2p_req_t q; /* on the rank's stack: the call returns only when it is done */
    p2p_req_setup(&q, r, P2P_REQ_SEND, mode, buf, count, dt, dest, tag, c);
    err = mode == P2P_MODE_BUFFERED ? p2p_bsend_start(&q) : p2p_send_start(&q);
    if (!err) {
        p2p_wait_complete(&q);
        err = q.status.MPI_ERROR;
    }
    p2p_req_cleanup(&q);
    return UTIL_UNLIKELY(err) ? core_error(c, err, func) : MPI_SUCCESS;
}

#pragma weak MPI_Send = PMPI_Send
int PMPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common(buf, count, dt, dest, tag, comm, P2P_MODE_STANDARD, "MPI_Send");
}

#pragma weak MPI_Ssend = PMPI_Ssend
int PMPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common(buf, count, dt, dest, tag, comm, P2P_MODE_SYNC, "MPI_Ssend");
}

#pragma weak MPI_Rsend = PMPI_Rsend
int PMPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common(buf, count, dt, dest, tag, comm, P2P_MODE_READY, "MPI_Rsend");
}

#pragma weak MPI_Bsend = PMPI_Bsend
int PMPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common(buf, count, dt, dest, tag, comm, P2P_MODE_BUFFERED, "MPI_Bsend");
}

#pragma weak MPI_Isend = PMPI_Isend
int PMPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return isend_common(buf, count, dt, dest, tag, comm, req, P2P_MODE_STANDARD, "MPI_Isend");
}

#pragma weak MPI_Issend = PMPI_Issend
int PMPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return isend_common(buf, count, dt, dest, tag, comm, req, P2P_MODE_SYNC, "MPI_Issend");
}

#pragma weak MPI_Irsend = PMPI_Irsend
int PMPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return isend_common(buf, count, dt, dest, tag, comm, req, P2P_MODE_READY, "MPI_Irsend");
}

#pragma weak MPI_Ibsend = PMPI_Ibsend
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return isend_common(buf, count, dt, dest, tag, comm, req, P2P_MODE_BUFFERED, "MPI_Ibsend");
}

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
int PMPI_Buffer_attach(void *buffer, int size)
{
    P2P_ENTER(r, "MPI_Buffer_attach");
    int err = p2p_bsend_attach(r, buffer, size);
    return err ? core_error(NULL, err, "MPI_Buffer_attach") : MPI_SUCCESS;
}

#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    P2P_ENTER(r, "MPI_Buffer_detach");
    void *b;
    int err = p2p_bsend_detach(r, &b, size);
    *(void **)buffer_addr = b;
    return err ? core_error(NULL, err, "MPI_Buffer_detach") : MPI_SUCCESS;
}
