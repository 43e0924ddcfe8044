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

enum { AR_FOLD = 0, AR_UNFOLD = 1, AR_ROUND = 2 };

void sched_combine(sched_t *s, bool other_is_lower)
{
    if (other_is_lower) {
        s->op.kernel(s->other, s->acc, s->count);
    } else {
        s->op.kernel(s->acc, s->other, s->count);
        void *t = s->acc;
        s->acc = s->other;
        s->other = t;
    }
}

/* Recursive doubling (as coll_allreduce.c's small-message path): ranks past
 * the largest power of two p <= n fold in first (each even rank among the
 * first 2(n-p) hands its data to the odd one above it and later gets the
 * result back); the p remaining exchange whole vectors log2(p) times,
 * combining with the lower-ranked operand on the left, so every rank
 * computes identical bits. */
bool sched_allreduce(sched_t *s)
{
    int me = s->me;
    if (s->step == 0) {
        if (s->sbuf != MPI_IN_PLACE && s->sbuf != s->rbuf && s->bytes)
            memcpy(s->rbuf, s->sbuf, s->bytes);
        s->pof2 = 1;
        while (s->pof2 * 2 <= s->n)
            s->pof2 *= 2;
        s->rem = s->n - s->pof2;
        s->acc = s->rbuf;
        s->other = s->scratch;
        s->mask = 1;
        if (me < 2 * s->rem) {
            if (me % 2 == 0) {
                sched_send(s, me + 1, s->acc, s->bytes, AR_FOLD);
                s->newrank = -1;
            } else {
                sched_recv(s, me - 1, s->other, s->bytes, AR_FOLD);
                s->red_peer = me - 1;
                s->newrank = me / 2;
            }
        } else {
            s->newrank = me - s->rem;
        }
        return false;
    }
    if (s->red_peer >= 0) { /* the data the previous step brought */
        sched_combine(s, s->red_peer < me);
        s->red_peer = -1;
    }
    if (s->newrank >= 0 && s->mask < s->pof2) {
        int np = s->newrank ^ s->mask;
        int peer = np < s->rem ? np * 2 + 1 : np + s->rem;
        int tag = AR_ROUND;
        for (int m = s->mask; m > 1; m >>= 1)
            tag++;
        sched_send(s, peer, s->acc, s->bytes, tag);
        sched_recv(s, peer, s->other, s->bytes, tag);
        s->red_peer = peer;
        s->mask <<= 1;
        return false;
    }
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
        memcpy(dst + (size_t)me * s->rbytes, src + (size_t)me * s->bytes, own);
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
