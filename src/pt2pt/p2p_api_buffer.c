/* The buffers of buffered sends (MPI 4.1 3.6): the rank's
 * (MPI_Buffer_attach), a communicator's (MPI_Comm_attach_buffer), and
 * flushing them; the sessions' are in src/env/env_session.c. */
#include "pt2pt/p2p_api.h"
#include "pt2pt/p2p_bsend.h"

#include <limits.h>

/* A detach through an int size: the attach was through an int too,
 * unless it was a large-count one. */
static int detach_int(p2p_bsend_state_t **slot, void *buffer_addr, int *size)
{
    void *b;
    MPI_Count n;
    int err = p2p_bsend_detach(slot, &b, &n);
    *(void **)buffer_addr = b;
    *size = n > INT_MAX ? INT_MAX : (int)n;
    return err;
}

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
int PMPI_Buffer_attach(void *buffer, int size)
{
    P2P_ENTER(r, "MPI_Buffer_attach");
    int err = p2p_bsend_attach(&r->bsend, buffer, size);
    return err ? core_error(NULL, err, "MPI_Buffer_attach") : MPI_SUCCESS;
}

#pragma weak MPI_Buffer_attach_c = PMPI_Buffer_attach_c
int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    P2P_ENTER(r, "MPI_Buffer_attach_c");
    int err = p2p_bsend_attach(&r->bsend, buffer, size);
    return err ? core_error(NULL, err, "MPI_Buffer_attach_c") : MPI_SUCCESS;
}

#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    P2P_ENTER(r, "MPI_Buffer_detach");
    if (!buffer_addr || !size)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Buffer_detach");
    int err = detach_int(&r->bsend, buffer_addr, size);
    return err ? core_error(NULL, err, "MPI_Buffer_detach") : MPI_SUCCESS;
}

#pragma weak MPI_Buffer_detach_c = PMPI_Buffer_detach_c
int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    P2P_ENTER(r, "MPI_Buffer_detach_c");
    if (!buffer_addr || !size)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Buffer_detach_c");
    int err = p2p_bsend_detach(&r->bsend, (void **)buffer_addr, size);
    return err ? core_error(NULL, err, "MPI_Buffer_detach_c") : MPI_SUCCESS;
}

#pragma weak MPI_Buffer_flush = PMPI_Buffer_flush
int PMPI_Buffer_flush(void)
{
    P2P_ENTER(r, "MPI_Buffer_flush");
    p2p_bsend_flush(r->bsend);
    return MPI_SUCCESS;
}

#pragma weak MPI_Buffer_iflush = PMPI_Buffer_iflush
int PMPI_Buffer_iflush(MPI_Request *request)
{
    P2P_ENTER(r, "MPI_Buffer_iflush");
    if (!request)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Buffer_iflush");
    int err = p2p_bsend_iflush(r, r->bsend, request);
    return err ? core_error(NULL, err, "MPI_Buffer_iflush") : MPI_SUCCESS;
}

/* The communicator behind h, or NULL after reporting MPI_ERR_COMM. */
static core_comm_t *comm_get(p2p_rank_t *r, MPI_Comm h, const char *fn)
{
    core_comm_t *c = p2p_comm(r, h);
    if (!c)
        core_error(NULL, MPI_ERR_COMM, fn);
    return c;
}

#pragma weak MPI_Comm_attach_buffer = PMPI_Comm_attach_buffer
int PMPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size)
{
    return PMPI_Comm_attach_buffer_c(comm, buffer, size);
}

#pragma weak MPI_Comm_attach_buffer_c = PMPI_Comm_attach_buffer_c
int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size)
{
    P2P_ENTER(r, "MPI_Comm_attach_buffer");
    core_comm_t *c = comm_get(r, comm, "MPI_Comm_attach_buffer");
    if (!c)
        return MPI_ERR_COMM;
    int err = p2p_bsend_attach(&c->bsend, buffer, size);
    return err ? core_error(c, err, "MPI_Comm_attach_buffer") : MPI_SUCCESS;
}

#pragma weak MPI_Comm_detach_buffer = PMPI_Comm_detach_buffer
int PMPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    P2P_ENTER(r, "MPI_Comm_detach_buffer");
    core_comm_t *c = comm_get(r, comm, "MPI_Comm_detach_buffer");
    if (!c)
        return MPI_ERR_COMM;
    if (!buffer_addr || !size)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_detach_buffer");
    int err = detach_int(&c->bsend, buffer_addr, size);
    return err ? core_error(c, err, "MPI_Comm_detach_buffer") : MPI_SUCCESS;
}

#pragma weak MPI_Comm_detach_buffer_c = PMPI_Comm_detach_buffer_c
int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    P2P_ENTER(r, "MPI_Comm_detach_buffer_c");
    core_comm_t *c = comm_get(r, comm, "MPI_Comm_detach_buffer_c");
    if (!c)
        return MPI_ERR_COMM;
    if (!buffer_addr || !size)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_detach_buffer_c");
    int err = p2p_bsend_detach(&c->bsend, (void **)buffer_addr, size);
    return err ? core_error(c, err, "MPI_Comm_detach_buffer_c") : MPI_SUCCESS;
}

#pragma weak MPI_Comm_flush_buffer = PMPI_Comm_flush_buffer
int PMPI_Comm_flush_buffer(MPI_Comm comm)
{
    P2P_ENTER(r, "MPI_Comm_flush_buffer");
    core_comm_t *c = comm_get(r, comm, "MPI_Comm_flush_buffer");
    if (!c)
        return MPI_ERR_COMM;
    p2p_bsend_flush(c->bsend);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_iflush_buffer = PMPI_Comm_iflush_buffer
int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    P2P_ENTER(r, "MPI_Comm_iflush_buffer");
    core_comm_t *c = comm_get(r, comm, "MPI_Comm_iflush_buffer");
    if (!c)
        return MPI_ERR_COMM;
    if (!request)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_iflush_buffer");
    int err = p2p_bsend_iflush(r, c->bsend, request);
    return err ? core_error(c, err, "MPI_Comm_iflush_buffer") : MPI_SUCCESS;
}
