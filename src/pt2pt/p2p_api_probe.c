/* Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv.  A matched probe
 * (Mprobe) takes the message out of the unexpected queue; the MPI_Message
 * handle is the message itself. */
#include "pt2pt/p2p_api.h"

static int check_probe(p2p_rank_t *r, int source, int tag, MPI_Comm comm, core_comm_t **c, const char *func)
{
    /* a probe is a receive without a buffer */
    return p2p_check_args(r, NULL, 0, MPI_BYTE, source, tag, comm, true, c, func);
}

static void status_of(MPI_Status *st, const p2p_msg_t *m)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = m->m.src;
    st->MPI_TAG = m->m.tag;
    st->ampi_cancelled = 0;
    st->ampi_count = (long long)m->size;
}

static void status_proc_null(MPI_Status *st)
{
    p2p_status_empty(st);
    if (st != MPI_STATUS_IGNORE)
        st->MPI_SOURCE = MPI_PROC_NULL;
}

static p2p_msg_t *find(p2p_rank_t *r, core_comm_t *c, int source, int tag)
{
    p2p_mentry_t *e = p2p_unexp_find(&r->unexpected, c->ctx, source, tag);
    return e ? UTIL_CONTAINER_OF(e, p2p_msg_t, m) : NULL;
}

static p2p_msg_t *probe_block(p2p_rank_t *r, core_comm_t *c, int source, int tag)
{
    p2p_msg_t *m = find(r, c, source, tag);
    if (m)
        return m;
    P2P_WAITING;
    p2p_progress(NULL);
    r->probing = true;
    while (!(m = find(r, c, source, tag)))
        p2p_idle();
    r->probing = false;
    return m;
}

static p2p_msg_t *probe_once(p2p_rank_t *r, core_comm_t *c, int source, int tag)
{
    p2p_msg_t *m = find(r, c, source, tag);
    if (!m) {
        p2p_poll(); /* let the network and the other ranks of this PE move */
        m = find(r, c, source, tag);
    }
    return m;
}

#pragma weak MPI_Probe = PMPI_Probe
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Probe");
    core_comm_t *c;
    int err = check_probe(r, source, tag, comm, &c, "MPI_Probe");
    if (err)
        return err;
    if (source == MPI_PROC_NULL) {
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    status_of(status, probe_block(r, c, source, tag));
    return MPI_SUCCESS;
}

#pragma weak MPI_Iprobe = PMPI_Iprobe
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Iprobe");
    core_comm_t *c;
    int err = check_probe(r, source, tag, comm, &c, "MPI_Iprobe");
    if (err)
        return err;
    if (!flag)
        return core_error(c, MPI_ERR_ARG, "MPI_Iprobe");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    p2p_msg_t *m = probe_once(r, c, source, tag);
    *flag = m != NULL;
    if (m)
        status_of(status, m);
    return MPI_SUCCESS;
}

static void take(p2p_rank_t *r, p2p_msg_t *m, MPI_Message *message, MPI_Status *status)
{
    status_of(status, m);
    p2p_unexp_remove(&r->unexpected, &m->m);
    *message = (MPI_Message)(void *)m;
}

#pragma weak MPI_Mprobe = PMPI_Mprobe
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Mprobe");
    core_comm_t *c;
    int err = check_probe(r, source, tag, comm, &c, "MPI_Mprobe");
    if (err)
        return err;
    if (!message)
        return core_error(c, MPI_ERR_ARG, "MPI_Mprobe");
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    take(r, probe_block(r, c, source, tag), message, status);
    return MPI_SUCCESS;
}

#pragma weak MPI_Improbe = PMPI_Improbe
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Improbe");
    core_comm_t *c;
    int err = check_probe(r, source, tag, comm, &c, "MPI_Improbe");
    if (err)
        return err;
    if (!flag || !message)
        return core_error(c, MPI_ERR_ARG, "MPI_Improbe");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    p2p_msg_t *m = probe_once(r, c, source, tag);
    *flag = m != NULL;
    if (m)
        take(r, m, message, status);
    return MPI_SUCCESS;
}

/* Start receiving a matched message into buf; the request completes as a receive. */
static int mrecv_start(p2p_rank_t *r, void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                       p2p_req_t **out, const char *func)
{
    if (!message || *message == MPI_MESSAGE_NULL)
        return core_error(NULL, MPI_ERR_REQUEST, func);
    if (count < 0)
        return core_error(NULL, MPI_ERR_COUNT, func);
    if (!dt_valid(dt))
        return core_error(NULL, MPI_ERR_TYPE, func);
    bool no_proc = *message == MPI_MESSAGE_NO_PROC;
    p2p_req_t *q = p2p_req_prepare(r, P2P_REQ_RECV, P2P_MODE_STANDARD, buf, count, dt,
                                   no_proc ? MPI_PROC_NULL : 0, 0, NULL);
    if (no_proc) {
        p2p_recv_start(q); /* completes at once with the MPI_PROC_NULL status */
    } else {
        q->active = true;
        q->pending = 1;
        p2p_deliver(r, (p2p_msg_t *)(void *)*message, q);
    }
    *message = MPI_MESSAGE_NULL;
    *out = q;
    return MPI_SUCCESS;
}

#pragma weak MPI_Mrecv = PMPI_Mrecv
int PMPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Mrecv");
    p2p_req_t *q;
    int err = mrecv_start(r, buf, count, dt, message, &q, "MPI_Mrecv");
    if (err)
        return err;
    p2p_wait_complete(q);
    MPI_Request h = q;
    err = p2p_req_retire(&h, status);
    return err ? core_error(NULL, err, "MPI_Mrecv") : MPI_SUCCESS;
}

#pragma weak MPI_Imrecv = PMPI_Imrecv
int PMPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Request *request)
{
    P2P_ENTER(r, "MPI_Imrecv");
    if (!request)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Imrecv");
    p2p_req_t *q;
    int err = mrecv_start(r, buf, count, dt, message, &q, "MPI_Imrecv");
    if (err)
        return err;
    *request = q;
    return MPI_SUCCESS;
}
