/* The routes a message takes between processes, and what they share:
 * envelope sends, control messages, device copies, the CUDA IPC, CMA and
 * staging routes, and the small-send fast paths.  p2p.h describes the
 * protocols. */
#ifndef AMPI_P2P_ROUTES_H
#define AMPI_P2P_ROUTES_H

#include "gpu/gpu.h"
#include "pt2pt/p2p_req.h"
#include "pt2pt/p2p_types.h"
#include "pt2pt/p2p_wire.h"
#include "shm/shm.h"
#include "ucx/ucx.h"

/* Send an envelope to process proc: through its shared-memory ring when it
 * has one with room (shm.h; done at once, rc 0), else as ucx_send_envelope.
 * Only for envelopes whose order the receiver needs no transport to keep:
 * sequenced ones (EAGER, EAGER_SHORT, RNDV, IPC, CMA: recv_seq and the stash put
 * them back into send order whichever way each came) and the replies that
 * settle exactly one request (ACK/FIN, CTS, CMA_PUT). */
static inline int p2p_env_send(int proc, const void *hdr, size_t hlen, const void *data, size_t dlen, ucx_op_t *op)
{
    if (shm_send(proc, hdr, hlen, data, dlen))
        return 0;
    return ucx_send_envelope(proc, hdr, hlen, data, dlen, op);
}

/* Replies (ACK, CTS, CMA_PUT) name their request by id: the request, or
 * NULL after a logged error; a malformed body fails the request found. */
p2p_req_t *p2p_reply_target(uint64_t id, const char *what);
void p2p_reply_malformed(p2p_req_t *q, const char *what, size_t len);

/* The intake (p2p_recv.c): UCX's AM callback and the rings' poll hand it
 * each envelope (ucx.h, shm.h) */
void *p2p_env_intake(const void *hdr, size_t hlen, const void *data, size_t dlen, bool in_order, size_t *len);
bool p2p_shm_envelope(const void *env, size_t len);
/* the envelope handlers given to ucx_init */
void *p2p_env_alloc(size_t len);
void p2p_env_arrived(void *wire, size_t len);
void p2p_env_free(void *wire);
size_t p2p_env_max(void); /* the longest envelope: header + eager limit */
void p2p_env_pool_drain(void); /* at exit */

/* device buffers (p2p_gpu.c).  Every send and receive asks, and every
 * collective step: the answer without a GPU (or for 0 bytes) is given in
 * line, a call cost more than that test. */
bool p2p_classify_device(const void *buf, size_t bytes);
/* what UCX is told a device payload's memory is (cudaMalloc'd or managed) */
ucx_mem_t p2p_ucx_mem(const void *buf, size_t bytes);
static inline bool p2p_is_device(const void *buf, size_t bytes)
{
    return __builtin_expect(gpu_enabled(), 0) && bytes != 0 && p2p_classify_device(buf, bytes);
}
/* Copy n bytes (any memory kinds) asynchronously; when done, finish one part
 * of a and of b (either may be NULL) and free(free_after). */
void p2p_copy_then_complete(void *dst, const void *src, size_t n, p2p_req_t *a, p2p_req_t *b, void *free_after);
void p2p_copy_sync(void *dst, const void *src, size_t n);
int p2p_copies_progress(void);
/* The same, then call fn(arg) (before completing a). */
void p2p_copy_then_call(void *dst, const void *src, size_t n, p2p_req_t *a, void (*fn)(void *), void *arg);
/* Non-contiguous device buffers (p2p_gpu.c): their elements gathered into
 * q's device pack buffer by the GPU before the send starts (p2p_req_pack's
 * counterpart), scattered by it after a receive (q completes once that has
 * run). */
void p2p_dev_pack(p2p_req_t *q);
/* The pipelined form (AMPI_GPU_DDT_CHUNK): true when q's pack started in
 * chunks (q->chunks), to be copied chunk by chunk as the receiver asks
 * (p2p_ipc.c) or waited for whole by p2p_dev_pack_finish (no-op without
 * chunks) before any other route reads it. */
bool p2p_dev_pack_chunks_start(p2p_req_t *q);
void p2p_dev_pack_finish(p2p_req_t *q);
/* The FIN of a push into q's bounce (p2p_ipc.c): copies it into q's buffer
 * and then completes q; false (nothing done) when q has no bounce. */
bool p2p_ipc_fin_bounce(p2p_req_t *q);
/* A copy already started (gc) joins the PE's list: when it has run, fn(arg)
 * is called and one part of a finishes. */
void p2p_copy_running_then_call(const gpu_copy_t *gc, p2p_req_t *a, void (*fn)(void *), void *arg);
void p2p_dev_unpack_then_complete(p2p_req_t *q);
/* Gather `count` elements of type dt at device buffer src into dst, which
 * is contiguous device memory, and wait (letting the PE's other ranks run). */
void p2p_dev_pack_wait(void *dst, const void *src, int count, MPI_Datatype dt);
/* Scatter the first `bytes` of contiguous device memory `packed` into
 * `count` elements of dt at device buffer dst, and wait likewise. */
void p2p_dev_unpack_wait(void *dst, const void *packed, int count, size_t bytes, MPI_Datatype dt);
void p2p_send_desc_envelope(p2p_req_t *q, int proc, uint8_t kind, size_t desc_len, int extra);
/* The CUDA IPC route (p2p_ipc.c; p2p_ipc_start declines memory that
 * cannot be exported). */
void p2p_ipc_deliver(p2p_msg_t *msg, p2p_req_t *q, size_t n);
void p2p_ipc_cts_arrived(const p2p_wire_hdr_t *h, size_t len);
/* The cross-memory-attach route for host payloads (p2p_cma.c): publish
 * whether this process takes part (before the PMIx fence), learn which peers
 * do (after it); p2p_cma_start declines a peer that does not. */
void p2p_cma_publish(void);
void p2p_cma_attach(void);
void p2p_cma_fini(void);
/* Both this process and proc may read and write each other's memory. */
bool p2p_cma_peer(int proc);
void p2p_cma_settled(p2p_req_t *q); /* a send of p2p_cma_start's completed (p2p_req_part_done) */
/* For other layers' messages to such a peer (any thread): copy n bytes
 * between our `local` and process pid's `remote`, reading them or (write)
 * writing them; a failure ends the job.  p2p_cma_written tells memcheck
 * that another process wrote p[n]; p2p_cma_split_min is AMPI_CMA_SPLIT,
 * the size from which both sides copy half (0: never). */
void p2p_cma_copy(int pid, void *local, uint64_t remote, size_t n, bool write, int peer_world);
void p2p_cma_written(void *p, size_t n);
size_t p2p_cma_split_min(void);
size_t p2p_cma_desc_size(void);
void p2p_cma_deliver(p2p_msg_t *msg, p2p_req_t *q, size_t n);
void p2p_cma_put_arrived(const p2p_wire_hdr_t *h, size_t len);
/* Pipelined host staging of device payloads (p2p_stage.c). */
void p2p_stage_recv(p2p_req_t *q, const p2p_msg_t *msg, size_t keep);
size_t p2p_stage_chunk(void);
void p2p_stage_drain(void); /* at exit, before the GPU goes */
/* Control messages (p2p_ctl.c).  Tell the sender of a synchronous, IPC
 * or CMA message that it is done with (or a receiver that its push or put
 * is: the FIN); an arrived ACK settles the request it names. */
void p2p_send_ack(int src_world, uint64_t sreq);
void p2p_ack_arrived(const p2p_wire_hdr_t *h);
/* Cancelling sends (p2p_cancel.c): MPI_Cancel of send q; a CANCEL and its
 * reply arrived; msg enters matching at r while cancel requests wait there
 * (true: it was withdrawn); the key of r's next message to dst_world; the
 * requests still waiting at r's end. */
void p2p_send_cancel(p2p_req_t *q);
void p2p_cancel_arrived(const p2p_wire_hdr_t *h);
void p2p_cancel_reply_arrived(const p2p_wire_hdr_t *h);
bool p2p_cancel_at_entry(p2p_rank_t *r, p2p_msg_t *msg);
uint32_t p2p_cancel_next_key(p2p_rank_t *r, int dst_world);
void p2p_cancel_fini(p2p_rank_t *r);
/* Send a header-only control envelope h (copied) to process proc through
 * p2p_env_send and forget it; `what` names it if sending fails. */
void p2p_send_ctl(int proc, const p2p_wire_hdr_t *h, const char *what);
/* The same with a descriptor of dlen bytes after the header (CTS, CMA PUT). */
void p2p_send_ctl_desc(int proc, const p2p_wire_hdr_t *h, const void *desc, size_t dlen, const char *what);
/* Completion of a request's envelope (op_env): the request's part is done. */
void p2p_env_sent(ucx_op_t *op, int status, size_t len);

/* ---- the route selector (p2p_send.c) ----
 * Every send takes one route, each started by one function in its file.
 * The selector classifies nothing: the entry point classified the buffer
 * once (q->dev).  Its first cases are the fast paths': the blocking and
 * nonblocking entry points ask p2p_route_first before building a request,
 * and on LOCAL or SHORT start the route themselves (p2p_local_send_posted,
 * p2p_short.h); everything else becomes a request for p2p_send_start. */
typedef enum {
    P2P_ROUTE_LOCAL,        /* a rank of this process: match and copy (p2p_send.c) */
    P2P_ROUTE_SHORT,        /* <= P2P_INLINE_MAX host bytes, no flags: compact envelope (p2p_short.h) */
    P2P_ROUTE_EAGER,        /* up to the eager limit: envelope + data, ring or UCX (p2p_eager.c) */
    P2P_ROUTE_MEDIUM,       /* host, streaming one way: up to 32 KiB eager through the ring (p2p_eager.c) */
    P2P_ROUTE_CMA,          /* host, a process of this node: it reads our buffer (p2p_cma.c) */
    P2P_ROUTE_IPC,          /* device, a process of this node: CUDA IPC push or pull (p2p_ipc.c) */
    P2P_ROUTE_RNDV,         /* UCX rendezvous under a fresh tag, host or device (p2p_rndv.c) */
    P2P_ROUTE_STAGED,       /* device data, UCX without CUDA: pinned host chunks (p2p_stage.c) */
    P2P_ROUTE_STAGED_EAGER, /* ... up to the eager limit: one host copy, then EAGER (p2p_stage.c) */
    P2P_ROUTE_OTHER         /* p2p_route_first: not one of its cases */
} p2p_route_t;
/* Under AMPI_DEBUG: count the route of a device payload sent to process
 * proc (p2p_tally.c); report the counts, once, as the process ends. */
void p2p_tally_device(p2p_route_t rt, int proc);
void p2p_tally_report(void);

/* The selector's first cases, from what every entry point knows anyway. */
static inline p2p_route_t p2p_route_first(int dst_world, size_t bytes, bool dev, bool sync)
{
    if (p2p_is_local(dst_world))
        return P2P_ROUTE_LOCAL;
    if (!sync && bytes <= P2P_INLINE_MAX && bytes <= p2p_proc.eager_limit && UTIL_LIKELY(!dev))
        return P2P_ROUTE_SHORT;
    return P2P_ROUTE_OTHER;
}
/* The route of q to dst_world, given the routes that declined it already
 * (a bit per p2p_route_t: a full ring, a peer without CMA, memory that
 * cannot be exported). */
p2p_route_t p2p_route_select(const p2p_req_t *q, int dst_world, unsigned declined);

/* The start functions: q is prepared, its envelope header filled (but for
 * LOCAL); those returning bool may decline, having done nothing. */
void p2p_local_start(p2p_req_t *q, p2p_rank_t *dst);
void p2p_short_start(p2p_req_t *q, int proc);
void p2p_eager_start(p2p_req_t *q, int proc, const void *data);
bool p2p_medium_start(p2p_req_t *q, int proc);
bool p2p_cma_start(p2p_req_t *q, int proc);
bool p2p_ipc_start(p2p_req_t *q, int proc);
void p2p_rndv_start(p2p_req_t *q, int proc);
void p2p_stage_start(p2p_req_t *q, int proc);
void p2p_stage_eager_start(p2p_req_t *q, int proc);
/* A UCX start's rc: 0 done at once, 1 done later (op->done), < 0 failed. */
void p2p_ucx_started(p2p_req_t *q, int rc);

/* LOCAL without a request: a blocking send whose receive is posted
 * already is copied straight into it.  False (nothing done) when none is. */
static inline bool p2p_local_send_posted(const core_comm_t *c, const void *buf, size_t bytes, p2p_rank_t *dst, int tag)
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

#endif
