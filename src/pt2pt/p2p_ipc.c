/* The CUDA IPC route for device payloads between processes of one node.
 *
 *   sender                                   receiver
 *   export its buffer (cached handle)
 *   envelope IPC: header + handle + offset -> match like any envelope
 *      device receive buffer of >= AMPI_GPU_IPC_PUSH_MIN bytes ("push"):
 *                                        <- CTS: a handle of the receive buffer
 *   map it (cached), copy into it (the
 *   sender's GPU writes over NVLink)
 *   send completes, FIN (an ACK)          -> receive completes
 *      smaller device, or host, receive buffer, or AMPI_GPU_IPC_PUSH=0 ("pull"):
 *                                            map the sender's buffer (cached)
 *                                            and copy from it
 *   send completes                        <- ACK; receive completes
 *
 * Copies are asynchronous, polled by the PE's progress.  A lone copy written
 * to the peer is faster than one read from it (osu/gpu_floor.c), but in a
 * ping-pong pulling wins up to 256 KiB, because the CTS and FIN leave the
 * critical path (8.3-8.6 vs 9.3 us at 8 B, 8.6 vs 9.1 us at 64 KiB), and
 * pushing gives more bandwidth from 512 KiB: hence the 512 KiB default
 * crossover (BENCHMARKS.md, 2026-11-22, 2 x H200, route sweep at 9395b5b).
 * A truncated receive
 * copies only what fits; an Ssend needs nothing more, since CTS and ACK both
 * say the message was matched.
 *
 * A large send of a type with gaps may go while its GPU still packs it
 * (AMPI_GPU_DDT_CHUNK, p2p_gpu.c): its envelope says PACKING, and the
 * receiver always asks for a push -- into its own device buffer, or into
 * device scratch ("bounce") that it copies out when the FIN comes -- so the
 * sender copies each chunk to the receiver as soon as it is packed, and no
 * one reads a chunk before then. */
#include "pt2pt/p2p.h"
#include "gpu/gpu_ipc.h"
#include "gpu/gpu_dt.h"
#include "gpu/gpu_reduce.h" /* gpu_dev_alloc */
#include "ucx/ucx_pmix.h"
#include "util/util_log.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(gpu_ipc_desc_t) == P2P_IPC_DESC_SIZE, "P2P_IPC_DESC_SIZE");
_Static_assert(P2P_IPC_DESC_SIZE <= P2P_INLINE_MAX, "the descriptor travels in the request's inline buffer");

bool p2p_ipc_start(p2p_req_t *q, int proc)
{
    gpu_ipc_desc_t *d = (gpu_ipc_desc_t *)q->inl;
    /* a handle means nothing on another node: the UCX route takes it */
    if (!ucx_pmix_is_local(proc) || !gpu_ipc_export(q->buf, q->bytes, d))
        return false;
    if (q->chunks)
        q->hdr.flags |= P2P_WIRE_PACKING;
    p2p_send_desc_envelope(q, proc, P2P_WIRE_IPC, sizeof *d, 0);
    return true;
}

typedef struct {
    int src_world;
    uint64_t sreq;
    void *token;
} ipc_copy_t;

static void copied(void *arg)
{
    ipc_copy_t *x = arg;
    gpu_ipc_release(x->token);
    p2p_send_ack(x->src_world, x->sreq);
    free(x);
}

/* Receiver: ask the sender to write into `into` (q's buffer, or its
 * bounce); q completes on the FIN. */
static bool send_cts(const p2p_msg_t *msg, p2p_req_t *q, void *into, size_t n)
{
    gpu_ipc_desc_t d;
    if (!gpu_ipc_export(into, n, &d))
        return false;
    p2p_wire_hdr_t h = { .kind = P2P_WIRE_CTS, .src_world = q->owner->core.world, .dst_world = msg->src_world,
                         .size = n, .sreq = msg->sreq, .rreq = p2p_reqid_issue(q) /* named by the FIN */ };
    p2p_send_ctl_desc(p2p_proc_of(msg->src_world), &h, &d, sizeof d, "a CTS");
    return true;
}

typedef struct {
    int peer_world;
    uint64_t req;
    void *token;
} ipc_push_t;

static void pushed(void *arg)
{
    ipc_push_t *x = arg;
    gpu_ipc_release(x->token);
    p2p_send_ack(x->peer_world, x->req); /* the FIN */
    free(x);
}

/* Sender: the receiver's CTS; copy our buffer into its buffer. */
void p2p_ipc_cts_arrived(const p2p_wire_hdr_t *h, size_t len)
{
    p2p_req_t *q = p2p_reply_target(h->sreq, "a CTS");
    if (UTIL_UNLIKELY(!q))
        return;
    if (UTIL_UNLIKELY(len != sizeof *h + sizeof(gpu_ipc_desc_t) || h->size > q->bytes)) {
        p2p_reply_malformed(q, "a CTS", len);
        return;
    }
    ipc_push_t *x = malloc(sizeof *x);
    if (!x)
        util_fatal("out of memory");
    x->peer_world = h->src_world;
    x->req = h->rreq;
    void *dst = gpu_ipc_import(p2p_proc_of(h->src_world), (const gpu_ipc_desc_t *)(h + 1), &x->token);
    if (!dst)
        util_fatal("cannot map the device buffer of rank %d (CUDA IPC); AMPI_GPU_IPC=0 avoids this route",
                   h->src_world);
    if (!q->chunks) {
        p2p_copy_then_call(dst, q->buf, h->size, q, pushed, x);
        return;
    }
    /* still packing: each chunk goes as soon as it is packed */
    gpu_copy_t gc;
    int rc = gpu_dt_chunks_copy_start(dst, q->buf, h->size, q->chunks, &gc);
    if (rc != 0)
        util_fatal("device copy of %zu bytes failed to start (CUDA error %d)", (size_t)h->size, rc);
    p2p_copy_running_then_call(&gc, q, pushed, x);
}

/* Receiver: the FIN of a push into q's bounce: copy it out, then complete. */
static void bounce_free(void *p) { gpu_dev_free(p); }

bool p2p_ipc_fin_bounce(p2p_req_t *q)
{
    if (!q->bounce)
        return false;
    void *b = q->bounce;
    q->bounce = NULL;
    p2p_copy_then_call(q->buf, b, (size_t)q->status.ampi_count, q, bounce_free, b);
    return true;
}

void p2p_ipc_deliver(p2p_msg_t *msg, p2p_req_t *q, size_t n)
{
    /* Pulling leaves two host messages (CTS, FIN) off the critical path of a
     * ping-pong; pushing makes faster copies and more bandwidth.
     * AMPI_GPU_IPC_PUSH_MIN sets the crossover (default 512 KiB).  A receive
     * marked pull always pulls: several of them reading one sender's
     * buffer run at once, where pushes would queue on the sender's stream. */
    if (UTIL_UNLIKELY(msg->packing) && n > 0) { /* the sender is still packing: it must write */
        if (!q->dev || !send_cts(msg, q, q->buf, n)) {
            if (gpu_dev_alloc(n, &q->bounce) != 0)
                util_fatal("out of device memory for %zu bytes of a message being packed", n);
            if (!send_cts(msg, q, q->bounce, n))
                util_fatal("cannot export device scratch for CUDA IPC; AMPI_GPU_DDT_CHUNK=0 avoids this");
        }
        p2p_msg_free(msg);
        return;
    }
    if (p2p_proc.gpu_ipc_push && n > 0 && n >= p2p_proc.gpu_ipc_push_min && q->dev && !q->pull &&
        send_cts(msg, q, q->buf, n)) {
        p2p_msg_free(msg);
        return;
    }
    ipc_copy_t *x = malloc(sizeof *x);
    if (!x)
        util_fatal("out of memory");
    x->src_world = msg->src_world;
    x->sreq = msg->sreq;
    const void *src = gpu_ipc_import(p2p_proc_of(msg->src_world), msg->data, &x->token);
    if (!src)
        util_fatal("cannot map the device buffer of rank %d (CUDA IPC); AMPI_GPU_IPC=0 avoids this route",
                   msg->src_world);
    p2p_msg_free(msg);
    p2p_copy_then_call(q->buf, src, n, q, copied, x);
}
