/* MPI_Ibcast, MPI_Iallreduce and MPI_Ialltoall as schedules (coll_sched.h):
 * the algorithms of their blocking forms, cut into steps.  Steps run on
 * whichever thread completed the previous one, so they touch host memory
 * and predefined reduction kernels only. */
#include "coll/coll_sched_impl.h"
#include "coll/coll_nc.h"

#include <stdlib.h>

/* Binomial tree over ranks relative to the root (as coll_bcast.c): receive
 * from the parent, then send to the children, largest subtree first. */
bool sched_bcast(sched_t *s)
{
    int n = s->n, vr = (s->me - s->root + n) % n;
    switch (s->step) {
    case 0:
        if (vr)
            sched_recv(s, (vr - (vr & -vr) + s->root) % n, s->rbuf, s->bytes, 0);
        return false;
    case 1: {
        int low = 1;
        if (vr)
            low = vr & -vr;
        else
            while (low < n)
                low <<= 1;
        for (int m = low >> 1; m > 0; m >>= 1)
            if (vr + m < n)
                sched_send(s, (vr + m + s->root) % n, s->rbuf, s->bytes, 0);
        return false;
    }
    default:
        return true;
    }
}

enum { AR_FOLD = 0, AR_UNFOLD = 1, AR_ROUND = 2, AR_HALVE = 40, AR_GATHER = 80 };

/* From this many bytes four or more remaining ranks reduce-scatter by
 * recursive halving and allgather by recursive doubling (Rabenseifner)
 * instead of exchanging whole vectors, as coll_allreduce.c's blocking form
 * does.  Two never halve: their one whole exchange reads the partner's
 * vector straight into the result and folds the input into it as it comes
 * (s->in), where halving pays a second round trip for half the reduction
 * (MPI_Iallreduce + MPI_Wait, 2 processes, 2-vCPU machine: 8.1/12.5/22.7/
 * 45/92/379 us at 64 KiB/128 KiB/256 KiB/512 KiB/1 MiB/4 MiB against
 * halving's 11.8/20.0/30.3/57/113/453). */
#define AR_HALVING_MIN 16384

void sched_combine(sched_t *s, bool other_is_lower)
{
    if (s->in) { /* the partner's data came into acc: fold our input into it */
        s->op.kernel(s->in, s->acc, s->count);
        s->in = NULL;
        return;
    }
    if (other_is_lower) {
        s->op.kernel(s->other, s->acc, s->count);
    } else {
        s->op.kernel(s->acc, s->other, s->count);
        void *t = s->acc;
        s->acc = s->other;
        s->other = t;
    }
}

/* Real rank of rank v among the p remaining ones. */
static int real_rank(const sched_t *s, int v) { return v < s->rem ? 2 * v + 1 : v + s->rem; }

static int log2_of(int mask)
{
    int k = 0;
    while (mask > 1) {
        mask >>= 1;
        k++;
    }
    return k;
}

/* Byte offset of block b when the vector is cut into pof2 blocks. */
static size_t block_at(const sched_t *s, int b)
{
    size_t q = s->count / (size_t)s->pof2, extra = s->count % (size_t)s->pof2;
    size_t first = (size_t)b * q + ((size_t)b < extra ? (size_t)b : extra);
    return s->count ? first * (s->bytes / s->count) : 0;
}

/* Posts blocks [lo, hi) of buf to peer, or from it. */
static void send_blocks(sched_t *s, int peer, const char *buf, int lo, int hi, int tag)
{
    size_t a = block_at(s, lo), b = block_at(s, hi);
    if (b > a)
        sched_send(s, peer, buf + a, b - a, tag);
}

static void recv_blocks(sched_t *s, int peer, char *buf, int lo, int hi, int tag)
{
    size_t a = block_at(s, lo), b = block_at(s, hi);
    if (b > a)
        sched_recv(s, peer, buf + a, b - a, tag);
}

/* One step of the whole-vector exchanges; false when they are over. */
static bool doubling_step(sched_t *s)
{
    if (s->mask >= s->pof2)
        return false;
    int peer = real_rank(s, s->newrank ^ s->mask), tag = AR_ROUND + log2_of(s->mask);
    sched_send(s, peer, s->in ? s->in : s->acc, s->bytes, tag);
    sched_recv(s, peer, s->in ? s->acc : s->other, s->bytes, tag);
    s->red_peer = peer;
    s->mask <<= 1;
    return true;
}

/* One step of the reduce-scatter (mask from p/2 down: we keep half of our
 * blocks and receive the partner's data for them into other, reduced at
 * the next step), then of the allgather (mask from 1 up: our blocks to the
 * partner, its as many beside them into acc); false when both are over. */
static bool halving_step(sched_t *s)
{
    int v = s->newrank;
    if (!s->gathering) {
        if (s->mask >= 1) {
            int peer = real_rank(s, v ^ s->mask), mid = s->lo + (s->hi - s->lo) / 2, tag = AR_HALVE + log2_of(s->mask);
            bool keep_low = !(v & s->mask);
            int klo = keep_low ? s->lo : mid, khi = keep_low ? mid : s->hi;
            send_blocks(s, peer, s->in ? s->in : s->acc, keep_low ? mid : s->lo, keep_low ? s->hi : mid, tag);
            recv_blocks(s, peer, s->in ? s->acc : s->other, klo, khi, tag);
            s->red_peer = peer;
            s->lo = klo;
            s->hi = khi;
            s->mask /= 2;
            return true;
        }
        s->gathering = true;
        s->mask = 1;
    }
    if (s->mask >= s->pof2)
        return false;
    int peer = real_rank(s, v ^ s->mask), width = s->hi - s->lo, tag = AR_GATHER + log2_of(s->mask);
    int plo = (v & s->mask) ? s->lo - width : s->hi;
    send_blocks(s, peer, s->acc, s->lo, s->hi, tag);
    recv_blocks(s, peer, s->acc, plo, plo + width, tag);
    s->lo = plo < s->lo ? plo : s->lo;
    s->hi = s->lo + 2 * width;
    s->mask *= 2;
    return true;
}

/* The reduce-scatter's partner data for our blocks, onto acc (predefined
 * ops commute, and each block is reduced on one rank only: every rank ends
 * with the same bits). */
static void combine_blocks(sched_t *s)
{
    size_t a = block_at(s, s->lo), b = block_at(s, s->hi);
    const char *operand = s->in ? s->in : s->other; /* s->in: the partner's data came into acc */
    if (b > a)
        s->op.kernel(operand + a, (char *)s->acc + a, (b - a) / (s->bytes / s->count));
}

/* Ranks past the largest power of two p <= n fold in first (each even rank
 * among the first 2(n-p) hands its data to the odd one above it and later
 * gets the result back).  The p remaining then either exchange whole
 * vectors log2(p) times, combining with the lower-ranked operand on the
 * left (recursive doubling, as coll_allreduce.c's small-message path), or
 * reduce-scatter and allgather (halving_step); either way every rank
 * computes identical bits. */
bool sched_allreduce(sched_t *s)
{
    int me = s->me;
    if (s->step == 0) {
        /* not in place: the input is sent from where it is and combined
         * into rbuf with the partner's first operand, not copied first */
        s->in = s->sbuf != MPI_IN_PLACE && s->sbuf != s->rbuf && s->bytes ? s->sbuf : NULL;
        s->pof2 = 1;
        while (s->pof2 * 2 <= s->n)
            s->pof2 *= 2;
        s->rem = s->n - s->pof2;
        s->acc = s->rbuf;
        s->other = s->scratch;
        s->halving = s->count >= (size_t)s->pof2 && s->pof2 > 2 && s->bytes >= AR_HALVING_MIN;
        s->mask = s->halving ? s->pof2 / 2 : 1;
        s->lo = 0;
        s->hi = s->pof2;
        if (me < 2 * s->rem) {
            if (me % 2 == 0) {
                sched_send(s, me + 1, s->in ? s->in : s->acc, s->bytes, AR_FOLD);
                s->in = NULL; /* combined with nothing here: the result comes back whole */
                s->newrank = -1;
            } else {
                sched_recv(s, me - 1, s->in ? s->acc : s->other, s->bytes, AR_FOLD);
                s->red_peer = me - 1;
                s->newrank = me / 2;
            }
        } else {
            s->newrank = me - s->rem;
        }
        return false;
    }
    if (s->red_peer >= 0) { /* the data the previous step brought, unless folded in as it came */
        bool folded_in = s->step == 1 && me < 2 * s->rem; /* a whole vector from the rank below */
        if (s->folded)
            s->folded = false;
        else if (s->halving && !folded_in)
            combine_blocks(s);
        else
            sched_combine(s, s->red_peer < me);
        s->in = NULL;
        s->red_peer = -1;
    }
    if (s->newrank >= 0 && (s->halving ? halving_step(s) : doubling_step(s)))
        return false;
    if (!s->unfolded) {
        s->unfolded = true;
        if (s->acc != s->rbuf && s->bytes)
            memcpy(s->rbuf, s->acc, s->bytes);
        if (me < 2 * s->rem) {
            if (me % 2)
                sched_send(s, me - 1, s->rbuf, s->bytes, AR_UNFOLD);
            else
                sched_recv(s, me + 1, s->rbuf, s->bytes, AR_UNFOLD);
        }
        return false;
    }
    return true;
}

/* Every block at once: n-1 receives and n-1 sends in one step, our own
 * block copied meanwhile.  MPI_IN_PLACE sends from a copy of the input. */
bool sched_alltoall(sched_t *s)
{
    if (s->step > 0)
        return true;
    int n = s->n, me = s->me;
    const char *src = s->sbuf;
    char *dst = s->rbuf;
    if (src == MPI_IN_PLACE) {
        src = s->scratch;
        if (s->bytes)
            memcpy(s->scratch, dst, s->bytes * (size_t)n);
    }
    if (s->bytes > s->rbytes)
        s->err = MPI_ERR_TRUNCATE;
    for (int k = 1; k < n; k++) {
        int from = (me - k + n) % n, to = (me + k) % n;
        sched_recv(s, from, dst + (size_t)from * s->rbytes, s->rbytes, 0);
        sched_send(s, to, src + (size_t)to * s->bytes, s->bytes, 0);
    }
    size_t own = s->bytes < s->rbytes ? s->bytes : s->rbytes;
    if (own && dst + (size_t)me * s->rbytes != src + (size_t)me * s->bytes)
        sched_copy(s, dst + (size_t)me * s->rbytes, src + (size_t)me * s->bytes, own);
    return false;
}

bool sched_staged(const void *buf, int count, MPI_Datatype dt, size_t *bytes)
{
    bool nc = coll_nc_type(dt);
    *bytes = nc ? (size_t)count * dt_size(dt) : coll_bytes((size_t)count, dt);
    return nc || p2p_is_device(buf, *bytes);
}

void *sched_host_copy(const void *buf, int count, MPI_Datatype dt, size_t bytes, bool fill)
{
    void *h = coll_malloc(bytes ? bytes : 1);
    if (fill && bytes) {
        if (coll_nc_type(dt))
            coll_nc_pack_buf(buf, count, dt, h);
        else
            coll_copy(h, buf, bytes);
    }
    return h;
}

void sched_unstage_into(sched_t *s, void *buf, int count, MPI_Datatype dt, size_t bytes)
{
    s->ubuf = buf;
    s->ucount = count;
    s->udt = dt;
    s->ubytes = bytes;
    dt_retain(dt); /* the user may free it before completion */
}

void sched_unstage(sched_t *s)
{
    if (s->unstage) {
        s->unstage(s);
    } else if (s->ubytes) {
        if (coll_nc_type(s->udt))
            coll_nc_unpack_buf(s->stage, s->ubytes, s->ubuf, s->ucount, s->udt);
        else
            coll_copy(s->ubuf, s->stage, s->ubytes);
        dt_release(s->udt);
    }
    free(s->stage);
    free(s->stage_in);
}

int coll_sched_ibcast(p2p_rank_t *r, core_comm_t *c, void *buf, int count, MPI_Datatype dt, int root,
                      MPI_Request *request)
{
    int err;
    sched_t *s = sched_new(r, c, sched_bcast, request, &err);
    if (!s)
        return err;
    s->rbuf = buf;
    if (sched_staged(buf, count, dt, &s->bytes)) {
        s->rbuf = s->stage = sched_host_copy(buf, count, dt, s->bytes, c->rank == root);
        if (c->rank != root)
            sched_unstage_into(s, buf, count, dt, s->bytes);
    }
    s->root = root;
    sched_start(s);
    return MPI_SUCCESS;
}

int coll_sched_iallreduce(p2p_rank_t *r, core_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                          const coll_op_t *op, MPI_Request *request)
{
    int err;
    sched_t *s = sched_new(r, c, sched_allreduce, request, &err);
    if (!s)
        return err;
    size_t bytes = coll_bytes(count, op->dt);
    s->sbuf = sbuf;
    s->rbuf = rbuf;
    if (sbuf != rbuf && p2p_is_device(sbuf, bytes))
        s->sbuf = s->stage_in = sched_host_copy(sbuf, (int)count, op->dt, bytes, true);
    if (p2p_is_device(rbuf, bytes)) {
        s->rbuf = s->stage = sched_host_copy(rbuf, (int)count, op->dt, bytes, sbuf == rbuf);
        if (sbuf == rbuf) /* MPI_IN_PLACE */
            s->sbuf = s->stage;
        sched_unstage_into(s, rbuf, (int)count, op->dt, bytes);
    }
    s->bytes = bytes;
    s->count = count;
    s->op = *op;
    s->scratch = coll_malloc(bytes ? bytes : 1);
    /* every exchange but the fold's goes both ways with as many bytes:
     * each receiver reads its message whole (coll_sched_cma.c) */
    s->whole = true;
    sched_start(s);
    return MPI_SUCCESS;
}

int coll_sched_ialltoall(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                         int rcount, MPI_Datatype rdt, MPI_Request *request)
{
    int err, n = c->size;
    sched_t *s = sched_new(r, c, sched_alltoall, request, &err);
    if (!s)
        return err;
    bool in_place = sbuf == MPI_IN_PLACE;
    size_t sall = 0, rall;
    s->sbuf = sbuf;
    if (!in_place && sched_staged(sbuf, scount * n, sdt, &sall))
        s->sbuf = s->stage_in = sched_host_copy(sbuf, scount * n, sdt, sall, true);
    s->rbuf = rbuf;
    if (sched_staged(rbuf, rcount * n, rdt, &rall)) {
        s->rbuf = s->stage = sched_host_copy(rbuf, rcount * n, rdt, rall, in_place);
        sched_unstage_into(s, rbuf, rcount * n, rdt, rall);
    }
    s->rbytes = rall / (size_t)n;
    s->bytes = in_place ? s->rbytes : sall / (size_t)n;
    if (in_place)
        s->scratch = coll_malloc(rall ? rall : 1);
    s->whole = true;
    sched_start(s);
    return MPI_SUCCESS;
}
