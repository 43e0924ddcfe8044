/* MPI_(I)barrier and MPI_(I)bcast on intercommunicators, and what the
 * other intercommunicator collectives share (coll_inter.h).  Each group
 * works over the intracommunicator of its local group (c->local); the two
 * leaders (local rank 0) meet over the intercommunicator's collective
 * context, where a peer's rank names the remote group.
 *
 * Tags: a collective uses its one tag (the blocking form's COLL_TAG_*, or
 * the nonblocking one's) on both contexts and for each of its phases.  The
 * phases run one after the other on every rank and messages between two
 * ranks do not overtake each other, so a receive of a later phase never
 * meets a message of an earlier one (as for the blocking collectives,
 * coll.h). */
#include "coll/coll_inter.h"
#include "coll/coll_nc.h"

int coll_inter_check_root(const core_comm_t *c, int root)
{
    return root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->size) ? MPI_SUCCESS
                                                                                       : MPI_ERR_ROOT;
}

int coll_inter_run(p2p_rank_t *r, core_comm_t *c, coll_nb_fn *fn, const coll_nb_args_t *a, int blocking_tag,
                   MPI_Request *request)
{
    return request ? coll_nb_start(r, c, fn, a, request) : fn(r, c, a, blocking_tag);
}

/* The receive is posted before the send (coll_sendrecv), so the two
 * leaders need no order between them. */
int coll_inter_leaders_xchg(p2p_rank_t *r, core_comm_t *c, const void *sbuf, size_t sbytes, void *rbuf,
                            size_t rbytes, int tag)
{
    return c->rank == 0 ? coll_sendrecv(r, c, sbuf, sbytes, 0, rbuf, rbytes, 0, tag) : MPI_SUCCESS;
}

void *coll_inter_block(const void *buf, const int *displs, int count, MPI_Datatype dt, int i)
{
    ptrdiff_t at = displs ? (ptrdiff_t)displs[i] : (ptrdiff_t)i * count;
    return coll_disp(buf, at, dt_extent(dt));
}

int coll_inter_check_side(const void *buf, const int *counts, const int *displs, int count, MPI_Datatype dt,
                          int n)
{
    if (buf == MPI_IN_PLACE)
        return MPI_ERR_BUFFER;
    if (!counts)
        return coll_check_typed(buf, count, dt);
    if (n > 0 && !displs)
        return MPI_ERR_ARG;
    if (!dt_valid(dt))
        return MPI_ERR_TYPE;
    for (int i = 0; i < n; i++) {
        int err = coll_check_typed(coll_inter_block(buf, displs, 0, dt, i), counts[i], dt);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

/* Nobody leaves before every member of both groups has entered: a local
 * barrier, the leaders meet, then each leader releases its group. */
static int run_barrier(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    (void)a;
    char token = 0;
    int err = coll_barrier(r, c->local, tag);
    coll_keep_err(&err, coll_inter_leaders_xchg(r, c, NULL, 0, NULL, 0, tag));
    coll_keep_err(&err, coll_bcast(r, c->local, &token, 1, 0, tag));
    return err;
}

int coll_inter_barrier(p2p_rank_t *r, core_comm_t *c, MPI_Request *request)
{
    return coll_inter_run(r, c, run_barrier, &(coll_nb_args_t){ 0 }, COLL_TAG_INTER, request);
}

/* The root sends to the receiving group's leader, which broadcasts in its
 * group.  A leader whose receive failed still broadcasts, so that its
 * group does not wait for ever.  Types with gaps travel packed (device
 * buffers packed by their GPU: coll_nc_pack_buf). */
static int run_bcast(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    if (a->root == MPI_PROC_NULL || a->count == 0)
        return MPI_SUCCESS;
    bool packed = coll_nc_type(a->rdt);
    void *buf = packed ? coll_host_scratch(a->count) : a->rbuf;
    int err;
    if (a->root == MPI_ROOT) {
        if (packed)
            coll_nc_pack_buf(a->rbuf, a->rcount, a->rdt, buf);
        err = coll_send(r, c, buf, a->count, 0, tag);
    } else {
        err = c->rank == 0 ? coll_recv(r, c, buf, a->count, a->root, tag) : MPI_SUCCESS;
        coll_keep_err(&err, coll_bcast(r, c->local, buf, a->count, 0, tag));
        if (packed)
            coll_nc_unpack_buf(buf, a->count, a->rbuf, a->rcount, a->rdt);
    }
    if (packed)
        coll_host_scratch_free(buf);
    return err;
}

int coll_inter_bcast(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, MPI_Request *request)
{
    return coll_inter_run(r, c, run_bcast, a, COLL_TAG_BCAST, request);
}
