/* MPI_Reduce, MPI_Ireduce: binomial tree.  A rank with relative number v
 * gathers the partial results of v+1, v+2, v+4, ... (while its low bits are
 * clear) and sends its own to v - lowest set bit.  A rank's partial result
 * covers a contiguous range of relative ranks [v, v + 2^k), combined lower
 * range on the left, so a commutative op runs over ranks numbered from the
 * root and a non-commutative one over ranks numbered from 0 (the tree is
 * then rooted at rank 0, which forwards the result to the root).  Tree
 * messages travel in segments (SEG_BYTES), reduced as they arrive; a
 * commutative op receives its first child's data straight into the result
 * (no copy of the input).  Its receives pull (coll_recv_pull): this core
 * reduces the data at once, so it copies it into its own cache itself. */
#include "coll/coll_inter.h"
#include "coll/coll_sched.h"

#include <stdlib.h>

/* With more than two ranks, messages above SEG_BYTES travel in segments of
 * about that size, so that a rank in the middle of the tree forwards the
 * first segments while the later ones still arrive.  Every segment costs a
 * rendezvous of its own, which outweighs the cache warmth of small
 * segments: on two processes of one node 128 KiB segments run 256 KiB-1 MiB
 * reductions 1.5-2x faster than 32 KiB ones, and one unsegmented message
 * faster still (27 against 36 us at 256 KiB; 2-core machine, e549d47), so
 * two ranks -- a tree without a middle -- send whole messages. */
#define SEG_BYTES (128 * 1024)

/* Ranks of one process reduce through coll_local_reduce from this size on;
 * below, its release messages cost more than the tree's copies (4 ranks on
 * one PE: 2.2 against 1.2 us at 4 bytes, 2.6 against 2.9 us at 4 KiB;
 * 2-core machine, e549d47). */
#define LOCAL_MIN_BYTES 4096

typedef struct segs {
    size_t per, n, count; /* elements per segment, segments, all elements */
    MPI_Datatype dt;
} segs_t;

static size_t seg_len(const segs_t *s, size_t k) { return k + 1 < s->n ? s->per : s->count - k * s->per; }
static void *seg_at(const segs_t *s, const void *buf, size_t k) { return coll_at(buf, k * s->per, s->dt); }

static int send_segs(p2p_rank_t *r, core_comm_t *c, const void *buf, const segs_t *s, int peer, int tag)
{
    if (s->n == 1) /* two ranks, or a short vector: the request on the stack */
        return coll_send(r, c, buf, coll_bytes(s->count, s->dt), peer, tag);
    p2p_req_t *small[8], **reqs = s->n <= 8 ? small : coll_malloc(s->n * sizeof *reqs);
    for (size_t k = 0; k < s->n; k++)
        reqs[k] = coll_isend(r, c, seg_at(s, buf, k), coll_bytes(seg_len(s, k), s->dt), peer, tag);
    int err = coll_waitall(reqs, (int)s->n);
    if (reqs != small)
        free(reqs);
    return err;
}

/* Segment k of acc = segment k of acc op the peer's, which has arrived
 * (in acc itself when first != NULL, else in tmp): see recv_reduce. */
static void reduce_seg(const coll_op_t *op, void *acc, const void *first, void *tmp, const segs_t *s, size_t k)
{
    size_t m = seg_len(s, k);
    void *a = seg_at(s, acc, k);
    if (first) { /* (ours) op peer == peer op (ours) */
        coll_op_apply(op, seg_at(s, first, k), a, m);
    } else if (op->commute) {
        coll_op_apply(op, seg_at(s, tmp, k), a, m);
    } else { /* the lower range (ours) on the left */
        void *t = seg_at(s, tmp, k);
        coll_op_apply(op, a, t, m);
        coll_copy(a, t, coll_bytes(m, s->dt));
    }
}

/* acc = acc op (peer's data), segment by segment as they arrive.  Every
 * segment's receive is posted at once, so the sender never waits for a
 * slot, and each is reduced as soon as it is in.  first != NULL (a
 * commutative op, and acc does not hold our data yet): the peer's data
 * lands in acc itself and `first` is reduced onto it -- no copy of our
 * input, no scratch.  Otherwise it lands in tmp. */
static int recv_reduce(p2p_rank_t *r, core_comm_t *c, void *acc, const void *first, const segs_t *s,
                       const coll_op_t *op, void *tmp, int peer, int tag)
{
    void *into = first ? acc : tmp;
    if (s->n == 1) { /* one message (two ranks, short vectors): its request on the stack */
        int err = coll_recv_pull(r, c, into, coll_bytes(s->count, s->dt), peer, tag);
        reduce_seg(op, acc, first, tmp, s, 0);
        return err;
    }
    int err = MPI_SUCCESS;
    p2p_req_t *small[8], **q = s->n <= 8 ? small : coll_malloc(s->n * sizeof *q);
    for (size_t k = 0; k < s->n; k++)
        q[k] = coll_irecv_pull(r, c, seg_at(s, into, k), coll_bytes(seg_len(s, k), s->dt), peer, tag);
    for (size_t k = 0; k < s->n; k++) {
        coll_keep_err(&err, coll_waitall(&q[k], 1));
        reduce_seg(op, acc, first, tmp, s, k);
    }
    if (q != small)
        free(q);
    return err;
}

bool coll_all_local(const core_comm_t *c)
{
    if (gpu_enabled()) /* device buffers of several GPUs: keep to the messages */
        return false;
    for (int i = 0; i < c->size; i++)
        if (!p2p_is_local(core_comm_world_rank(c, i)))
            return false;
    return true;
}

typedef struct bufs {
    const void *in;
    void *out; /* NULL: the rank wants no result */
} bufs_t;

int coll_local_reduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                      const coll_op_t *op, int root, bool all, int tag)
{
    int n = c->size, err = MPI_SUCCESS;
    size_t bytes = coll_bytes(count, dt);
    if (c->rank != root) {
        bufs_t mine = { in, all ? out : NULL };
        coll_keep_err(&err, coll_send(r, c, &mine, sizeof mine, root, tag));
        coll_keep_err(&err, coll_recv(r, c, NULL, 0, root, tag)); /* root is done with our buffers */
        return err;
    }
    bufs_t *b = coll_malloc((size_t)n * sizeof *b);
    p2p_req_t **q = coll_malloc((size_t)n * sizeof *q);
    for (int i = 0; i < n; i++)
        q[i] = i == root ? NULL : coll_irecv(r, c, &b[i], sizeof *b, i, tag);
    coll_keep_err(&err, coll_waitall(q, n));
    void *saved = in == out && n > 1 ? coll_scratch(bytes, in) : NULL; /* in place: out is overwritten first */
    if (saved)
        coll_copy(saved, in, bytes);
    b[root] = (bufs_t){ saved ? saved : in, out };
    if (!err) {
        /* in_0 op (in_1 op (... op in_{n-1})): rank order for any op, and
         * every input read where it lies */
        coll_copy(out, b[n - 1].in, bytes);
        for (int i = n - 2; i >= 0; i--)
            coll_op_apply(op, b[i].in, out, count);
        for (int i = 0; all && i < n; i++)
            if (i != root)
                coll_copy(b[i].out, out, bytes);
    }
    for (int i = 0; i < n; i++)
        q[i] = i == root ? NULL : coll_isend(r, c, NULL, 0, i, tag);
    coll_keep_err(&err, coll_waitall(q, n));
    coll_scratch_free(saved);
    free(q);
    free(b);
    return err;
}

int coll_reduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                const coll_op_t *op, int root, int tag)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    size_t bytes = coll_bytes(count, dt);
    if (n == 1 || bytes == 0) {
        if (me == root)
            coll_copy(out, in, bytes);
        return MPI_SUCCESS;
    }
    if (bytes >= LOCAL_MIN_BYTES && coll_all_local(c))
        return coll_local_reduce(r, c, in, out, count, dt, op, root, false, tag);
    if (n == 2 && op->commute && in != out) {
        /* what the tree below does for two ranks, without walking it: the
         * other rank sends its input, the root receives it into out and
         * reduces its own input onto it */
        if (me != root)
            return coll_send(r, c, in, bytes, root, tag);
        err = coll_recv_pull(r, c, out, bytes, 1 - root, tag);
        coll_op_apply(op, in, out, count);
        return err;
    }
    int base = op->commute ? root : 0; /* the tree's root */
    int v = coll_mod_add(me, n - base, n); /* tree rank */
    segs_t s = { .per = count, .n = 1, .count = count, .dt = dt };
    /* two ranks, or at most a segment (count <= SEG_BYTES / extent, as
     * extent == size): one message, without the divisions below */
    if (n > 2 && bytes > SEG_BYTES) {
        s.per = SEG_BYTES / (size_t)dt_extent(dt);
        s.per = s.per == 0 ? 1 : s.per > count ? count : s.per;
        s.n = (count + s.per - 1) / s.per;
    }
    const void *mine = in; /* our partial result so far */
    /* scratch in `in`'s memory kind; the root of a commutative op sums
     * straight into `out` */
    void *acc = NULL, *acc_buf = NULL, *tmp = NULL;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (v & mask) {
            coll_keep_err(&err, send_segs(r, c, mine, &s, coll_mod_add(v - mask, base, n), tag));
            break;
        }
        if (v + mask < n) {
            const void *first = NULL;
            if (!acc) { /* the first child: from now on we need a place for the partial result */
                acc = op->commute && me == root ? out : (acc_buf = coll_scratch(bytes, in));
                if (op->commute && acc != in)
                    first = in;
                else
                    coll_copy(acc, in, bytes);
            }
            if (!first && !tmp)
                tmp = coll_scratch(bytes, in);
            coll_keep_err(&err, recv_reduce(r, c, acc, first, &s, op, tmp, coll_mod_add(v + mask, base, n), tag));
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
    coll_scratch_free(tmp);
    return err;
}

/* Checks the arguments and resolves the op; *in: the input buffer. */
static int check(const core_comm_t *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, const void **in, coll_op_t *o)
{
    if (root < 0 || root >= c->size)
        return MPI_ERR_ROOT;
    bool am_root = c->rank == root;
    *in = am_root && sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int err = coll_check_type(count, datatype); /* once for both buffers */
    if (!err)
        err = coll_check_ptr(*in, count, datatype);
    if (!err && am_root)
        err = coll_check_ptr(recvbuf, count, datatype);
    if (!err)
        err = coll_op_resolve(op, datatype, o);
    return err;
}

#pragma weak MPI_Reduce = PMPI_Reduce
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Reduce");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .rbuf = recvbuf, .count = (size_t)count, .root = root };
        return coll_inter_return(c, coll_inter_reduce(r, c, &a, datatype, op, NULL), "MPI_Reduce");
    }
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_red.c */
        int nerr = coll_nc_reduce(r, c, sendbuf, recvbuf, count, datatype, op, root, NULL);
        COLL_CHECK(c, nerr, nerr, "MPI_Reduce");
        return MPI_SUCCESS;
    }
    const void *in;
    coll_op_t o;
    /* the byte count alone decides, so that every rank takes the same path */
    bool staged = count > 0 && dt_valid(datatype) && coll_stage_wanted(c, (size_t)count * dt_size(datatype));
    int err = check(c, sendbuf, recvbuf, count, datatype, op, root, &in, &o);
    COLL_CHECK(c, err, err, "MPI_Reduce");
    coll_nccl_call_t nc = { COLL_NCCL_REDUCE, in, recvbuf, (size_t)count, datatype, op, root };
    if (UTIL_UNLIKELY(staged))
        err = coll_staged_reduce(r, c, in, recvbuf, (size_t)count, datatype, &o, root, COLL_TAG_REDUCE);
    else if (!coll_nccl_try(r, c, &nc, &err)) /* in line: host buffers pay its gpu_enabled() test */
        err = coll_reduce(r, c, in, recvbuf, (size_t)count, datatype, &o, root, COLL_TAG_REDUCE);
    COLL_CHECK(c, err, err, "MPI_Reduce");
    return MPI_SUCCESS;
}

static int run_reduce(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    return coll_reduce(r, c, a->sbuf, a->rbuf, a->count, a->op.dt, &a->op, a->root, tag);
}

#pragma weak MPI_Ireduce = PMPI_Ireduce
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Ireduce");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .rbuf = recvbuf, .count = (size_t)count, .root = root };
        int err = request ? coll_inter_reduce(r, c, &a, datatype, op, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Ireduce");
    }
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_red.c */
        int nerr = coll_nc_reduce(r, c, sendbuf, recvbuf, count, datatype, op, root, request);
        COLL_CHECK(c, nerr, nerr, "MPI_Ireduce");
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .rbuf = recvbuf, .count = (size_t)count, .root = root };
    int err = check(c, sendbuf, recvbuf, count, datatype, op, root, &a.sbuf, &a.op);
    if (!err && a.op.kernel && coll_sched_wanted(c, (size_t)count * dt_size(datatype))) /* coll_sched.h */
        err = coll_sched_ireduce(r, c, a.sbuf, recvbuf, (size_t)count, &a.op, root, request);
    else if (!err)
        err = coll_nb_start(r, c, run_reduce, &a, request);
    COLL_CHECK(c, err, err, "MPI_Ireduce");
    return MPI_SUCCESS;
}
