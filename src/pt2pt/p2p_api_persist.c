/* Persistent requests: *_init records the arguments once, Start/Startall run
 * the operation again on the same request object. */
#include "pt2pt/p2p_api.h"
#include "pt2pt/p2p_bsend.h"

static int init_common(const void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                       MPI_Request *request, p2p_req_kind_t kind, p2p_mode_t mode, const char *func)
{
    P2P_ENTER(r, func);
    core_comm_t *c;
    int err = p2p_check_args(r, buf, count, dt, peer, tag, comm, kind == P2P_REQ_RECV, &c, func);
    if (err)
        return err;
    if (!request)
        return core_error(c, MPI_ERR_ARG, func);
    p2p_req_t *q = p2p_req_prepare(r, kind, mode, buf, count, dt, peer, tag, c);
    q->persistent = true;
    q->pcoll = NULL;
    q->active = false;
    q->complete = true;
    *request = q;
    return MPI_SUCCESS;
}

#pragma weak MPI_Send_init = PMPI_Send_init
int PMPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    return init_common(buf, count, dt, dest, tag, comm, request, P2P_REQ_SEND, P2P_MODE_STANDARD,
                       "MPI_Send_init");
}

#pragma weak MPI_Ssend_init = PMPI_Ssend_init
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request)
{
    return init_common(buf, count, dt, dest, tag, comm, request, P2P_REQ_SEND, P2P_MODE_SYNC, "MPI_Ssend_init");
}

#pragma weak MPI_Rsend_init = PMPI_Rsend_init
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request)
{
    return init_common(buf, count, dt, dest, tag, comm, request, P2P_REQ_SEND, P2P_MODE_READY, "MPI_Rsend_init");
}

#pragma weak MPI_Bsend_init = PMPI_Bsend_init
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request)
{
    return init_common(buf, count, dt, dest, tag, comm, request, P2P_REQ_SEND, P2P_MODE_BUFFERED,
                       "MPI_Bsend_init");
}

#pragma weak MPI_Recv_init = PMPI_Recv_init
int PMPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    return init_common(buf, count, dt, source, tag, comm, request, P2P_REQ_RECV, P2P_MODE_STANDARD,
                       "MPI_Recv_init");
}

static int start_one(p2p_req_t *q, const char *func)
{
    if (!q || q->kind == P2P_REQ_DEAD || q->freed)
        return core_error(NULL, MPI_ERR_REQUEST, func);
    if (!q->persistent || q->active)
        return core_error(q->c, MPI_ERR_REQUEST, func);
    int err;
    if (q->pcoll)
        err = q->pcoll->start(q);
    else if (q->kind == P2P_REQ_RECV)
        err = p2p_recv_start(q);
    else if (q->mode == P2P_MODE_BUFFERED)
        err = p2p_bsend_start(q);
    else
        err = p2p_send_start(q);
    return err ? core_error(q->c, err, func) : MPI_SUCCESS;
}

#pragma weak MPI_Start = PMPI_Start
int PMPI_Start(MPI_Request *request)
{
    P2P_ENTER(r, "MPI_Start");
    (void)r;
    if (!request)
        return core_error(NULL, MPI_ERR_REQUEST, "MPI_Start");
    return start_one(*request, "MPI_Start");
}

#pragma weak MPI_Startall = PMPI_Startall
int PMPI_Startall(int count, MPI_Request reqs[])
{
    P2P_ENTER(r, "MPI_Startall");
    (void)r;
    if (count < 0 || (count > 0 && !reqs))
        return core_error(NULL, MPI_ERR_ARG, "MPI_Startall");
    for (int i = 0; i < count; i++) {
        int err = start_one(reqs[i], "MPI_Startall");
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}
