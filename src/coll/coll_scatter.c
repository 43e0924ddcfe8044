/* MPI_Scatter(v), MPI_Iscatter(v): linear.  The root starts one send per rank
 * from that rank's block of sendbuf and copies its own block; the others
 * receive once. */
#include "coll/coll_inter.h"
#include "coll/coll_sched.h"

#include <stdlib.h>

int coll_scatter(p2p_rank_t *r, core_comm_t *c, const void *sbuf, const coll_layout_t *sl, void *rbuf, size_t rbytes,
                 int root, int tag)
{
    int n = c->size, err = MPI_SUCCESS;
    if (c->rank != root)
        return coll_recv(r, c, rbuf, rbytes, root, tag);
    p2p_req_t **reqs = coll_malloc((size_t)n * sizeof *reqs);
    for (int i = 0; i < n; i++)
        reqs[i] = i == root ? NULL : coll_isend(r, c, coll_lay_at(sl, sbuf, i), coll_lay_bytes(sl, i), i, tag);
    if (rbuf) { /* our own block: a local copy, which must fit like a message */
        size_t mine = coll_lay_bytes(sl, root);
        coll_copy(rbuf, coll_lay_at(sl, sbuf, root), mine < rbytes ? mine : rbytes);
        if (mine > rbytes)
            err = MPI_ERR_TRUNCATE;
    }
    coll_keep_err(&err, coll_waitall(reqs, n));
    free(reqs);
    return err;
}

/* Checks shared by both forms; the root's send side is checked by the caller. */
static int check_recv(const core_comm_t *c, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root)
{
    if (root < 0 || root >= c->size)
        return MPI_ERR_ROOT;
    if (recvbuf == MPI_IN_PLACE)
        return c->rank == root ? MPI_SUCCESS : MPI_ERR_BUFFER;
    return coll_check_buf_nc(recvbuf, recvcount, recvtype); /* the blocking forms took gaps before */
}

#pragma weak MPI_Scatter = PMPI_Scatter
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Scatter");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcount = recvcount, .rdt = recvtype, .root = root };
        return coll_inter_return(c, coll_inter_scatter(r, c, &a, NULL), "MPI_Scatter");
    }
    if (UTIL_UNLIKELY((c->rank == root && coll_nc_type(sendtype)) ||
                      (recvbuf != MPI_IN_PLACE && coll_nc_type(recvtype))))
        return coll_nc_scatterv(sendbuf, NULL, sendcount, NULL, sendtype, recvbuf, recvcount, recvtype, root, comm,
                                c->rank, c->size);
    int err = check_recv(c, recvbuf, recvcount, recvtype, root);
    if (!err && c->rank == root)
        err = coll_check_buf(sendbuf, sendcount, sendtype);
    COLL_CHECK(c, err, err, "MPI_Scatter");
    coll_layout_t sl = { .count = (size_t)sendcount, .dt = sendtype };
    bool in_place = recvbuf == MPI_IN_PLACE;
    err = coll_scatter(r, c, sendbuf, &sl, in_place ? NULL : recvbuf,
                       in_place ? 0 : coll_bytes((size_t)recvcount, recvtype), root, COLL_TAG_SCATTER);
    COLL_CHECK(c, err, err, "MPI_Scatter");
    return MPI_SUCCESS;
}

#pragma weak MPI_Scatterv = PMPI_Scatterv
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Scatterv");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs, .sdt = sendtype,
                             .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype, .root = root };
        return coll_inter_return(c, coll_inter_scatter(r, c, &a, NULL), "MPI_Scatterv");
    }
    if (UTIL_UNLIKELY((c->rank == root && coll_nc_type(sendtype)) ||
                      (recvbuf != MPI_IN_PLACE && coll_nc_type(recvtype))))
        return coll_nc_scatterv(sendbuf, sendcounts, 0, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                                c->rank, c->size);
    int err = check_recv(c, recvbuf, recvcount, recvtype, root);
    if (!err && c->rank == root)
        err = coll_check_vec(sendbuf, sendcounts, displs, c->size, sendtype);
    COLL_CHECK(c, err, err, "MPI_Scatterv");
    coll_layout_t sl = { .counts = sendcounts, .displs = displs, .dt = sendtype };
    bool in_place = recvbuf == MPI_IN_PLACE;
    err = coll_scatter(r, c, sendbuf, &sl, in_place ? NULL : recvbuf,
                       in_place ? 0 : coll_bytes((size_t)recvcount, recvtype), root, COLL_TAG_SCATTER);
    COLL_CHECK(c, err, err, "MPI_Scatterv");
    return MPI_SUCCESS;
}

/* The nonblocking forms: scounts == NULL means uniform blocks of scount. */
static int run_scatter(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    if (UTIL_UNLIKELY(coll_nb_nc(a)))
        return coll_nc_nb_run(r, c, a, tag, run_scatter, true, false);
    coll_layout_t sl = { .counts = a->scounts, .displs = a->sdispls, .count = (size_t)a->scount, .dt = a->sdt };
    bool in_place = a->rbuf == MPI_IN_PLACE;
    return coll_scatter(r, c, a->sbuf, &sl, in_place ? NULL : a->rbuf,
                        in_place ? 0 : coll_bytes((size_t)a->rcount, a->rdt), a->root, tag);
}

#pragma weak MPI_Iscatter = PMPI_Iscatter
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Iscatter");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcount = recvcount, .rdt = recvtype, .root = root };
        int err = request ? coll_inter_scatter(r, c, &a, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Iscatter");
    }
    int err = check_recv(c, recvbuf, recvcount, recvtype, root);
    if (!err && c->rank == root)
        err = coll_check_buf_nc(sendbuf, sendcount, sendtype);
    /* what every member has alike: the root's whole send buffer */
    if (!err && coll_sched_wanted(c, c->rank == root ? coll_block_bytes(sendcount, sendtype) * (size_t)c->size
                                                     : coll_block_bytes(recvcount, recvtype) * (size_t)c->size)) {
        err = coll_sched_iscatter(r, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, request);
        COLL_CHECK(c, err, err, "MPI_Iscatter");
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .rbuf = recvbuf, .rcount = recvcount,
                         .sdt = coll_nb_type(c->rank == root, sendtype),
                         .rdt = coll_nb_type(recvbuf != MPI_IN_PLACE, recvtype), .root = root };
    if (!err)
        err = coll_nb_start(r, c, run_scatter, &a, request);
    COLL_CHECK(c, err, err, "MPI_Iscatter");
    return MPI_SUCCESS;
}

#pragma weak MPI_Iscatterv = PMPI_Iscatterv
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Iscatterv");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs, .sdt = sendtype,
                             .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype, .root = root };
        int err = request ? coll_inter_scatter(r, c, &a, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Iscatterv");
    }
    int err = check_recv(c, recvbuf, recvcount, recvtype, root);
    if (!err && c->rank == root)
        err = coll_check_vec_nc(sendbuf, sendcounts, displs, c->size, sendtype);
    /* block by block: a member knows only its own (coll_sched.h) */
    if (!err && coll_sched_iscatterv(r, c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                                     request, &err)) {
        COLL_CHECK(c, err, err, "MPI_Iscatterv");
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs, .rbuf = recvbuf,
                         .rcount = recvcount, .sdt = coll_nb_type(c->rank == root, sendtype),
                         .rdt = coll_nb_type(recvbuf != MPI_IN_PLACE, recvtype), .root = root };
    if (!err)
        err = coll_nb_start(r, c, run_scatter, &a, request);
    COLL_CHECK(c, err, err, "MPI_Iscatterv");
    return MPI_SUCCESS;
}
