/* Collectives on intercommunicators whose every rank receives
 * (coll_inter.h): MPI_(I)allreduce, MPI_(I)reduce_scatter(_block),
 * MPI_(I)allgather(v) over the local groups and their leaders, and
 * MPI_(I)alltoall(v,w) straight between the groups. */
#include "coll/coll_inter.h"
#include "coll/coll_nc.h"

#include <limits.h>
#include <stdlib.h>

/* Allreduce: each group reduces its input to its leader, the leaders swap
 * the two results, and each broadcasts the other group's in its group. */
static int run_allreduce(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    size_t bytes = coll_bytes(a->count, a->op.dt);
    void *acc = c->rank == 0 ? coll_scratch(bytes, a->sbuf) : NULL;
    int err = coll_reduce(r, c->local, a->sbuf, acc, a->count, a->op.dt, &a->op, 0, tag);
    coll_keep_err(&err, coll_inter_leaders_xchg(r, c, acc, bytes, a->rbuf, bytes, tag));
    coll_keep_err(&err, coll_bcast(r, c->local, a->rbuf, bytes, 0, tag));
    coll_scratch_free(acc);
    return err;
}

/* Checks the send and receive buffers of a reduction and resolves op. */
static int check_reduction(coll_nb_args_t *a, int scount, int rcount, MPI_Datatype dt, MPI_Op op)
{
    if (a->sbuf == MPI_IN_PLACE || a->rbuf == MPI_IN_PLACE)
        return MPI_ERR_BUFFER;
    int err = coll_check_buf(a->sbuf, scount, dt);
    if (!err)
        err = coll_check_buf(a->rbuf, rcount, dt);
    if (!err)
        err = coll_op_resolve(op, dt, &a->op);
    return err;
}

int coll_inter_allreduce(p2p_rank_t *r, core_comm_t *c, coll_nb_args_t *a, MPI_Datatype dt, MPI_Op op,
                         MPI_Request *request)
{
    int err = check_reduction(a, (int)a->count, (int)a->count, dt, op);
    return err ? err : coll_inter_run(r, c, run_allreduce, a, COLL_TAG_ALLREDUCE, request);
}

/* Elements of the whole input vector of a reduce-scatter: the sum of the
 * local group's counts (the same in both groups, MPI-3.1 5.10.1). */
static size_t redscat_total(const core_comm_t *c, const coll_nb_args_t *a)
{
    int n = c->group->size;
    if (!a->rcounts)
        return (size_t)a->rcount * (size_t)n;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)a->rcounts[i];
    return total;
}

/* Reduce-scatter: each group reduces its whole vector to its leader, the
 * leaders swap the results, and each scatters the other group's result in
 * its group by the local counts. */
static int run_reduce_scatter(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    int n = c->group->size;
    size_t total = redscat_total(c, a), bytes = coll_bytes(total, a->op.dt);
    coll_layout_t l = { .count = (size_t)a->rcount, .dt = a->op.dt };
    size_t *offs = NULL;
    if (a->rcounts) { /* offsets in size_t: the total may pass INT_MAX */
        offs = coll_malloc((size_t)n * sizeof *offs);
        for (size_t i = 0, at = 0; i < (size_t)n; at += (size_t)a->rcounts[i], i++)
            offs[i] = at;
        l.counts = a->rcounts;
        l.offs = offs;
    }
    void *mine = c->rank == 0 ? coll_scratch(bytes, a->sbuf) : NULL;
    void *theirs = c->rank == 0 ? coll_scratch(bytes, a->rbuf) : NULL;
    int err = coll_reduce(r, c->local, a->sbuf, mine, total, a->op.dt, &a->op, 0, tag);
    coll_keep_err(&err, coll_inter_leaders_xchg(r, c, mine, bytes, theirs, bytes, tag));
    coll_keep_err(&err, coll_scatter(r, c->local, theirs, &l, a->rbuf, coll_lay_bytes(&l, c->rank), 0, tag));
    coll_scratch_free(mine);
    coll_scratch_free(theirs);
    free(offs);
    return err;
}

int coll_inter_reduce_scatter(p2p_rank_t *r, core_comm_t *c, coll_nb_args_t *a, MPI_Datatype dt, MPI_Op op,
                              MPI_Request *request)
{
    int n = c->group->size;
    if (a->rcounts) {
        for (int i = 0; i < n; i++)
            if (a->rcounts[i] < 0)
                return MPI_ERR_COUNT;
    } else if (a->rcount < 0) {
        return MPI_ERR_COUNT;
    }
    size_t total = redscat_total(c, a);
    if (total > INT_MAX) /* the buffer checks take an int count */
        return MPI_ERR_COUNT;
    int err = check_reduction(a, (int)total, a->rcounts ? a->rcounts[c->rank] : a->rcount, dt, op);
    return err ? err : coll_inter_run(r, c, run_reduce_scatter, a, COLL_TAG_REDSCAT, request);
}

/* The blocks of rbuf (remote rank order), copied into `packed` back to
 * back (pack) or out of it; types with gaps through dt_pack/dt_unpack. */
static void move_blocks(const coll_nb_args_t *a, int n, char *packed, bool pack)
{
    bool gaps = coll_nc_type(a->rdt);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        int count = a->rcounts ? a->rcounts[i] : a->rcount;
        size_t bytes = coll_bytes((size_t)count, a->rdt);
        void *block = coll_inter_block(a->rbuf, a->rdispls, a->rcount, a->rdt, i);
        if (gaps && pack)
            coll_nc_pack_buf(block, count, a->rdt, packed + at);
        else if (gaps)
            coll_nc_unpack_buf(packed + at, bytes, block, count, a->rdt);
        else if (pack)
            coll_copy(packed + at, block, bytes);
        else
            coll_copy(block, packed + at, bytes);
        at += bytes;
    }
}

/* Allgather(v): every rank sends its block to the other group's leader,
 * which receives the blocks straight into its layout; then each leader
 * broadcasts its receive buffer in its group: at once for uniform blocks
 * of a plain type, else packed back to back, so that one message carries
 * them. */
static int run_allgather(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    int n = c->size;
    coll_plan_t *p = coll_plan_new(1, c->rank == 0 ? n : 0);
    p->send[0] = (coll_xfer_t){ .buf = (void *)a->sbuf, .count = a->scount, .dt = a->sdt, .peer = 0 };
    for (int i = 0; i < p->nrecv; i++)
        p->recv[i] = (coll_xfer_t){ .buf = coll_inter_block(a->rbuf, a->rdispls, a->rcount, a->rdt, i),
                                    .count = a->rcounts ? a->rcounts[i] : a->rcount, .dt = a->rdt, .peer = i };
    int err = coll_plan_run(r, c, p, tag);
    coll_plan_free(p);
    if (!a->rcounts && !coll_nc_type(a->rdt)) {
        coll_keep_err(&err, coll_bcast(r, c->local, a->rbuf, coll_bytes((size_t)a->rcount * (size_t)n, a->rdt), 0,
                                       tag));
        return err;
    }
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += coll_bytes((size_t)(a->rcounts ? a->rcounts[i] : a->rcount), a->rdt);
    char *packed = coll_scratch(total, a->rbuf);
    if (c->rank == 0)
        move_blocks(a, n, packed, true);
    coll_keep_err(&err, coll_bcast(r, c->local, packed, total, 0, tag));
    if (c->rank != 0)
        move_blocks(a, n, packed, false);
    coll_scratch_free(packed);
    return err;
}

int coll_inter_allgather(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, MPI_Request *request)
{
    int n = c->size;
    int err = coll_inter_check_side(a->sbuf, NULL, NULL, a->scount, a->sdt, 1);
    if (!err)
        err = coll_inter_check_side(a->rbuf, a->rcounts, a->rdispls, a->rcount, a->rdt, n);
    return err ? err : coll_inter_run(r, c, run_allgather, a, COLL_TAG_ALLGATHER, request);
}

/* Alltoall(v,w): max(local, remote size) steps; in step k a rank sends to
 * remote rank (me + k) mod m and receives from (me - k) mod m, where they
 * exist.  A send of step k is the receive of step k at its peer, so a
 * window of steps in flight never waits on a later one. */
#define WINDOW 8

static coll_plan_t *alltoall_plan(const core_comm_t *c)
{
    int n = c->size, me = c->rank, m = n > c->group->size ? n : c->group->size;
    coll_plan_t *p = coll_plan_new(m, m);
    p->window = WINDOW;
    for (int k = 0; k < m; k++) {
        int to = (me + k) % m, from = (me - k + m) % m;
        p->send[k].peer = to < n ? to : MPI_PROC_NULL;
        p->recv[k].peer = from < n ? from : MPI_PROC_NULL;
    }
    return p;
}

int coll_inter_alltoall(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, MPI_Request *request)
{
    int n = c->size;
    int err = coll_inter_check_side(a->sbuf, a->scounts, a->sdispls, a->scount, a->sdt, n);
    if (!err)
        err = coll_inter_check_side(a->rbuf, a->rcounts, a->rdispls, a->rcount, a->rdt, n);
    if (err)
        return err;
    coll_plan_t *p = alltoall_plan(c);
    for (int k = 0; k < p->nsend; k++) {
        coll_xfer_t *s = &p->send[k], *q = &p->recv[k];
        if (s->peer != MPI_PROC_NULL)
            *s = (coll_xfer_t){ .buf = coll_inter_block(a->sbuf, a->sdispls, a->scount, a->sdt, s->peer),
                                .count = a->scounts ? a->scounts[s->peer] : a->scount, .dt = a->sdt,
                                .peer = s->peer };
        if (q->peer != MPI_PROC_NULL)
            *q = (coll_xfer_t){ .buf = coll_inter_block(a->rbuf, a->rdispls, a->rcount, a->rdt, q->peer),
                                .count = a->rcounts ? a->rcounts[q->peer] : a->rcount, .dt = a->rdt,
                                .peer = q->peer };
    }
    return coll_plan_exec(r, c, p, COLL_TAG_ALLTOALL, request);
}

/* One side of MPI_Alltoallw: a count, a byte displacement and a type per
 * remote rank. */
static int check_w(const void *buf, const int *counts, const int *displs, const MPI_Datatype *dts, int n)
{
    if (buf == MPI_IN_PLACE)
        return MPI_ERR_BUFFER;
    if (n > 0 && (!counts || !displs || !dts))
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++) {
        int err = coll_check_typed(coll_disp(buf, displs[i], 1), counts[i], dts[i]);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

int coll_inter_alltoallw(p2p_rank_t *r, core_comm_t *c, const void *sendbuf, const int *scounts,
                         const int *sdispls, const MPI_Datatype *sdts, void *recvbuf, const int *rcounts,
                         const int *rdispls, const MPI_Datatype *rdts, MPI_Request *request)
{
    int n = c->size;
    int err = check_w(sendbuf, scounts, sdispls, sdts, n);
    if (!err)
        err = check_w(recvbuf, rcounts, rdispls, rdts, n);
    if (err)
        return err;
    coll_plan_t *p = alltoall_plan(c);
    for (int k = 0; k < p->nsend; k++) {
        int to = p->send[k].peer, from = p->recv[k].peer;
        if (to != MPI_PROC_NULL)
            p->send[k] = (coll_xfer_t){ .buf = coll_disp(sendbuf, sdispls[to], 1), .count = scounts[to],
                                        .dt = sdts[to], .peer = to };
        if (from != MPI_PROC_NULL)
            p->recv[k] = (coll_xfer_t){ .buf = coll_disp(recvbuf, rdispls[from], 1), .count = rcounts[from],
                                        .dt = rdts[from], .peer = from };
    }
    return coll_plan_exec(r, c, p, COLL_TAG_ALLTOALLW, request);
}
