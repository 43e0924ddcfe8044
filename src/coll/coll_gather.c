/* MPI_Gather(v), MPI_Igather(v): linear.  The root posts one receive per rank
 * straight into its block of recvbuf and copies its own block; the others
 * send once.  (A binomial tree would cut the root's message count for
 * small blocks; correctness first.) */
#include "coll/coll_inter.h"
#include "coll/coll_sched.h"

#include <stdlib.h>

int coll_gather(p2p_rank_t *r, core_comm_t *c, const void *sbuf, size_t sbytes, void *rbuf, const coll_layout_t *rl,
                int root, int tag)
{
    int n = c->size, err = MPI_SUCCESS;
    if (c->rank != root)
        return coll_send(r, c, sbuf, sbytes, root, tag);
    if (sbuf) { /* our own block: a local copy, which must fit like a message */
        size_t room = coll_lay_bytes(rl, root);
        coll_copy(coll_lay_at(rl, rbuf, root), sbuf, sbytes < room ? sbytes : room);
        if (sbytes > room)
            err = MPI_ERR_TRUNCATE;
    }
    p2p_req_t **reqs = coll_malloc((size_t)n * sizeof *reqs);
    for (int i = 0; i < n; i++)
        reqs[i] = i == root ? NULL : coll_irecv(r, c, coll_lay_at(rl, rbuf, i), coll_lay_bytes(rl, i), i, tag);
    coll_keep_err(&err, coll_waitall(reqs, n));
    free(reqs);
    return err;
}

/* Checks shared by both forms; the root's receive side is checked by the caller. */
static int check_send(const core_comm_t *c, const void *sendbuf, int sendcount, MPI_Datatype sendtype, int root)
{
    if (root < 0 || root >= c->size)
        return MPI_ERR_ROOT;
    if (sendbuf == MPI_IN_PLACE)
        return c->rank == root ? MPI_SUCCESS : MPI_ERR_BUFFER;
    return coll_check_buf_nc(sendbuf, sendcount, sendtype); /* the blocking forms took gaps before */
}

#pragma weak MPI_Gather = PMPI_Gather
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Gather");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcount = recvcount, .rdt = recvtype, .root = root };
        return coll_inter_return(c, coll_inter_gather(r, c, &a, NULL), "MPI_Gather");
    }
    if (UTIL_UNLIKELY((sendbuf != MPI_IN_PLACE && coll_nc_type(sendtype)) ||
                      (c->rank == root && coll_nc_type(recvtype))))
        return coll_nc_gatherv(sendbuf, sendcount, sendtype, recvbuf, NULL, recvcount, NULL, recvtype, root, comm,
                               c->rank, c->size);
    int err = check_send(c, sendbuf, sendcount, sendtype, root);
    if (!err && c->rank == root)
        err = coll_check_buf(recvbuf, recvcount, recvtype);
    COLL_CHECK(c, err, err, "MPI_Gather");
    coll_layout_t rl = { .count = (size_t)recvcount, .dt = recvtype };
    bool in_place = sendbuf == MPI_IN_PLACE;
    err = coll_gather(r, c, in_place ? NULL : sendbuf, in_place ? 0 : coll_bytes((size_t)sendcount, sendtype),
                      recvbuf, &rl, root, COLL_TAG_GATHER);
    COLL_CHECK(c, err, err, "MPI_Gather");
    return MPI_SUCCESS;
}

#pragma weak MPI_Gatherv = PMPI_Gatherv
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Gatherv");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcounts = recvcounts, .rdispls = displs, .rdt = recvtype, .root = root };
        return coll_inter_return(c, coll_inter_gather(r, c, &a, NULL), "MPI_Gatherv");
    }
    if (UTIL_UNLIKELY((sendbuf != MPI_IN_PLACE && coll_nc_type(sendtype)) ||
                      (c->rank == root && coll_nc_type(recvtype))))
        return coll_nc_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, 0, displs, recvtype, root, comm,
                               c->rank, c->size);
    int err = check_send(c, sendbuf, sendcount, sendtype, root);
    if (!err && c->rank == root)
        err = coll_check_vec(recvbuf, recvcounts, displs, c->size, recvtype);
    COLL_CHECK(c, err, err, "MPI_Gatherv");
    coll_layout_t rl = { .counts = recvcounts, .displs = displs, .dt = recvtype };
    bool in_place = sendbuf == MPI_IN_PLACE;
    err = coll_gather(r, c, in_place ? NULL : sendbuf, in_place ? 0 : coll_bytes((size_t)sendcount, sendtype),
                      recvbuf, &rl, root, COLL_TAG_GATHER);
    COLL_CHECK(c, err, err, "MPI_Gatherv");
    return MPI_SUCCESS;
}

/* The nonblocking forms: rcounts == NULL means uniform blocks of rcount. */
static int run_gather(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    if (UTIL_UNLIKELY(coll_nb_nc(a)))
        return coll_nc_nb_run(r, c, a, tag, run_gather, false, true);
    coll_layout_t rl = { .counts = a->rcounts, .displs = a->rdispls, .count = (size_t)a->rcount, .dt = a->rdt };
    bool in_place = a->sbuf == MPI_IN_PLACE;
    return coll_gather(r, c, in_place ? NULL : a->sbuf, in_place ? 0 : coll_bytes((size_t)a->scount, a->sdt),
                       a->rbuf, &rl, a->root, tag);
}

#pragma weak MPI_Igather = PMPI_Igather
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Igather");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcount = recvcount, .rdt = recvtype, .root = root };
        int err = request ? coll_inter_gather(r, c, &a, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Igather");
    }
    int err = check_send(c, sendbuf, sendcount, sendtype, root);
    if (!err && c->rank == root)
        err = coll_check_buf_nc(recvbuf, recvcount, recvtype);
    /* what every member has alike: the root's whole receive buffer */
    if (!err && coll_sched_wanted(c, c->rank == root ? coll_block_bytes(recvcount, recvtype) * (size_t)c->size
                                                     : coll_block_bytes(sendcount, sendtype) * (size_t)c->size)) {
        err = coll_sched_igather(r, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, request);
        COLL_CHECK(c, err, err, "MPI_Igather");
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .rbuf = recvbuf, .rcount = recvcount,
                         .sdt = coll_nb_type(sendbuf != MPI_IN_PLACE, sendtype),
                         .rdt = coll_nb_type(c->rank == root, recvtype), .root = root };
    if (!err)
        err = coll_nb_start(r, c, run_gather, &a, request);
    COLL_CHECK(c, err, err, "MPI_Igather");
    return MPI_SUCCESS;
}

#pragma weak MPI_Igatherv = PMPI_Igatherv
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Igatherv");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf,
                             .rcounts = recvcounts, .rdispls = displs, .rdt = recvtype, .root = root };
        int err = request ? coll_inter_gather(r, c, &a, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Igatherv");
    }
    int err = check_send(c, sendbuf, sendcount, sendtype, root);
    if (!err && c->rank == root)
        err = coll_check_vec_nc(recvbuf, recvcounts, displs, c->size, recvtype);
    /* block by block: a member knows only its own (coll_sched.h) */
    if (!err && coll_sched_igatherv(r, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                                    request, &err)) {
        COLL_CHECK(c, err, err, "MPI_Igatherv");
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .rbuf = recvbuf, .rcounts = recvcounts,
                         .rdispls = displs, .sdt = coll_nb_type(sendbuf != MPI_IN_PLACE, sendtype),
                         .rdt = coll_nb_type(c->rank == root, recvtype), .root = root };
    if (!err)
        err = coll_nb_start(r, c, run_gather, &a, request);
    COLL_CHECK(c, err, err, "MPI_Igatherv");
    return MPI_SUCCESS;
}
