/* MPI_Iallgather and MPI_Iallgatherv as schedules (coll_sched.h): the
 * linear algorithm in one step -- every member sends its block to every
 * other member and receives every other block at once, and copies its own
 * into place meanwhile.  Every process sends what it receives (uniform
 * blocks), so messages between processes of a node are read whole by their
 * receivers (s->whole, coll_sched_cma.c).
 *
 * The uniform form finds block i at i * s->rbytes of s->rbuf.  The v-form
 * keeps a block_t per member in s->scratch: where the block lies in s->rbuf
 * (the user's buffer, or a host copy that holds the blocks back to back in
 * rank order) and, for the host copy, where it goes back at completion. */
#include "coll/coll_sched_impl.h"
#include "coll/coll_nc.h"

#include <stdlib.h>

typedef struct {
    ptrdiff_t at;  /* bytes from s->rbuf (negative displacements too) */
    size_t len;    /* packed bytes */
    ptrdiff_t uat; /* host copy: bytes from the user's buffer */
    int count;     /* host copy: elements of s->udt */
} block_t;

static void block_at(const sched_t *s, int i, ptrdiff_t *at, size_t *len)
{
    if (s->scratch) {
        const block_t *b = (const block_t *)s->scratch + i;
        *at = b->at;
        *len = b->len;
    } else {
        *at = (ptrdiff_t)((size_t)i * s->rbytes);
        *len = s->rbytes;
    }
}

/* s->bytes: our block as we send it (MPI_IN_PLACE: it sits in s->rbuf).
 * Every member knows every block's size, so empty blocks travel not at all. */
bool sched_allgather(sched_t *s)
{
    if (s->step > 0)
        return true;
    int n = s->n, me = s->me;
    char *dst = s->rbuf;
    ptrdiff_t mine;
    size_t room;
    block_at(s, me, &mine, &room);
    bool in_place = s->sbuf == MPI_IN_PLACE;
    const void *own = in_place ? dst + mine : s->sbuf;
    size_t bytes = in_place ? room : s->bytes;
    if (bytes > room)
        s->err = MPI_ERR_TRUNCATE;
    for (int k = 1; k < n; k++) {
        int from = (me - k + n) % n, to = (me + k) % n;
        ptrdiff_t at;
        size_t len;
        block_at(s, from, &at, &len);
        if (len)
            sched_recv(s, from, dst + at, len, 0);
        if (room)
            sched_send(s, to, own, bytes, 0);
    }
    if (!in_place && room && bytes)
        sched_copy(s, dst + mine, own, bytes < room ? bytes : room);
    return false;
}

int coll_sched_iallgather(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                          int rcount, MPI_Datatype rdt, MPI_Request *request)
{
    int err, n = c->size;
    bool in_place = sbuf == MPI_IN_PLACE;
    sched_t *s = sched_new(r, c, sched_allgather, request, &err);
    if (!s)
        return err;
    s->sbuf = sbuf;
    s->rbuf = rbuf;
    if (!in_place && sched_staged(sbuf, scount, sdt, &s->bytes))
        s->sbuf = s->stage_in = sched_host_copy(sbuf, scount, sdt, s->bytes, true);
    size_t rall;
    if (sched_staged(rbuf, rcount * n, rdt, &rall)) {
        /* in place, our own block is in the buffer already */
        s->rbuf = s->stage = sched_host_copy(rbuf, rcount * n, rdt, rall, in_place);
        sched_unstage_into(s, rbuf, rcount * n, rdt, rall);
    }
    s->rbytes = rall / (size_t)n;
    s->whole = true;
    sched_start(s);
    return MPI_SUCCESS;
}

/* The ranks' thread, at completion: each block of the host copy back into
 * the user's buffer (ours too, unless it was there from the start). */
static void unstage_blocks(sched_t *s)
{
    const block_t *b = s->scratch;
    bool nc = coll_nc_type(s->udt);
    for (int i = 0; i < s->n; i++) {
        if (!b[i].len || (i == s->me && s->sbuf == MPI_IN_PLACE))
            continue;
        char *to = (char *)s->ubuf + b[i].uat;
        const char *from = (const char *)s->stage + b[i].at;
        if (nc)
            coll_nc_unpack_buf(from, b[i].len, to, b[i].count, s->udt);
        else
            coll_copy(to, from, b[i].len);
    }
    dt_release(s->udt);
}

int coll_sched_iallgatherv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt,
                           void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rdt, MPI_Request *request)
{
    int err, n = c->size;
    bool in_place = sbuf == MPI_IN_PLACE;
    block_t *b = malloc((size_t)n * sizeof *b);
    if (!b)
        return MPI_ERR_NO_MEM;
    sched_t *s = sched_new(r, c, sched_allgather, request, &err);
    if (!s) {
        free(b);
        return err;
    }
    s->scratch = b;
    s->sbuf = sbuf;
    s->rbuf = rbuf;
    if (!in_place && sched_staged(sbuf, scount, sdt, &s->bytes))
        s->sbuf = s->stage_in = sched_host_copy(sbuf, scount, sdt, s->bytes, true);
    /* packed bytes per element, as sched_staged counts them */
    bool nc = coll_nc_type(rdt), dev = false;
    size_t elem = nc ? dt_size(rdt) : coll_elem(rdt), total = 0;
    ptrdiff_t ext = dt_extent(rdt);
    for (int i = 0; i < n; i++) {
        b[i] = (block_t){ .at = (ptrdiff_t)total, .len = (size_t)rcounts[i] * elem,
                          .uat = (ptrdiff_t)displs[i] * ext, .count = rcounts[i] };
        total += b[i].len;
        if (b[i].len && !dev && !nc) /* a buffer is device memory or not as a whole */
            dev = p2p_is_device((char *)rbuf + b[i].uat, b[i].len);
    }
    if (nc || dev) { /* the whole receive buffer as one host copy, blocks back to back */
        s->rbuf = s->stage = coll_malloc(total ? total : 1);
        const block_t *m = &b[c->rank];
        if (in_place && m->len) { /* our own block is in the user's buffer */
            if (nc)
                coll_nc_pack_buf((char *)rbuf + m->uat, m->count, rdt, (char *)s->stage + m->at);
            else
                coll_copy((char *)s->stage + m->at, (char *)rbuf + m->uat, m->len);
        }
        s->ubuf = rbuf;
        s->udt = rdt;
        s->unstage = unstage_blocks;
        dt_retain(rdt); /* the user may free it before completion */
    } else {
        for (int i = 0; i < n; i++)
            b[i].at = b[i].uat;
    }
    s->whole = true;
    sched_start(s);
    return MPI_SUCCESS;
}
