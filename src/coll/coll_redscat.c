/* MPI_Reduce_scatter_block, MPI_Reduce_scatter.  The input vector is cut
 * into per-rank blocks in rank order; rank i gets the reduction of block i.
 *  - commutative ops: pairwise exchange.  In step k a rank sends its input
 *    block for (me + k) to that rank and folds the block received from
 *    (me - k) into its own, so each block is reduced on its owner only and
 *    each rank sends the vector once;
 *  - non-commutative ops: reduce the whole vector to rank 0 in rank order,
 *    then scatter the blocks. */
#include "coll/coll.h"
#include "coll/coll_op.h"

#include <stdlib.h>

static int pairwise(p2p_rank_t *r, comm_t *c, const void *in, void *out, const coll_layout_t *l,
                    const coll_op_t *op)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    size_t mine = coll_lay_count(l, me), bytes = coll_lay_bytes(l, me);
    void *acc = coll_malloc(bytes), *tmp = coll_malloc(bytes);
    coll_copy(acc, coll_lay_at(l, in, me), bytes);
    for (int k = 1; k < n; k++) {
        int dst = (me + k) % n, src = (me - k + n) % n;
        coll_keep_err(&err, coll_sendrecv(r, c, coll_lay_at(l, in, dst), coll_lay_bytes(l, dst), dst, tmp, bytes,
                                          src, COLL_TAG_REDSCAT));
        coll_op_apply(op, tmp, acc, mine);
    }
    coll_copy(out, acc, bytes);
    free(acc);
    free(tmp);
    return err;
}

static int via_root(p2p_rank_t *r, comm_t *c, const void *in, void *out, const coll_layout_t *l,
                    size_t total, const coll_op_t *op)
{
    void *full = c->rank == 0 ? coll_malloc(coll_bytes(total, l->dt)) : NULL;
    int err = coll_reduce(r, c, in, full, total, l->dt, op, 0, COLL_TAG_REDSCAT);
    coll_keep_err(&err, coll_scatter(r, c, full, l, out, coll_lay_bytes(l, c->rank), 0, COLL_TAG_REDSCAT));
    free(full);
    return err;
}

/* in == MPI_IN_PLACE: the input is in out, and our block goes to its start. */
static int reduce_scatter(p2p_rank_t *r, comm_t *c, const void *in, void *out, const coll_layout_t *l,
                          size_t total, MPI_Op op_handle, const char *fn)
{
    coll_op_t op;
    int err = coll_op_resolve(op_handle, l->dt, &op);
    COLL_CHECK(c, err, err, fn);
    if (in == MPI_IN_PLACE)
        in = out;
    if (c->size == 1)
        coll_copy(out, in, coll_bytes(total, l->dt));
    else if (op.commute)
        err = pairwise(r, c, in, out, l, &op);
    else
        err = via_root(r, c, in, out, l, total, &op);
    COLL_CHECK(c, err, err, fn);
    return MPI_SUCCESS;
}

#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm)
{
    COLL_ENTER(r, c, comm, "MPI_Reduce_scatter_block");
    size_t total = (size_t)recvcount * (size_t)c->size;
    int err = coll_check_buf(recvbuf, recvcount, datatype);
    if (!err && sendbuf != MPI_IN_PLACE)
        err = coll_check_buf(sendbuf, recvcount, datatype);
    COLL_CHECK(c, err, err, "MPI_Reduce_scatter_block");
    coll_layout_t l = { .count = (size_t)recvcount, .dt = datatype };
    return reduce_scatter(r, c, sendbuf, recvbuf, &l, total, op, "MPI_Reduce_scatter_block");
}

#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm)
{
    COLL_ENTER(r, c, comm, "MPI_Reduce_scatter");
    int n = c->size;
    COLL_CHECK(c, !recvcounts, MPI_ERR_ARG, "MPI_Reduce_scatter");
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        COLL_CHECK(c, recvcounts[i] < 0, MPI_ERR_COUNT, "MPI_Reduce_scatter");
        total += (size_t)recvcounts[i];
    }
    int err = coll_check_buf(recvbuf, recvcounts[c->rank], datatype);
    if (!err && total && (sendbuf == NULL || (sendbuf == MPI_IN_PLACE && recvbuf == NULL)))
        err = MPI_ERR_BUFFER;
    COLL_CHECK(c, err, err, "MPI_Reduce_scatter");
    size_t *offs = coll_malloc((size_t)n * sizeof *offs);
    for (size_t i = 0, at = 0; i < (size_t)n; at += (size_t)recvcounts[i], i++)
        offs[i] = at;
    coll_layout_t l = { .counts = recvcounts, .offs = offs, .dt = datatype };
    err = reduce_scatter(r, c, sendbuf, recvbuf, &l, total, op, "MPI_Reduce_scatter");
    free(offs);
    return err;
}
