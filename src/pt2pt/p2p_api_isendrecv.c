/* MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.0 3.10).
 *
 * The receive and the send are posted at the call, in that order, as
 * MPI_Irecv and MPI_Isend would be: they match like them with respect to
 * the caller's other calls.  The user's request is the receive, which
 * carries the status; it has one more part, which the send -- a request of
 * the library's, released when it ends (as after MPI_Request_free) --
 * finishes through its `parent` link. */
#include "pt2pt/p2p_api.h"

#include <stdlib.h>
#include <string.h>

void p2p_start_part(p2p_req_t *rq, p2p_req_t *sq)
{
    int err = p2p_send_start(sq);
    if (err || sq->complete) { /* done (or failed) already: no link needed */
        if (err)
            p2p_req_fail(rq, err);
        p2p_req_release(sq);
        p2p_req_part_done(rq);
        return;
    }
    sq->parent = rq;
    sq->freed = true;
}

void p2p_expect_part(p2p_req_t *rq)
{
    if (rq->complete) { /* matched and copied at once: the send is what remains */
        rq->complete = false;
        rq->pending = 1;
    } else {
        rq->pending++;
    }
}

/* Starts the send (buf, count, dt) as a part of rq; `copy` (may be NULL) is
 * a buffer the send owns and frees. */
static void start_send_part(p2p_rank_t *r, p2p_req_t *rq, const void *buf, int count, MPI_Datatype dt, int dest,
                            int tag, core_comm_t *c, void *copy)
{
    p2p_req_t *sq = p2p_req_alloc(r);
    p2p_req_setup(sq, r, P2P_REQ_SEND, P2P_MODE_STANDARD, buf, count, dt, dest, tag, c);
    sq->tmp = copy; /* freed with the request */
    p2p_start_part(rq, sq);
}

/* Posts the receive with one more part for the send to come. */
static p2p_req_t *start_recv_part(p2p_rank_t *r, void *buf, int count, MPI_Datatype dt, int source, int tag,
                                  core_comm_t *c)
{
    p2p_req_t *rq = p2p_req_alloc(r);
    p2p_req_setup(rq, r, P2P_REQ_RECV, P2P_MODE_STANDARD, buf, count, dt, source, tag, c);
    p2p_recv_start(rq);
    p2p_expect_part(rq);
    return rq;
}

#pragma weak MPI_Isendrecv = PMPI_Isendrecv
int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                   MPI_Request *request)
{
    const char *fn = "MPI_Isendrecv";
    P2P_ENTER(r, fn);
    core_comm_t *c;
    int err = p2p_check_args(r, sendbuf, sendcount, sendtype, dest, sendtag, comm, false, &c, fn);
    if (!err)
        err = p2p_check_args(r, recvbuf, recvcount, recvtype, source, recvtag, comm, true, &c, fn);
    if (err)
        return err;
    if (!request)
        return core_error(c, MPI_ERR_REQUEST, fn);
    p2p_req_t *rq = start_recv_part(r, recvbuf, recvcount, recvtype, source, recvtag, c);
    start_send_part(r, rq, sendbuf, sendcount, sendtype, dest, sendtag, c, NULL);
    *request = rq;
    return MPI_SUCCESS;
}

/* The data to send is copied first (packed, for a non-contiguous type),
 * so the receive may land in the same buffer at once. */
#pragma weak MPI_Isendrecv_replace = PMPI_Isendrecv_replace
int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Request *request)
{
    const char *fn = "MPI_Isendrecv_replace";
    P2P_ENTER(r, fn);
    core_comm_t *c;
    int err = p2p_check_args(r, buf, count, dt, dest, sendtag, comm, false, &c, fn);
    if (!err)
        err = p2p_check_args(r, buf, count, dt, source, recvtag, comm, true, &c, fn);
    if (err)
        return err;
    if (!request)
        return core_error(c, MPI_ERR_REQUEST, fn);
    size_t bytes = (size_t)count * dt_size(dt);
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy)
        return core_error(c, MPI_ERR_NO_MEM, fn);
    if (!dt_is_contig(dt)) {
        dt_pack(buf, count, dt, copy);
    } else {
        const char *first = (const char *)buf + dt_contig_offset(dt);
        if (p2p_is_device(first, bytes))
            p2p_copy_sync(copy, first, bytes);
        else
            memcpy(copy, first, bytes);
    }
    p2p_req_t *rq = start_recv_part(r, buf, count, dt, source, recvtag, c);
    start_send_part(r, rq, copy, (int)bytes, MPI_BYTE, dest, sendtag, c, copy);
    *request = rq;
    return MPI_SUCCESS;
}
