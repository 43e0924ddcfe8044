/* MPI_Allgather(v), MPI_Iallgather(v).
 *  - ring: every rank places its block, then in step k sends block (me - k)
 *    to its right neighbour and receives block (me - k - 1) from its left
 *    one, straight into recvbuf: n-1 steps, each rank sends and receives
 *    every other block once, any n and any block sizes;
 *  - recursive doubling (uniform blocks in rank order, n a power of two):
 *    in step k a rank swaps the 2^k blocks it has with rank me ^ 2^k --
 *    the same bytes as the ring in log2(n) steps instead of n-1.
 * Two ranks: one exchange either way.  Our own block goes out from the
 * send buffer and is copied into place while the first step's messages
 * travel. */
#include "coll/coll_inter.h"
#include "coll/coll_sched.h"

/* `own`: our block, still in the send buffer (NULL when in place); it
 * goes out from there in the first step and is copied into place while
 * that step's messages travel. */
static int ring(p2p_rank_t *r, core_comm_t *c, const void *own, void *rbuf, const coll_layout_t *rl, int tag)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    if (n == 1 && own)
        coll_copy(coll_lay_at(rl, rbuf, me), own, coll_lay_bytes(rl, me));
    for (int k = 0; k < n - 1; k++) {
        int sb = (me - k + n) % n, rb = (me - k - 1 + n) % n;
        bool first_own = k == 0 && own;
        coll_xchg_t x;
        coll_xchg_start(&x, r, c, first_own ? own : coll_lay_at(rl, rbuf, sb), coll_lay_bytes(rl, sb), right,
                        coll_lay_at(rl, rbuf, rb), coll_lay_bytes(rl, rb), left, tag);
        if (first_own)
            coll_copy(coll_lay_at(rl, rbuf, me), own, coll_lay_bytes(rl, me));
        coll_keep_err(&err, coll_xchg_finish(&x));
    }
    return err;
}

/* Uniform blocks, n a power of two: recursive doubling (see the top).
 * Before the step with distance `mask` we hold the blocks [lo, lo + mask)
 * of our aligned group, contiguous in rbuf; so does our partner, for its
 * group. */
static int doubling(p2p_rank_t *r, core_comm_t *c, const void *own, void *rbuf, const coll_layout_t *rl, int tag)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    size_t block = coll_lay_bytes(rl, 0);
    for (int mask = 1; mask < n; mask <<= 1) {
        int peer = me ^ mask, lo = me & ~(mask - 1), plo = peer & ~(mask - 1);
        bool first_own = mask == 1 && own;
        coll_xchg_t x;
        coll_xchg_start(&x, r, c, first_own ? own : coll_lay_at(rl, rbuf, lo), block * (size_t)mask, peer,
                        coll_lay_at(rl, rbuf, plo), block * (size_t)mask, peer, tag);
        if (first_own)
            coll_copy(coll_lay_at(rl, rbuf, me), own, block);
        coll_keep_err(&err, coll_xchg_finish(&x));
    }
    return err;
}

/* Places our own block (unless in place) and runs the ring or doubling. */
static int allgather(p2p_rank_t *r, core_comm_t *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, const coll_layout_t *rl, int tag)
{
    int err = MPI_SUCCESS;
    const void *own = NULL;
    if (sendbuf != MPI_IN_PLACE) {
        size_t sbytes = coll_bytes((size_t)sendcount, sendtype), room = coll_lay_bytes(rl, c->rank);
        if (sbytes == room) {
            own = sendbuf; /* the first step sends and places it */
        } else { /* every block travels with the receiver's size */
            coll_copy(coll_lay_at(rl, recvbuf, c->rank), sendbuf, sbytes < room ? sbytes : room);
            err = sbytes > room ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT;
        }
    }
    bool uniform = !rl->counts && !rl->displs && !rl->offs;
    if (uniform && c->size > 2 && !(c->size & (c->size - 1)))
        coll_keep_err(&err, doubling(r, c, own, recvbuf, rl, tag));
    else
        coll_keep_err(&err, ring(r, c, own, recvbuf, rl, tag));
    return err;
}

#pragma weak MPI_Allgather = PMPI_Allgather
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Allgather");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcount = recvcount, .rdt = recvtype };
        return coll_inter_return(c, coll_inter_allgather(r, c, &a, NULL), "MPI_Allgather");
    }
    if (UTIL_UNLIKELY((sendbuf != MPI_IN_PLACE && coll_nc_type(sendtype)) || coll_nc_type(recvtype)))
        return coll_nc_allgatherv(sendbuf, sendcount, sendtype, recvbuf, NULL, recvcount, NULL, recvtype, comm,
                                  c->rank, c->size);
    int err = sendbuf == MPI_IN_PLACE ? MPI_SUCCESS : coll_check_buf(sendbuf, sendcount, sendtype);
    if (!err)
        err = coll_check_buf(recvbuf, recvcount, recvtype);
    COLL_CHECK(c, err, err, "MPI_Allgather");
    coll_layout_t rl = { .count = (size_t)recvcount, .dt = recvtype };
    /* NCCL moves equal blocks only: unequal sizes (an error) take the ring, which reports it */
    size_t rbytes = coll_bytes((size_t)recvcount, recvtype);
    bool equal = sendbuf == MPI_IN_PLACE || coll_bytes((size_t)sendcount, sendtype) == rbytes;
    coll_nccl_call_t nc = { COLL_NCCL_ALLGATHER, sendbuf, recvbuf, rbytes, MPI_BYTE, MPI_OP_NULL, 0 };
    if (!equal || !coll_nccl_try(r, c, &nc, &err))
        err = allgather(r, c, sendbuf, sendcount, sendtype, recvbuf, &rl, COLL_TAG_ALLGATHER);
    COLL_CHECK(c, err, err, "MPI_Allgather");
    return MPI_SUCCESS;
}

#pragma weak MPI_Allgatherv = PMPI_Allgatherv
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Allgatherv");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcounts = recvcounts, .rdispls = displs, .rdt = recvtype };
        return coll_inter_return(c, coll_inter_allgather(r, c, &a, NULL), "MPI_Allgatherv");
    }
    if (UTIL_UNLIKELY((sendbuf != MPI_IN_PLACE && coll_nc_type(sendtype)) || coll_nc_type(recvtype)))
        return coll_nc_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, 0, displs, recvtype, comm,
                                  c->rank, c->size);
    int err = sendbuf == MPI_IN_PLACE ? MPI_SUCCESS : coll_check_buf(sendbuf, sendcount, sendtype);
    if (!err)
        err = coll_check_vec(recvbuf, recvcounts, displs, c->size, recvtype);
    COLL_CHECK(c, err, err, "MPI_Allgatherv");
    coll_layout_t rl = { .counts = recvcounts, .displs = displs, .dt = recvtype };
    err = allgather(r, c, sendbuf, sendcount, sendtype, recvbuf, &rl, COLL_TAG_ALLGATHER);
    COLL_CHECK(c, err, err, "MPI_Allgatherv");
    return MPI_SUCCESS;
}

/* The nonblocking forms: rcounts == NULL means uniform blocks of rcount. */
static int run_allgather(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    if (UTIL_UNLIKELY(coll_nb_nc(a)))
        return coll_nc_nb_run(r, c, a, tag, run_allgather, false, true);
    coll_layout_t rl = { .counts = a->rcounts, .displs = a->rdispls, .count = (size_t)a->rcount, .dt = a->rdt };
    return allgather(r, c, a->sbuf, a->scount, a->sdt, a->rbuf, &rl, tag);
}

#pragma weak MPI_Iallgather = PMPI_Iallgather
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Iallgather");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcount = recvcount, .rdt = recvtype };
        int err = request ? coll_inter_allgather(r, c, &a, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Iallgather");
    }
    int err = sendbuf == MPI_IN_PLACE ? MPI_SUCCESS : coll_check_buf_nc(sendbuf, sendcount, sendtype);
    if (!err)
        err = coll_check_buf_nc(recvbuf, recvcount, recvtype);
    /* what every member has alike: the whole receive buffer */
    if (!err && coll_sched_wanted(c, coll_block_bytes(recvcount, recvtype) * (size_t)c->size)) {
        err = coll_sched_iallgather(r, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, request);
        COLL_CHECK(c, err, err, "MPI_Iallgather");
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .rbuf = recvbuf, .rcount = recvcount,
                         .sdt = coll_nb_type(sendbuf != MPI_IN_PLACE, sendtype), .rdt = recvtype };
    if (!err)
        err = coll_nb_start(r, c, run_allgather, &a, request);
    COLL_CHECK(c, err, err, "MPI_Iallgather");
    return MPI_SUCCESS;
}

#pragma weak MPI_Iallgatherv = PMPI_Iallgatherv
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Iallgatherv");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcounts = recvcounts, .rdispls = displs, .rdt = recvtype };
        int err = request ? coll_inter_allgather(r, c, &a, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Iallgatherv");
    }
    int err = sendbuf == MPI_IN_PLACE ? MPI_SUCCESS : coll_check_buf_nc(sendbuf, sendcount, sendtype);
    if (!err)
        err = coll_check_vec_nc(recvbuf, recvcounts, displs, c->size, recvtype);
    /* what every member has alike: the whole receive buffer (all know every count) */
    size_t rall = 0;
    for (int i = 0; !err && i < c->size; i++)
        rall += coll_block_bytes(recvcounts[i], recvtype);
    if (!err && coll_sched_wanted(c, rall)) {
        err = coll_sched_iallgatherv(r, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                     request);
        COLL_CHECK(c, err, err, "MPI_Iallgatherv");
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .rbuf = recvbuf, .rcounts = recvcounts,
                         .rdispls = displs, .sdt = coll_nb_type(sendbuf != MPI_IN_PLACE, sendtype),
                         .rdt = recvtype };
    if (!err)
        err = coll_nb_start(r, c, run_allgather, &a, request);
    COLL_CHECK(c, err, err, "MPI_Iallgatherv");
    return MPI_SUCCESS;
}
