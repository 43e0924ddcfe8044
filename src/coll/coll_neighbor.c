/* MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w) and their
 * MPI_Ineighbor_* forms: one transfer per neighbour slot, all in flight at
 * once (neighbourhoods are small and every slot is independent).  A slot
 * whose neighbour is MPI_PROC_NULL sends and receives nothing: its receive
 * block stays untouched.  See coll_neighbor.h for plans and slot tags. */
#include "coll/coll_neighbor.h"

/* Where the blocks of one side (send or receive) lie, in the forms the
 * functions take them: the same block for every slot (allgather's send
 * side), uniform blocks in slot order, counts[] and element displacements
 * (v), or counts[], byte displacements and a type per slot (w). */
typedef enum { SIDE_SAME, SIDE_UNIFORM, SIDE_V, SIDE_W } side_kind_t;

typedef struct side {
    side_kind_t kind;
    const void *buf;
    int count;
    MPI_Datatype dt;
    const int *counts, *displs;
    const MPI_Aint *bdispls;
    const MPI_Datatype *dts;
} side_t;

static coll_xfer_t block_of(const side_t *s, int i)
{
    if (s->kind == SIDE_W)
        return (coll_xfer_t){ .buf = coll_disp(s->buf, s->bdispls[i], 1), .count = s->counts[i], .dt = s->dts[i] };
    if (s->kind == SIDE_V)
        return (coll_xfer_t){ .buf = coll_disp(s->buf, s->displs[i], dt_extent(s->dt)), .count = s->counts[i],
                              .dt = s->dt };
    ptrdiff_t at = s->kind == SIDE_SAME ? 0 : (ptrdiff_t)i * s->count;
    return (coll_xfer_t){ .buf = coll_disp(s->buf, at, dt_extent(s->dt)), .count = s->count, .dt = s->dt };
}

/* The side's arguments for n slots; 0 or an error class.  Only the w forms
 * may pass MPI_BOTTOM (their byte displacements may be addresses). */
static int check_side(const side_t *s, int n)
{
    bool arrays_missing = s->kind == SIDE_V ? !s->counts || !s->displs
                        : s->kind == SIDE_W ? !s->counts || !s->bdispls || !s->dts
                        : false;
    if (n > 0 && arrays_missing)
        return MPI_ERR_ARG;
    if (s->kind != SIDE_W && n > 0 && !dt_valid(s->dt)) /* before block_of asks for its extent */
        return MPI_ERR_TYPE;
    if (s->kind == SIDE_SAME || s->kind == SIDE_UNIFORM) /* one (buf, count, type) for all slots */
        n = n > 0 ? 1 : 0;
    for (int i = 0; i < n; i++) {
        coll_xfer_t x = block_of(s, i);
        int err = coll_check_typed(x.buf, x.count, x.dt);
        if (!err && s->kind != SIDE_W && x.count > 0 && dt_size(x.dt) > 0 && !s->buf)
            err = MPI_ERR_BUFFER;
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

static int neighbor(p2p_rank_t *r, core_comm_t *c, const side_t *snd, const side_t *rcv, MPI_Request *request)
{
    coll_nbrs_t nb;
    int err = coll_nbrs_get(c, &nb);
    if (err)
        return err;
    err = check_side(snd, nb.outdeg);
    if (!err)
        err = check_side(rcv, nb.indeg);
    if (err) {
        coll_nbrs_free(&nb);
        return err;
    }
    coll_plan_t *p = coll_plan_new(nb.outdeg, nb.indeg);
    for (int i = 0; i < nb.outdeg; i++) {
        p->send[i] = block_of(snd, i);
        p->send[i].peer = nb.dst[i];
        p->send[i].tag = coll_nbrs_send_tag(&nb, i);
    }
    for (int i = 0; i < nb.indeg; i++) {
        p->recv[i] = block_of(rcv, i);
        p->recv[i].peer = nb.src[i];
        p->recv[i].tag = coll_nbrs_recv_tag(&nb, i);
    }
    coll_nbrs_free(&nb);
    return coll_plan_exec(r, c, p, COLL_TAG_NEIGHBOR, request);
}

/* Each entry point: enter, run, report.  A nonblocking one (nb) needs
 * somewhere to put its request. */
static int neighbor_call(const char *fn, MPI_Comm comm, const side_t *snd, const side_t *rcv, bool nb,
                         MPI_Request *request)
{
    COLL_ENTER(r, c, comm, fn);
    COLL_CHECK(c, nb && !request, MPI_ERR_REQUEST, fn);
    int err = neighbor(r, c, snd, rcv, nb ? request : NULL);
    COLL_CHECK(c, err, err, fn);
    return MPI_SUCCESS;
}

#define SAME(b, n, t) { .kind = SIDE_SAME, .buf = b, .count = n, .dt = t }
#define UNIFORM(b, n, t) { .kind = SIDE_UNIFORM, .buf = b, .count = n, .dt = t }
#define VEC(b, n, d, t) { .kind = SIDE_V, .buf = b, .counts = n, .displs = d, .dt = t }
#define W(b, n, d, t) { .kind = SIDE_W, .buf = b, .counts = n, .bdispls = d, .dts = t }

#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    side_t snd = SAME(sendbuf, sendcount, sendtype), rcv = UNIFORM(recvbuf, recvcount, recvtype);
    return neighbor_call("MPI_Neighbor_allgather", comm, &snd, &rcv, false, NULL);
}

#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    side_t snd = SAME(sendbuf, sendcount, sendtype), rcv = VEC(recvbuf, recvcounts, displs, recvtype);
    return neighbor_call("MPI_Neighbor_allgatherv", comm, &snd, &rcv, false, NULL);
}

#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm)
{
    side_t snd = UNIFORM(sendbuf, sendcount, sendtype), rcv = UNIFORM(recvbuf, recvcount, recvtype);
    return neighbor_call("MPI_Neighbor_alltoall", comm, &snd, &rcv, false, NULL);
}

#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    side_t snd = VEC(sendbuf, sendcounts, sdispls, sendtype), rcv = VEC(recvbuf, recvcounts, rdispls, recvtype);
    return neighbor_call("MPI_Neighbor_alltoallv", comm, &snd, &rcv, false, NULL);
}

#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    side_t snd = W(sendbuf, sendcounts, sdispls, sendtypes), rcv = W(recvbuf, recvcounts, rdispls, recvtypes);
    return neighbor_call("MPI_Neighbor_alltoallw", comm, &snd, &rcv, false, NULL);
}

#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    side_t snd = SAME(sendbuf, sendcount, sendtype), rcv = UNIFORM(recvbuf, recvcount, recvtype);
    return neighbor_call("MPI_Ineighbor_allgather", comm, &snd, &rcv, true, request);
}

#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request)
{
    side_t snd = SAME(sendbuf, sendcount, sendtype), rcv = VEC(recvbuf, recvcounts, displs, recvtype);
    return neighbor_call("MPI_Ineighbor_allgatherv", comm, &snd, &rcv, true, request);
}

#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    side_t snd = UNIFORM(sendbuf, sendcount, sendtype), rcv = UNIFORM(recvbuf, recvcount, recvtype);
    return neighbor_call("MPI_Ineighbor_alltoall", comm, &snd, &rcv, true, request);
}

#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    side_t snd = VEC(sendbuf, sendcounts, sdispls, sendtype), rcv = VEC(recvbuf, recvcounts, rdispls, recvtype);
    return neighbor_call("MPI_Ineighbor_alltoallv", comm, &snd, &rcv, true, request);
}

#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw
int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request *request)
{
    side_t snd = W(sendbuf, sendcounts, sdispls, sendtypes), rcv = W(recvbuf, recvcounts, rdispls, recvtypes);
    return neighbor_call("MPI_Ineighbor_alltoallw", comm, &snd, &rcv, true, request);
}
