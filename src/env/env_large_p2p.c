/* The large-count point-to-point calls of MPI 4.0 (MPI_Send_c ...).
 *
 * A count that fits an int takes the int call.  A larger one travels as
 * one element of a contiguous type of count elements (MPI_Type_contiguous_c
 * flattens it to the same blocks): the type signature is the same, so it
 * matches the peer's large receive or send of the same data, and the
 * status counts bytes, so MPI_Get_count_c answers in elements of the
 * caller's type.  A request keeps its own reference on the type: the
 * handle is freed as soon as the call returns. */
#include "env/env_large.h"

#include <limits.h>

int env_large_type(MPI_Count count, MPI_Datatype dt, MPI_Datatype *big)
{
    int err = PMPI_Type_contiguous_c(count, dt, big);
    return err ? err : PMPI_Type_commit(big);
}

/* Sends and receives share one shape: (buf, count, type, the rest). */
#define LARGE_XFER(name, bufq, tail_params, tail_args)                                \
    _Pragma(ENV_WEAK(name))                                                             \
    int PMPI_##name##_c(bufq void *buf, MPI_Count count, MPI_Datatype dt ENV_UNPAREN tail_params) \
    {                                                                                   \
        if (count <= INT_MAX)                                                           \
            return PMPI_##name(buf, count < 0 ? -1 : (int)count, dt ENV_UNPAREN tail_args); \
        MPI_Datatype big;                                                               \
        int err = env_large_type(count, dt, &big);                                      \
        if (err)                                                                        \
            return err;                                                                 \
        err = PMPI_##name(buf, 1, big ENV_UNPAREN tail_args);                           \
        PMPI_Type_free(&big);                                                           \
        return err;                                                                     \
    }

#define SEND_TAIL (, int dest, int tag, MPI_Comm comm)
#define SEND_ARGS (, dest, tag, comm)
#define ISEND_TAIL (, int dest, int tag, MPI_Comm comm, MPI_Request *request)
#define ISEND_ARGS (, dest, tag, comm, request)

/* The four send modes (standard, buffered, synchronous, ready) share the
 * shape of their family: blocking, nonblocking or persistent. */
#define LARGE_SEND_MODES(tail_params, tail_args, standard, buffered, synchronous, ready) \
    LARGE_XFER(standard, const, tail_params, tail_args)                                  \
    LARGE_XFER(buffered, const, tail_params, tail_args)                                  \
    LARGE_XFER(synchronous, const, tail_params, tail_args)                               \
    LARGE_XFER(ready, const, tail_params, tail_args)

LARGE_SEND_MODES(SEND_TAIL, SEND_ARGS, Send, Bsend, Ssend, Rsend)
LARGE_SEND_MODES(ISEND_TAIL, ISEND_ARGS, Isend, Ibsend, Issend, Irsend)
LARGE_SEND_MODES(ISEND_TAIL, ISEND_ARGS, Send_init, Bsend_init, Ssend_init, Rsend_init)

LARGE_XFER(Recv, , (, int source, int tag, MPI_Comm comm, MPI_Status *status), (, source, tag, comm, status))
LARGE_XFER(Irecv, , ISEND_TAIL, ISEND_ARGS)
LARGE_XFER(Recv_init, , ISEND_TAIL, ISEND_ARGS)
LARGE_XFER(Sendrecv_replace, , (, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status),
           (, dest, sendtag, source, recvtag, comm, status))
LARGE_XFER(Mrecv, , (, MPI_Message *message, MPI_Status *status), (, message, status))
LARGE_XFER(Imrecv, , (, MPI_Message *message, MPI_Request *request), (, message, request))

#pragma weak MPI_Sendrecv_c = PMPI_Sendrecv_c
int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                    MPI_Comm comm, MPI_Status *status)
{
    MPI_Datatype st = sendtype, rt = recvtype;
    int sc = sendcount < 0 ? -1 : (int)sendcount, rc = recvcount < 0 ? -1 : (int)recvcount, err = MPI_SUCCESS;
    if (sendcount > INT_MAX && !(err = env_large_type(sendcount, sendtype, &st)))
        sc = 1;
    if (!err && recvcount > INT_MAX && !(err = env_large_type(recvcount, recvtype, &rt)))
        rc = 1;
    if (!err)
        err = PMPI_Sendrecv(sendbuf, sc, st, dest, sendtag, recvbuf, rc, rt, source, recvtag, comm, status);
    if (st != sendtype)
        PMPI_Type_free(&st);
    if (rt != recvtype)
        PMPI_Type_free(&rt);
    return err;
}

#pragma weak MPI_Get_count_c = PMPI_Get_count_c
int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    MPI_Count size = 0;
    if (!status || !count)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Get_count_c");
    int err = PMPI_Type_size_x(datatype, &size);
    if (err)
        return err;
    long long bytes = status->ampi_count;
    *count = size == 0 ? 0 : bytes % size ? MPI_UNDEFINED : bytes / size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_elements_c = PMPI_Get_elements_c
int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return PMPI_Get_elements_x(status, datatype, count);
}
