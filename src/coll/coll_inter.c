/* MPI_Barrier and MPI_Bcast on intercommunicators (MPI-3.1 5.2.2).  Each
 * group works over the intracommunicator of its local group (c->local);
 * the two leaders (local rank 0) meet over the intercommunicator's
 * collective context, where a peer's rank names the remote group. */
#include "coll/coll_nb.h"

/* The leader of the group whose leader has the lower world rank sends
 * first, so the two never wait on each other's receive. */
static int leaders_meet(p2p_rank_t *r, core_comm_t *c)
{
    char out = 0, in = 0;
    bool first = core_group_world(c->group, 0) < core_group_world(c->remote, 0);
    int err = first ? coll_send(r, c, &out, 1, 0, COLL_TAG_INTER) : MPI_SUCCESS;
    if (!err)
        err = coll_recv(r, c, &in, 1, 0, COLL_TAG_INTER);
    if (!err && !first)
        err = coll_send(r, c, &out, 1, 0, COLL_TAG_INTER);
    return err;
}

/* Nobody leaves before every member of both groups has entered: a local
 * barrier, the leaders meet, then each leader releases its group. */
int coll_inter_barrier(p2p_rank_t *r, core_comm_t *c)
{
    char token = 0;
    int err = PMPI_Barrier(c->local->handle);
    if (!err && c->rank == 0)
        err = leaders_meet(r, c);
    if (!err)
        err = coll_bcast(r, c->local, &token, 1, 0, COLL_TAG_BCAST);
    return err;
}

/* root: MPI_ROOT at the root, MPI_PROC_NULL at the rest of its group, the
 * root's rank in the remote group at the receiving group.  The root sends
 * to the receiving group's leader, which broadcasts in its group. */
int coll_inter_bcast(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int root)
{
    if (root == MPI_PROC_NULL || bytes == 0)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return coll_send(r, c, buf, bytes, 0, COLL_TAG_BCAST);
    int err = c->rank == 0 ? coll_recv(r, c, buf, bytes, root, COLL_TAG_BCAST) : MPI_SUCCESS;
    return err ? err : coll_bcast(r, c->local, buf, bytes, 0, COLL_TAG_BCAST);
}
