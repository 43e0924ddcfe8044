/* Argument checks, request set-up, statuses and waiting, shared by the
 * point-to-point entry points. */
#include "pt2pt/p2p_api.h"
#include "gpu/gpu_dt.h"
#include "gpu/gpu_reduce.h" /* gpu_dev_alloc */

#include <stdlib.h>

/* The full checks, in the order that decides which error class is reported;
 * only reached when the quick test below finds something wrong (or unusual). */
int p2p_check_args_slow(p2p_rank_t *r, const void *buf, int count, MPI_Datatype dt, int peer, int tag,
                        MPI_Comm comm, bool is_recv, core_comm_t **cp, const char *func)
{
    core_comm_t *c = p2p_comm(r, comm);
    if (!c)
        return core_error(NULL, MPI_ERR_COMM, func);
    *cp = c;
    if (count < 0)
        return core_error(c, MPI_ERR_COUNT, func);
    /* nothing to or from MPI_PROC_NULL: no type needed (MPICH accepts it too) */
    bool no_data = count == 0 && dt == MPI_DATATYPE_NULL && peer == MPI_PROC_NULL;
    if (!dt_valid(dt) && !no_data)
        return core_error(c, MPI_ERR_TYPE, func);
    if (peer != MPI_PROC_NULL && !(is_recv && peer == MPI_ANY_SOURCE) && (peer < 0 || peer >= c->size))
        return core_error(c, MPI_ERR_RANK, func);
    if (!(is_recv && tag == MPI_ANY_TAG) && (tag < 0 || tag > P2P_TAG_UB))
        return core_error(c, MPI_ERR_TAG, func);
    /* MPI_BOTTOM (NULL) is a valid buffer for a derived type of absolute
     * addresses (MPI_Get_address): only a predefined type makes it wrong */
    if (count > 0 && !buf && dt_is_predefined(dt) && dt_size(dt) > 0 && peer != MPI_PROC_NULL)
        return core_error(c, MPI_ERR_BUFFER, func);
    if (!dt_is_contig(dt) && count > 0 && p2p_is_device(buf, 1) && !gpu_dt_available())
        return core_error_msg(c, MPI_ERR_UNSUPPORTED_OPERATION, func,
                             "non-contiguous datatypes on device buffers need the library's device kernels "
                             "(built without nvcc)");
    return MPI_SUCCESS;
}

void p2p_req_setup_derived(p2p_req_t *q, const void *buf, MPI_Datatype dt)
{
    dt_retain(dt); /* MPI_Type_free may come before the operation ends */
    if (dt_is_contig(dt)) {
        q->buf = (char *)q->buf + dt_contig_offset(dt);
    } else if (UTIL_UNLIKELY(p2p_is_device(buf, 1))) {
        /* packed and unpacked by the GPU, in device scratch memory */
        q->ubuf = (void *)buf;
        if (gpu_dev_alloc(q->bytes ? q->bytes : 1, &q->pack) != 0)
            util_fatal("out of device memory for a packing buffer of %zu bytes", q->bytes);
        q->dev_dt = 1;
        q->buf = q->pack;
    } else {
        q->ubuf = (void *)buf;
        q->pack = malloc(q->bytes ? q->bytes : 1);
        if (!q->pack)
            util_fatal("out of memory for a packing buffer of %zu bytes", q->bytes);
        q->buf = q->pack;
    }
}

p2p_req_t *p2p_req_prepare(p2p_rank_t *r, p2p_req_kind_t kind, p2p_mode_t mode, const void *buf, int count,
                           MPI_Datatype dt, int peer, int tag, core_comm_t *c)
{
    p2p_req_t *q = p2p_req_alloc(r); /* p2p_req_setup initialises it */
    p2p_req_setup(q, r, kind, mode, buf, count, dt, peer, tag, c);
    return q;
}

void p2p_status_empty(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->ampi_cancelled = 0;
    st->ampi_count = 0;
}

void p2p_status_copy(MPI_Status *dst, const p2p_req_t *q)
{
    if (dst == MPI_STATUS_IGNORE)
        return;
    if (q->kind == P2P_REQ_SEND) {
        p2p_status_empty(dst);
        dst->ampi_cancelled = q->status.ampi_cancelled;
        return;
    }
    int keep = dst->MPI_ERROR;
    *dst = q->status;
    dst->MPI_ERROR = keep;
}

int p2p_req_retire(MPI_Request *handle, MPI_Status *st)
{
    p2p_req_t *q = *handle;
    if (UTIL_UNLIKELY(q->kind == P2P_REQ_GREQ))
        return p2p_greq_retire(handle, st);
    p2p_status_copy(st, q);
    int err = q->status.MPI_ERROR;
    if (q->persistent) {
        q->active = false;
    } else {
        p2p_req_release(q);
        *handle = MPI_REQUEST_NULL;
    }
    return err;
}

void p2p_wait_complete(p2p_req_t *q)
{
    if (q->complete)
        return;
    P2P_WAITING;
    p2p_progress(NULL);
    while (!q->complete)
        p2p_idle();
}

void p2p_yield(void)
{
    bool waiting = rank_waiting_set(&p2p_proc.pe, false); /* the PE may go to another rank (p2p_idle) */
    rank_yield();
    if (waiting)
        rank_waiting_set(&p2p_proc.pe, true);
}

void p2p_poll(void)
{
    p2p_progress(NULL);
    p2p_yield();
}
