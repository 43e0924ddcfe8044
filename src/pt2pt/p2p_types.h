/* Point-to-point types: arrived messages, requests, ranks and the
 * process's point-to-point state, with the look-ups from a world rank to its
 * rank or process.  What is done with them: requests in p2p_req.h, the
 * process (progress, waiting) in p2p_proc.h; the protocols are in p2p.h, the
 * wire format in p2p_wire.h, the routes in p2p_routes.h. */
#ifndef AMPI_P2P_TYPES_H
#define AMPI_P2P_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mpi.h"
#include "core/core_rank.h"
#include "pt2pt/p2p_match.h"
#include "pt2pt/p2p_seq.h"
#include "pt2pt/p2p_wire.h"
#include "rank/rank_ult.h"
#include "ucx/ucx.h"
#include "util/util_list.h"
#include "util/util_log.h"

/* ERROR: a remote envelope whose body did not match its kind */
typedef enum { P2P_MSG_EAGER, P2P_MSG_LOCAL, P2P_MSG_RNDV, P2P_MSG_IPC, P2P_MSG_CMA, P2P_MSG_ERROR } p2p_msg_kind_t;

/* An envelope that has arrived (unexpected, or about to be delivered). */
typedef struct p2p_msg {
    p2p_mentry_t m;
    p2p_msg_kind_t kind;
    bool sync;
    bool dev;                    /* LOCAL: the sender's buffer is device memory */
    bool packing;                /* IPC: P2P_WIRE_PACKING */
    int src_world;
    size_t size;
    const void *data;            /* EAGER: the bytes; LOCAL: the sender's buffer */
    uint64_t payload_tag;        /* RNDV */
    uint32_t stage_chunk;        /* RNDV staged in chunks (p2p_stage.c), else 0 */
    uint64_t sreq;               /* remote SYNC: id for the ACK */
    struct AMPI_Request_s *lreq; /* from a rank of this process: the sender's request (LOCAL: it waits for
                                  * this message; EAGER: a copy, only compared by MPI_Cancel), else NULL */
    uint32_t key;                /* which of its sender's messages (p2p_cancel.c): a remote one's seq,
                                  * else the sender's count of local sends */
    util_dlink_t stash_link;     /* while held back for ordering */
    struct p2p_msg *next_free;   /* envelope buffer pool */
    bool pooled;                 /* an envelope buffer of the standard size */
    /* remote envelopes: the wire bytes follow the struct */
} p2p_msg_t;

/* DEAD: released (on its rank's free list), so that a stale copy of its
 * handle gives MPI_ERR_REQUEST instead of a second release */
/* GREQ: a generalized request (MPI_Grequest_start, p2p_greq.c) */
typedef enum { P2P_REQ_DEAD = 0, P2P_REQ_SEND = 1, P2P_REQ_RECV = 2, P2P_REQ_GREQ = 3 } p2p_req_kind_t;
typedef enum { P2P_MODE_STANDARD, P2P_MODE_SYNC, P2P_MODE_READY, P2P_MODE_BUFFERED } p2p_mode_t;

typedef struct p2p_rank p2p_rank_t;

/* A persistent collective (MPI_Bcast_init ...): the collective layer's
 * object behind the request; MPI_Start calls start(q), the request's release
 * calls free(q). */
typedef struct p2p_pcoll {
    int (*start)(struct AMPI_Request_s *q);
    void (*free)(struct AMPI_Request_s *q);
} p2p_pcoll_t;

typedef struct p2p_greq p2p_greq_t; /* the user's callbacks of a generalized request */

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
    bool cancel_asked;   /* send: MPI_Cancel was called since it started (p2p_cancel.c) */
    bool pull;           /* receive: copy the whole payload from the sender's buffer ourselves, never ask it to
                          * write a part (CUDA IPC push, CMA split: p2p_ipc.c, p2p_cma.c); send: the peer
                          * copies it (no MEDIUM route, p2p_send.c) */
    int pending;         /* outstanding parts (UCX ops, ACK, local match) */
    int cma_proc;        /* send read by process_vm_readv: 1 + the reader's process until it settles (p2p_cma.c) */
    uint32_t wire_slot;  /* its wire id's slot + 1 while a peer may name it (p2p_reqid.c), else 0 */
    uint32_t msg_key;    /* send: its message's key at the receiver (p2p_msg_t.key), for MPI_Cancel */
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
    union {
        p2p_pcoll_t *pcoll;  /* persistent requests only: a collective's, or NULL */
        p2p_greq_t *greq;    /* kind GREQ */
    };
    struct AMPI_Request_s *parent; /* freed requests only: one more part of it ends with this one
                                    * (the send of MPI_Isendrecv: its receive), or NULL */
    uint8_t dev_dt;      /* pack is device scratch (1; 2 once a receive's unpack started) */
    struct gpu_dt_chunks *chunks; /* send: its pack still running in chunks (p2p_gpu.c), else NULL */
    void *bounce;        /* receive: device scratch a PACKING sender writes into (p2p_ipc.c), else NULL */
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
    uint32_t local_sends;     /* sends to ranks of this process so far: their messages' keys */
    struct p2p_cancel *cancels; /* cancel requests for messages that have not entered matching yet */
    p2p_bsend_state_t *bsend; /* MPI_Buffer_attach's buffer, or NULL */
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
    size_t gpu_ddt_chunk;    /* AMPI_GPU_DDT_CHUNK: pipelined packing (0: off) */
    bool gpu_pool_as_managed; /* UCX is told pool memory is managed (AMPI_GPU_POOL_AS_MANAGED) */
    util_dlist_t copies; /* device copies in flight (p2p_gpu.c) */
    int ncopies;
    p2p_msg_t *env_pool; /* free envelope buffers of p2p_env_max() bytes */
    unsigned idle_polls; /* empty polls in a row (p2p_idle) */
    bool rank_fed;       /* an envelope just completed the last receive a rank had posted (p2p_shm_envelope) */
    bool idle_yield;     /* p2p_idle may yield the core (!rank_cpu_owned()) */
    rank_pe_t pe;
} p2p_proc_t;

extern p2p_proc_t p2p_proc UTIL_HIDDEN;

/* The rank running now (NULL outside any rank). */
static inline p2p_rank_t *p2p_self(void) { return (p2p_rank_t *)core_self(); }
/* The rank a core object belongs to (every rank is a p2p_rank_t). */
static inline p2p_rank_t *p2p_rank_of(core_rank_t *r) { return (p2p_rank_t *)r; }
static inline bool p2p_is_local(int world) { return core_is_local(world); }
static inline p2p_rank_t *p2p_local(int world) { return &p2p_proc.ranks[world - core_proc.first]; }
/* The process of a world rank: from a table (p2p_proc.c) in line, as every
 * send to another process asks; computed where there is no table. */
extern int *p2p_proc_of_table UTIL_HIDDEN;
int p2p_proc_of_computed(int world);
static inline int p2p_proc_of(int world)
{
    return __builtin_expect(p2p_proc_of_table != NULL, 1) ? p2p_proc_of_table[world] : p2p_proc_of_computed(world);
}

#endif
