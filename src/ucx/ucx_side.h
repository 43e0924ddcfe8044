/* A UCP context and worker of their own, beside the point-to-point ones,
 * for traffic that a second OS thread progresses while the ranks compute:
 * the nonblocking collectives' worker (ucx_async.c) and the one-sided
 * worker (src/rma/rma_net.c).  Both carry one active-message handler, are
 * served by a progress thread of the same policy, and are torn down at
 * process exit when a peer may already be gone; they differ in their
 * context parameters and thread mode, which the caller gives.
 *
 * The thread polls only while the ranks' thread does not: as long as a
 * rank is inside MPI its own polls serve the worker, and a second thread
 * spinning on the worker's lock would only slow it (on a machine with fewer
 * cores than threads, by whole time slices).  Once the ranks' polls stop
 * (every rank computing), it polls itself, and when the worker stays quiet
 * it sleeps in the worker's wakeup descriptor (1 ms at most). */
#ifndef AMPI_UCX_SIDE_H
#define AMPI_UCX_SIDE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <ucp/api/ucp.h>

#define UCX_SIDE_AM_ID 0 /* the one handler of each side worker */

typedef struct ucx_side {
    ucp_context_h context;
    ucp_worker_h worker;
    int efd;       /* the worker's wakeup descriptor, or -1 */
    ucp_ep_h *eps; /* by process, NULL until connected */
    int nprocs;
    pthread_mutex_t *lock; /* whoever progresses the worker holds it; the progress thread only tries it */
    pthread_t thread;
    bool thread_on;
    _Atomic bool stop;
    _Atomic unsigned pe_polls; /* bumped by the ranks' thread at each poll */
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
/* Starts the progress thread (once), which holds lock (or none: NULL)
 * around its calls of UCX; when the lock is taken it naps instead of
 * waiting, so that it never stands between the ranks' thread and its core. */
void ucx_side_thread_start(ucx_side_t *s, pthread_mutex_t *lock);
/* The ranks' thread, before it polls the worker: the progress thread stands aside. */
static inline void ucx_side_polling(ucx_side_t *s)
{
    atomic_store_explicit(&s->pe_polls, atomic_load_explicit(&s->pe_polls, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}
/* At process exit: stops the progress thread, flushes the worker, closes
 * the endpoints and frees everything. */
void ucx_side_close(ucx_side_t *s);

#endif
