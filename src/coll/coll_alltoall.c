/* MPI_Alltoall(v), MPI_Ialltoall(v): pairwise exchange.  In step k (1..n-1) a
 * rank sends its block for (me + k) and receives the block of (me - k), so
 * every rank talks to a different partner in each step; WINDOW steps are
 * in flight at a time so that latency overlaps without flooding the
 * network with n messages at once.  MPI_IN_PLACE: the recv buffer is the
 * input too, so it is first copied to scratch space. */
#include "coll/coll_inter.h"
#include "coll/coll_sched.h"

#include <stdlib.h>

#define WINDOW 8

static int pairwise(p2p_rank_t *r, core_comm_t *c, const void *sbuf, const coll_layout_t *sl, void *rbuf,
                    const coll_layout_t *rl, int tag)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    size_t sb = coll_lay_bytes(sl, me), rb = coll_lay_bytes(rl, me);
    if (sb > rb)
        err = MPI_ERR_TRUNCATE;
    if (n == 2) { /* one exchange, our own block copied while it travels */
        int peer = 1 - me;
        coll_xchg_t x;
        coll_xchg_start(&x, r, c, coll_lay_at(sl, sbuf, peer), coll_lay_bytes(sl, peer), peer,
                        coll_lay_at(rl, rbuf, peer), coll_lay_bytes(rl, peer), peer, tag);
        coll_copy(coll_lay_at(rl, rbuf, me), coll_lay_at(sl, sbuf, me), sb < rb ? sb : rb);
        coll_keep_err(&err, coll_xchg_finish(&x));
        return err;
    }
    coll_copy(coll_lay_at(rl, rbuf, me), coll_lay_at(sl, sbuf, me), sb < rb ? sb : rb);
    p2p_req_t *reqs[2 * WINDOW];
    for (int k0 = 1; k0 < n; k0 += WINDOW) {
        int nreq = 0;
        for (int k = k0; k < n && k < k0 + WINDOW; k++) {
            int src = (me - k + n) % n;
            reqs[nreq++] = coll_irecv(r, c, coll_lay_at(rl, rbuf, src), coll_lay_bytes(rl, src), src, tag);
        }
        for (int k = k0; k < n && k < k0 + WINDOW; k++) {
            int dst = (me + k) % n;
            reqs[nreq++] = coll_isend(r, c, coll_lay_at(sl, sbuf, dst), coll_lay_bytes(sl, dst), dst, tag);
        }
        coll_keep_err(&err, coll_waitall(reqs, nreq));
    }
    return err;
}

/* MPI_IN_PLACE: what each rank sends lies in rbuf under the receive
 * layout, so the part of rbuf the layout covers is saved first and sent
 * from the copy. */
static int in_place(p2p_rank_t *r, core_comm_t *c, void *rbuf, const coll_layout_t *rl, int tag)
{
    ptrdiff_t lo = 0, hi = 0, ext = dt_extent(rl->dt); /* elements, from rbuf */
    for (int i = 0; i < c->size; i++) {
        ptrdiff_t first = rl->displs ? rl->displs[i] : (ptrdiff_t)i * (ptrdiff_t)rl->count;
        ptrdiff_t n = (ptrdiff_t)coll_lay_count(rl, i);
        if (n && first < lo)
            lo = first;
        if (n && first + n > hi)
            hi = first + n;
    }
    size_t bytes = (size_t)(hi - lo) * (size_t)ext;
    char *copy = coll_scratch(bytes, rbuf);
    coll_copy(copy, (char *)rbuf + lo * ext, bytes);
    int err = pairwise(r, c, copy - lo * ext, rl, rbuf, rl, tag); /* lo <= 0: inside the copy */
    coll_scratch_free(copy);
    return err;
}

static int alltoall(p2p_rank_t *r, core_comm_t *c, const void *sbuf, const coll_layout_t *sl, void *rbuf,
                    const coll_layout_t *rl, int tag)
{
    return sbuf == MPI_IN_PLACE ? in_place(r, c, rbuf, rl, tag) : pairwise(r, c, sbuf, sl, rbuf, rl, tag);
}

#pragma weak MPI_Alltoall = PMPI_Alltoall
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Alltoall");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcount = recvcount, .rdt = recvtype };
        return coll_inter_return(c, coll_inter_alltoall(r, c, &a, NULL), "MPI_Alltoall");
    }
    if (UTIL_UNLIKELY((sendbuf != MPI_IN_PLACE && coll_nc_type(sendtype)) || coll_nc_type(recvtype)))
        return coll_nc_alltoallv(sendbuf, NULL, sendcount, NULL, sendtype, recvbuf, NULL, recvcount, NULL, recvtype,
                                 comm, c->size);
    int err = sendbuf == MPI_IN_PLACE ? MPI_SUCCESS : coll_check_buf(sendbuf, sendcount, sendtype);
    if (!err)
        err = coll_check_buf(recvbuf, recvcount, recvtype);
    COLL_CHECK(c, err, err, "MPI_Alltoall");
    coll_layout_t sl = { .count = (size_t)sendcount, .dt = sendtype };
    coll_layout_t rl = { .count = (size_t)recvcount, .dt = recvtype };
    err = alltoall(r, c, sendbuf, &sl, recvbuf, &rl, COLL_TAG_ALLTOALL);
    COLL_CHECK(c, err, err, "MPI_Alltoall");
    return MPI_SUCCESS;
}

#pragma weak MPI_Alltoallv = PMPI_Alltoallv
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Alltoallv");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .sdt = sendtype,
                             .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rdt = recvtype };
        return coll_inter_return(c, coll_inter_alltoall(r, c, &a, NULL), "MPI_Alltoallv");
    }
    if (UTIL_UNLIKELY((sendbuf != MPI_IN_PLACE && coll_nc_type(sendtype)) || coll_nc_type(recvtype)))
        return coll_nc_alltoallv(sendbuf, sendcounts, 0, sdispls, sendtype, recvbuf, recvcounts, 0, rdispls,
                                 recvtype, comm, c->size);
    int err = sendbuf == MPI_IN_PLACE ? MPI_SUCCESS
                                      : coll_check_vec(sendbuf, sendcounts, sdispls, c->size, sendtype);
    if (!err)
        err = coll_check_vec(recvbuf, recvcounts, rdispls, c->size, recvtype);
    COLL_CHECK(c, err, err, "MPI_Alltoallv");
    coll_layout_t sl = { .counts = sendcounts, .displs = sdispls, .dt = sendtype };
    coll_layout_t rl = { .counts = recvcounts, .displs = rdispls, .dt = recvtype };
    err = alltoall(r, c, sendbuf, &sl, recvbuf, &rl, COLL_TAG_ALLTOALL);
    COLL_CHECK(c, err, err, "MPI_Alltoallv");
    return MPI_SUCCESS;
}

/* The nonblocking forms: counts == NULL means uniform blocks. */
static int run_alltoall(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    if (UTIL_UNLIKELY(coll_nb_nc(a)))
        return coll_nc_nb_run(r, c, a, tag, run_alltoall, true, true);
    coll_layout_t sl = { .counts = a->scounts, .displs = a->sdispls, .count = (size_t)a->scount, .dt = a->sdt };
    coll_layout_t rl = { .counts = a->rcounts, .displs = a->rdispls, .count = (size_t)a->rcount, .dt = a->rdt };
    return alltoall(r, c, a->sbuf, &sl, a->rbuf, &rl, tag);
}

#pragma weak MPI_Ialltoall = PMPI_Ialltoall
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Ialltoall");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcount = recvcount, .rdt = recvtype };
        int err = request ? coll_inter_alltoall(r, c, &a, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Ialltoall");
    }
    /* the receive buffer's bytes: alike on every rank (the signatures match) */
    size_t rbytes = recvcount > 0 && dt_valid(recvtype) ? (size_t)recvcount * dt_size(recvtype) * (size_t)c->size : 0;
    if (coll_sched_wanted(c, rbytes)) { /* coll_sched.h */
        int err = sendbuf == MPI_IN_PLACE ? MPI_SUCCESS : coll_check_buf_nc(sendbuf, sendcount, sendtype);
        if (!err)
            err = coll_check_buf_nc(recvbuf, recvcount, recvtype);
        if (!err)
            err = coll_sched_ialltoall(r, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, request);
        COLL_CHECK(c, err, err, "MPI_Ialltoall");
        return MPI_SUCCESS;
    }
    int err = coll_nb_start_uniform(r, c, run_alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    request);
    COLL_CHECK(c, err, err, "MPI_Ialltoall");
    return MPI_SUCCESS;
}

#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Ialltoallv");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .sdt = sendtype,
                             .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rdt = recvtype };
        int err = request ? coll_inter_alltoall(r, c, &a, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Ialltoallv");
    }
    int err = sendbuf == MPI_IN_PLACE ? MPI_SUCCESS
                                      : coll_check_vec_nc(sendbuf, sendcounts, sdispls, c->size, sendtype);
    if (!err)
        err = coll_check_vec_nc(recvbuf, recvcounts, rdispls, c->size, recvtype);
    if (!err && coll_sched_ialltoallv(r, c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                      recvtype, request, &err)) { /* coll_sched.h */
        COLL_CHECK(c, err, err, "MPI_Ialltoallv");
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .rbuf = recvbuf,
                         .rcounts = recvcounts, .rdispls = rdispls,
                         .sdt = coll_nb_type(sendbuf != MPI_IN_PLACE, sendtype), .rdt = recvtype };
    if (!err)
        err = coll_nb_start(r, c, run_alltoall, &a, request);
    COLL_CHECK(c, err, err, "MPI_Ialltoallv");
    return MPI_SUCCESS;
}
