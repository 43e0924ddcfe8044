/* MPI_Barrier: dissemination (ceil(log2 n) rounds of one send and one
 * receive each) on the communicator's collective context, so it never
 * matches user messages. */
#include "pt2pt/p2p_api.h"

#pragma weak MPI_Barrier = PMPI_Barrier
int PMPI_Barrier(MPI_Comm comm)
{
    P2P_ENTER(r, "MPI_Barrier");
    comm_t *c = p2p_comm(r, comm);
    if (!c)
        return env_error(NULL, MPI_ERR_COMM, "MPI_Barrier");
    int n = c->size, me = c->rank;
    for (int dist = 1, round = 0; dist < n; dist <<= 1, round++) {
        p2p_req_t *rq = p2p_req_prepare(r, P2P_REQ_RECV, P2P_MODE_STANDARD, NULL, 0, MPI_BYTE,
                                        (me - dist + n) % n, round, c);
        rq->ctx = c->ctx + 1;
        p2p_recv_start(rq);
        p2p_req_t *sq = p2p_req_prepare(r, P2P_REQ_SEND, P2P_MODE_STANDARD, NULL, 0, MPI_BYTE, (me + dist) % n,
                                        round, c);
        sq->ctx = c->ctx + 1;
        p2p_send_start(sq);
        p2p_wait_complete(sq);
        p2p_req_release(sq);
        p2p_wait_complete(rq);
        p2p_req_release(rq);
    }
    return MPI_SUCCESS;
}
