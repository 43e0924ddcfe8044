/* UCX transport: one UCP context per process, one worker per PE (one PE per
 * process today), endpoints created on first use from addresses published
 * through PMIx (ucx_async.h keeps a second one, for traffic that progresses
 * while the ranks compute).  The layer moves bytes only; MPI matching lives in pt2pt.
 *
 * Envelopes travel as UCX active messages, always eager.  pt2pt's intake
 * (ucx_set_env_intake) takes each one inside the AM callback, delivering it
 * at once or copying it into a buffer of its own (with its bookkeeping in
 * front, so the buffer becomes an unexpected message without another copy);
 * env_arrived gets those buffers after ucp_worker_progress has returned, in
 * arrival order (which pt2pt puts back into send order with sequence
 * numbers: envelopes of different sizes may take different paths). */
#ifndef AMPI_UCX_H
#define AMPI_UCX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/util_log.h"

typedef struct ucx_handlers {
    void (*env_arrived)(void *wire, size_t len);
    void (*env_free)(void *wire); /* give back a buffer of the intake's unused (at ucx_close) */
    bool any_thread; /* the worker is driven by any OS thread, one at a time (library mode) */
} ucx_handlers_t;

/* Completion record of a send or receive that did not finish at once; it
 * lives inside the caller's own object (no allocation per operation), and
 * done() finds that object with UTIL_CONTAINER_OF.  status is 0 or a negative
 * UCS status; len is the received length for receives. */
typedef struct ucx_op ucx_op_t;
typedef void (*ucx_done_fn)(ucx_op_t *op, int status, size_t len);
struct ucx_op {
    ucx_done_fn done;
};

typedef enum { UCX_MEM_HOST = 0, UCX_MEM_CUDA = 1, UCX_MEM_CUDA_MANAGED = 2 } ucx_mem_t;

/* pt2pt takes each arriving envelope itself, inside the AM
 * callback (where it must not call UCX).  The envelope is hdr[hlen] followed
 * by data[dlen] (hlen may be 0).  in_order is true when no earlier envelope
 * is still queued for env_arrived, so that handling this one at once cannot
 * overtake another.  Returns NULL when it consumed the envelope (delivered
 * it straight into a posted receive: one copy, no buffer), else a buffer
 * holding it that env_arrived(buf, *len) gets once ucp_worker_progress has
 * returned. */
typedef void *(*ucx_env_intake_fn)(const void *hdr, size_t hlen, const void *data, size_t dlen, bool in_order,
                                   size_t *len);
void ucx_set_env_intake(ucx_env_intake_fn fn); /* before ucx_init */

/* Start UCX and publish our worker address (the caller fences afterwards).
 * one_node: every process of the job is on this node (no network transport);
 * no_cuda_ipc: UCX's cuda_ipc stays out (ucx_worker.c says when). */
int ucx_init(int proc, int nprocs, bool one_node, bool no_cuda_ipc, const ucx_handlers_t *h);
bool ucx_active(void);
/* Leaves out of a UCP configuration (ucp_config_t *) what ucx_init left out
 * of ours (no TCP in a job on one node, ...), unless UCX_TLS is set: for the
 * other UCP contexts of the process. */
void ucx_config_transports(void *ucp_config);
/* Drops [start, start + len) from UCX's memory-type cache: the whole of a
 * freed GPU allocation whose free UCX's own hook could not size (it then
 * keeps the allocation's device on the rest of the range: ucx_memtype.c).
 * Safe inside a memory hook. */
void ucx_memtype_forget(uintptr_t start, size_t len);
/* Makes UCX ask the driver again, once, about [start, start + len): for a GPU
 * allocation the library sees for the first time, so that no description UCX
 * kept of earlier memory at those addresses survives into it. */
void ucx_memtype_recheck(uintptr_t start, size_t len);
/* Does this UCX move CUDA device memory itself (cuda_copy/cuda_ipc)? */
bool ucx_supports_cuda(void);
const char *ucx_version(void);
int ucx_progress(void);
/* Operations started and not completed yet (their done still to come): while
 * any is, callers should not put off ucx_progress (a rendezvous payload
 * moves only when both sides poll). */
extern unsigned ucx_ops_in_flight UTIL_HIDDEN;
/* Shutdown in two steps: ucx_close flushes and closes every endpoint (peers
 * must still be progressing: fence with progress after it), ucx_fini then
 * destroys the worker and context. */
void ucx_close(void);
/* Every rank has passed MPI_Finalize's barrier: from now on a peer that
 * closes its connections first is ending too, not lost (call before the
 * other workers' teardown). */
void ucx_ending(void);
void ucx_fini(void);

/* All send/recv calls return 0 when the operation completed at once (done is
 * not called), 1 when op->done will be called later, < 0 on error. */
int ucx_send_envelope(int proc, const void *hdr, size_t hlen, const void *data, size_t dlen, ucx_op_t *op);
int ucx_send_tagged(int proc, const void *buf, size_t len, uint64_t tag, ucx_mem_t mem, ucx_op_t *op);
int ucx_recv_tagged(void *buf, size_t len, uint64_t tag, ucx_mem_t mem, ucx_op_t *op);
/* A fresh PAYLOAD (or DEVICE) tag from this PE. */
uint64_t ucx_fresh_tag(int type);

#endif
