/* MPI_Reduce, MPI_Ireduce: binomial tree.  A rank with relative number v
 * gathers the partial results of v+1, v+2, v+4, ... (while its low bits are
 * clear) and sends its own to v - lowest set bit.  A rank's partial result
 * covers a contiguous range of relative ranks [v, v + 2^k), combined lower
 * range on the left, so a commutative op runs over ranks numbered from the
 * root and a non-commutative one over ranks numbered from 0 (the tree is
 * then rooted at rank 0, which forwards the result to the root).  Tree
 * messages travel in segments (SEG_BYTES), reduced as they arrive. */
#include "coll/coll_nb.h"

#include <stdlib.h>

/* Messages above SEG_BYTES travel in segments of about that size: a parent
 * reduces one segment while the next one arrives, and its receive scratch
 * (two segments) stays below glibc's mmap threshold, so it comes from the
 * heap again and again instead of being mapped and zero-filled anew on
 * every call (which made 256 KiB+ reductions 5-10x slower). */
#define SEG_BYTES (32 * 1024)

typedef struct segs {
    size_t per, n, count; /* elements per segment, segments, all elements */
    MPI_Datatype dt;
} segs_t;

static size_t seg_len(const segs_t *s, size_t k) { return k + 1 < s->n ? s->per : s->count - k * s->per; }
static void *seg_at(const segs_t *s, const void *buf, size_t k) { return coll_at(buf, k * s->per, s->dt); }

static int send_segs(p2p_rank_t *r, comm_t *c, const void *buf, const segs_t *s, int peer, int tag)
{
    p2p_req_t *small[8], **reqs = s->n <= 8 ? small : coll_malloc(s->n * sizeof *reqs);
    for (size_t k = 0; k < s->n; k++)
        reqs[k] = coll_isend(r, c, seg_at(s, buf, k), coll_bytes(seg_len(s, k), s->dt), peer, tag);
    int err = coll_waitall(reqs, (int)s->n);
    if (reqs != small)
        free(reqs);
    return err;
}

/* acc = acc op (peer's data), segment by segment, two receives in flight. */
static int recv_reduce(p2p_rank_t *r, comm_t *c, void *acc, const segs_t *s, const coll_op_t *op, void *tmp[2],
                       int peer, int tag)
{
    int err = MPI_SUCCESS;
    p2p_req_t *q[2] = { NULL, NULL };
    for (size_t k = 0; k < 2 && k < s->n; k++)
        q[k] = coll_irecv(r, c, tmp[k], coll_bytes(seg_len(s, k), s->dt), peer, tag);
    for (size_t k = 0; k < s->n; k++) {
        int b = (int)(k % 2);
        size_t m = seg_len(s, k);
        void *a = seg_at(s, acc, k);
        coll_keep_err(&err, coll_waitall(&q[b], 1));
        if (op->commute) { /* peer op acc == acc op peer */
            coll_op_apply(op, tmp[b], a, m);
        } else { /* the lower range (ours) on the left */
            coll_op_apply(op, a, tmp[b], m);
            coll_copy(a, tmp[b], coll_bytes(m, s->dt));
        }
        if (k + 2 < s->n)
            q[b] = coll_irecv(r, c, tmp[b], coll_bytes(seg_len(s, k + 2), s->dt), peer, tag);
    }
    return err;
}

int coll_reduce(p2p_rank_t *r, comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                const coll_op_t *op, int root, int tag)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    size_t bytes = coll_bytes(count, dt);
    if (n == 1 || bytes == 0) {
        if (me == root)
            coll_copy(out, in, bytes);
        return MPI_SUCCESS;
    }
    int base = op->commute ? root : 0; /* the tree's root */
    int v = (me - base + n) % n;
    segs_t s = { .per = SEG_BYTES / (size_t)dt_extent(dt), .count = count, .dt = dt };
    s.per = s.per == 0 ? 1 : s.per > count ? count : s.per;
    s.n = (count + s.per - 1) / s.per;
    const void *mine = in; /* our partial result so far */
    /* scratch in `in`'s memory kind; the root of a commutative op sums
     * straight into `out` */
    void *acc = NULL, *acc_buf = NULL, *tmp[2] = { NULL, NULL };
    for (int mask = 1; mask < n; mask <<= 1) {
        if (v & mask) {
            coll_keep_err(&err, send_segs(r, c, mine, &s, (v - mask + base) % n, tag));
            break;
        }
        if (v + mask < n) {
            if (!acc) { /* the first child: from now on we need scratch space */
                acc = op->commute && me == root ? out : (acc_buf = coll_scratch(bytes, in));
                coll_copy(acc, in, bytes);
                tmp[0] = coll_scratch(coll_bytes(s.per, dt), in);
                tmp[1] = s.n > 1 ? coll_scratch(coll_bytes(s.per, dt), in) : NULL;
            }
            coll_keep_err(&err, recv_reduce(r, c, acc, &s, op, tmp, (v + mask + base) % n, tag));
            mine = acc;
        }
    }
    if (v == 0 && base == root)
        coll_copy(out, mine, bytes);
    else if (v == 0) /* non-commutative op, root != 0: forward the result */
        coll_keep_err(&err, coll_send(r, c, mine, bytes, root, tag));
    else if (me == root)
        coll_keep_err(&err, coll_recv(r, c, out, bytes, base, tag));
    coll_scratch_free(acc_buf);
    coll_scratch_free(tmp[0]);
    coll_scratch_free(tmp[1]);
    return err;
}

/* Checks the arguments and resolves the op; *in: the input buffer. */
static int check(const comm_t *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, const void **in, coll_op_t *o)
{
    if (root < 0 || root >= c->size)
        return MPI_ERR_ROOT;
    bool am_root = c->rank == root;
    *in = am_root && sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int err = coll_check_buf(*in, count, datatype);
    if (!err && am_root)
        err = coll_check_buf(recvbuf, count, datatype);
    if (!err)
        err = coll_op_resolve(op, datatype, o);
    if (!err)
        err = coll_dev_check_op(o, *in, am_root ? recvbuf : NULL);
    return err;
}

#pragma weak MPI_Reduce = PMPI_Reduce
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm)
{
    COLL_ENTER(r, c, comm, "MPI_Reduce");
    const void *in;
    coll_op_t o;
    int err = check(c, sendbuf, recvbuf, count, datatype, op, root, &in, &o);
    COLL_CHECK(c, err, err, "MPI_Reduce");
    coll_nccl_call_t nc = { COLL_NCCL_REDUCE, in, recvbuf, (size_t)count, datatype, op, root };
    if (!coll_nccl_try(r, c, &nc, &err))
        err = coll_reduce(r, c, in, recvbuf, (size_t)count, datatype, &o, root, COLL_TAG_REDUCE);
    COLL_CHECK(c, err, err, "MPI_Reduce");
    return MPI_SUCCESS;
}

static int run_reduce(p2p_rank_t *r, comm_t *c, const coll_nb_args_t *a, int tag)
{
    return coll_reduce(r, c, a->sbuf, a->rbuf, a->count, a->op.dt, &a->op, a->root, tag);
}

#pragma weak MPI_Ireduce = PMPI_Ireduce
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER(r, c, comm, "MPI_Ireduce");
    coll_nb_args_t a = { .rbuf = recvbuf, .count = (size_t)count, .root = root };
    int err = check(c, sendbuf, recvbuf, count, datatype, op, root, &a.sbuf, &a.op);
    if (!err)
        err = coll_nb_start(r, c, run_reduce, &a, request);
    COLL_CHECK(c, err, err, "MPI_Ireduce");
    return MPI_SUCCESS;
}
