/* MPI_Reduce, MPI_Ireduce: binomial tree.  A rank with relative number v gathers the
 * partial results of v+1, v+2, v+4, ... (while its low bits are clear) and
 * sends its own to v - lowest set bit.  A rank's partial result covers a
 * contiguous range of relative ranks [v, v + 2^k), combined lower range on
 * the left, so a commutative op runs over ranks numbered from the root and
 * a non-commutative one over ranks numbered from 0 (the tree is then rooted
 * at rank 0, which forwards the result to the root). */
#include "coll/coll_nb.h"

#include <stdlib.h>

int coll_reduce(p2p_rank_t *r, comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                const coll_op_t *op, int root, int tag)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    size_t bytes = coll_bytes(count, dt);
    if (n == 1 || bytes == 0) {
        if (me == root)
            coll_copy(out, in, bytes);
        return MPI_SUCCESS;
    }
    int base = op->commute ? root : 0; /* the tree's root */
    int v = (me - base + n) % n;
    const void *mine = in;             /* our partial result so far */
    void *acc = NULL, *tmp = NULL, *bufs[2] = { NULL, NULL };
    for (int mask = 1; mask < n; mask <<= 1) {
        if (v & mask) {
            coll_keep_err(&err, coll_send(r, c, mine, bytes, (v - mask + base) % n, tag));
            break;
        }
        if (v + mask < n) {
            if (!acc) { /* the first child: from now on we need scratch space */
                acc = bufs[0] = coll_malloc(bytes);
                tmp = bufs[1] = coll_malloc(bytes);
                coll_copy(acc, in, bytes);
            }
            coll_keep_err(&err, coll_recv(r, c, tmp, bytes, (v + mask + base) % n, tag));
            coll_op_combine(op, &acc, &tmp, false, count);
            mine = acc;
        }
    }
    if (v == 0 && base == root)
        coll_copy(out, mine, bytes);
    else if (v == 0) /* non-commutative op, root != 0: forward the result */
        coll_keep_err(&err, coll_send(r, c, mine, bytes, root, tag));
    else if (me == root)
        coll_keep_err(&err, coll_recv(r, c, out, bytes, base, tag));
    free(bufs[0]);
    free(bufs[1]);
    return err;
}

/* Checks the arguments and resolves the op; *in: the input buffer. */
static int check(const comm_t *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, const void **in, coll_op_t *o)
{
    if (root < 0 || root >= c->size)
        return MPI_ERR_ROOT;
    bool am_root = c->rank == root;
    *in = am_root && sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int err = coll_check_buf(*in, count, datatype);
    if (!err && am_root)
        err = coll_check_buf(recvbuf, count, datatype);
    if (!err)
        err = coll_op_resolve(op, datatype, o);
    return err;
}

#pragma weak MPI_Reduce = PMPI_Reduce
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm)
{
    COLL_ENTER(r, c, comm, "MPI_Reduce");
    const void *in;
    coll_op_t o;
    int err = check(c, sendbuf, recvbuf, count, datatype, op, root, &in, &o);
    COLL_CHECK(c, err, err, "MPI_Reduce");
    err = coll_reduce(r, c, in, recvbuf, (size_t)count, datatype, &o, root, COLL_TAG_REDUCE);
    COLL_CHECK(c, err, err, "MPI_Reduce");
    return MPI_SUCCESS;
}

static int run_reduce(p2p_rank_t *r, comm_t *c, const coll_nb_args_t *a, int tag)
{
    return coll_reduce(r, c, a->sbuf, a->rbuf, a->count, a->op.dt, &a->op, a->root, tag);
}

#pragma weak MPI_Ireduce = PMPI_Ireduce
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER(r, c, comm, "MPI_Ireduce");
    coll_nb_args_t a = { .rbuf = recvbuf, .count = (size_t)count, .root = root };
    int err = check(c, sendbuf, recvbuf, count, datatype, op, root, &a.sbuf, &a.op);
    if (!err)
        err = coll_nb_start(r, c, run_reduce, &a, request);
    COLL_CHECK(c, err, err, "MPI_Ireduce");
    return MPI_SUCCESS;
}
