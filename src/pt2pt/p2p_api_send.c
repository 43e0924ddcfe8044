/* MPI send entry points: standard, synchronous, ready and buffered, blocking
 * and nonblocking. */
#include "pt2pt/p2p_api.h"
#include "pt2pt/p2p_bsend.h"

static int isend_common(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                        MPI_Request *request, p2p_mode_t mode, const char *func)
{
    P2P_ENTER(r, func);
    comm_t *c;
    int err = p2p_check_args(r, buf, count, dt, dest, tag, comm, false, &c, func);
    if (UTIL_UNLIKELY(err))
        return err;
    if (UTIL_UNLIKELY(!request))
        return env_error(c, MPI_ERR_REQUEST, func);
    p2p_req_t *q = p2p_req_prepare(r, P2P_REQ_SEND, mode, buf, count, dt, dest, tag, c);
    err = mode == P2P_MODE_BUFFERED ? p2p_bsend_start(q) : p2p_send_start(q);
    if (UTIL_UNLIKELY(err)) {
        p2p_req_release(q);
        *request = MPI_REQUEST_NULL;
        return env_error(c, err, func);
    }
    *request = q;
    return MPI_SUCCESS;
}

static int send_common(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                       p2p_mode_t mode, const char *func)
{
    P2P_ENTER(r, func);
    comm_t *c;
    int err = p2p_check_args(r, buf, count, dt, dest, tag, comm, false, &c, func);
    if (UTIL_UNLIKELY(err))
        return err;
    p2p_req_t q; /* on the rank's stack: the call returns only when it is done */
    p2p_req_setup(&q, r, P2P_REQ_SEND, mode, buf, count, dt, dest, tag, c);
    err = mode == P2P_MODE_BUFFERED ? p2p_bsend_start(&q) : p2p_send_start(&q);
    if (!err) {
        p2p_wait_complete(&q);
        err = q.status.MPI_ERROR;
    }
    p2p_req_cleanup(&q);
    return UTIL_UNLIKELY(err) ? env_error(c, err, func) : MPI_SUCCESS;
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

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
int PMPI_Buffer_attach(void *buffer, int size)
{
    P2P_ENTER(r, "MPI_Buffer_attach");
    int err = p2p_bsend_attach(r, buffer, size);
    return err ? env_error(NULL, err, "MPI_Buffer_attach") : MPI_SUCCESS;
}

#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    P2P_ENTER(r, "MPI_Buffer_detach");
    void *b;
    int err = p2p_bsend_detach(r, &b, size);
    *(void **)buffer_addr = b;
    return err ? env_error(NULL, err, "MPI_Buffer_detach") : MPI_SUCCESS;
}
