/* MPI receive entry points, Sendrecv and the count queries. */
#include "pt2pt/p2p_api.h"
#include "gpu/gpu_reduce.h" /* gpu_dev_alloc */

#include <stdlib.h>
#include <string.h>

#pragma weak MPI_Irecv = PMPI_Irecv
int PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    P2P_ENTER(r, "MPI_Irecv");
    core_comm_t *c;
    int err = p2p_check_args(r, buf, count, dt, source, tag, comm, true, &c, "MPI_Irecv");
    if (UTIL_UNLIKELY(err))
        return err;
    if (UTIL_UNLIKELY(!request))
        return core_error(c, MPI_ERR_REQUEST, "MPI_Irecv");
    p2p_req_t *q = p2p_req_alloc(r); /* p2p_req_prepare would initialise it twice */
    p2p_req_setup(q, r, P2P_REQ_RECV, P2P_MODE_STANDARD, buf, count, dt, source, tag, c);
    p2p_recv_start(q);
    *request = q;
    return MPI_SUCCESS;
}

#pragma weak MPI_Recv = PMPI_Recv
int PMPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Recv");
    core_comm_t *c;
    int err = p2p_check_args(r, buf, count, dt, source, tag, comm, true, &c, "MPI_Recv");
    if (UTIL_UNLIKELY(err))
        return err;
    p2p_req_t q; /* on the rank's stack: the call returns only when it is done */
    p2p_req_setup(&q, r, P2P_REQ_RECV, P2P_MODE_STANDARD, buf, count, dt, source, tag, c);
    p2p_recv_start(&q);
    p2p_wait_complete(&q);
    p2p_status_copy(status, &q);
    err = q.status.MPI_ERROR;
    p2p_req_cleanup_blocking(&q);
    return UTIL_UNLIKELY(err) ? core_error(c, err, "MPI_Recv") : MPI_SUCCESS;
}

#pragma weak MPI_Sendrecv = PMPI_Sendrecv
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Sendrecv");
    core_comm_t *c;
    int err = p2p_check_args(r, recvbuf, recvcount, recvtype, source, recvtag, comm, true, &c, "MPI_Sendrecv");
    if (!err)
        err = p2p_check_args(r, sendbuf, sendcount, sendtype, dest, sendtag, comm, false, &c, "MPI_Sendrecv");
    if (UTIL_UNLIKELY(err))
        return err;
    p2p_req_t *rq = p2p_req_prepare(r, P2P_REQ_RECV, P2P_MODE_STANDARD, recvbuf, recvcount, recvtype, source,
                                    recvtag, c);
    p2p_recv_start(rq);
    p2p_req_t *sq = p2p_req_prepare(r, P2P_REQ_SEND, P2P_MODE_STANDARD, sendbuf, sendcount, sendtype, dest,
                                    sendtag, c);
    p2p_send_start(sq);
    p2p_wait_complete(sq);
    int serr = sq->status.MPI_ERROR;
    p2p_req_release(sq);
    p2p_wait_complete(rq);
    MPI_Request h = rq;
    err = p2p_req_retire(&h, status);
    if (!err)
        err = serr;
    return UTIL_UNLIKELY(err) ? core_error(c, err, "MPI_Sendrecv") : MPI_SUCCESS;
}

#pragma weak MPI_Sendrecv_replace = PMPI_Sendrecv_replace
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Sendrecv_replace");
    core_comm_t *c;
    int err = p2p_check_args(r, buf, count, dt, dest, sendtag, comm, false, &c, "MPI_Sendrecv_replace");
    if (!err)
        err = p2p_check_args(r, buf, count, dt, source, recvtag, comm, true, &c, "MPI_Sendrecv_replace");
    if (UTIL_UNLIKELY(err))
        return err;
    size_t bytes = (size_t)count * dt_size(dt);
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy)
        return core_error(c, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace");
    if (!dt_is_contig(dt) && count > 0 && p2p_is_device(buf, 1)) { /* the same, packed by the GPU */
        void *dcopy;
        free(copy);
        if (gpu_dev_alloc(bytes ? bytes : 1, &dcopy) != 0)
            return core_error(c, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace");
        p2p_dev_pack_wait(dcopy, buf, count, dt);
        err = PMPI_Sendrecv(dcopy, (int)bytes, MPI_BYTE, dest, sendtag, buf, count, dt, source, recvtag, comm,
                            status);
        gpu_dev_free(dcopy);
        return err;
    }
    if (!dt_is_contig(dt)) { /* sent packed as bytes, received into the user's layout */
        dt_pack(buf, count, dt, copy);
        err = PMPI_Sendrecv(copy, (int)bytes, MPI_BYTE, dest, sendtag, buf, count, dt, source, recvtag, comm,
                            status);
        free(copy);
        return err;
    }
    const char *first = (const char *)buf + dt_contig_offset(dt);
    if (p2p_is_device(first, bytes))
        p2p_copy_sync(copy, first, bytes);
    else
        memcpy(copy, first, bytes);
    err = PMPI_Sendrecv(copy, (int)bytes, MPI_BYTE, dest, sendtag, buf, count, dt, source, recvtag, comm, status);
    free(copy);
    return err;
}

/* Whole elements of dt in the status, MPI_UNDEFINED when the bytes are not
 * a whole number of them. */
static long long whole_elements(const MPI_Status *status, MPI_Datatype dt)
{
    size_t size = dt_size(dt);
    long long bytes = status->ampi_count;
    if (size == 0)
        return bytes == 0 ? 0 : MPI_UNDEFINED;
    return bytes % (long long)size ? MPI_UNDEFINED : bytes / (long long)size;
}

static int count_of(const MPI_Status *status, MPI_Datatype dt, int *count, const char *func)
{
    if (!status || !count)
        return core_error(NULL, MPI_ERR_ARG, func);
    if (!dt_committed(dt))
        return core_error(NULL, MPI_ERR_TYPE, func);
    long long n = whole_elements(status, dt);
    *count = n > 0x7fffffffLL ? MPI_UNDEFINED : (int)n; /* too many for an int: MPI 3.1 4.1.11 */
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_count = PMPI_Get_count
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    return count_of(status, dt, count, "MPI_Get_count");
}

/* Basic elements: for predefined types the same as the count. */
static int elements_of(const MPI_Status *status, MPI_Datatype dt, long long *n, const char *func)
{
    if (!status)
        return core_error(NULL, MPI_ERR_ARG, func);
    if (!dt_committed(dt))
        return core_error(NULL, MPI_ERR_TYPE, func);
    /* one basic element per element: whole elements only, so a count past
     * 2^31 stays exact (MPI_Get_elements_x) */
    if (dt_is_plain(dt) && dt_view(dt)->nbasic == 1) {
        *n = whole_elements(status, dt);
        return MPI_SUCCESS;
    }
    long long e = dt_elements(dt, status->ampi_count);
    *n = e < 0 ? MPI_UNDEFINED : e;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_elements = PMPI_Get_elements
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    long long n = 0;
    int err = elements_of(status, dt, &n, "MPI_Get_elements");
    if (!err)
        *count = n > 0x7fffffffLL ? MPI_UNDEFINED : (int)n;
    return err;
}

#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype dt, MPI_Count *count)
{
    long long n = 0;
    int err = elements_of(status, dt, &n, "MPI_Get_elements_x");
    if (!err)
        *count = n;
    return err;
}

static int set_elements(MPI_Status *status, MPI_Datatype dt, MPI_Count count, const char *func)
{
    if (!dt_committed(dt))
        return core_error(NULL, MPI_ERR_TYPE, func);
    if (!status || count < 0)
        return core_error(NULL, MPI_ERR_ARG, func);
    /* count basic elements: MPI_Get_elements gives it back, MPI_Get_count
     * the whole elements of dt it makes */
    long long bytes = dt_elements_bytes(dt, count);
    if (bytes < 0)
        return core_error_msg(NULL, MPI_ERR_TYPE, func, "a partial element of a type too large to flatten");
    status->ampi_count = bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype dt, int count)
{
    return set_elements(status, dt, count, "MPI_Status_set_elements");
}

#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype dt, MPI_Count count)
{
    return set_elements(status, dt, count, "MPI_Status_set_elements_x");
}

#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (!status)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled");
    status->ampi_cancelled = flag != 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status || !flag)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Test_cancelled");
    *flag = status->ampi_cancelled;
    return MPI_SUCCESS;
}
