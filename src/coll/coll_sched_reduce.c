/* MPI_Ireduce as a schedule (coll_sched.h): a binomial tree toward the root
 * over ranks relative to it, one level a step.  At level m a rank whose
 * relative rank has bit m sends its partial result to the rank m below and
 * is done; the others receive from the rank m above, if any, and combine,
 * their own (lower) operand on the left.  Only predefined ops come here:
 * they commute, and their host kernels run on whichever thread completes a
 * step. */
#include "coll/coll_sched_impl.h"
#include "coll/coll_nc.h"

#include <stdlib.h>
#include <string.h>

bool sched_reduce(sched_t *s)
{
    int n = s->n, vr = (s->me - s->root + n) % n;
    if (s->step == 0) {
        s->mask = 1;
        s->red_peer = -1;
        if (vr && ((vr & 1) || vr + 1 >= n)) { /* a leaf sends its input as it is */
            sched_send(s, (vr - (vr & -vr) + s->root) % n, s->sbuf, s->bytes, 0);
            s->mask = n;
            return false;
        }
        /* the first child's result is read into acc and our input folded
         * into it there (coll_sched_cma.c), not copied into acc first */
        s->in = s->acc != s->sbuf && s->bytes ? s->sbuf : NULL;
    }
    if (s->red_peer >= 0) { /* the data the previous step brought, unless folded in as it came */
        if (s->folded)
            s->folded = false;
        else
            sched_combine(s, false);
        s->in = NULL;
        s->red_peer = -1;
    }
    while (s->mask < n) {
        int m = s->mask;
        s->mask <<= 1;
        if (vr & m) {
            sched_send(s, (vr - m + s->root) % n, s->acc, s->bytes, 0);
            s->mask = n;
            return false;
        }
        if (vr + m < n) {
            sched_recv(s, (vr + m + s->root) % n, s->in ? s->acc : s->other, s->bytes, 0);
            s->red_peer = vr + m;
            return false;
        }
    }
    if (vr == 0 && s->acc != s->rbuf && s->bytes)
        memcpy(s->rbuf, s->acc, s->bytes);
    return true;
}

int coll_sched_ireduce(p2p_rank_t *r, core_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                       const coll_op_t *op, int root, MPI_Request *request)
{
    int err;
    sched_t *s = sched_new(r, c, sched_reduce, request, &err);
    if (!s)
        return err;
    bool is_root = c->rank == root, in_place = is_root && sbuf == rbuf;
    size_t bytes = coll_bytes(count, op->dt);
    s->root = root;
    s->sbuf = sbuf;
    s->rbuf = rbuf;
    if (!in_place && p2p_is_device(sbuf, bytes))
        s->sbuf = s->stage_in = sched_host_copy(sbuf, (int)count, op->dt, bytes, true);
    if (is_root && p2p_is_device(rbuf, bytes)) {
        s->rbuf = s->stage = sched_host_copy(rbuf, (int)count, op->dt, bytes, in_place);
        if (in_place)
            s->sbuf = s->stage;
        sched_unstage_into(s, rbuf, (int)count, op->dt, bytes);
    }
    s->bytes = bytes;
    s->count = count;
    s->op = *op;
    /* the root accumulates in its receive buffer, the others in scratch */
    char *scratch = coll_malloc(bytes ? (is_root ? bytes : 2 * bytes) : 1);
    s->scratch = scratch;
    s->acc = is_root ? s->rbuf : scratch;
    s->other = is_root ? scratch : scratch + bytes;
    s->whole = s->fold = true; /* a parent reads each child's result itself and folds it in */
    sched_start(s);
    return MPI_SUCCESS;
}

/* MPI_Ireduce_scatter(_block): every member sends each other member the
 * block of its input that member keeps, receives its own block from all of
 * them, the first into its result and the others into scratch slots (one
 * step), and folds its own input and the slots into the result (the next).
 * s->scratch: n + 1 block offsets in bytes, then n - 1 slots (the first
 * unused), then, in place, the result (the input's first block is still
 * being sent while it forms). */
bool sched_reduce_scatter(sched_t *s)
{
    int n = s->n, me = s->me;
    const size_t *off = s->scratch;
    size_t mine = off[me + 1] - off[me];
    char *slots = (char *)s->scratch + (size_t)(n + 1) * sizeof(size_t);
    if (s->step == 0) {
        const char *in = s->sbuf;
        for (int k = 1; k < n; k++) {
            int to = (me + k) % n, from = (me - k + n) % n;
            if (off[to + 1] > off[to])
                sched_send(s, to, in + off[to], off[to + 1] - off[to], 0);
            /* the first straight into acc: our own block is folded into it
             * there, never copied into acc first */
            if (mine)
                sched_recv(s, from, k == 1 ? s->acc : slots + (size_t)(k - 1) * mine, mine, 0);
        }
        return false;
    }
    if (s->step == 1) {
        if (mine)
            s->op.kernel((const char *)s->sbuf + off[me], s->acc, s->count);
        for (int k = 2; k < n && mine; k++)
            s->op.kernel(slots + (size_t)(k - 1) * mine, s->acc, s->count);
        if (s->acc != s->rbuf && mine)
            memcpy(s->rbuf, s->acc, mine);
    }
    return true;
}

int coll_sched_ireduce_scatter(p2p_rank_t *r, core_comm_t *c, const void *sbuf, void *rbuf, const int counts[],
                               int count, const coll_op_t *op, MPI_Request *request)
{
    int err, n = c->size, me = c->rank;
    sched_t *s = sched_new(r, c, sched_reduce_scatter, request, &err);
    if (!s)
        return err;
    bool in_place = sbuf == MPI_IN_PLACE;
    size_t el = coll_bytes(1, op->dt), head = (size_t)(n + 1) * sizeof(size_t);
    int tcount = 0, mcount = counts ? counts[me] : count;
    for (int i = 0; i < n; i++)
        tcount += counts ? counts[i] : count;
    size_t total = (size_t)tcount * el, mine = (size_t)mcount * el;
    char *scratch = coll_malloc(head + (size_t)(n - 1) * mine + (in_place ? mine : 0));
    size_t *off = (size_t *)(void *)scratch;
    off[0] = 0;
    for (int i = 0; i < n; i++)
        off[i + 1] = off[i] + (size_t)(counts ? counts[i] : count) * el;
    s->scratch = scratch;
    const void *in = in_place ? rbuf : sbuf;
    s->sbuf = in;
    if (p2p_is_device(in, total))
        s->sbuf = s->stage_in = sched_host_copy(in, tcount, op->dt, total, true);
    s->rbuf = rbuf;
    if (p2p_is_device(rbuf, mine)) {
        s->rbuf = s->stage = sched_host_copy(rbuf, mcount, op->dt, mine, false);
        sched_unstage_into(s, rbuf, mcount, op->dt, mine);
    }
    s->acc = in_place ? scratch + head + (size_t)(n - 1) * mine : s->rbuf;
    s->count = (size_t)mcount;
    s->op = *op;
    sched_start(s);
    return MPI_SUCCESS;
}
