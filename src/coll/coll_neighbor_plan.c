/* Plans of typed transfers and topology neighbour lists (coll_neighbor.h). */
#include "coll/coll_neighbor.h"
#include "gpu/gpu_dt.h"

#include <stdlib.h>

coll_plan_t *coll_plan_new(int nsend, int nrecv)
{
    coll_plan_t *p = coll_malloc(sizeof *p + (size_t)(nsend + nrecv) * sizeof(coll_xfer_t));
    coll_xfer_t *x = (coll_xfer_t *)(p + 1);
    *p = (coll_plan_t){ .nsend = nsend, .nrecv = nrecv, .send = x, .recv = x + nsend };
    for (int i = 0; i < nsend + nrecv; i++)
        x[i] = (coll_xfer_t){ .peer = MPI_PROC_NULL, .dt = MPI_DATATYPE_NULL };
    return p;
}

void coll_plan_free(coll_plan_t *p)
{
    coll_scratch_free(p->scratch);
    free(p);
}

/* A typed request on the collective context.  A start that fails leaves
 * nothing in flight: the request counts as done with its error (as in
 * coll_p2p.c), so waiting for it returns at once. */
static p2p_req_t *start(p2p_rank_t *r, core_comm_t *c, p2p_req_kind_t kind, const coll_xfer_t *x, int tag)
{
    p2p_req_t *q = p2p_req_prepare(r, kind, P2P_MODE_STANDARD, x->buf, x->count, x->dt, x->peer, tag + x->tag, c);
    q->ctx = c->ctx + 1;
    int err = kind == P2P_REQ_SEND ? p2p_send_start(q) : p2p_recv_start(q);
    if (UTIL_UNLIKELY(err)) {
        p2p_req_fail(q, err);
        q->complete = true;
    }
    return q;
}

/* Posts the transfers [lo, hi) of one side; returns the new request count. */
static int post(p2p_rank_t *r, core_comm_t *c, p2p_req_kind_t kind, const coll_xfer_t *x, int n, int lo, int hi,
                int tag, p2p_req_t **reqs, int nreq)
{
    for (int k = lo; k < hi && k < n; k++)
        if (x[k].peer != MPI_PROC_NULL)
            reqs[nreq++] = start(r, c, kind, &x[k], tag);
    return nreq;
}

int coll_plan_run(p2p_rank_t *r, core_comm_t *c, const coll_plan_t *p, int tag)
{
    int steps = p->nsend > p->nrecv ? p->nsend : p->nrecv;
    int window = p->window > 0 && p->window < steps ? p->window : steps;
    p2p_req_t *small[16];
    p2p_req_t **reqs = 2 * window <= 16 ? small : coll_malloc(2 * (size_t)window * sizeof *reqs);
    int err = MPI_SUCCESS;
    for (int k0 = 0; k0 < steps; k0 += window) {
        /* receives first: a large send completes only once it is matched */
        int nreq = post(r, c, P2P_REQ_RECV, p->recv, p->nrecv, k0, k0 + window, tag, reqs, 0);
        nreq = post(r, c, P2P_REQ_SEND, p->send, p->nsend, k0, k0 + window, tag, reqs, nreq);
        coll_keep_err(&err, coll_waitall(reqs, nreq));
    }
    if (reqs != small)
        free(reqs);
    return err;
}

static void for_each_type(const coll_plan_t *p, void (*fn)(MPI_Datatype))
{
    for (int i = 0; i < p->nsend; i++)
        if (p->send[i].peer != MPI_PROC_NULL)
            fn(p->send[i].dt);
    for (int i = 0; i < p->nrecv; i++)
        if (p->recv[i].peer != MPI_PROC_NULL)
            fn(p->recv[i].dt);
}

/* The helper's side: the plan travels in the sbuf field (coll_nb_args_t
 * has no field of its own for it). */
static int run_nb(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    coll_plan_t *p = (coll_plan_t *)a->sbuf;
    int err = coll_plan_run(r, c, p, tag);
    for_each_type(p, dt_release);
    coll_plan_free(p);
    return err;
}

/* A persistent request's plan runs at every MPI_Start and goes with the
 * request. */
static int run_kept(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    return coll_plan_run(r, c, (coll_plan_t *)a->sbuf, tag);
}

static void dispose_plan(const coll_nb_args_t *a)
{
    coll_plan_t *p = (coll_plan_t *)a->sbuf;
    for_each_type(p, dt_release);
    coll_plan_free(p);
}

int coll_plan_exec(p2p_rank_t *r, core_comm_t *c, coll_plan_t *p, int blocking_tag, MPI_Request *request)
{
    if (!request) {
        int err = coll_plan_run(r, c, p, blocking_tag);
        coll_plan_free(p);
        return err;
    }
    /* MPI_Type_free may come before the helper has used the types */
    for_each_type(p, dt_retain);
    coll_nb_args_t a = { .sbuf = p, .sdt = MPI_DATATYPE_NULL, .rdt = MPI_DATATYPE_NULL };
    int err = coll_nb_capturing() ? coll_nb_persist(r, c, run_kept, &a, request, dispose_plan)
                                  : coll_nb_start(r, c, run_nb, &a, request);
    if (err) {
        for_each_type(p, dt_release);
        coll_plan_free(p);
    }
    return err;
}

int coll_check_typed(const void *buf, int count, MPI_Datatype dt)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!dt_valid(dt))
        return MPI_ERR_TYPE;
    if (count > 0 && buf == MPI_IN_PLACE)
        return MPI_ERR_BUFFER;
    /* the point-to-point layer packs non-contiguous types on device buffers
     * with the library's kernels; a build without nvcc has none */
    if (count > 0 && !dt_is_contig(dt) && buf && UTIL_UNLIKELY(p2p_is_device(buf, 1)) && !gpu_dt_available())
        return MPI_ERR_UNSUPPORTED_OPERATION;
    return MPI_SUCCESS;
}

/* ---- neighbour lists, through the topology functions of src/comm ---- */

static int cart_nbrs(core_comm_t *c, coll_nbrs_t *nb)
{
    int ndims = 0;
    PMPI_Cartdim_get(c->handle, &ndims);
    nb->indeg = nb->outdeg = 2 * ndims;
    nb->src = nb->dst = coll_malloc((size_t)nb->indeg * sizeof(int));
    nb->cart = true;
    for (int d = 0; d < ndims; d++) {
        int err = PMPI_Cart_shift(c->handle, d, 1, &nb->src[2 * d], &nb->src[2 * d + 1]);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

static int graph_nbrs(core_comm_t *c, coll_nbrs_t *nb)
{
    int n = 0;
    int err = PMPI_Graph_neighbors_count(c->handle, c->rank, &n);
    nb->indeg = nb->outdeg = n;
    nb->src = nb->dst = coll_malloc((size_t)n * sizeof(int));
    return err ? err : PMPI_Graph_neighbors(c->handle, c->rank, n, nb->src);
}

static int dist_nbrs(core_comm_t *c, coll_nbrs_t *nb)
{
    int weighted = 0;
    int err = PMPI_Dist_graph_neighbors_count(c->handle, &nb->indeg, &nb->outdeg, &weighted);
    if (err)
        return err;
    nb->src = coll_malloc((size_t)(nb->indeg + nb->outdeg) * sizeof(int));
    nb->dst = nb->src + nb->indeg;
    return PMPI_Dist_graph_neighbors(c->handle, nb->indeg, nb->src, MPI_UNWEIGHTED, nb->outdeg, nb->dst,
                                     MPI_UNWEIGHTED);
}

int coll_nbrs_get(core_comm_t *c, coll_nbrs_t *nb)
{
    *nb = (coll_nbrs_t){ 0 };
    int kind = MPI_UNDEFINED;
    PMPI_Topo_test(c->handle, &kind);
    int err = kind == MPI_CART ? cart_nbrs(c, nb)
            : kind == MPI_GRAPH ? graph_nbrs(c, nb)
            : kind == MPI_DIST_GRAPH ? dist_nbrs(c, nb)
            : MPI_ERR_TOPOLOGY;
    if (err)
        coll_nbrs_free(nb);
    return err;
}

void coll_nbrs_free(coll_nbrs_t *nb)
{
    free(nb->src); /* dst shares its block */
    *nb = (coll_nbrs_t){ 0 };
}
