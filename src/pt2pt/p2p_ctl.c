/* Control messages: the replies that settle one request each -- ACK (a
 * synchronous send matched, a buffer read; a FIN is an ACK naming the
 * receive), CTS (p2p_ipc.c) and CMA PUT (p2p_cma.c) -- sent and forgotten
 * by the replier, and found again by id on arrival (p2p_wire.h). */
#include "pt2pt/p2p.h"
#include "util/util_log.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A control envelope in flight: its header (and descriptor) live here until
 * UCX is done. */
typedef struct p2p_ctl {
    ucx_op_t op;
    p2p_wire_hdr_t h;
    uint8_t desc[]; /* follows the header without a gap: one contiguous envelope */
} p2p_ctl_t;
_Static_assert(offsetof(p2p_ctl_t, desc) == offsetof(p2p_ctl_t, h) + sizeof(p2p_wire_hdr_t), "contiguous");

static void ctl_sent(ucx_op_t *op, int status, size_t len)
{
    (void)status;
    (void)len;
    free(UTIL_CONTAINER_OF(op, p2p_ctl_t, op));
}

void p2p_send_ctl(int proc, const p2p_wire_hdr_t *h, const char *what)
{
    p2p_send_ctl_desc(proc, h, NULL, 0, what);
}

void p2p_send_ctl_desc(int proc, const p2p_wire_hdr_t *h, const void *desc, size_t dlen, const char *what)
{
    p2p_ctl_t *c = malloc(sizeof *c + dlen);
    if (!c)
        util_fatal("out of memory");
    c->h = *h;
    if (dlen)
        memcpy(c->desc, desc, dlen);
    c->op.done = ctl_sent;
    size_t len = sizeof c->h + dlen;
    int rc = p2p_env_send(proc, &c->h, len, NULL, 0, &c->op);
    if (rc < 0)
        util_fatal("cannot send %s", what);
    if (rc == 0)
        free(c);
}

void p2p_send_ack(int src_world, uint64_t sreq)
{
    p2p_wire_hdr_t h = { .kind = P2P_WIRE_ACK, .dst_world = src_world, .sreq = sreq };
    p2p_send_ctl(p2p_proc_of(src_world), &h, "an acknowledgement");
}

void p2p_ack_arrived(const p2p_wire_hdr_t *h)
{
    p2p_req_t *q = p2p_reply_target(h->sreq, "an ACK");
    if (UTIL_LIKELY(q != NULL) && !(UTIL_UNLIKELY(q->bounce != NULL) && p2p_ipc_fin_bounce(q)))
        p2p_req_part_done(q);
}

/* The request a reply names (p2p_wire.h), or NULL after saying why. */
p2p_req_t *p2p_reply_target(uint64_t id, const char *what)
{
    p2p_req_t *q = p2p_reqid_find(id);
    if (UTIL_UNLIKELY(!q))
        util_warn("rejected %s: request id %#llx was never issued or has completed", what, (unsigned long long)id);
    return q;
}

/* A reply whose request was found but whose body does not match its kind:
 * that request fails (the part the reply would have finished ends). */
void p2p_reply_malformed(p2p_req_t *q, const char *what, size_t len)
{
    util_warn("rejected %s of %zu bytes: malformed", what, len);
    p2p_req_fail(q, MPI_ERR_INTERN);
    p2p_req_part_done(q);
}
