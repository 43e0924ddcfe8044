/* MPI_Allreduce, MPI_Iallreduce.  Ranks beyond the largest power of two p <= n fold in
 * first: of the first 2*(n-p) ranks each even one hands its data to the odd
 * one above it and waits for the result, so p ranks remain, numbered in
 * rank order.  Among those:
 *  - small messages and user ops: recursive doubling (log2 p exchanges of
 *    the whole vector, lower-ranked operand on the left at every step, so
 *    non-commutative ops work and every rank computes identical bits);
 *  - large messages with a predefined op: reduce-scatter by recursive
 *    halving, then allgather by recursive doubling (Rabenseifner): each
 *    rank moves about 2x the vector instead of log2(p) x.  Every block is
 *    reduced on one rank only, so all ranks again get identical bits. */
#include "coll/coll_nb.h"

#include <stdlib.h>

/* Above this many bytes a predefined op uses reduce-scatter + allgather. */
#define HALVING_MIN_BYTES 16384

typedef struct ar {
    p2p_rank_t *r;
    comm_t *c;
    const coll_op_t *op;
    MPI_Datatype dt;
    size_t count, bytes;
    int pof2, rem;
    int tag;
    void *acc, *tmp; /* acc holds our data; tmp receives */
} ar_t;

/* Real rank of rank v among the p remaining ones. */
static int real_rank(const ar_t *a, int v) { return v < a->rem ? 2 * v + 1 : v + a->rem; }

static int recursive_doubling(ar_t *a, int v)
{
    int err = MPI_SUCCESS;
    for (int mask = 1; mask < a->pof2; mask <<= 1) {
        int peer = real_rank(a, v ^ mask);
        coll_keep_err(&err, coll_sendrecv(a->r, a->c, a->acc, a->bytes, peer, a->tmp, a->bytes, peer, a->tag));
        coll_op_combine(a->op, &a->acc, &a->tmp, peer < a->c->rank, a->count);
    }
    return err;
}

/* First element of block b when count elements are cut into pof2 blocks. */
static size_t block_start(const ar_t *a, int b)
{
    size_t q = a->count / (size_t)a->pof2, extra = a->count % (size_t)a->pof2;
    return (size_t)b * q + ((size_t)b < extra ? (size_t)b : extra);
}

static int exchange_blocks(ar_t *a, int peer, int send_lo, int send_hi, void *rbuf, int recv_lo, int recv_hi)
{
    size_t s0 = block_start(a, send_lo), s1 = block_start(a, send_hi);
    size_t r0 = block_start(a, recv_lo), r1 = block_start(a, recv_hi);
    return coll_sendrecv(a->r, a->c, coll_at(a->acc, s0, a->dt), coll_bytes(s1 - s0, a->dt), peer,
                         coll_at(rbuf, r0, a->dt), coll_bytes(r1 - r0, a->dt), peer, a->tag);
}

static int halving_doubling(ar_t *a, int v)
{
    int err = MPI_SUCCESS, lo = 0, hi = a->pof2; /* blocks [lo, hi) are ours */
    for (int mask = a->pof2 / 2; mask >= 1; mask /= 2) {
        int peer = real_rank(a, v ^ mask), mid = lo + (hi - lo) / 2;
        bool keep_low = !(v & mask);
        int keep_lo = keep_low ? lo : mid, keep_hi = keep_low ? mid : hi;
        int give_lo = keep_low ? mid : lo, give_hi = keep_low ? hi : mid;
        coll_keep_err(&err, exchange_blocks(a, peer, give_lo, give_hi, a->tmp, keep_lo, keep_hi));
        size_t e0 = block_start(a, keep_lo), e1 = block_start(a, keep_hi);
        /* predefined ops commute: combine straight into acc */
        coll_op_apply(a->op, coll_at(a->tmp, e0, a->dt), coll_at(a->acc, e0, a->dt), e1 - e0);
        lo = keep_lo;
        hi = keep_hi;
    }
    for (int mask = 1; mask < a->pof2; mask *= 2) {
        int peer = real_rank(a, v ^ mask), width = hi - lo;
        int plo = (v & mask) ? lo - width : hi;
        coll_keep_err(&err, exchange_blocks(a, peer, lo, hi, a->acc, plo, plo + width));
        lo = plo < lo ? plo : lo;
        hi = lo + 2 * width;
    }
    return err;
}

static int allreduce(p2p_rank_t *r, comm_t *c, void *buf, size_t count, MPI_Datatype dt, const coll_op_t *op,
                     int tag)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    ar_t a = { .r = r, .c = c, .op = op, .dt = dt, .count = count, .bytes = coll_bytes(count, dt), .acc = buf,
               .tag = tag };
    if (n == 1 || a.bytes == 0)
        return MPI_SUCCESS;
    a.pof2 = 1;
    while (a.pof2 * 2 <= n)
        a.pof2 *= 2;
    a.rem = n - a.pof2;
    void *scratch = a.tmp = coll_scratch(a.bytes, buf);
    int v; /* our number among the pof2 remaining ranks, -1 if folded in */
    if (me < 2 * a.rem && !(me & 1)) {
        coll_keep_err(&err, coll_send(r, c, a.acc, a.bytes, me + 1, tag));
        v = -1;
    } else if (me < 2 * a.rem) {
        coll_keep_err(&err, coll_recv(r, c, a.tmp, a.bytes, me - 1, tag));
        coll_op_combine(op, &a.acc, &a.tmp, true, count);
        v = me / 2;
    } else {
        v = me - a.rem;
    }
    if (v >= 0) {
        bool halving = op->kernel && a.bytes >= HALVING_MIN_BYTES && count >= (size_t)a.pof2;
        coll_keep_err(&err, halving ? halving_doubling(&a, v) : recursive_doubling(&a, v));
    }
    if (me < 2 * a.rem && (me & 1))
        coll_keep_err(&err, coll_send(r, c, a.acc, a.bytes, me - 1, tag));
    else if (me < 2 * a.rem)
        coll_keep_err(&err, coll_recv(r, c, a.acc, a.bytes, me + 1, tag));
    coll_copy(buf, a.acc, a.bytes); /* the swaps may have left the result in scratch */
    coll_scratch_free(scratch);
    return err;
}

/* Checks the arguments and resolves the op; *in: the input buffer. */
static int check(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, const void **in,
                 coll_op_t *o)
{
    *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int err = coll_check_buf(*in, count, datatype);
    if (!err)
        err = coll_check_buf(recvbuf, count, datatype);
    if (!err)
        err = coll_op_resolve(op, datatype, o);
    if (!err)
        err = coll_dev_check_op(o, *in, recvbuf);
    return err;
}

#pragma weak MPI_Allreduce = PMPI_Allreduce
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm)
{
    COLL_ENTER(r, c, comm, "MPI_Allreduce");
    const void *in;
    coll_op_t o;
    int err = check(sendbuf, recvbuf, count, datatype, op, &in, &o);
    COLL_CHECK(c, err, err, "MPI_Allreduce");
    coll_nccl_call_t nc = { COLL_NCCL_ALLREDUCE, in, recvbuf, (size_t)count, datatype, op, 0 };
    if (!coll_nccl_try(r, c, &nc, &err)) {
        coll_copy(recvbuf, in, coll_bytes((size_t)count, datatype));
        err = allreduce(r, c, recvbuf, (size_t)count, datatype, &o, COLL_TAG_ALLREDUCE);
    }
    COLL_CHECK(c, err, err, "MPI_Allreduce");
    return MPI_SUCCESS;
}

static int run_allreduce(p2p_rank_t *r, comm_t *c, const coll_nb_args_t *a, int tag)
{
    coll_copy(a->rbuf, a->sbuf, coll_bytes(a->count, a->op.dt));
    return allreduce(r, c, a->rbuf, a->count, a->op.dt, &a->op, tag);
}

#pragma weak MPI_Iallreduce = PMPI_Iallreduce
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER(r, c, comm, "MPI_Iallreduce");
    coll_nb_args_t a = { .rbuf = recvbuf, .count = (size_t)count };
    int err = check(sendbuf, recvbuf, count, datatype, op, &a.sbuf, &a.op);
    if (!err)
        err = coll_nb_start(r, c, run_allreduce, &a, request);
    COLL_CHECK(c, err, err, "MPI_Iallreduce");
    return MPI_SUCCESS;
}
