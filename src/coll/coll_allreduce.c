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
 *    reduced on one rank only, so all ranks again get identical bits.
 * The first step sends from the input and receives into the output where
 * the operand order allows, so the input is never copied as a whole
 * (recvbuf is the accumulator).  Communicators whose ranks all live in our
 * process take coll_local_reduce instead (coll_reduce.c). */
#include "coll/coll_inter.h"
#include "coll/coll_sched.h"

#include <stdlib.h>

/* Ranks of one process (coll_local_reduce) from this size on: with 4 ranks
 * on one PE it takes 2.2 against 2.6 us at 256 bytes, 22 against 119 us at
 * 64 KiB; below, the two paths are within noise (2-core machine, e549d47). */
#define LOCAL_MIN_BYTES 256

/* From this many bytes a predefined op uses reduce-scatter + allgather.
 * With two ranks halving moves as many bytes as doubling and saves only
 * half of the reduction, for a second round trip: on two processes of one
 * node doubling is 1.3-1.9x faster from 16 to 256 KiB and slower from
 * 512 KiB on (2-core machine, e549d47).  With more ranks halving also moves fewer bytes. */
#define HALVING_MIN_BYTES 16384
#define HALVING_MIN_BYTES_PAIR (512 * 1024)

/* Up to this many bytes the scratch block is on the stack (host buffers). */
#define SMALL_BYTES 256

typedef struct ar {
    p2p_rank_t *r;
    core_comm_t *c;
    const coll_op_t *op;
    MPI_Datatype dt;
    size_t count, bytes;
    int pof2, rem;
    int tag;
    void *acc;      /* the user's output buffer: our partial results */
    void *tmp;      /* receives (scratch; NULL until needed) */
    /* SMALL_BYTES on the caller's stack: small host vectors receive there
     * instead of in cached scratch, whose lookup and release cost more than
     * such a reduction itself */
    void *small;
} ar_t;

/* Real rank of rank v among the p remaining ones. */
static int real_rank(const ar_t *a, int v) { return v < a->rem ? 2 * v + 1 : v + a->rem; }

static void *tmp_of(ar_t *a)
{
    if (!a->tmp)
        a->tmp = a->bytes <= SMALL_BYTES && !gpu_enabled() ? a->small : coll_scratch(a->bytes, a->acc);
    return a->tmp;
}

static void tmp_free(ar_t *a)
{
    if (a->tmp != a->small)
        coll_scratch_free(a->tmp);
}

/* One exchange with peer from our data `mine` (not acc) into acc = the
 * lower rank's data op the higher's: a higher peer's data lands in acc and
 * ours is reduced onto it; a lower one's lands in tmp while ours is copied
 * to acc as the messages travel. */
static int first_step(p2p_rank_t *r, core_comm_t *c, const void *mine, void *acc, void *tmp, size_t bytes, size_t count,
                      const coll_op_t *op, int peer, bool lower, int tag)
{
    coll_xchg_t x;
    coll_xchg_start(&x, r, c, mine, bytes, peer, lower ? tmp : acc, bytes, peer, tag);
    if (lower)
        coll_copy(acc, mine, bytes);
    int err = coll_xchg_finish(&x);
    coll_op_apply(op, lower ? tmp : mine, acc, count);
    return err;
}

/* The whole vector log2(p) times.  `mine` holds our data: the first step
 * sends from it; when it is not acc, a higher partner's data lands in acc
 * and ours is reduced onto it (ours on the left, no copy).  Later steps
 * receive into tmp, and acc and tmp swap roles when the result lands there
 * (coll_op_combine), so a last copy may be needed. */
static int recursive_doubling(ar_t *a, int v, const void *mine)
{
    int err = MPI_SUCCESS;
    void *acc = a->acc, *tmp = NULL; /* scratch only once needed: two ranks, the lower one never does */
    for (int mask = 1; mask < a->pof2; mask <<= 1) {
        int peer = real_rank(a, v ^ mask);
        bool lower = peer < a->c->rank;
        if (mine != a->acc) {
            if (lower)
                tmp = tmp_of(a);
            coll_keep_err(&err, first_step(a->r, a->c, mine, a->acc, tmp, a->bytes, a->count, a->op, peer, lower,
                                           a->tag));
            mine = a->acc;
            continue;
        }
        if (!tmp)
            tmp = tmp_of(a);
        coll_keep_err(&err, coll_sendrecv(a->r, a->c, acc, a->bytes, peer, tmp, a->bytes, peer, a->tag));
        coll_op_combine(a->op, &acc, &tmp, lower, a->count);
    }
    coll_copy(a->acc, mine == a->acc ? acc : mine, a->bytes);
    if (tmp) /* the scratch block, whichever name it has now */
        a->tmp = tmp == a->acc ? acc : tmp;
    return err;
}

/* First element of block b when count elements are cut into pof2 blocks. */
static size_t block_start(const ar_t *a, int b)
{
    size_t q = a->count / (size_t)a->pof2, extra = a->count % (size_t)a->pof2;
    return (size_t)b * q + ((size_t)b < extra ? (size_t)b : extra);
}

static int exchange_blocks(ar_t *a, int peer, const void *sbuf, int send_lo, int send_hi, void *rbuf, int recv_lo,
                           int recv_hi)
{
    size_t s0 = block_start(a, send_lo), s1 = block_start(a, send_hi);
    size_t r0 = block_start(a, recv_lo), r1 = block_start(a, recv_hi);
    return coll_sendrecv(a->r, a->c, coll_at(sbuf, s0, a->dt), coll_bytes(s1 - s0, a->dt), peer,
                         coll_at(rbuf, r0, a->dt), coll_bytes(r1 - r0, a->dt), peer, a->tag);
}

/* Reduce-scatter by recursive halving, allgather by recursive doubling, in
 * acc.  `mine` holds our data: the first step sends from it and, when it
 * is not acc, receives the partner's half straight into acc and reduces
 * our half onto it -- no copy of the input, no scratch at all. */
static int halving_doubling(ar_t *a, int v, const void *mine)
{
    int err = MPI_SUCCESS, lo = 0, hi = a->pof2; /* blocks [lo, hi) are ours */
    for (int mask = a->pof2 / 2; mask >= 1; mask /= 2) {
        int peer = real_rank(a, v ^ mask), mid = lo + (hi - lo) / 2;
        bool keep_low = !(v & mask);
        int keep_lo = keep_low ? lo : mid, keep_hi = keep_low ? mid : hi;
        int give_lo = keep_low ? mid : lo, give_hi = keep_low ? hi : mid;
        void *into = mine == a->acc ? tmp_of(a) : a->acc;
        coll_keep_err(&err, exchange_blocks(a, peer, mine, give_lo, give_hi, into, keep_lo, keep_hi));
        size_t e0 = block_start(a, keep_lo), e1 = block_start(a, keep_hi);
        /* predefined ops commute, and each block is reduced on one rank
         * only: every rank ends with the same bits whatever the order */
        if (into == a->acc)
            coll_op_apply(a->op, coll_at(mine, e0, a->dt), coll_at(a->acc, e0, a->dt), e1 - e0);
        else
            coll_op_apply(a->op, coll_at(into, e0, a->dt), coll_at(a->acc, e0, a->dt), e1 - e0);
        mine = a->acc;
        lo = keep_lo;
        hi = keep_hi;
    }
    for (int mask = 1; mask < a->pof2; mask *= 2) {
        int peer = real_rank(a, v ^ mask), width = hi - lo;
        int plo = (v & mask) ? lo - width : hi;
        coll_keep_err(&err, exchange_blocks(a, peer, a->acc, lo, hi, a->acc, plo, plo + width));
        lo = plo < lo ? plo : lo;
        hi = lo + 2 * width;
    }
    return err;
}

/* recursive_doubling for two ranks, not in place, without its set-up
 * (ar_t, the fold, the choice of algorithm: half the instructions of a
 * small two-rank Allreduce outside the messages): its one step. */
static __attribute__((noinline)) int allreduce_pair(p2p_rank_t *r, core_comm_t *c, const void *in, void *out,
                                                    size_t count, size_t bytes, const coll_op_t *op, int tag)
{
    bool lower = c->rank == 1; /* the peer is lower */
    _Alignas(64) unsigned char small[SMALL_BYTES];
    void *tmp = !lower ? NULL : bytes <= SMALL_BYTES && !gpu_enabled() ? small : coll_scratch(bytes, out);
    int err = first_step(r, c, in, out, tmp, bytes, count, op, 1 - c->rank, lower, tag);
    if (tmp != small)
        coll_scratch_free(tmp);
    return err;
}

/* out = op over every rank's `in` (in == out: in place). */
static int allreduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                     const coll_op_t *op, int tag)
{
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    size_t bytes = coll_bytes(count, dt);
    if (n == 1 || bytes == 0) {
        coll_copy(out, in, bytes);
        return MPI_SUCCESS;
    }
    if (bytes >= LOCAL_MIN_BYTES && coll_all_local(c))
        return coll_local_reduce(r, c, in, out, count, dt, op, 0, true, tag);
    if (n == 2 && bytes < HALVING_MIN_BYTES_PAIR && in != out) /* below it two ranks never halve */
        return allreduce_pair(r, c, in, out, count, bytes, op, tag);
    _Alignas(64) unsigned char small[SMALL_BYTES]; /* not in a: its initialiser would clear it */
    ar_t a = { .r = r, .c = c, .op = op, .dt = dt, .count = count, .bytes = bytes, .acc = out, .tag = tag,
               .small = small };
    a.pof2 = 1;
    while (a.pof2 * 2 <= n)
        a.pof2 *= 2;
    a.rem = n - a.pof2;
    size_t halving_min = a.pof2 == 2 ? HALVING_MIN_BYTES_PAIR : HALVING_MIN_BYTES;
    bool halving = op->kernel && a.bytes >= halving_min && count >= (size_t)a.pof2;
    const void *mine = in; /* where our data is now */
    int v;                 /* our number among the pof2 remaining ranks, -1 if folded in */
    if (me < 2 * a.rem && !(me & 1)) {
        coll_keep_err(&err, coll_send(r, c, in, a.bytes, me + 1, tag));
        v = -1;
    } else if (me < 2 * a.rem) {
        /* the lower rank's data on the left; a predefined op commutes, so
         * it may land in out directly and take ours on the left */
        bool direct = halving && in != out;
        void *peer_data = direct ? out : tmp_of(&a);
        coll_keep_err(&err, coll_recv_pull(r, c, peer_data, a.bytes, me - 1, tag));
        if (!direct)
            coll_copy(out, in, a.bytes);
        coll_op_apply(op, direct ? in : peer_data, out, count);
        mine = out;
        v = me / 2;
    } else {
        v = me - a.rem;
    }
    if (v >= 0 && halving) {
        coll_keep_err(&err, halving_doubling(&a, v, mine));
    } else if (v >= 0) {
        coll_keep_err(&err, recursive_doubling(&a, v, mine));
    }
    if (me < 2 * a.rem && (me & 1))
        coll_keep_err(&err, coll_send(r, c, out, a.bytes, me - 1, tag));
    else if (me < 2 * a.rem)
        coll_keep_err(&err, coll_recv(r, c, out, a.bytes, me + 1, tag));
    tmp_free(&a);
    return err;
}

int coll_allreduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                   const coll_op_t *op, int tag)
{
    return allreduce(r, c, in, out, count, dt, op, tag);
}

/* Checks the arguments and resolves the op; *in: the input buffer. */
static int check(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, const void **in,
                 coll_op_t *o)
{
    *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int err = coll_check_type(count, datatype); /* once for both buffers */
    if (!err)
        err = coll_check_ptr(*in, count, datatype);
    if (!err)
        err = coll_check_ptr(recvbuf, count, datatype);
    if (!err)
        err = coll_op_resolve(op, datatype, o);
    return err;
}

#pragma weak MPI_Allreduce = PMPI_Allreduce
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Allreduce");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .rbuf = recvbuf, .count = (size_t)count };
        return coll_inter_return(c, coll_inter_allreduce(r, c, &a, datatype, op, NULL), "MPI_Allreduce");
    }
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_red.c */
        int nerr = coll_nc_allreduce(r, c, sendbuf, recvbuf, count, datatype, op, NULL);
        COLL_CHECK(c, nerr, nerr, "MPI_Allreduce");
        return MPI_SUCCESS;
    }
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    coll_op_t o;
    /* count * size: a type that fails the check below stages nothing; the
     * byte count alone decides, so that every rank takes the same path */
    bool staged = count > 0 && dt_valid(datatype) && coll_stage_wanted(c, (size_t)count * dt_size(datatype));
    int err = check(sendbuf, recvbuf, count, datatype, op, &in, &o);
    COLL_CHECK(c, err, err, "MPI_Allreduce");
    coll_nccl_call_t nc = { COLL_NCCL_ALLREDUCE, in, recvbuf, (size_t)count, datatype, op, 0 };
    if (UTIL_UNLIKELY(staged))
        err = coll_staged_allreduce(r, c, in, recvbuf, (size_t)count, datatype, &o, COLL_TAG_ALLREDUCE);
    else if (!coll_nccl_try(r, c, &nc, &err)) /* in line: host buffers pay its gpu_enabled() test */
        err = allreduce(r, c, in, recvbuf, (size_t)count, datatype, &o, COLL_TAG_ALLREDUCE);
    COLL_CHECK(c, err, err, "MPI_Allreduce");
    return MPI_SUCCESS;
}

static int run_allreduce(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    return allreduce(r, c, a->sbuf, a->rbuf, a->count, a->op.dt, &a->op, tag);
}

#pragma weak MPI_Iallreduce = PMPI_Iallreduce
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Iallreduce");
    if (UTIL_UNLIKELY(c->remote)) {
        coll_nb_args_t a = { .sbuf = sendbuf, .rbuf = recvbuf, .count = (size_t)count };
        int err = request ? coll_inter_allreduce(r, c, &a, datatype, op, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Iallreduce");
    }
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_red.c */
        int nerr = coll_nc_allreduce(r, c, sendbuf, recvbuf, count, datatype, op, request);
        COLL_CHECK(c, nerr, nerr, "MPI_Iallreduce");
        return MPI_SUCCESS;
    }
    coll_nb_args_t a = { .rbuf = recvbuf, .count = (size_t)count };
    int err = check(sendbuf, recvbuf, count, datatype, op, &a.sbuf, &a.op);
    /* the vector goes both ways (coll_sched.h) */
    if (!err && a.op.kernel && coll_sched_wanted(c, 2 * (size_t)count * dt_size(datatype)))
        err = coll_sched_iallreduce(r, c, a.sbuf, recvbuf, (size_t)count, &a.op, request);
    else if (!err)
        err = coll_nb_start(r, c, run_allreduce, &a, request);
    COLL_CHECK(c, err, err, "MPI_Iallreduce");
    return MPI_SUCCESS;
}
