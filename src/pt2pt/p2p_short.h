/* The SHORT route: a few host bytes without flags to another process, in
 * the compact envelope (p2p_wire_short_t).  In line, header only: these are
 * the latency-bound sends, and the blocking entry point keeps them in its
 * own frame (p2p_short_send, no request), the nonblocking one fills a
 * request only as far as it needs (p2p_short_isend).  A full or absent ring
 * falls back to UCX out of line (p2p_eager.c). */
#ifndef AMPI_P2P_SHORT_H
#define AMPI_P2P_SHORT_H

#include <string.h>
#include "pt2pt/p2p_routes.h"
#include "pt2pt/p2p_req.h"
#include "pt2pt/p2p_types.h"
#include "pt2pt/p2p_wire.h"
#include "shm/shm.h"
#include "ucx/ucx.h"
#include "util/util_copy.h"

/* Rank r's next small eager send (bytes <= P2P_INLINE_MAX of host data)
 * to dst_world in process proc, straight into the ring's cell: the compact
 * envelope assembled in two vector registers and stored as two 16-byte
 * pieces (the second overlaps the first's last field), then the data;
 * false (nothing done, no sequence number taken) when the ring takes none.
 * Building the envelope on the stack and copying it (as before) stalled
 * the copy on store forwarding: a third of a one-byte osu_bw sender's time
 * on the development machine (perf).  Registers, not field-by-field stores:
 * fewer stores into the line the receiver spins on (see shm_ring_reserve). */
typedef uint32_t p2p_u32x4 __attribute__((vector_size(16)));
_Static_assert(offsetof(p2p_wire_short_t, ctx) == 4 && offsetof(p2p_wire_short_t, tag) == 12 &&
                   offsetof(p2p_wire_short_t, src_world) == 16 && offsetof(p2p_wire_short_t, seq) == 24 &&
                   sizeof(p2p_wire_short_t) == 28,
               "p2p_short_to_ring's two stores match the compact envelope's layout");
static inline __attribute__((always_inline)) bool p2p_short_to_ring(int proc, p2p_rank_t *r, uint32_t ctx,
                                                                    int src, int tag, int dst_world,
                                                                    const void *buf, size_t bytes)
{
    const uint8_t kind[4] = { P2P_WIRE_EAGER_SHORT, 0, 0, 0 };
    uint32_t kind_word;
    memcpy(&kind_word, kind, sizeof kind_word);
    uint32_t *seq = p2p_seq(&r->send_seq, dst_world); /* looked up once: the ring is not the table */
    p2p_u32x4 head = { kind_word, ctx, (uint32_t)src, (uint32_t)tag };
    p2p_u32x4 rest = { (uint32_t)tag, (uint32_t)r->core.world, (uint32_t)dst_world, *seq };
    shm_cell_t *cell = shm_reserve(proc, sizeof(p2p_wire_short_t) + bytes);
    if (!cell)
        return false;
    (*seq)++;
    memcpy(cell->bytes, &head, sizeof head);
    memcpy(cell->bytes + 12, &rest, sizeof rest);
    util_copy_small(cell->bytes + sizeof(p2p_wire_short_t), buf, bytes); /* 0 bytes: buf may be NULL */
    shm_publish(proc, cell, sizeof(p2p_wire_short_t) + bytes);
    return true;
}

/* The compact envelope of rank r's next small eager send to dst_world on c
 * (takes its sequence number). */
static inline p2p_wire_short_t p2p_wire_short_next(p2p_rank_t *r, const core_comm_t *c, int tag, int dst_world)
{
    uint32_t *seq = p2p_seq(&r->send_seq, dst_world);
    return (p2p_wire_short_t){ .kind = P2P_WIRE_EAGER_SHORT, .ctx = c->ctx, .src = c->rank, .tag = tag,
                               .src_world = r->core.world, .dst_world = dst_world, .seq = (*seq)++ };
}


/* UCX's way of a blocking short send, from a contiguous copy of envelope
 * and data on the caller's stack (p2p_eager.c): the ring's way needs none
 * of that frame. */
int p2p_short_send_ucx(int proc, const p2p_wire_short_t *h, const void *buf, size_t bytes);

/* A blocking SHORT send of `bytes` of host memory to world rank dst_world
 * of another process, on context ctx of c, without a request: the call
 * returns once UCX or the ring has the bytes (about a third of the
 * instructions of a small MPI_Send went to request set-up, completion and
 * clean-up).  Returns an MPI error class. */
static inline __attribute__((always_inline)) int p2p_short_send(p2p_rank_t *r, const core_comm_t *c, uint32_t ctx,
                                                               const void *buf, size_t bytes, int dst_world,
                                                               int tag)
{
    int proc = p2p_proc_of(dst_world);
    if (UTIL_LIKELY(p2p_short_to_ring(proc, r, ctx, c->rank, tag, dst_world, buf, bytes)))
        return MPI_SUCCESS;
    p2p_wire_short_t h = p2p_wire_short_next(r, c, tag, dst_world);
    h.ctx = ctx;
    return p2p_short_send_ucx(proc, &h, buf, bytes);
}
/* The same out of line, for the collectives' small steps (on their context). */
int p2p_send_small_remote(p2p_rank_t *r, const core_comm_t *c, uint32_t ctx, const void *buf, size_t bytes,
                          int dst_world, int tag);

/* A nonblocking standard SHORT send (osu_bw's case, and halo exchanges'):
 * what p2p_req_setup + p2p_send_start do, once -- no second initialisation,
 * no datatype, device or mode branches, no full header; the envelope is
 * usually gone before this returns, so the request is complete at once.
 * p2p_req_init stays the one place that gives every field its default. */
static inline void p2p_short_isend(p2p_req_t *q, p2p_rank_t *r, core_comm_t *c, const void *buf, int count,
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
    q->msg_key = *p2p_seq(&r->send_seq, dst_world); /* the one it takes, for MPI_Cancel */
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

#endif
