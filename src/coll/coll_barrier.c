/* MPI_Barrier, MPI_Ibarrier: dissemination (ceil(log2 n) rounds of one
 * send and one receive each, requests on the stack) on the communicator's
 * collective context, so it never matches user messages; two ranks: one
 * exchange.  Round k uses tag base + k. */
#include "coll/coll_inter.h"

int coll_barrier(p2p_rank_t *r, core_comm_t *c, int base)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    for (int dist = 1, round = 0; dist < n; dist <<= 1, round++) {
        coll_keep_err(&err, coll_sendrecv(r, c, NULL, 0, coll_mod_add(me, dist, n), NULL, 0,
                                          coll_mod_add(me, n - dist, n), base + round));
    }
    return err;
}

#pragma weak MPI_Barrier = PMPI_Barrier
int PMPI_Barrier(MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Barrier");
    int err = c->remote ? coll_inter_barrier(r, c, NULL) : coll_barrier(r, c, 0);
    COLL_CHECK(c, err, err, "MPI_Barrier");
    return MPI_SUCCESS;
}

static int run_barrier(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    (void)a;
    return coll_barrier(r, c, tag);
}

/* Two ranks: the one exchange as one request, without a helper thread,
 * whose start and switches cost more than the messages (IMB-NBC's Ibarrier
 * t_pure, 2 processes, 2-vCPU machine: 0.24 us against the helper's 0.60
 * and Open MPI's 0.45-0.47). */
static int ibarrier_pair(p2p_rank_t *r, core_comm_t *c, MPI_Request *request)
{
    int peer = 1 - c->rank, tag = coll_nb_tag(coll_nb_next_seq(r, c));
    *request = coll_isendrecv(r, c, NULL, 0, peer, NULL, 0, peer, tag);
    return MPI_SUCCESS;
}

#pragma weak MPI_Ibarrier = PMPI_Ibarrier
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Ibarrier");
    int err;
    if (!request)
        err = MPI_ERR_REQUEST;
    else if (c->remote)
        err = coll_inter_barrier(r, c, request);
    else if (c->size == 2 && !coll_nb_capturing()) /* MPI_Barrier_init keeps the helper's persistent form */
        err = ibarrier_pair(r, c, request);
    else
        err = coll_nb_start(r, c, run_barrier, &(coll_nb_args_t){ 0 }, request);
    COLL_CHECK(c, err, err, "MPI_Ibarrier");
    return MPI_SUCCESS;
}
