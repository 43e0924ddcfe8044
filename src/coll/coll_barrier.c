/* MPI_Barrier, MPI_Ibarrier: dissemination (ceil(log2 n) rounds of one
 * send and one receive each) on the communicator's collective context, so
 * it never matches user messages.  Round k uses tag base + k. */
#include "coll/coll_nb.h"

static int barrier(p2p_rank_t *r, comm_t *c, int base)
{
    int n = c->size, me = c->rank;
    for (int dist = 1, round = 0; dist < n; dist <<= 1, round++) {
        p2p_req_t *rq = p2p_req_prepare(r, P2P_REQ_RECV, P2P_MODE_STANDARD, NULL, 0, MPI_BYTE,
                                        (me - dist + n) % n, base + round, c);
        rq->ctx = c->ctx + 1;
        p2p_recv_start(rq);
        p2p_req_t *sq = p2p_req_prepare(r, P2P_REQ_SEND, P2P_MODE_STANDARD, NULL, 0, MPI_BYTE, (me + dist) % n,
                                        base + round, c);
        sq->ctx = c->ctx + 1;
        p2p_send_start(sq);
        p2p_wait_complete(sq);
        p2p_req_release(sq);
        p2p_wait_complete(rq);
        p2p_req_release(rq);
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Barrier = PMPI_Barrier
int PMPI_Barrier(MPI_Comm comm)
{
    P2P_ENTER(r, "MPI_Barrier");
    comm_t *c = p2p_comm(r, comm);
    if (!c)
        return env_error(NULL, MPI_ERR_COMM, "MPI_Barrier");
    return barrier(r, c, 0);
}

static int run_barrier(p2p_rank_t *r, comm_t *c, const coll_nb_args_t *a, int tag)
{
    (void)a;
    return barrier(r, c, tag);
}

#pragma weak MPI_Ibarrier = PMPI_Ibarrier
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER(r, c, comm, "MPI_Ibarrier");
    int err = coll_nb_start(r, c, run_barrier, &(coll_nb_args_t){ 0 }, request);
    COLL_CHECK(c, err, err, "MPI_Ibarrier");
    return MPI_SUCCESS;
}
