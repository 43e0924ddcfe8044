/* The UCX rendezvous route: the payload goes to UCX under a fresh tag
 * (PAYLOAD for host memory, DEVICE for device memory that this UCX moves
 * itself), and the envelope carries the tag; the receiver posts its
 * receive into the user's buffer once the envelope has matched
 * (p2p_deliver). */
#include "pt2pt/p2p.h"
#include "ucx/ucx_tag.h"

static void payload_sent(ucx_op_t *op, int status, size_t len)
{
    (void)len;
    p2p_req_t *q = UTIL_CONTAINER_OF(op, p2p_req_t, op_data);
    if (status)
        p2p_req_fail(q, MPI_ERR_OTHER);
    p2p_req_part_done(q);
}

void p2p_rndv_start(p2p_req_t *q, int proc)
{
    p2p_wire_hdr_t *h = &q->hdr;
    ucx_mem_t mem = q->dev ? p2p_ucx_mem(q->buf, q->bytes) : UCX_MEM_HOST; /* cudaMalloc'd or managed */
    h->kind = P2P_WIRE_RNDV;
    h->payload_tag = ucx_fresh_tag(q->dev ? UCX_TAG_DEVICE : UCX_TAG_PAYLOAD);
    q->pending += 2;
    p2p_ucx_started(q, p2p_env_send(proc, h, sizeof *h, NULL, 0, &q->op_env));
    q->op_data.done = payload_sent;
    p2p_ucx_started(q, ucx_send_tagged(proc, q->buf, q->bytes, h->payload_tag, mem, &q->op_data));
}
