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
 * A message of at least AMPI_CMA_SPLIT bytes (64 KiB) splits the copy
 * between both processes' cores: the receiver first sends a PUT request
 * (header + {pid, address and offset of the second half}), then reads the
 * first half while the sender writes the second half with
 * process_vm_writev and answers with a FIN; the receive completes with both
 * halves.  The sender, told by the envelope's split flag, waits for two
 * settlements: its own write (on the PUT) and the receiver's ACK, which may
 * arrive in either order; a receiver that does not split (a truncated, a
 * device or a pull receive, or one whose sender still has sends of ours to
 * read) sends two ACKs.  One core's copy bounds osu_bw at 1 MiB (15.7
 * GB/s against Open MPI's 18.3: BENCHMARKS.md, 2026-11-22, 4 x H200,
 * b4273b4); splitting from 64 KiB doubles osu_bw from 128 KiB on a 2-core
 * machine (1 MiB: 23-29 vs 8-12 GB/s) and halves the 1 MiB latency (same
 * entry, 7b57ff4).
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
#include "core/core_settings.h"
#include "util/util_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

/* Memcheck cannot see another process write into our memory: the half a
 * sender writes is marked defined (a no-op outside valgrind). */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_MAKE_MEM_DEFINED
#define VALGRIND_MAKE_MEM_DEFINED(addr, len) ((void)(addr), (void)(len))
#endif

#define CMA_KEY "ampi.cma"

typedef struct {
    uint64_t addr;  /* the sender's buffer */
    int32_t pid;    /* ... in this process */
    uint32_t split; /* 1: a large message; the sender waits for two settlements (below) */
} cma_desc_t;
_Static_assert(sizeof(cma_desc_t) <= P2P_INLINE_MAX, "the descriptor travels in the request's inline buffer");

static bool *peer_ok; /* by process: it takes part (NULL: the route is off) */
static int *unsettled; /* by process: our sends it has yet to settle (its core is busy reading them) */
static size_t split_min; /* AMPI_CMA_SPLIT: receives from this size on copy on both sides */

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
    if (!core_setting_bool(CORE_SET_CMA))
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
    if (ok) {
        peer_ok = calloc((size_t)core_proc.nprocs, sizeof *peer_ok);
        unsettled = calloc((size_t)core_proc.nprocs, sizeof *unsettled);
        if (!peer_ok || !unsettled)
            util_fatal("out of memory for %d processes' CMA state", core_proc.nprocs);
    }
    split_min = core_setting_size(CORE_SET_CMA_SPLIT);
}

void p2p_cma_attach(void)
{
    if (!peer_ok)
        return;
    int reached = 0;
    for (int p = 0; p < core_proc.nprocs; p++) {
        void *data = NULL;
        size_t len = 0;
        if (p != core_proc.proc && ucx_pmix_is_local(p) && ucx_pmix_get(p, CMA_KEY, &data, &len) == 0 && len == 1 && *(char *)data == 1) {
            peer_ok[p] = true;
            reached++;
        }
        free(data);
    }
    util_debug("cross-memory attach: %d of %d peers", reached, core_proc.nprocs - 1);
}

void p2p_cma_fini(void)
{
    free(peer_ok);
    free(unsettled);
    peer_ok = NULL;
    unsettled = NULL;
}

bool p2p_cma_peer(int proc) { return peer_ok && peer_ok[proc]; }

bool p2p_cma_start(p2p_req_t *q, int proc)
{
    if (!peer_ok || !peer_ok[proc])
        return false;
    cma_desc_t *d = (cma_desc_t *)q->inl;
    bool split = split_min > 0 && q->bytes >= split_min;
    *d = (cma_desc_t){ .addr = (uint64_t)(uintptr_t)q->buf, .pid = (int32_t)getpid(), .split = split };
    q->cma_proc = proc + 1;
    unsettled[proc]++;
    p2p_send_desc_envelope(q, proc, P2P_WIRE_CMA, sizeof *d, split); /* split: a second settlement */
    shm_mark(proc);
    return true;
}

void p2p_cma_settled(p2p_req_t *q)
{
    if (unsettled) /* (a send that settles after p2p_cma_fini) */
        unsettled[q->cma_proc - 1]--;
    q->cma_proc = 0;
}

size_t p2p_cma_desc_size(void) { return sizeof(cma_desc_t); }

/* Copies n bytes between our `local` and process pid's `remote` (reading
 * them, or writing them with `write`); a call may stop short (at a page the
 * kernel would not map), so go on from there. */
static void copy_with(pid_t pid, void *local, uint64_t remote, size_t n, bool write, int peer_world)
{
    size_t done = 0;
    while (done < n) {
        struct iovec l = { (char *)local + done, n - done };
        struct iovec r = { (void *)(uintptr_t)(remote + done), n - done };
        ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            util_fatal("cannot %s %zu bytes %s rank %d's process (process_vm_%s: %s); AMPI_CMA=0 avoids this route",
                       write ? "write" : "read", n - done, write ? "to" : "from", peer_world,
                       write ? "writev" : "readv", got < 0 ? strerror(errno) : "no progress");
        }
        done += (size_t)got;
    }
}

void p2p_cma_copy(int pid, void *local, uint64_t remote, size_t n, bool write, int peer_world)
{
    copy_with((pid_t)pid, local, remote, n, write, peer_world);
}

void p2p_cma_written(void *p, size_t n) { VALGRIND_MAKE_MEM_DEFINED(p, n); }

size_t p2p_cma_split_min(void) { return split_min; }

static cma_desc_t desc_of(const p2p_msg_t *msg)
{
    cma_desc_t d;
    memcpy(&d, msg->data, sizeof d);
    return d;
}

static void read_from(const p2p_msg_t *msg, void *dst, size_t n)
{
    cma_desc_t d = desc_of(msg);
    copy_with((pid_t)d.pid, dst, d.addr, n, false, msg->src_world);
}

typedef struct {
    uint64_t addr; /* where the receiver wants the bytes */
    uint64_t off;  /* ... which start at this offset of the message */
    int32_t pid;   /* the receiver */
    uint32_t unused;
} put_desc_t;

/* Receiver: ask the sender to write bytes [off, n) of the message into q's
 * buffer; its FIN (an ACK naming q) completes that part. */
static void send_put(const p2p_msg_t *msg, p2p_req_t *q, size_t off, size_t n)
{
    p2p_wire_hdr_t h = { .kind = P2P_WIRE_CMA_PUT, .src_world = q->owner->core.world, .dst_world = msg->src_world,
                         .size = n - off,
                         .sreq = msg->sreq,                      /* the sender's request: its buffer */
                         .rreq = p2p_reqid_issue(q) }; /* named by the FIN */
    put_desc_t d = { .addr = (uint64_t)(uintptr_t)q->buf + off, .off = off, .pid = (int32_t)getpid() };
    q->pending++; /* the FIN */
    (void)VALGRIND_MAKE_MEM_DEFINED((char *)q->buf + off, n - off);
    p2p_send_ctl_desc(p2p_proc_of(msg->src_world), &h, &d, sizeof d, "a CMA PUT request");
}

/* Sender: the receiver's PUT request; write the tail of our buffer into it
 * (h->size bytes ending where the message ends), then FIN. */
void p2p_cma_put_arrived(const p2p_wire_hdr_t *h, size_t len)
{
    /* our request is still running: it waits for this write and for the
     * receiver's ACK (cma_desc_t.split) */
    p2p_req_t *q = p2p_reply_target(h->sreq, "a CMA PUT request");
    if (UTIL_UNLIKELY(!q))
        return;
    put_desc_t d;
    if (UTIL_UNLIKELY(len != sizeof *h + sizeof d)) {
        p2p_reply_malformed(q, "a CMA PUT request", len);
        return;
    }
    memcpy(&d, h + 1, sizeof d);
    if (UTIL_UNLIKELY(d.off > q->bytes || h->size > q->bytes - d.off)) {
        p2p_reply_malformed(q, "a CMA PUT request", len);
        return;
    }
    copy_with((pid_t)d.pid, (char *)q->buf + d.off, d.addr, h->size, true, h->src_world);
    p2p_send_ack(h->src_world, h->rreq); /* the FIN */
    p2p_req_part_done(q);
}

void p2p_cma_deliver(p2p_msg_t *msg, p2p_req_t *q, size_t n)
{
    int src_world = msg->src_world;
    uint64_t sreq = msg->sreq;
    bool split = desc_of(msg).split;
    if (UTIL_UNLIKELY(q->dev)) { /* a device receive buffer: through host memory */
        void *t = n ? malloc(n) : NULL;
        if (n && !t)
            util_fatal("out of memory for a %zu-byte bounce buffer", n);
        read_from(msg, t, n);
        p2p_msg_free(msg);
        p2p_send_ack(src_world, sreq); /* the sender's buffer is free again */
        if (split)
            p2p_send_ack(src_world, sreq);
        p2p_copy_then_complete(q->buf, t, n, q, NULL, t);
        return;
    }
    /* both cores copy a large message: the sender writes the second half
     * while we read the first (the PUT request goes first).  Not for a
     * receive marked pull: the collectives mark those whose data this core
     * reduces at once, or that arrive while this core sends (an exchange):
     * a half written by the sender's core sits in its cache, and reading it
     * from there costs more than the split saves (osu_reduce, 2 processes
     * on a 2-core machine: 11-15 us at 64 KiB split, 8-10 us read by the
     * receiver alone, b36f864); in an exchange both cores copy anyway.  Nor
     * while the sender's process has our own sends to read (osu_bibw): its
     * core is busy with those, and asking it to write as well costs 16-33%
     * of the 64-512 KiB rate (41166cf). */
    bool halves = split && n == msg->size && !q->pull && unsettled[p2p_proc_of(src_world)] == 0;
    size_t mine = halves ? n / 2 : n;
    if (halves)
        send_put(msg, q, mine, n);
    read_from(msg, q->buf, mine);
    p2p_msg_free(msg);
    p2p_send_ack(src_world, sreq);
    if (split && !halves)
        p2p_send_ack(src_world, sreq);
    p2p_req_part_done(q);
}
