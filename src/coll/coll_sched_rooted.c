/* MPI_Igather and MPI_Iscatter as schedules (coll_sched.h): the linear
 * algorithms of their blocking forms in one step -- the root exchanges one
 * block with every other member at once and copies its own meanwhile
 * (sched_copy).  One way each, so their messages between processes of a
 * node keep the CMA split (each side copies half, coll_sched_cma.c). */
#include "coll/coll_sched_impl.h"

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* s->bytes: a block as the root sends it; s->rbytes: as a member receives it. */
bool sched_scatter(sched_t *s)
{
    if (s->step > 0)
        return true;
    int n = s->n, me = s->me;
    if (me != s->root) {
        sched_recv(s, s->root, s->rbuf, s->rbytes, 0);
        return false;
    }
    const char *src = s->sbuf;
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n;
        sched_send(s, to, src + (size_t)to * s->bytes, s->bytes, 0);
    }
    if (s->rbuf != MPI_IN_PLACE && s->bytes)
        sched_copy(s, s->rbuf, src + (size_t)me * s->bytes, min_size(s->bytes, s->rbytes));
    return false;
}

/* s->bytes: a member's block as it sends it; s->rbytes: a block as the root
 * receives it. */
bool sched_gather(sched_t *s)
{
    if (s->step > 0)
        return true;
    int n = s->n, me = s->me;
    if (me != s->root) {
        sched_send(s, s->root, s->sbuf, s->bytes, 0);
        return false;
    }
    char *dst = s->rbuf;
    for (int k = 1; k < n; k++) {
        int from = (me - k + n) % n;
        sched_recv(s, from, dst + (size_t)from * s->rbytes, s->rbytes, 0);
    }
    if (s->sbuf != MPI_IN_PLACE && s->rbytes)
        sched_copy(s, dst + (size_t)me * s->rbytes, s->sbuf, min_size(s->bytes, s->rbytes));
    return false;
}

int coll_sched_iscatter(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                        int rcount, MPI_Datatype rdt, int root, MPI_Request *request)
{
    int err, n = c->size;
    bool is_root = c->rank == root;
    sched_t *s = sched_new(r, c, sched_scatter, request, &err);
    if (!s)
        return err;
    s->root = root;
    s->sbuf = sbuf;
    s->rbuf = rbuf;
    if (is_root) {
        size_t sall;
        if (sched_staged(sbuf, scount * n, sdt, &sall))
            s->sbuf = s->stage_in = sched_host_copy(sbuf, scount * n, sdt, sall, true);
        s->bytes = sall / (size_t)n;
    }
    if (!is_root || rbuf != MPI_IN_PLACE) {
        size_t rb;
        if (sched_staged(rbuf, rcount, rdt, &rb)) {
            s->rbuf = s->stage = sched_host_copy(rbuf, rcount, rdt, rb, false);
            sched_unstage_into(s, rbuf, rcount, rdt, rb);
        }
        s->rbytes = rb;
    }
    sched_start(s);
    return MPI_SUCCESS;
}

int coll_sched_igather(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                       int rcount, MPI_Datatype rdt, int root, MPI_Request *request)
{
    int err, n = c->size;
    bool is_root = c->rank == root, in_place = is_root && sbuf == MPI_IN_PLACE;
    sched_t *s = sched_new(r, c, sched_gather, request, &err);
    if (!s)
        return err;
    s->root = root;
    s->sbuf = sbuf;
    s->rbuf = rbuf;
    if (!in_place) {
        size_t sb;
        if (sched_staged(sbuf, scount, sdt, &sb))
            s->sbuf = s->stage_in = sched_host_copy(sbuf, scount, sdt, sb, true);
        s->bytes = sb;
    }
    if (is_root) {
        size_t rall;
        if (sched_staged(rbuf, rcount * n, rdt, &rall)) {
            /* in place, the root's own block is in the buffer already */
            s->rbuf = s->stage = sched_host_copy(rbuf, rcount * n, rdt, rall, in_place);
            sched_unstage_into(s, rbuf, rcount * n, rdt, rall);
        }
        s->rbytes = rall / (size_t)n;
    }
    sched_start(s);
    return MPI_SUCCESS;
}
