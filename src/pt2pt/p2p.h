/* Point-to-point messaging: ranks, requests, messages and the wire header.
 *
 * Protocols (every message carries a struct p2p_wire_hdr "envelope"):
 *  - same process: the sender matches against the receiver's posted queue
 *    directly and copies once from send buffer to receive buffer.  If nothing
 *    is posted, a small standard send is copied into an unexpected message and
 *    completes; a large or synchronous one leaves a LOCAL message pointing at
 *    the sender's buffer and completes when the receiver copies it.
 *  - between processes, eager (<= AMPI_EAGER_LIMIT bytes, default 8 KiB): one
 *    UCX active message, envelope + data (the envelope as the AM header when
 *    the data is not copied behind it: no copy at the sender).
 *  - between processes, rendezvous: the data goes under a fresh PAYLOAD tag
 *    (ucx_tag.h) and the envelope carries that tag; the receiver matches the
 *    envelope, then posts the UCX receive straight into the user's buffer.
 *  - between processes of one node, host payloads above the eager limit:
 *    the envelope carries the sender's pid and buffer address and the
 *    receiver reads the payload with process_vm_readv, then ACKs
 *    (p2p_cma.c); the rendezvous above where that is not allowed.
 *  - synchronous sends (Ssend) add an ACK envelope from receiver to sender
 *    once matched; the send completes only with it.
 *  - device (GPU) buffers, the seeds' GPU messaging design: the sender posts
 *    the device payload to UCX under a fresh DEVICE tag and sends the
 *    envelope with that tag; the receiver matches the envelope like any other
 *    and posts the UCX receive into the user's buffer (device or host: UCX
 *    moves between memory types).  Never eager, never copied by the CPU.  In
 *    one process the receiver's match starts an asynchronous device copy
 *    (p2p_gpu.c) polled by the PE's progress.  Without a CUDA-capable UCX the
 *    device data is staged through pinned host buffers, pipelined in chunks
 *    (p2p_stage.c).
 *  - device buffers between processes of one node (the fastest route at every
 *    size on NVLink, p2p_ipc.c): the envelope carries a CUDA IPC handle of
 *    the sender's buffer instead of a payload tag; the receiver matches it
 *    and answers with a CTS carrying a handle of its own device buffer; the
 *    sender copies straight into it (a GPU writing over NVLink is ~3 us
 *    faster than one reading) and sends a FIN (an ACK to the receive).  A
 *    host receive buffer (or one that cannot be exported) makes the
 *    receiver copy from the sender's buffer itself, then ACK.  The UCX route
 *    above remains for memory that cannot be exported and for processes on
 *    other nodes.
 * Between processes of one node an envelope that fits a cell of the
 * receiver's shared-memory ring (src/shm/shm.h) goes there instead of to UCX
 * (p2p_env_send says which kinds may); a full ring or a larger envelope
 * still takes UCX.
 * Envelopes between one pair of ranks carry a sequence number so the
 * receiver enters them into matching in send order whatever order UCX or
 * the rings deliver them in (non-overtaking). */
#ifndef AMPI_P2P_H
#define AMPI_P2P_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mpi.h"
#include "core/core_rank.h"
#include "gpu/gpu.h"
#include "pt2pt/p2p_match.h"
#include "pt2pt/p2p_seq.h"
#include "rank/rank_ult.h"
#include "shm/shm.h"
#include "ucx/ucx.h"
#include "util/util_copy.h"
#include "util/util_list.h"

enum { P2P_WIRE_EAGER = 1, P2P_WIRE_RNDV = 2, P2P_WIRE_ACK = 3, P2P_WIRE_IPC = 4, P2P_WIRE_CTS = 5,
       P2P_WIRE_EAGER_SHORT = 6,
       P2P_WIRE_CMA = 8 /* host payload read by the receiver, p2p_cma.c */,
       P2P_WIRE_CMA_PUT = 9 /* ... of which the receiver asks the sender to write a part */ };
enum { P2P_WIRE_SYNC = 1, P2P_WIRE_DEVICE = 2, P2P_WIRE_STAGED = 4 };

typedef struct p2p_wire_hdr {
    uint8_t kind;     /* P2P_WIRE_* */
    uint8_t flags;    /* P2P_WIRE_SYNC */
    uint16_t unused;
    uint32_t ctx;
    int32_t src;      /* sender's rank in the communicator */
    int32_t tag;
    int32_t src_world;
    int32_t dst_world;
    uint32_t seq;     /* per (src_world, dst_world) pair */
    uint32_t chunk;   /* RNDV + STAGED: the payload's chunk size (p2p_stage.c) */
    uint64_t size;    /* payload bytes */
    uint64_t payload_tag; /* RNDV: UCX tag of the data */
    uint64_t sreq;    /* SYNC: sender's request, echoed in the ACK */
} p2p_wire_hdr_t;

/* The compact envelope of a small eager send without flags (P2P_INLINE_MAX
 * bytes of host data at most, always one contiguous buffer): only what
 * matching needs, the size is the rest of the message.  28 bytes instead of
 * 56 keep 64 bytes of data within UCX's shortest path on shared memory (92
 * bytes in all); the receiver's intake (p2p_proc.c) delivers it at once or
 * expands it into a full P2P_WIRE_EAGER envelope. */
typedef struct p2p_wire_short {
    uint8_t kind;     /* P2P_WIRE_EAGER_SHORT */
    uint8_t unused[3];
    uint32_t ctx;
    int32_t src, tag, src_world, dst_world;
    uint32_t seq;
} p2p_wire_short_t;

/* Eager data up to this size is copied behind the header so that UCX sends
 * one contiguous buffer (its fastest path); larger eager data goes as the
 * AM's payload behind the header.  Blocking sends of up to this size to other
 * processes build the envelope on the stack (p2p_api_send.c). */
#define P2P_INLINE_MAX 1024
/* sizeof(gpu_ipc_desc_t): an IPC envelope is the header plus that */
#define P2P_IPC_DESC_SIZE 80

typedef enum { P2P_MSG_EAGER, P2P_MSG_LOCAL, P2P_MSG_RNDV, P2P_MSG_IPC, P2P_MSG_CMA } p2p_msg_kind_t;

/* An envelope that has arrived (unexpected, or about to be delivered). */
typedef struct p2p_msg {
    p2p_mentry_t m;
    p2p_msg_kind_t kind;
    bool sync;
    bool dev;                    /* LOCAL: the sender's buffer is device memory */
    int src_world;
    size_t size;
    const void *data;            /* EAGER: the bytes; LOCAL: the sender's buffer */
    uint64_t payload_tag;        /* RNDV */
    uint32_t stage_chunk;        /* RNDV staged in chunks (p2p_stage.c), else 0 */
    uint64_t sreq;               /* remote SYNC: id for the ACK */
    struct AMPI_Request_s *lreq; /* LOCAL: the sender's request */
    util_dlink_t stash_link;     /* while held back for ordering */
    struct p2p_msg *next_free;   /* envelope buffer pool */
    bool pooled;                 /* an envelope buffer of the standard size */
    /* remote envelopes: the wire bytes follow the struct */
} p2p_msg_t;

/* DEAD: released (on its rank's free list), so that a stale copy of its
 * handle gives MPI_ERR_REQUEST instead of a second release */
typedef enum { P2P_REQ_DEAD = 0, P2P_REQ_SEND = 1, P2P_REQ_RECV = 2 } p2p_req_kind_t;
typedef enum { P2P_MODE_STANDARD, P2P_MODE_SYNC, P2P_MODE_READY, P2P_MODE_BUFFERED } p2p_mode_t;

typedef struct p2p_rank p2p_rank_t;

/* A persistent collective (MPI_Bcast_init ...): the collective layer's
 * object behind the request; MPI_Start calls start(q), the request's release
 * calls free(q). */
typedef struct p2p_pcoll {
    int (*start)(struct AMPI_Request_s *q);
    void (*free)(struct AMPI_Request_s *q);
} p2p_pcoll_t;

struct AMPI_Request_s {
    p2p_mentry_t m;      /* posted-queue entry (receives) */
    uint8_t kind;        /* p2p_req_kind_t */
    uint8_t mode;        /* p2p_mode_t */
    bool persistent;     /* made by *_init */
    bool active;         /* started and not yet completed by Wait/Test */
    bool complete;
    bool freed;          /* Request_free'd while still running */
    bool posted;         /* receive sits in the posted queue */
    bool internal;       /* library-owned (Bsend), released on completion */
    bool dev;            /* buf is device memory */
    bool pull;           /* receive: copy the whole payload from the sender's buffer ourselves, never ask it to
                          * write a part (CUDA IPC push, CMA split: p2p_ipc.c, p2p_cma.c); send: the peer
                          * copies it (no medium ring entry, p2p_send.c) */
    int pending;         /* outstanding parts (UCX ops, ACK, local match) */
    int cma_proc;        /* send read by process_vm_readv: 1 + the reader's process until it settles (p2p_cma.c) */
    p2p_rank_t *owner;
    rank_ult_t *waiter;  /* the thread that made it and is woken by its completion */
    void *buf;
    int count;
    MPI_Datatype dt;
    int peer, tag;
    MPI_Comm comm;
    core_comm_t *c;
    uint32_t ctx;        /* c->ctx, or c->ctx + 1 for collective traffic */
    size_t bytes;        /* capacity (receive) or length (send) */
    MPI_Status status;
    void *tmp;           /* receive: bounce buffer when the message is too long */
    void *bsend_seg;     /* library-owned buffered send: its segment */
    void *ubuf;          /* non-contiguous datatype: the user's buffer (buf is then `pack`) */
    void *pack;          /* ... and the packed bytes that travel */
    p2p_pcoll_t *pcoll;  /* persistent requests only: a collective's, or NULL */
    struct AMPI_Request_s *parent; /* freed requests only: one more part of it ends with this one
                                    * (the send of MPI_Isendrecv: its receive), or NULL */
    uint8_t dev_dt;      /* pack is device scratch (1; 2 once a receive's unpack started) */
    ucx_op_t op_env, op_data;
    union {
        struct {
            p2p_wire_hdr_t hdr;  /* a remote send's envelope lives until sent ... */
            uint8_t inl[P2P_INLINE_MAX]; /* ... followed by small data: one contiguous message */
        };
        uint8_t wire[sizeof(p2p_wire_hdr_t) + P2P_INLINE_MAX]; /* or a compact envelope + data */
    };
    struct AMPI_Request_s *next_free;
};
typedef struct AMPI_Request_s p2p_req_t;

typedef struct p2p_bsend_state p2p_bsend_state_t;

/* A rank: core's object (core_rank.h) and its point-to-point state. */
struct p2p_rank {
    core_rank_t core;         /* first: core_self() points here */
    p2p_queue_t posted, unexpected;
    p2p_seq_t send_seq;       /* by destination world rank (remote ones) */
    p2p_seq_t recv_seq;       /* by source world rank */
    util_dlist_t stash;       /* envelopes that arrived ahead of their turn */
    bool probing;             /* blocked in Probe: wake on unexpected arrivals */
    p2p_req_t *free_reqs;
    int internal_pending;     /* library-owned requests still running */
    p2p_bsend_state_t *bsend;
    void *bsend_user_buf;     /* as attached, for Buffer_detach */
    int bsend_user_size;
};

/* Process-wide point-to-point state (read-only once the ranks run); the
 * job's shape is core_proc (core_rank.h). */
typedef struct p2p_proc {
    p2p_rank_t *ranks;  /* core_proc.nlocal of them */
    size_t eager_limit;
    bool ucx_cuda;      /* UCX moves device memory itself */
    bool gpu_ipc;       /* device payloads to other processes go by CUDA IPC (p2p_ipc.c) */
    bool gpu_ipc_push;  /* ... and the sender's GPU writes them (else the receiver's reads) */
    size_t gpu_ipc_push_min; /* ... from this many bytes on */
    util_dlist_t copies; /* device copies in flight (p2p_gpu.c) */
    int ncopies;
    p2p_msg_t *env_pool; /* free envelope buffers of p2p_env_max() bytes */
    unsigned idle_polls; /* empty polls in a row (p2p_idle) */
    bool rank_fed;       /* an envelope just completed the last receive a rank had posted (shm_envelope) */
    bool idle_yield;     /* p2p_idle may yield the core (!rank_cpu_owned()) */
    rank_pe_t pe;
} p2p_proc_t;

extern p2p_proc_t p2p_proc;

/* Takes posted receive q out of r's queue for an arriving message, noting
 * when it was r's last (shm_envelope then ends its poll: p2p_proc.c). */
static inline void p2p_posted_take(p2p_rank_t *r, p2p_req_t *q)
{
    p2p_posted_remove(&r->posted, &q->m);
    q->posted = false;
    p2p_proc.rank_fed |= r->posted.count == 0;
}

void p2p_proc_init(int nranks, int nprocs, int proc);
void p2p_rank_init(p2p_rank_t *r, int world);
void p2p_rank_fini(p2p_rank_t *r);
int p2p_progress(void *unused); /* the PE's progress function */
/* Called by p2p_progress once set (the one-sided layer, at its first window):
 * nothing is paid for it before. */
extern int (*p2p_progress_hook)(void);

/* The rank running now (NULL outside any rank). */
static inline p2p_rank_t *p2p_self(void) { return (p2p_rank_t *)core_self(); }
/* The rank a core object belongs to (every rank is a p2p_rank_t). */
static inline p2p_rank_t *p2p_rank_of(core_rank_t *r) { return (p2p_rank_t *)r; }
static inline bool p2p_is_local(int world) { return core_is_local(world); }
static inline p2p_rank_t *p2p_local(int world) { return &p2p_proc.ranks[world - core_proc.first]; }
/* The process of a world rank: from a table (p2p_proc.c) in line, as every
 * send to another process asks; computed where there is no table. */
extern int *p2p_proc_of_table;
int p2p_proc_of_computed(int world);
static inline int p2p_proc_of(int world)
{
    return __builtin_expect(p2p_proc_of_table != NULL, 1) ? p2p_proc_of_table[world] : p2p_proc_of_computed(world);
}

/* requests */
p2p_req_t *p2p_req_new(p2p_rank_t *r, p2p_req_kind_t kind);
p2p_req_t *p2p_req_alloc(p2p_rank_t *r); /* not initialised: p2p_req_setup (p2p_api.h) does that */
void p2p_req_release(p2p_req_t *q);
/* Blocking calls keep their request on the rank's stack: init, then cleanup
 * (what release does, without returning the memory to the free list). */
/* inline: it is on every request's path, and a call costs a fifth of it */
static inline void p2p_req_init(p2p_req_t *q, p2p_rank_t *r, p2p_req_kind_t kind)
{
    /* field by field: a memset of the whole request costs more than the
     * rest of a small send (the caller fills in the arguments) */
    q->kind = (uint8_t)kind;
    q->mode = P2P_MODE_STANDARD;
    q->persistent = q->active = q->complete = q->freed = false;
    q->posted = q->internal = q->dev = q->pull = false;
    q->pending = 0;
    q->cma_proc = 0;
    q->owner = r;
    /* usually the rank's own thread; a helper thread of the rank (e.g. one
     * running a nonblocking collective) waits on its own requests */
    q->waiter = rank_self();
    q->status.MPI_SOURCE = MPI_ANY_SOURCE;
    q->status.MPI_TAG = MPI_ANY_TAG;
    q->status.MPI_ERROR = MPI_SUCCESS;
    q->status.ampi_cancelled = 0;
    q->status.ampi_count = 0;
    q->tmp = NULL;
    q->bsend_seg = NULL;
    q->ubuf = q->pack = NULL;
    q->dev_dt = 0;
    q->dt = MPI_BYTE;
    q->c = NULL;
}
void p2p_req_cleanup(p2p_req_t *q);
void p2p_req_part_done(p2p_req_t *q); /* one outstanding part finished */
void p2p_req_fail(p2p_req_t *q, int mpi_err);
/* Non-contiguous datatypes travel packed: gather the user's data before a
 * send starts (p2p_req_pack), scatter it after a receive (done in part_done). */
void p2p_req_pack(p2p_req_t *q);
/* The same for a device buffer (p2p_gpu.c): its elements gathered into q's
 * device pack buffer by the GPU before the send starts, scattered by it
 * after a receive (q completes once that has run). */
void p2p_dev_pack(p2p_req_t *q);
void p2p_dev_unpack_then_complete(p2p_req_t *q);
/* Gather `count` elements of type dt at device buffer src into dst, which
 * is contiguous device memory, and wait (letting the PE's other ranks run). */
void p2p_dev_pack_wait(void *dst, const void *src, int count, MPI_Datatype dt);

/* starting operations on a prepared request */
int p2p_send_start(p2p_req_t *q);
int p2p_recv_start(p2p_req_t *q);
/* deliver an arrived message into a matched receive (frees msg) */
void p2p_deliver(p2p_rank_t *r, p2p_msg_t *msg, p2p_req_t *q);
void p2p_msg_free(p2p_msg_t *msg);
/* Fill a matched receive's status; returns the bytes to copy (truncated).
 * In line: every delivery does it, and a call cost as much. */
static inline size_t p2p_fill_status(p2p_req_t *rq, int src, int tag, size_t size)
{
    size_t n = size;
    rq->status.MPI_SOURCE = src;
    rq->status.MPI_TAG = tag;
    if (__builtin_expect(n > rq->bytes, 0)) {
        n = rq->bytes;
        rq->status.MPI_ERROR = MPI_ERR_TRUNCATE;
    }
    rq->status.ampi_count = (long long)n;
    return n;
}

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

/* waiting */
/* What a rank does while its condition is not met: with other processes in
 * the job and no other rank of this PE ready, poll the network right here
 * (a switch to the scheduler and back would only add latency); otherwise
 * block until a completion wakes it.  Callers loop: while (!cond) p2p_idle(); */
static inline void p2p_idle(void)
{
    if (core_proc.nprocs > 1 && util_dlist_empty(&p2p_proc.pe.ready)) {
        /* after a while without news, give the core away once: when the
         * processes outnumber the cores, spinning would hold a peer off its
         * core for a whole time slice.  A process with a core of its own
         * never does (osu_bw's sender, idle while the receiver drains a
         * window, lost a third of its rate to these system calls). */
        if (p2p_progress(NULL))
            p2p_proc.idle_polls = 0;
        else if (p2p_proc.idle_yield && ++p2p_proc.idle_polls >= 256) {
            p2p_proc.idle_polls = 0;
            sched_yield();
        }
    } else {
        rank_block();
    }
}
void p2p_wait_complete(p2p_req_t *q); /* block the calling rank until q completes */
void p2p_poll(void);                  /* progress once and let other ranks run */

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
    return (p2p_wire_short_t){ .kind = P2P_WIRE_EAGER_SHORT, .ctx = c->ctx, .src = c->rank, .tag = tag,
                               .src_world = r->core.world, .dst_world = dst_world, .seq = (*p2p_seq(&r->send_seq, dst_world))++ };
}

#endif
