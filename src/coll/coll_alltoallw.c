/* MPI_Alltoallw, MPI_Ialltoallw: the pairwise exchange of coll_alltoall.c
 * (step k sends to me + k and receives from me - k, WINDOW steps in
 * flight), with a count, a byte displacement and a datatype per peer.  The
 * transfers carry the user's datatypes (coll_neighbor.h), so derived types
 * are packed and unpacked by the point-to-point layer and the block for
 * oneself is a message to oneself like any other. */
#include "coll/coll_inter.h"

#define WINDOW 8

static bool arrays_ok(const int *counts, const int *displs, const MPI_Datatype *dts, int n)
{
    return n == 0 || (counts && displs && dts);
}

/* Every block of one side; 0 or an error class.  MPI_BOTTOM is allowed:
 * byte displacements may be absolute addresses. */
static int check_side(const void *buf, const int *counts, const int *displs, const MPI_Datatype *dts, int n)
{
    if (!arrays_ok(counts, displs, dts, n))
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++) {
        int err = coll_check_typed(coll_disp(buf, displs[i], 1), counts[i], dts[i]);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

/* Bytes [lo, hi) from the block's address that (count, t) touches. */
static void block_span(int count, MPI_Datatype t, ptrdiff_t *lo, ptrdiff_t *hi)
{
    const dt_type_t *d = dt_derived(t);
    ptrdiff_t tlb = d ? d->true_lb : 0, tub = d ? d->true_ub : (ptrdiff_t)dt_size(t);
    ptrdiff_t last = (ptrdiff_t)(count - 1) * dt_extent(t); /* extents may be negative */
    *lo = tlb + (last < 0 ? last : 0);
    *hi = tub + (last > 0 ? last : 0);
}

/* MPI_IN_PLACE: what goes to each peer lies in recvbuf under the receive
 * layout, which the receives overwrite; the part of recvbuf that layout
 * touches is copied first (to scratch of recvbuf's memory kind) and the
 * sends read the copy.  Sets p->scratch. */
static void in_place_sends(coll_plan_t *p, const char *rbuf, const int *counts, const int *displs,
                           const MPI_Datatype *dts, int n)
{
    ptrdiff_t lo = 0, hi = 0;
    bool any = false;
    for (int i = 0; i < n; i++) {
        if (counts[i] == 0 || dt_size(dts[i]) == 0)
            continue;
        ptrdiff_t blo, bhi;
        block_span(counts[i], dts[i], &blo, &bhi);
        blo += displs[i], bhi += displs[i];
        lo = any && lo < blo ? lo : blo;
        hi = any && hi > bhi ? hi : bhi;
        any = true;
    }
    char *copy = p->scratch = coll_scratch((size_t)(hi - lo), rbuf + lo);
    coll_copy(copy, rbuf + lo, (size_t)(hi - lo));
    for (int k = 0; k < n; k++) {
        coll_xfer_t *x = &p->send[k];
        int to = x->peer;
        *x = (coll_xfer_t){ .buf = copy + (displs[to] - lo), .count = counts[to], .dt = dts[to], .peer = to };
    }
}

static int alltoallw(p2p_rank_t *r, core_comm_t *c, const void *sendbuf, const int *scounts, const int *sdispls,
                     const MPI_Datatype *sdts, void *recvbuf, const int *rcounts, const int *rdispls,
                     const MPI_Datatype *rdts, MPI_Request *request)
{
    int n = c->size, me = c->rank;
    bool in_place = sendbuf == MPI_IN_PLACE;
    int err = in_place ? MPI_SUCCESS : check_side(sendbuf, scounts, sdispls, sdts, n);
    if (!err)
        err = check_side(recvbuf, rcounts, rdispls, rdts, n);
    if (!err && in_place && recvbuf == MPI_IN_PLACE)
        err = MPI_ERR_BUFFER;
    if (err)
        return err;
    coll_plan_t *p = coll_plan_new(n, n);
    p->window = WINDOW;
    for (int k = 0; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        if (!in_place)
            p->send[k] = (coll_xfer_t){ .buf = coll_disp(sendbuf, sdispls[to], 1), .count = scounts[to],
                                        .dt = sdts[to], .peer = to };
        else
            p->send[k].peer = to;
        p->recv[k] = (coll_xfer_t){ .buf = coll_disp(recvbuf, rdispls[from], 1), .count = rcounts[from],
                                    .dt = rdts[from], .peer = from };
    }
    if (in_place)
        in_place_sends(p, recvbuf, rcounts, rdispls, rdts, n);
    return coll_plan_exec(r, c, p, COLL_TAG_ALLTOALLW, request);
}

#pragma weak MPI_Alltoallw = PMPI_Alltoallw
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Alltoallw");
    if (UTIL_UNLIKELY(c->remote)) {
        int err = coll_inter_alltoallw(r, c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                       recvtypes, NULL);
        return coll_inter_return(c, err, "MPI_Alltoallw");
    }
    int err = alltoallw(r, c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                        NULL);
    COLL_CHECK(c, err, err, "MPI_Alltoallw");
    return MPI_SUCCESS;
}

#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                    void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Ialltoallw");
    if (UTIL_UNLIKELY(c->remote)) {
        int err = !request ? MPI_ERR_REQUEST
                           : coll_inter_alltoallw(r, c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                                  recvcounts, rdispls, recvtypes, request);
        return coll_inter_return(c, err, "MPI_Ialltoallw");
    }
    if (!request)
        COLL_CHECK(c, true, MPI_ERR_REQUEST, "MPI_Ialltoallw");
    int err = alltoallw(r, c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                        request);
    COLL_CHECK(c, err, err, "MPI_Ialltoallw");
    return MPI_SUCCESS;
}
