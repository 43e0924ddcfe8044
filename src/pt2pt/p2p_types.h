/* Point-to-point types: messages, requests, ranks and the process's
 * point-to-point state, with the in-line helpers every path uses.  The
 * protocols are in p2p.h, the wire format in p2p_wire.h, the routes in
 * p2p_routes.h. */
#ifndef AMPI_P2P_TYPES_H
#define AMPI_P2P_TYPES_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mpi.h"
#include "core/core_rank.h"
#include "gpu/gpu.h"
#include "pt2pt/p2p_match.h"
#include "pt2pt/p2p_seq.h"
#include "pt2pt/p2p_wire.h"
#include "rank/rank_ult.h"
#include "rank/rank_host.h"
#include "shm/shm.h"
#include "ucx/ucx.h"
#include "util/util_copy.h"
#include "util/util_list.h"

/* ERROR: a remote envelope whose body did not match its kind */
typedef enum { P2P_MSG_EAGER, P2P_MSG_LOCAL, P2P_MSG_RNDV, P2P_MSG_IPC, P2P_MSG_CMA, P2P_MSG_ERROR } p2p_msg_kind_t;

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
                          * copies it (no MEDIUM route, p2p_send.c) */
    int pending;         /* outstanding parts (UCX ops, ACK, local match) */
    int cma_proc;        /* send read by process_vm_readv: 1 + the reader's process until it settles (p2p_cma.c) */
    uint32_t wire_slot;  /* its wire id's slot + 1 while a peer may name it (p2p_reqid.c), else 0 */
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
    bool rank_fed;       /* an envelope just completed the last receive a rank had posted (p2p_shm_envelope) */
    bool idle_yield;     /* p2p_idle may yield the core (!rank_cpu_owned()) */
    rank_pe_t pe;
} p2p_proc_t;

extern p2p_proc_t p2p_proc;

/* Takes posted receive q out of r's queue for an arriving message, noting
 * when it was r's last (p2p_shm_envelope then ends its poll: p2p_recv.c). */
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
    q->wire_slot = 0;
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
        if (__builtin_expect(rank_hosted, 0)) /* library mode: other threads' calls get their turn */
            rank_host_pause();
    } else {
        rank_block();
    }
}
void p2p_wait_complete(p2p_req_t *q); /* block the calling rank until q completes */
void p2p_poll(void);                  /* progress once and let other ranks run */

#endif
