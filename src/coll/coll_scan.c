/* MPI_(I)scan, MPI_(I)exscan: recursive doubling.  In the round with bit `mask`
 * a rank swaps with me ^ mask the reduction of the aligned group of 2^k
 * ranks it belongs to ("partial"); what comes from below (a lower rank)
 * enters both the partial and the rank's own prefix, from the left, so the
 * prefix is always the reduction of ranks 0..me in rank order and
 * non-commutative ops work.  log2(n) rounds for any n. */
#include "coll/coll_nb.h"

#include <stdlib.h>

/* inclusive: out = in_0 op ... op in_me; otherwise out = in_0 op ... op
 * in_(me-1), left untouched on rank 0. */
static int scan(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                const coll_op_t *op, bool inclusive, int tag)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    size_t bytes = coll_bytes(count, dt);
    if (bytes == 0)
        return MPI_SUCCESS;
    void *partial = coll_scratch(bytes, in), *tmp = coll_scratch(bytes, in);
    void *const bufs[2] = { partial, tmp };
    coll_copy(partial, in, bytes);
    if (inclusive)
        coll_copy(out, in, bytes);
    bool have_prefix = inclusive; /* exclusive: out holds nothing yet */
    for (int mask = 1; mask < n; mask <<= 1) {
        int peer = me ^ mask;
        if (peer >= n)
            continue;
        coll_keep_err(&err, coll_sendrecv(r, c, partial, bytes, peer, tmp, bytes, peer, tag));
        if (peer < me) {
            if (have_prefix)
                coll_op_apply(op, tmp, out, count);
            else
                coll_copy(out, tmp, bytes);
            have_prefix = true;
        }
        coll_op_combine(op, &partial, &tmp, peer < me, count);
    }
    coll_scratch_free(bufs[0]);
    coll_scratch_free(bufs[1]);
    return err;
}

/* Checks the arguments and resolves the op; *in: the input buffer. */
static int check(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op_handle,
                 const void **in, coll_op_t *op)
{
    *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int err = coll_check_buf(*in, count, datatype);
    if (!err)
        err = coll_check_buf(recvbuf, count, datatype);
    if (!err)
        err = coll_op_resolve(op_handle, datatype, op);
    return err;
}

static int scan_entry(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op_handle,
                      MPI_Comm comm, bool inclusive, const char *fn)
{
    COLL_ENTER(r, c, comm, fn);
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_red.c */
        int nerr = coll_nc_scan(r, c, !inclusive, sendbuf, recvbuf, count, datatype, op_handle, NULL);
        COLL_CHECK(c, nerr, nerr, fn);
        return MPI_SUCCESS;
    }
    const void *in;
    coll_op_t op;
    int err = check(sendbuf, recvbuf, count, datatype, op_handle, &in, &op);
    COLL_CHECK(c, err, err, fn);
    err = scan(r, c, in, recvbuf, (size_t)count, datatype, &op, inclusive,
               inclusive ? COLL_TAG_SCAN : COLL_TAG_EXSCAN);
    COLL_CHECK(c, err, err, fn);
    return MPI_SUCCESS;
}

#pragma weak MPI_Scan = PMPI_Scan
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return scan_entry(sendbuf, recvbuf, count, datatype, op, comm, true, "MPI_Scan");
}

#pragma weak MPI_Exscan = PMPI_Exscan
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return scan_entry(sendbuf, recvbuf, count, datatype, op, comm, false, "MPI_Exscan");
}

static int run_scan(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    return scan(r, c, a->sbuf, a->rbuf, a->count, a->op.dt, &a->op, true, tag);
}

static int run_exscan(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    return scan(r, c, a->sbuf, a->rbuf, a->count, a->op.dt, &a->op, false, tag);
}

static int iscan_entry(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op_handle,
                       MPI_Comm comm, MPI_Request *request, bool inclusive, const char *fn)
{
    COLL_ENTER(r, c, comm, fn);
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_red.c */
        int nerr = coll_nc_scan(r, c, !inclusive, sendbuf, recvbuf, count, datatype, op_handle, request);
        COLL_CHECK(c, nerr, nerr, fn);
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .rbuf = recvbuf, .count = (size_t)count };
    int err = check(sendbuf, recvbuf, count, datatype, op_handle, &a.sbuf, &a.op);
    if (!err)
        err = coll_nb_start(r, c, inclusive ? run_scan : run_exscan, &a, request);
    COLL_CHECK(c, err, err, fn);
    return MPI_SUCCESS;
}

#pragma weak MPI_Iscan = PMPI_Iscan
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request *request)
{
    return iscan_entry(sendbuf, recvbuf, count, datatype, op, comm, request, true, "MPI_Iscan");
}

#pragma weak MPI_Iexscan = PMPI_Iexscan
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request *request)
{
    return iscan_entry(sendbuf, recvbuf, count, datatype, op, comm, request, false, "MPI_Iexscan");
}
