/* The cross-memory-attach route for host payloads above the eager limit
 * between processes of one node (Linux process_vm_readv: one copy, straight
 * from the sender's buffer into the receiver's).
 *
 *   sender                                   receiver
 *   envelope CMA: header + {pid, address} -> match like any envelope
 *                                            process_vm_readv from the
 *                                            sender's buffer into the receive
 *                                            buffer (the part that fits)
 *   send completes                        <- ACK; receive completes
 *
 * It replaces the UCX rendezvous of such payloads (envelope + a tagged UCX
 * send whose own RTS, tag match and ATS follow the envelope): one envelope
 * and one ACK, both through the shared-memory rings, and the copy that
 * UCX's CMA transport would make anyway.  The ACK also settles an Ssend.
 *
 * Reading another process's memory needs ptrace permission over it.  Each
 * process checks at start-up that it can (same user; Yama's ptrace_scope 0,
 * or 1 after PR_SET_PTRACER_ANY, which lets the job's other processes read
 * it; process_vm_readv not refused by a seccomp filter) and publishes the
 * answer; a send takes the route only when both ends said yes.
 * AMPI_CMA=0 turns it off. */
#define _GNU_SOURCE
#include "pt2pt/p2p.h"
#include "ucx/ucx_pmix.h"
#include "util/util_env.h"
#include "util/util_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define CMA_KEY "ampi.cma"

typedef struct {
    uint64_t addr; /* the sender's buffer */
    int32_t pid;   /* ... in this process */
    uint32_t unused;
} cma_desc_t;
_Static_assert(sizeof(cma_desc_t) <= P2P_INLINE_MAX, "the descriptor travels in the request's inline buffer");

static bool *peer_ok; /* by process: it takes part (NULL: the route is off) */

/* Yama's setting: -1 when the module is absent (only the classic ptrace
 * rules, which a process of the same user passes). */
static int ptrace_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (!f)
        return -1;
    int v = 3;
    if (fscanf(f, "%d", &v) != 1)
        v = 3;
    fclose(f);
    return v;
}

static bool can_take_part(void)
{
    if (util_env_long("AMPI_CMA", 1) == 0)
        return false;
    int scope = ptrace_scope();
    if (scope == 1 && prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) != 0)
        return false;
    if (scope > 1)
        return false;
    /* a seccomp filter (containers) may refuse the call itself */
    static volatile uint64_t probe = 0x414d5049636d61ull; /* "AMPIcma" */
    uint64_t got = 0;
    struct iovec local = { &got, sizeof got }, remote = { (void *)(uintptr_t)&probe, sizeof probe };
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof got && got == probe;
}

void p2p_cma_publish(void)
{
    char ok = can_take_part() ? 1 : 0;
    if (ucx_pmix_put(CMA_KEY, &ok, 1) != 0)
        util_warn("cannot publish the CMA setting through PMIx");
    if (ok)
        peer_ok = calloc((size_t)p2p_proc.nprocs, sizeof *peer_ok);
}

void p2p_cma_attach(void)
{
    if (!peer_ok)
        return;
    int reached = 0;
    for (int p = 0; p < p2p_proc.nprocs; p++) {
        void *data = NULL;
        size_t len = 0;
        if (p != p2p_proc.proc && ucx_pmix_get(p, CMA_KEY, &data, &len) == 0 && len == 1 && *(char *)data == 1) {
            peer_ok[p] = true;
            reached++;
        }
        free(data);
    }
    util_debug("cross-memory attach: %d of %d peers", reached, p2p_proc.nprocs - 1);
}

void p2p_cma_fini(void)
{
    free(peer_ok);
    peer_ok = NULL;
}

bool p2p_cma_send(p2p_req_t *q, int proc)
{
    if (!peer_ok || !peer_ok[proc])
        return false;
    cma_desc_t *d = (cma_desc_t *)q->inl;
    *d = (cma_desc_t){ .addr = (uint64_t)(uintptr_t)q->buf, .pid = (int32_t)getpid() };
    p2p_wire_hdr_t *h = &q->hdr;
    h->kind = P2P_WIRE_CMA;
    if (!(h->flags & P2P_WIRE_SYNC)) { /* an Ssend counted its ACK already */
        h->sreq = (uint64_t)(uintptr_t)q;
        q->pending++;
    }
    q->pending++;
    int rc = p2p_env_send(proc, h, sizeof *h + sizeof *d, NULL, 0, &q->op_env, NULL);
    if (rc == 1)
        return true;
    if (rc < 0) {
        /* the receiver will never ACK what it never saw */
        p2p_req_fail(q, MPI_ERR_OTHER);
        q->pending--;
    }
    q->pending--;
    return true;
}

size_t p2p_cma_desc_size(void) { return sizeof(cma_desc_t); }

/* Copies n bytes of the sender's buffer to dst; a read may stop short (at a
 * page the kernel would not map), so go on from there. */
static void read_from(const p2p_msg_t *msg, void *dst, size_t n)
{
    cma_desc_t d;
    memcpy(&d, msg->data, sizeof d);
    size_t done = 0;
    while (done < n) {
        struct iovec local = { (char *)dst + done, n - done };
        struct iovec remote = { (void *)(uintptr_t)(d.addr + done), n - done };
        ssize_t got = process_vm_readv((pid_t)d.pid, &local, 1, &remote, 1, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            util_fatal("cannot read %zu bytes from rank %d's process (process_vm_readv: %s); AMPI_CMA=0 avoids "
                       "this route",
                       n - done, msg->src_world, got < 0 ? strerror(errno) : "no progress");
        }
        done += (size_t)got;
    }
}

void p2p_cma_deliver(p2p_msg_t *msg, p2p_req_t *q, size_t n)
{
    int src_world = msg->src_world;
    uint64_t sreq = msg->sreq;
    if (UTIL_UNLIKELY(q->dev)) { /* a device receive buffer: through host memory */
        void *t = n ? malloc(n) : NULL;
        if (n && !t)
            util_fatal("out of memory for a %zu-byte bounce buffer", n);
        read_from(msg, t, n);
        p2p_msg_free(msg);
        p2p_send_ack(src_world, sreq); /* the sender's buffer is free again */
        p2p_copy_then_complete(q->buf, t, n, q, NULL, t);
        return;
    }
    read_from(msg, q->buf, n);
    p2p_msg_free(msg);
    p2p_send_ack(src_world, sreq);
    p2p_req_part_done(q);
}
