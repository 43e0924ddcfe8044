/* The routes a message takes between processes, and what they share:
 * envelope sends, control messages, device copies, the CUDA IPC, CMA and
 * staging routes, and the small-send fast paths.  p2p.h describes the
 * protocols. */
#ifndef AMPI_P2P_ROUTES_H
#define AMPI_P2P_ROUTES_H

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
void p2p_send_desc_envelope(p2p_req_t *q, int proc, uint8_t kind, size_t desc_len, int extra);
/* The CUDA IPC route (p2p_ipc.c): false when the buffer cannot be exported
 * (the caller then takes the UCX route); the envelope header is filled. */
bool p2p_ipc_send(p2p_req_t *q, int proc);
void p2p_ipc_deliver(p2p_msg_t *msg, p2p_req_t *q, size_t n);
void p2p_ipc_cts_arrived(const p2p_wire_hdr_t *h, size_t len);
/* The cross-memory-attach route for host payloads (p2p_cma.c): publish
 * whether this process takes part (before the PMIx fence), learn which peers
 * do (after it); p2p_cma_send is false when the peer does not (the caller
 * then takes the UCX route), else it has sent the envelope. */
void p2p_cma_publish(void);
void p2p_cma_attach(void);
void p2p_cma_fini(void);
/* Both this process and proc may read and write each other's memory. */
bool p2p_cma_peer(int proc);
bool p2p_cma_send(p2p_req_t *q, int proc);
void p2p_cma_settled(p2p_req_t *q); /* a send of p2p_cma_send's completed (p2p_req_part_done) */
size_t p2p_cma_desc_size(void);
void p2p_cma_deliver(p2p_msg_t *msg, p2p_req_t *q, size_t n);
void p2p_cma_put_arrived(const p2p_wire_hdr_t *h, size_t len);
/* Pipelined host staging of device payloads (p2p_stage.c). */
void p2p_stage_send(p2p_req_t *q, int proc, p2p_wire_hdr_t *h);
void p2p_stage_recv(p2p_req_t *q, const p2p_msg_t *msg, size_t keep);
size_t p2p_stage_chunk(void);
void p2p_stage_drain(void); /* at exit, before the GPU goes */
/* Tell the sender of a synchronous or IPC message that it is done with. */
void p2p_send_ack(int src_world, uint64_t sreq);
/* Send a header-only control envelope h (copied) to process proc and forget
 * it: through p2p_env_send, or UCX alone when via_ucx (messages whose order
 * a transport must keep); `what` names it if sending fails. */
void p2p_send_ctl(int proc, const p2p_wire_hdr_t *h, bool via_ucx, const char *what);
/* The same with a descriptor of dlen bytes after the header (CTS, CMA PUT). */
void p2p_send_ctl_desc(int proc, const p2p_wire_hdr_t *h, const void *desc, size_t dlen, bool via_ucx,
                       const char *what);
/* Completion of a request's envelope (op_env): the request's part is done. */
void p2p_env_sent(ucx_op_t *op, int status, size_t len);

/* A blocking standard send of `bytes` (<= P2P_INLINE_MAX and the eager
 * limit) of host memory to world rank dst_world of another process, on
 * context ctx of c, without a request (p2p_api_send.c); returns an MPI
 * error class. */
int p2p_send_small_remote(p2p_rank_t *r, const core_comm_t *c, uint32_t ctx, const void *buf, size_t bytes,
                          int dst_world, int tag);

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
static inline bool p2p_short_to_ring(int proc, p2p_rank_t *r, uint32_t ctx, int src, int tag, int dst_world,
                                     const void *buf, size_t bytes)
{
    const uint8_t kind[4] = { P2P_WIRE_EAGER_SHORT, 0, 0, 0 };
    uint32_t kind_word;
    memcpy(&kind_word, kind, sizeof kind_word);
    p2p_u32x4 head = { kind_word, ctx, (uint32_t)src, (uint32_t)tag };
    p2p_u32x4 rest = { (uint32_t)tag, (uint32_t)r->core.world, (uint32_t)dst_world, *p2p_seq(&r->send_seq, dst_world) };
    shm_cell_t *cell = shm_reserve(proc, sizeof(p2p_wire_short_t) + bytes);
    if (!cell)
        return false;
    (*p2p_seq(&r->send_seq, dst_world))++;
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

#endif
