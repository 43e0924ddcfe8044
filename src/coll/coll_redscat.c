/* MPI_(I)reduce_scatter_block, MPI_(I)reduce_scatter.  The input vector is cut
 * into per-rank blocks in rank order; rank i gets the reduction of block i.
 *  - commutative ops: pairwise exchange.  In step k a rank sends its input
 *    block for (me + k) to that rank and folds the block received from
 *    (me - k) into its own, so each block is reduced on its owner only and
 *    each rank sends the vector once;
 *  - non-commutative ops: reduce the whole vector to rank 0 in rank order,
 *    then scatter the blocks. */
#include "coll/coll_inter.h"
#include "coll/coll_sched.h"

#include <stdlib.h>

static int pairwise(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, const coll_layout_t *l,
                    const coll_op_t *op, int tag)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    size_t mine = coll_lay_count(l, me), bytes = coll_lay_bytes(l, me);
    void *acc = coll_scratch(bytes, in), *tmp = coll_scratch(bytes, in);
    coll_copy(acc, coll_lay_at(l, in, me), bytes);
    for (int k = 1; k < n; k++) {
        int dst = (me + k) % n, src = (me - k + n) % n;
        coll_keep_err(&err, coll_sendrecv(r, c, coll_lay_at(l, in, dst), coll_lay_bytes(l, dst), dst, tmp, bytes,
                                          src, tag));
        coll_op_apply(op, tmp, acc, mine);
    }
    coll_copy(out, acc, bytes);
    coll_scratch_free(acc);
    coll_scratch_free(tmp);
    return err;
}

static int via_root(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, const coll_layout_t *l,
                    size_t total, const coll_op_t *op, int tag)
{
    void *full = c->rank == 0 ? coll_scratch(coll_bytes(total, l->dt), in) : NULL;
    int err = coll_reduce(r, c, in, full, total, l->dt, op, 0, tag);
    coll_keep_err(&err, coll_scatter(r, c, full, l, out, coll_lay_bytes(l, c->rank), 0, tag));
    coll_scratch_free(full);
    return err;
}

/* in == MPI_IN_PLACE: the input is in out, and our block goes to its start.
 * counts: each rank's block (MPI_Reduce_scatter), or NULL for blocks of
 * `count` elements (MPI_Reduce_scatter_block).  Returns an error class. */
static int reduce_scatter(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, const int *counts, int count,
                          const coll_op_t *op, int tag)
{
    int n = c->size, err = MPI_SUCCESS;
    coll_layout_t l = { .counts = counts, .count = (size_t)count, .dt = op->dt };
    size_t total = (size_t)count * (size_t)n, *offs = NULL;
    if (counts) { /* offsets in size_t: the total may pass INT_MAX */
        offs = coll_malloc((size_t)n * sizeof *offs);
        total = 0;
        for (int i = 0; i < n; i++) {
            offs[i] = total;
            total += (size_t)counts[i];
        }
        l.offs = offs;
    }
    if (in == MPI_IN_PLACE)
        in = out;
    if (n == 1)
        coll_copy(out, in, coll_bytes(total, l.dt));
    else if (op->commute)
        err = pairwise(r, c, in, out, &l, op, tag);
    else
        err = via_root(r, c, in, out, &l, total, op, tag);
    free(offs);
    return err;
}

static int check_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                       coll_op_t *o)
{
    int err = coll_check_buf(recvbuf, recvcount, datatype);
    if (!err && sendbuf != MPI_IN_PLACE)
        err = coll_check_buf(sendbuf, recvcount, datatype);
    if (!err)
        err = coll_op_resolve(op, datatype, o);
    return err;
}

#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Reduce_scatter_block");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = recvcount };
        return coll_inter_return(c, coll_inter_reduce_scatter(r, c, &a, datatype, op, NULL),
                                 "MPI_Reduce_scatter_block");
    }
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_red.c */
        int nerr = coll_nc_reduce_scatter(r, c, sendbuf, recvbuf, NULL, recvcount, datatype, op, NULL);
        COLL_CHECK(c, nerr, nerr, "MPI_Reduce_scatter_block");
        return MPI_SUCCESS;
    }
    coll_op_t o;
    int err = check_block(sendbuf, recvbuf, recvcount, datatype, op, &o);
    coll_nccl_call_t nc = { COLL_NCCL_REDUCE_SCATTER, sendbuf, recvbuf, (size_t)recvcount, datatype, op, 0 };
    if (!err && !coll_nccl_try(r, c, &nc, &err))
        err = reduce_scatter(r, c, sendbuf, recvbuf, NULL, recvcount, &o, COLL_TAG_REDSCAT);
    COLL_CHECK(c, err, err, "MPI_Reduce_scatter_block");
    return MPI_SUCCESS;
}

static int check_vec(const core_comm_t *c, const void *sendbuf, void *recvbuf, const int recvcounts[],
                     MPI_Datatype datatype, MPI_Op op, coll_op_t *o)
{
    if (!recvcounts)
        return MPI_ERR_ARG;
    size_t total = 0;
    for (int i = 0; i < c->size; i++) {
        if (recvcounts[i] < 0)
            return MPI_ERR_COUNT;
        total += (size_t)recvcounts[i];
    }
    int err = coll_check_buf(recvbuf, recvcounts[c->rank], datatype);
    if (!err && total && (sendbuf == NULL || (sendbuf == MPI_IN_PLACE && recvbuf == NULL)))
        err = MPI_ERR_BUFFER;
    if (!err)
        err = coll_op_resolve(op, datatype, o);
    return err;
}

#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Reduce_scatter");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts };
        return coll_inter_return(c, coll_inter_reduce_scatter(r, c, &a, datatype, op, NULL), "MPI_Reduce_scatter");
    }
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_red.c */
        int nerr = coll_nc_reduce_scatter(r, c, sendbuf, recvbuf, recvcounts, 0, datatype, op, NULL);
        COLL_CHECK(c, nerr, nerr, "MPI_Reduce_scatter");
        return MPI_SUCCESS;
    }
    coll_op_t o;
    int err = check_vec(c, sendbuf, recvbuf, recvcounts, datatype, op, &o);
    if (!err)
        err = reduce_scatter(r, c, sendbuf, recvbuf, recvcounts, 0, &o, COLL_TAG_REDSCAT);
    COLL_CHECK(c, err, err, "MPI_Reduce_scatter");
    return MPI_SUCCESS;
}

static int run_reduce_scatter(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    return reduce_scatter(r, c, a->sbuf, a->rbuf, a->rcounts, a->rcount, &a->op, tag);
}

#pragma weak MPI_Ireduce_scatter_block = PMPI_Ireduce_scatter_block
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Ireduce_scatter_block");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = recvcount };
        int err = request ? coll_inter_reduce_scatter(r, c, &a, datatype, op, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Ireduce_scatter_block");
    }
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_red.c */
        int nerr = coll_nc_reduce_scatter(r, c, sendbuf, recvbuf, NULL, recvcount, datatype, op, request);
        COLL_CHECK(c, nerr, nerr, "MPI_Ireduce_scatter_block");
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcount = recvcount };
    int err = check_block(sendbuf, recvbuf, recvcount, datatype, op, &a.op);
    if (!err && a.op.kernel && coll_sched_wanted(c, (size_t)recvcount * dt_size(datatype) * (size_t)c->size))
        err = coll_sched_ireduce_scatter(r, c, sendbuf, recvbuf, NULL, recvcount, &a.op, request);
    else if (!err)
        err = coll_nb_start(r, c, run_reduce_scatter, &a, request);
    COLL_CHECK(c, err, err, "MPI_Ireduce_scatter_block");
    return MPI_SUCCESS;
}

static size_t total_bytes(const core_comm_t *c, const int counts[], MPI_Datatype dt)
{
    size_t t = 0;
    for (int i = 0; i < c->size; i++)
        t += (size_t)counts[i];
    return t * dt_size(dt);
}

#pragma weak MPI_Ireduce_scatter = PMPI_Ireduce_scatter
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Ireduce_scatter");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts };
        int err = request ? coll_inter_reduce_scatter(r, c, &a, datatype, op, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Ireduce_scatter");
    }
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_red.c */
        int nerr = coll_nc_reduce_scatter(r, c, sendbuf, recvbuf, recvcounts, 0, datatype, op, request);
        COLL_CHECK(c, nerr, nerr, "MPI_Ireduce_scatter");
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts };
    int err = check_vec(c, sendbuf, recvbuf, recvcounts, datatype, op, &a.op);
    /* every member knows every count: the total decides alike */
    if (!err && a.op.kernel && coll_sched_wanted(c, total_bytes(c, recvcounts, datatype)))
        err = coll_sched_ireduce_scatter(r, c, sendbuf, recvbuf, recvcounts, 0, &a.op, request);
    else if (!err)
        err = coll_nb_start(r, c, run_reduce_scatter, &a, request);
    COLL_CHECK(c, err, err, "MPI_Ireduce_scatter");
    return MPI_SUCCESS;
}
