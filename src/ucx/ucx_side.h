/* A UCP context and worker of their own, beside the point-to-point ones,
 * for traffic that a second OS thread progresses while the ranks compute:
 * the nonblocking collectives' worker (ucx_async.c) and the one-sided
 * worker (src/rma/rma_net.c).  Both carry one active-message handler and
 * sleep in the worker's wakeup descriptor, and both are torn down at
 * process exit when a peer may already be gone; they differ in their
 * context parameters and thread mode, which the caller gives. */
#ifndef AMPI_UCX_SIDE_H
#define AMPI_UCX_SIDE_H

#include <ucp/api/ucp.h>

#define UCX_SIDE_AM_ID 0 /* the one handler of each side worker */

typedef struct ucx_side {
    ucp_context_h context;
    ucp_worker_h worker;
    int efd;       /* the worker's wakeup descriptor, or -1 */
    ucp_ep_h *eps; /* by process, NULL until connected */
    int nprocs;
} ucx_side_t;

/* Makes the context from params (the caller's features and hints, over the
 * configuration ucx_config_transports trims), the worker in thread_mode and
 * cb its handler of whole messages.  Returns the status of reading the
 * configuration or of ucp_init: whether a context UCX refuses is fatal is
 * the caller's choice.  A failure after that is fatal, named by what. */
ucs_status_t ucx_side_open(ucx_side_t *s, const ucp_params_t *params, ucs_thread_mode_t thread_mode, int nprocs,
                           ucp_am_recv_callback_t cb, const char *what);
/* An endpoint to proc's worker at addr (fatal when UCX refuses it); the
 * caller stores it in eps[proc] as its locking requires. */
ucp_ep_h ucx_side_connect(ucx_side_t *s, int proc, const void *addr, const char *what);
/* At process exit, once the caller's progress thread has stopped: flushes
 * the worker, closes the endpoints and frees everything. */
void ucx_side_close(ucx_side_t *s);

#endif
