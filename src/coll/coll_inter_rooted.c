/* Rooted collectives on intercommunicators: MPI_(I)gather(v),
 * MPI_(I)scatter(v), MPI_(I)reduce (coll_inter.h).  The root (MPI_ROOT)
 * talks to every rank of the other group; the rest of its group
 * (MPI_PROC_NULL) does nothing. */
#include "coll/coll_inter.h"

/* Gather: the root receives block i of its layout from remote rank i;
 * every rank of the other group sends its one block to the root. */
int coll_inter_gather(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, MPI_Request *request)
{
    int n = c->size, err = coll_inter_check_root(c, a->root);
    if (!err && a->root == MPI_ROOT)
        err = coll_inter_check_side(a->rbuf, a->rcounts, a->rdispls, a->rcount, a->rdt, n);
    else if (!err && a->root != MPI_PROC_NULL)
        err = coll_inter_check_side(a->sbuf, NULL, NULL, a->scount, a->sdt, 1);
    if (err)
        return err;
    coll_plan_t *p;
    if (a->root == MPI_ROOT) {
        p = coll_plan_new(0, n);
        for (int i = 0; i < n; i++)
            p->recv[i] = (coll_xfer_t){ .buf = coll_inter_block(a->rbuf, a->rdispls, a->rcount, a->rdt, i),
                                        .count = a->rcounts ? a->rcounts[i] : a->rcount, .dt = a->rdt, .peer = i };
    } else if (a->root == MPI_PROC_NULL) {
        p = coll_plan_new(0, 0);
    } else {
        p = coll_plan_new(1, 0);
        p->send[0] = (coll_xfer_t){ .buf = (void *)a->sbuf, .count = a->scount, .dt = a->sdt, .peer = a->root };
    }
    return coll_plan_exec(r, c, p, COLL_TAG_GATHER, request);
}

/* Scatter: the root sends block i of its layout to remote rank i. */
int coll_inter_scatter(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, MPI_Request *request)
{
    int n = c->size, err = coll_inter_check_root(c, a->root);
    if (!err && a->root == MPI_ROOT)
        err = coll_inter_check_side(a->sbuf, a->scounts, a->sdispls, a->scount, a->sdt, n);
    else if (!err && a->root != MPI_PROC_NULL)
        err = coll_inter_check_side(a->rbuf, NULL, NULL, a->rcount, a->rdt, 1);
    if (err)
        return err;
    coll_plan_t *p;
    if (a->root == MPI_ROOT) {
        p = coll_plan_new(n, 0);
        for (int i = 0; i < n; i++)
            p->send[i] = (coll_xfer_t){ .buf = coll_inter_block(a->sbuf, a->sdispls, a->scount, a->sdt, i),
                                        .count = a->scounts ? a->scounts[i] : a->scount, .dt = a->sdt, .peer = i };
    } else if (a->root == MPI_PROC_NULL) {
        p = coll_plan_new(0, 0);
    } else {
        p = coll_plan_new(0, 1);
        p->recv[0] = (coll_xfer_t){ .buf = a->rbuf, .count = a->rcount, .dt = a->rdt, .peer = a->root };
    }
    return coll_plan_exec(r, c, p, COLL_TAG_SCATTER, request);
}

/* Reduce: the other group reduces to its leader over its local
 * intracommunicator (rank order, so non-commutative ops hold), and the
 * leader sends the result to the root. */
static int run_reduce(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    size_t bytes = coll_bytes(a->count, a->op.dt);
    if (a->root == MPI_ROOT)
        return coll_recv(r, c, a->rbuf, bytes, 0, tag);
    void *acc = c->rank == 0 ? coll_scratch(bytes, a->sbuf) : NULL;
    int err = coll_reduce(r, c->local, a->sbuf, acc, a->count, a->op.dt, &a->op, 0, tag);
    if (c->rank == 0) /* also after a failure: the root waits for it */
        coll_keep_err(&err, coll_send(r, c, acc, bytes, a->root, tag));
    coll_scratch_free(acc);
    return err;
}

/* The checks of a reduction's buffer `buf` (the only one a rank of an
 * intercommunicator reduction uses on each side); resolves the op. */
static int check_reduction(coll_nb_args_t *a, const void *buf, int count, MPI_Datatype dt, MPI_Op op)
{
    if (buf == MPI_IN_PLACE)
        return MPI_ERR_BUFFER;
    int err = coll_check_buf(buf, count, dt);
    if (!err)
        err = coll_op_resolve(op, dt, &a->op);
    return err;
}

int coll_inter_reduce(p2p_rank_t *r, core_comm_t *c, coll_nb_args_t *a, MPI_Datatype dt, MPI_Op op,
                      MPI_Request *request)
{
    int err = coll_inter_check_root(c, a->root);
    if (!err && a->root != MPI_PROC_NULL)
        err = check_reduction(a, a->root == MPI_ROOT ? a->rbuf : a->sbuf, (int)a->count, dt, op);
    return err ? err : coll_inter_run(r, c, run_reduce, a, COLL_TAG_REDUCE, request);
}
