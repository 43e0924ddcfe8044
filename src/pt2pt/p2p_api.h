/* Helpers shared by the MPI point-to-point entry points. */
#ifndef AMPI_P2P_API_H
#define AMPI_P2P_API_H

#define AMPI_BUILDING_LIBRARY 1
#include "pt2pt/p2p.h"
#include "core/core_err.h"
#include "datatype/dt.h"
#include "rank/rank_host.h"
#include "util/util_log.h"

#define P2P_TAG_UB 0x7fffffff

/* The entry of a point-to-point call: CORE_ENTER (core_rank.h) with R as
 * the point-to-point rank.  A call from a rank's thread (core_current set)
 * has the host lock already if it needs one: in library mode only a thread
 * that holds it runs ULTs (rank_host.h).  Any other call (library mode's
 * own threads) holds it until the function returns, as RANK_HOST_GUARD
 * does: the test of rank_hosted is paid off the common path. */
#define P2P_ENTER(R, fn)                                                     \
    p2p_rank_t *R = (p2p_rank_t *)core_current;                              \
    __attribute__((cleanup(rank_host_leave))) bool rank_host_held_ =         \
        UTIL_UNLIKELY(!R) && rank_host_enter();                              \
    if (UTIL_UNLIKELY(!R))                                                   \
        R = (p2p_rank_t *)core_lib_rank;                                     \
    if (UTIL_UNLIKELY(!R || !R->core.initialized || R->core.finalized))     \
        return core_not_initialized(fn)

static inline core_comm_t *p2p_comm(p2p_rank_t *r, MPI_Comm h) { return core_comm(&r->core, h); }

/* Checks shared by sends and receives; returns MPI_SUCCESS or an error class.
 * The common case in a few compares, inlined into every entry point (a call
 * cost a tenth of a small send): a valid rank and tag, a predefined type, a
 * buffer.  Anything else takes the full path, which orders the checks so as
 * to report the right error class. */
int p2p_check_args_slow(p2p_rank_t *r, const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                        MPI_Comm comm, bool is_recv, core_comm_t **c, const char *func) __attribute__((noinline, cold));
static inline int p2p_check_args(p2p_rank_t *r, const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                                 MPI_Comm comm, bool is_recv, core_comm_t **cp, const char *func)
{
    core_comm_t *c = p2p_comm(r, comm);
    if (UTIL_LIKELY(c && dt_is_predefined(dt) && (unsigned)peer < (unsigned)c->size &&
                    (unsigned)tag <= (unsigned)P2P_TAG_UB && count >= 0 && (buf || count == 0))) {
        *cp = c;
        return MPI_SUCCESS;
    }
    return p2p_check_args_slow(r, buf, count, dt, peer, tag, comm, is_recv, cp, func);
}

/* Initialise q (e.g. on the stack) with the arguments of a send or receive. */
/* Derived datatypes: keep the type alive, point buf at the data (or at a packing buffer). */
void p2p_req_setup_derived(p2p_req_t *q, const void *buf, MPI_Datatype dt);
/* Inlined into every entry point: a call passing ten arguments cost more
 * than the stores it makes.  dev: the caller classified the buffer already
 * (a predefined type's), so it is not asked twice; -1: classify here. */
static inline void p2p_req_setup_dev(p2p_req_t *q, p2p_rank_t *r, p2p_req_kind_t kind, p2p_mode_t mode,
                                     const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                                     core_comm_t *c, int dev)
{
    p2p_req_init(q, r, kind);
    q->mode = (uint8_t)mode;
    q->buf = (void *)buf;
    q->count = count;
    q->dt = dt;
    q->bytes = (size_t)count * dt_size(dt);
    if (UTIL_UNLIKELY(!dt_is_plain(dt)))
        p2p_req_setup_derived(q, buf, dt);
    q->dev = dev >= 0 ? dev : p2p_is_device(q->buf, q->bytes);
    q->peer = peer;
    q->tag = tag;
    q->c = c;
    if (c && UTIL_UNLIKELY(!c->predefined))
        core_comm_retain(c); /* MPI_Comm_free may come before the request ends */
    q->comm = c ? c->handle : MPI_COMM_NULL;
    q->ctx = c ? c->ctx : 0;
}
static inline void p2p_req_setup(p2p_req_t *q, p2p_rank_t *r, p2p_req_kind_t kind, p2p_mode_t mode,
                                 const void *buf, int count, MPI_Datatype dt, int peer, int tag, core_comm_t *c)
{
    p2p_req_setup_dev(q, r, kind, mode, buf, count, dt, peer, tag, c, -1);
}
/* p2p_req_cleanup for the request of a blocking call (p2p_req_setup's on
 * the rank's stack: never persistent, never generalized), in line: the call
 * is made only when there is something to let go of.  Its call and tests
 * were a tenth of a small MPI_Recv. */
static inline void p2p_req_cleanup_blocking(p2p_req_t *q)
{
    if (UTIL_UNLIKELY(q->tmp != NULL || (q->c && !q->c->predefined) || !dt_is_plain(q->dt)))
        p2p_req_cleanup(q);
}

/* Fill a fresh request with the arguments of a send or receive. */
p2p_req_t *p2p_req_prepare(p2p_rank_t *r, p2p_req_kind_t kind, p2p_mode_t mode, const void *buf, int count,
                           MPI_Datatype dt, int peer, int tag, core_comm_t *c);

/* Status of a finished request (and reset of a persistent one). */
void p2p_status_copy(MPI_Status *dst, const p2p_req_t *q);
void p2p_status_empty(MPI_Status *st);

/* Complete-or-free logic of Wait/Test on one finished request: copies the
 * status, frees a non-persistent request and nulls the handle. Returns the
 * request's error class. */
int p2p_req_retire(MPI_Request *handle, MPI_Status *st);

/* Generalized requests (p2p_greq.c): retire (query, then free callback),
 * the query callback's status, cancel. */
int p2p_greq_retire(MPI_Request *handle, MPI_Status *st);
int p2p_greq_query(const p2p_req_t *q, MPI_Status *st);
int p2p_greq_cancel(p2p_req_t *q);


#endif
