/* One-sided communication (MPI RMA): windows, operations, synchronization.
 *
 * Every rank has its own window object (rma_win_t) per window; the ranks of
 * a window find one another's objects through a process-wide registry keyed
 * by (world rank, context id of the window's private communicator).
 *
 * Routes:
 *  - target rank in this process (+vp): the origin applies the operation to
 *    the target's memory itself (copies, accumulates under the target's
 *    mutex), so it completes at once and needs no target action.
 *  - target in another process: the operation travels as an active message
 *    on a UCX worker of its own (rma_net.c), applied on arrival by whichever
 *    thread progresses that worker: the rank's own thread inside MPI, or the
 *    process's progress thread while every rank computes (passive target
 *    needs no call from the target).  Puts and accumulates are counted per
 *    (origin, target); a flush, unlock, fence or complete compares counts
 *    instead of acknowledging each operation.  Fetching operations (get,
 *    get_accumulate, fetch_and_op, compare_and_swap) are answered.
 *
 * Thread rules: a window object's target side (lock state, counts from each
 * origin, memory touched by accumulates) is guarded by its mutex `lk`; its
 * origin side (what it sent, its epochs) belongs to its rank's thread,
 * except the atomic answer counts, which arriving answers bump.  Fetch
 * answers land in origin records that the rank's thread finishes (unpacks,
 * completes requests) from the process's progress. */
#ifndef AMPI_RMA_H
#define AMPI_RMA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "mpi.h"
#include "comm/comm.h"

/* Active message kinds (rma_hdr_t.kind). */
enum {
    RMA_PUT = 1,
    RMA_GET,
    RMA_ACC,
    RMA_GACC,     /* get_accumulate, fetch_and_op */
    RMA_CAS,
    RMA_RESP,     /* the answer of GET, GACC, CAS: data for origin record `id` */
    RMA_LOCK,
    RMA_GRANT,
    RMA_UNLOCK,   /* id: the puts/accumulates the origin sent before it */
    RMA_FLUSH,    /* ditto */
    RMA_ACK       /* answer of UNLOCK and FLUSH */
};

typedef struct rma_hdr {
    uint8_t kind;
    uint8_t lock_type;
    uint16_t flags;
    uint32_t ctx;     /* context id of the window's communicator */
    int32_t target;   /* world rank of the target (RESP/GRANT/ACK: of the origin) */
    int32_t origin;   /* the origin's rank in the window (RESP/GRANT/ACK: the answering target's) */
    int32_t origin_world;
    int32_t op;       /* MPI_Op of accumulates */
    int32_t basic;    /* their predefined element type */
    uint32_t nseg;    /* >0: the target layout's segments lead the data (rma_seg_t) */
    uint64_t off;     /* byte offset from the target's base (dynamic windows: the address) */
    uint64_t len;     /* bytes of target memory touched */
    uint64_t id;      /* origin record of a fetching operation; count of UNLOCK/FLUSH/ACK */
} rma_hdr_t;

typedef struct rma_seg {
    int64_t off; /* from the operation's target offset */
    uint64_t len;
} rma_seg_t;

/* A waiting lock request at a target. */
typedef struct rma_lockq {
    struct rma_lockq *next;
    int origin, origin_world, type;
} rma_lockq_t;

/* An UNLOCK or FLUSH that came before the operations it counts. */
typedef struct rma_pend {
    struct rma_pend *next;
    int origin, origin_world;
    int unlock_type; /* MPI_LOCK_* of an UNLOCK, 0 for a FLUSH */
    uint64_t count;
} rma_pend_t;

typedef struct rma_member {
    int world;
    int disp_unit;
    uint64_t base, size;
    bool local; /* same process */
    bool cma;   /* another process of this node whose host window we read and write ourselves (rma_ops.c) */
    int pid;
    char *map;                /* its memory mapped here (rma_shm.c), or NULL */
    pthread_mutex_t *acc_lk;  /* with map: its accumulate lock */
    void *map_start;          /* what to unmap at MPI_Win_free (NULL: part of shm_map) */
    size_t map_len;
    char *ipc;                /* its device window mapped here by CUDA IPC (puts and gets copy), or NULL */
    void *ipc_token;          /* for gpu_ipc_release at MPI_Win_free */
} rma_member_t;

typedef struct rma_cma_batch rma_cma_batch_t;

typedef struct rma_keyattr {
    int keyval;
    void *val;
} rma_keyattr_t;

typedef struct rma_win {
    MPI_Win handle;
    int world;            /* owner */
    uint32_t ctx;
    MPI_Comm comm;        /* private duplicate of the creating communicator */
    core_comm_t *c;
    MPI_Group group;      /* MPI_Win_get_group's, made on demand */
    int rank, size;
    int flavor;
    bool dev;             /* base is device memory */
    void *base;
    MPI_Aint wsize;
    int disp_unit;
    void *alloc;          /* allocated by us (Win_allocate), freed with the window */
    void *shm_map;        /* Win_allocate_shared: the node segment */
    size_t shm_len;
    void *own_map;        /* Win_allocate in shared memory (rma_shm.c): our object, mapped */
    size_t own_map_len;
    bool own_shm_named;   /* its name still exists (unlinked once every peer mapped it) */
    pthread_mutex_t *acc_lk; /* process-shared accumulate lock of our memory, or NULL (then lk) */
    rma_member_t *mem;    /* every member, by window rank */
    struct rma_win **peer; /* same-process members' objects, by window rank (NULL: not local / not yet found) */
    MPI_Errhandler errh;
    MPI_Info info;
    int model;
    rma_keyattr_t *attrs;
    int nattrs;
    char name[MPI_MAX_OBJECT_NAME];

    /* target side: under lk */
    pthread_mutex_t lk;
    int excl;             /* exclusive holder's window rank, or -1 */
    int nshared;
    rma_lockq_t *waitq, *waitq_tail;
    rma_pend_t *pend;
    uint64_t *done_from;  /* puts/accumulates applied, by origin */
    uint64_t done_total;

    /* origin side */
    uint64_t *sent_to;    /* puts/accumulates sent, by target */
    uint64_t *acked;      /* highest count acknowledged, by target */
    _Atomic uint64_t *ack_cnt;  /* ACKs received, by target */
    uint64_t *ack_want;
    _Atomic uint64_t *grant_cnt; /* GRANTs received, by target */
    uint64_t *grant_want;
    int *fetching;        /* fetching operations unanswered, by target */
    int nfetching;
    _Atomic int sending;  /* sends whose data UCX still reads (local completion) */
    uint8_t *locked;      /* MPI_LOCK_* held on each target (| RMA_LOCK_NOCHECK), or 0 */
    bool lock_all, lock_all_nocheck;
    int nlocks;
    bool fence_epoch;     /* between two fences (the second without NOSUCCEED) */
    int *access;          /* PSCW: targets of the access epoch (window ranks), NULL: none */
    int naccess;
    int *expose;          /* PSCW: origins of the exposure epoch */
    int nexpose;
    struct rma_cma_batch **cma_batch; /* small CMA puts/gets not yet done, by target (rma_cma.c) */
    int cma_pending;      /* targets with a batch waiting */
    uint8_t *dev_pending; /* device copies started to each target and not yet waited for (rma_dev.c) */
    int ndev_pending;     /* targets with such copies */
    void *dev_stream;     /* the stream they run on */
    MPI_Request *complete_reqs; /* Win_test: the pending COMPLETE receives */
    uint64_t *complete_counts;
    struct rma_win *next; /* in the process registry */
} rma_win_t;

/* An origin's fetching operation in flight (its id travels in the header). */
typedef struct rma_fetch {
    struct rma_fetch *next;        /* on the completed list */
    rma_win_t *w;
    int target;
    void *dst;                     /* result buffer */
    int count;
    MPI_Datatype dt;
    void *tmp;                     /* answer buffer when dst is not contiguous */
    size_t len;
    struct AMPI_Request_s *req;    /* Rget, Rget_accumulate */
    _Atomic int state;             /* 0 in flight, 1 data arrived */
} rma_fetch_t;

/* rma_win.c */
rma_win_t *rma_lookup(int world, uint32_t ctx); /* any thread */
rma_win_t *rma_win_of(MPI_Win h);               /* the calling rank's */
int rma_win_error(rma_win_t *w, int errclass, const char *fn);
rma_win_t *rma_peer(rma_win_t *w, int rank);    /* same-process member's object, or NULL */

/* rma_apply.c: operations on target memory (caller holds the target's lk where needed) */
void rma_apply_put(void *tbase, const rma_seg_t *segs, uint32_t nseg, const void *data, size_t len, bool dev);
void rma_apply_get(const void *tbase, const rma_seg_t *segs, uint32_t nseg, void *out, size_t len, bool dev);
void rma_apply_acc(void *tbase, const rma_seg_t *segs, uint32_t nseg, const void *data, size_t len, MPI_Op op,
                   MPI_Datatype basic, bool dev);
void rma_apply_cas(void *t, const void *origin, const void *compare, void *result, size_t size, bool dev);
/* The predefined element type of an accumulate's datatype, or MPI_DATATYPE_NULL when it has several. */
MPI_Datatype rma_basic_of(MPI_Datatype dt);
/* The target layout of count elements of dt: NULL when contiguous (one segment of count*size bytes at
 * *first); else malloc'ed segments (*nseg) relative to the target address, *first = 0. */
rma_seg_t *rma_layout(int count, MPI_Datatype dt, uint32_t *nseg, int64_t *first);

/* rma_target.c: the target side of the active messages */
void rma_target_handle(const rma_hdr_t *h, const void *data, size_t len);
/* An answer of len bytes arriving by rendezvous: where it may land straight
 * (the fetch's host buffer), or NULL; rma_resp_placed once it has landed. */
void *rma_resp_place(const rma_hdr_t *h, size_t len);
void rma_resp_placed(const rma_hdr_t *h);
/* The ranks' thread: apply what the progress thread left for it (device windows). */
int rma_target_deferred(void);
/* Bump an origin's count and answer the UNLOCK/FLUSH waiting for it (holds lk). */
void rma_target_done(rma_win_t *w, int origin, uint64_t n);
/* Lock requests: grant at once (true) or queue (holds lk). */
bool rma_lock_try(rma_win_t *w, int origin, int origin_world, int type);
void rma_unlock_local(rma_win_t *w, int origin, int type);
void rma_grant_to(rma_win_t *w, int origin, int origin_world);
/* Send what the calling thread decided under a window's mutex (call after releasing it). */
void rma_outbox_flush(void);

/* rma_net.c: the UCX worker of one-sided traffic */
int rma_net_init(void);                       /* once per process, at the first window */
size_t rma_net_address(const void **addr);
void rma_net_learn(int proc, const void *addr, size_t len);
/* Send h (+ data) to process proc; *sending counts it until UCX no longer reads data, then free_after is
 * freed.  eager: keep the message on the eager protocol (accumulates: arrival order is apply order). */
int rma_net_send(int proc, const rma_hdr_t *h, const void *data, size_t len, _Atomic int *sending,
                 void *free_after, bool eager);
int rma_net_progress(void);
void rma_net_fini(void);
/* At process exit, after every rank has finalized. */
void rma_fini(void);
void rma_fetch_arrived(rma_fetch_t *f); /* any thread: hand a finished fetch to its rank */
int rma_finish_fetches(void);           /* the ranks' thread: unpack answers, complete requests */

/* rma_sync.c */
/* Progress while a rank waits (its thread): RMA traffic, then everything else. */
void rma_wait_poll(void);
int rma_flush_target(rma_win_t *w, int t, bool local_only);
bool rma_epoch_ok(rma_win_t *w, int t);

/* Process-wide state. */
typedef struct rma_proc {
    pthread_mutex_t reg_lk; /* the registry */
    rma_win_t *wins;
    int nwins;
    _Atomic int nfetch_done;
} rma_proc_t;
extern rma_proc_t rma_proc;

#define RMA_LOCK_NOCHECK 0x80 /* in rma_win_t.locked: taken with MPI_MODE_NOCHECK */

#define RMA_TAG_POST 1
#define RMA_TAG_COMPLETE 2

#endif
