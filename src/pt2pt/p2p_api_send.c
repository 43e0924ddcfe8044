/* MPI send entry points: standard, synchronous, ready and buffered, blocking
 * and nonblocking. */
#include "pt2pt/p2p_api.h"
#include "pt2pt/p2p_bsend.h"
#include "pt2pt/p2p_short.h"

#include <stddef.h>
#include <string.h>

static int isend_common(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                        MPI_Request *request, p2p_mode_t mode, const char *func)
{
    P2P_ENTER(r, func);
    core_comm_t *c;
    int err = p2p_check_args(r, buf, count, dt, dest, tag, comm, false, &c, func);
    if (UTIL_UNLIKELY(err))
        return err;
    if (UTIL_UNLIKELY(!request))
        return core_error(c, MPI_ERR_REQUEST, func);
    int dev = -1; /* classified once: here for a predefined type, else by p2p_req_setup */
    if (dt_is_plain(dt) && dest != MPI_PROC_NULL) {
        size_t bytes = (size_t)count * dt_size(dt);
        int dst = core_comm_world_rank(c, dest);
        dev = p2p_is_device(buf, bytes);
        if (mode == P2P_MODE_STANDARD && p2p_route_first(dst, bytes, dev, false) == P2P_ROUTE_SHORT) {
            p2p_req_t *q = p2p_req_alloc(r);
            p2p_short_isend(q, r, c, buf, count, dt, bytes, dest, dst, tag);
            *request = q;
            return MPI_SUCCESS;
        }
    }
    p2p_req_t *q = p2p_req_alloc(r); /* p2p_req_prepare would initialise it twice */
    p2p_req_setup_dev(q, r, P2P_REQ_SEND, mode, buf, count, dt, dest, tag, c, dev);
    err = mode == P2P_MODE_BUFFERED ? p2p_bsend_start(q) : p2p_send_start(q);
    if (UTIL_UNLIKELY(err)) {
        p2p_req_release(q);
        *request = MPI_REQUEST_NULL;
        return core_error(c, err, func);
    }
    *request = q;
    return MPI_SUCCESS;
}

static int send_common(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                       p2p_mode_t mode, const char *func)
{
    P2P_ENTER(r, func);
    core_comm_t *c;
    int err = p2p_check_args(r, buf, count, dt, dest, tag, comm, false, &c, func);
    if (UTIL_UNLIKELY(err))
        return err;
    int dev = -1; /* classified once: here for a predefined type, else by p2p_req_setup */
    if (dt_is_plain(dt) && dest != MPI_PROC_NULL) {
        size_t bytes = (size_t)count * dt_size(dt);
        int dst = core_comm_world_rank(c, dest);
        dev = p2p_is_device(buf, bytes);
        if (mode == P2P_MODE_STANDARD || mode == P2P_MODE_READY) {
            p2p_route_t rt = p2p_route_first(dst, bytes, dev, false);
            if (rt == P2P_ROUTE_SHORT) {
                err = p2p_short_send(r, c, c->ctx, buf, bytes, dst, tag);
                return UTIL_UNLIKELY(err) ? core_error(c, err, func) : MPI_SUCCESS;
            }
            if (rt == P2P_ROUTE_LOCAL && !dev && p2p_local_send_posted(c, buf, bytes, p2p_local(dst), tag))
                return MPI_SUCCESS;
        }
    }
    p2p_req_t q; /* on the rank's stack: the call returns only when it is done */
    p2p_req_setup_dev(&q, r, P2P_REQ_SEND, mode, buf, count, dt, dest, tag, c, dev);
    err = mode == P2P_MODE_BUFFERED ? p2p_bsend_start(&q) : p2p_send_start(&q);
    if (!err) {
        p2p_wait_complete(&q);
        err = q.status.MPI_ERROR;
    }
    p2p_req_cleanup_blocking(&q);
    return UTIL_UNLIKELY(err) ? core_error(c, err, func) : MPI_SUCCESS;
}

#pragma weak MPI_Send = PMPI_Send
int PMPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common(buf, count, dt, dest, tag, comm, P2P_MODE_STANDARD, "MPI_Send");
}

#pragma weak MPI_Ssend = PMPI_Ssend
int PMPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common(buf, count, dt, dest, tag, comm, P2P_MODE_SYNC, "MPI_Ssend");
}

#pragma weak MPI_Rsend = PMPI_Rsend
int PMPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common(buf, count, dt, dest, tag, comm, P2P_MODE_READY, "MPI_Rsend");
}

#pragma weak MPI_Bsend = PMPI_Bsend
int PMPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common(buf, count, dt, dest, tag, comm, P2P_MODE_BUFFERED, "MPI_Bsend");
}

#pragma weak MPI_Isend = PMPI_Isend
int PMPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return isend_common(buf, count, dt, dest, tag, comm, req, P2P_MODE_STANDARD, "MPI_Isend");
}

#pragma weak MPI_Issend = PMPI_Issend
int PMPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return isend_common(buf, count, dt, dest, tag, comm, req, P2P_MODE_SYNC, "MPI_Issend");
}

#pragma weak MPI_Irsend = PMPI_Irsend
int PMPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return isend_common(buf, count, dt, dest, tag, comm, req, P2P_MODE_READY, "MPI_Irsend");
}

#pragma weak MPI_Ibsend = PMPI_Ibsend
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return isend_common(buf, count, dt, dest, tag, comm, req, P2P_MODE_BUFFERED, "MPI_Ibsend");
}
