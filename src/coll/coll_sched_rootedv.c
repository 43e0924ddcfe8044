/* MPI_Igatherv and MPI_Iscatterv as schedules, block by block (coll_sched.h).
 *
 * A member whose block goes by a schedule runs the member side of Igather or
 * Iscatter (coll_sched_rooted.c): one send to the root, or one receive; the
 * other members keep the helper threads.  The root runs one schedule for the
 * blocks that go so and its own block (sched_gatherv, sched_scatterv: the
 * linear algorithm in one step).  Where every other block goes so and the
 * root's buffer is host memory of a type without gaps, that schedule is the
 * whole collective.  Otherwise a helper thread of the root (rootv_run) owns
 * the user's request: it moves the blocks of the members on the helper path
 * -- under the schedule's sequence number, which is theirs too -- waits for
 * the schedule, and copies the root's host copy of the buffer back (device
 * memory, gaps: the host copy holds every block back to back).  The helper
 * runs while the root's process is inside MPI; the schedule's blocks move
 * meanwhile as any schedule's do. */
#include "coll/coll_sched_impl.h"
#include "coll/coll_nc.h"
#include "coll/coll_p2p.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    ptrdiff_t at;  /* bytes from the buffer the root works on (host copy or the user's) */
    size_t len;    /* bytes on the wire */
    ptrdiff_t uat; /* bytes from the user's buffer */
    int count;     /* elements of the user's type */
    bool sched;    /* the block goes by the schedule */
} vblock_t;

/* The root's part on its helper thread. */
typedef struct {
    vblock_t *b;      /* a block per member */
    char *host;       /* the host copy, or NULL: the blocks are in the user's buffer */
    void *ubuf;       /* the user's v-buffer */
    MPI_Datatype udt; /* its type, retained while host is set */
    bool gather;
    bool own_in_place; /* Igatherv's root passed MPI_IN_PLACE: its block stays */
    p2p_req_t *sched;  /* the schedule's request; NULL if it could not start */
    int sched_err;     /* ... why not */
} rootv_t;

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* s->scratch: the blocks; s->rbuf: where they go; s->sbuf, s->bytes: the
 * root's own block as it sends it (MPI_IN_PLACE: already in place). */
bool sched_gatherv(sched_t *s)
{
    if (s->step > 0)
        return true;
    const vblock_t *b = s->scratch;
    int n = s->n, me = s->me;
    char *dst = s->rbuf;
    for (int k = 1; k < n; k++) {
        int from = (me - k + n) % n;
        if (b[from].sched)
            sched_recv(s, from, dst + b[from].at, b[from].len, 0);
    }
    if (s->sbuf != MPI_IN_PLACE) {
        if (s->bytes > b[me].len && !s->err)
            s->err = MPI_ERR_TRUNCATE;
        if (min_size(s->bytes, b[me].len))
            memcpy(dst + b[me].at, s->sbuf, min_size(s->bytes, b[me].len));
    }
    return false;
}

/* s->scratch: the blocks; s->sbuf: where they are; s->rbuf, s->rbytes: the
 * root's own receive (MPI_IN_PLACE: none). */
bool sched_scatterv(sched_t *s)
{
    if (s->step > 0)
        return true;
    const vblock_t *b = s->scratch;
    int n = s->n, me = s->me;
    const char *src = s->sbuf;
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n;
        if (b[to].sched)
            sched_send(s, to, src + b[to].at, b[to].len, 0);
    }
    if (s->rbuf != MPI_IN_PLACE) {
        if (b[me].len > s->rbytes && !s->err)
            s->err = MPI_ERR_TRUNCATE;
        if (min_size(s->rbytes, b[me].len))
            memcpy(s->rbuf, src + b[me].at, min_size(s->rbytes, b[me].len));
    }
    return false;
}

/* The blocks of the root's v-buffer (buf, counts, displs, dt): which go by
 * the schedule (*taken of them), whether the buffer needs a host copy
 * (*staged), and its packed size (*total).  NULL: out of memory. */
static vblock_t *blocks_of(const core_comm_t *c, const void *buf, const int *counts, const int *displs,
                           MPI_Datatype dt, int root, bool *staged, size_t *total, int *taken)
{
    int n = c->size;
    vblock_t *b = malloc((size_t)n * sizeof *b);
    if (!b)
        return NULL;
    bool nc = coll_nc_type(dt), dev = false, any = coll_sched_wanted(c, SIZE_MAX);
    size_t elem = nc ? dt_size(dt) : coll_elem(dt), min = coll_sched_min(), sum = 0;
    ptrdiff_t ext = dt_extent(dt);
    *taken = 0;
    for (int i = 0; i < n; i++) {
        /* the rule member i applies to its own block (coll_sched.h) */
        bool sched = any && i != root && coll_block_bytes(counts[i], dt) * (size_t)n >= min;
        b[i] = (vblock_t){ .at = (ptrdiff_t)sum, .len = (size_t)counts[i] * elem,
                           .uat = (ptrdiff_t)displs[i] * ext, .count = counts[i], .sched = sched };
        sum += b[i].len;
        *taken += sched;
        if (b[i].len && !dev && !nc) /* a buffer is device memory or not as a whole */
            dev = p2p_is_device((const char *)buf + b[i].uat, b[i].len);
    }
    *staged = nc || dev;
    *total = sum;
    if (!*staged)
        for (int i = 0; i < n; i++)
            b[i].at = b[i].uat;
    return b;
}

static void pack_blocks(const rootv_t *v, int n)
{
    bool nc = coll_nc_type(v->udt);
    for (int i = 0; i < n; i++) {
        const vblock_t *b = &v->b[i];
        const char *from = (const char *)v->ubuf + b->uat;
        if (!b->len)
            continue;
        if (nc)
            coll_nc_pack_buf(from, b->count, v->udt, v->host + b->at);
        else
            coll_copy(v->host + b->at, from, b->len);
    }
}

static void unpack_blocks(const rootv_t *v, int n, int me)
{
    bool nc = coll_nc_type(v->udt);
    for (int i = 0; i < n; i++) {
        const vblock_t *b = &v->b[i];
        char *to = (char *)v->ubuf + b->uat;
        if (!b->len || (i == me && v->own_in_place))
            continue;
        if (nc)
            coll_nc_unpack_buf(v->host + b->at, b->len, to, b->count, v->udt);
        else
            coll_copy(to, v->host + b->at, b->len);
    }
}

static void rootv_free(rootv_t *v)
{
    if (v->host)
        dt_release(v->udt);
    free(v->host);
    free(v->b);
    free(v);
}

/* The root's helper thread: the blocks of the members on the helper path
 * (as coll_gather and coll_scatter move them: one message each, empty ones
 * too), then the schedule, then the host copy back. */
static int rootv_run(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    rootv_t *v = a->extra;
    int n = c->size, me = c->rank, err = MPI_SUCCESS;
    char *base = v->host ? v->host : v->ubuf;
    /* the schedule's completion wakes this thread, not the rank that made
     * it (both run on the PE's thread: nothing completes it meanwhile) */
    if (v->sched)
        v->sched->waiter = rank_self();
    p2p_req_t **reqs = coll_malloc((size_t)n * sizeof *reqs);
    for (int i = 0; i < n; i++) {
        const vblock_t *b = &v->b[i];
        reqs[i] = NULL;
        if (i == me || b->sched)
            continue;
        reqs[i] = v->gather ? coll_irecv(r, c, base + b->at, b->len, i, tag)
                            : coll_isend(r, c, base + b->at, b->len, i, tag);
    }
    coll_keep_err(&err, coll_waitall(reqs, n));
    free(reqs);
    if (v->sched) {
        p2p_wait_complete(v->sched);
        coll_keep_err(&err, v->sched->status.MPI_ERROR);
        p2p_req_release(v->sched);
    } else {
        coll_keep_err(&err, v->sched_err);
    }
    if (v->host && v->gather)
        unpack_blocks(v, n, me);
    rootv_free(v);
    return err;
}

/* The root of either, once its blocks are known: its schedule (*out, not
 * started: the caller adds its own block and starts it) and, where needed,
 * its helper thread, which owns the user's request then.  *out is NULL when
 * there is nothing to start (the helper reports why).  Returns the call's
 * error class. */
static int root_parts(p2p_rank_t *r, core_comm_t *c, sched_step_fn *step, vblock_t *b, int taken, bool staged,
                      size_t total, void *ubuf, MPI_Datatype udt, bool own_in_place, MPI_Request *request,
                      sched_t **out)
{
    int n = c->size, err;
    bool gather = step == sched_gatherv;
    sched_t *s;
    *out = NULL;
    if (!staged && taken == n - 1) { /* the schedule is the whole collective */
        s = sched_new(r, c, step, request, &err);
        if (!s) {
            free(b);
            return err;
        }
        s->scratch = b;
        if (gather)
            s->rbuf = ubuf;
        else
            s->sbuf = ubuf;
    } else {
        rootv_t *v = malloc(sizeof *v);
        vblock_t *sb = malloc((size_t)n * sizeof *sb); /* the schedule's own, freed with it */
        char *host = staged ? malloc(total ? total : 1) : NULL;
        if (!v || !sb || (staged && !host)) {
            free(v);
            free(sb);
            free(host);
            free(b);
            return MPI_ERR_NO_MEM;
        }
        memcpy(sb, b, (size_t)n * sizeof *sb);
        *v = (rootv_t){ .b = b, .host = host, .ubuf = ubuf, .udt = udt, .gather = gather,
                        .own_in_place = own_in_place, .sched_err = MPI_ERR_NO_MEM };
        if (host) {
            dt_retain(udt); /* the user may free it before completion */
            if (!gather)
                pack_blocks(v, n); /* the schedule sends from it at once */
        }
        uint32_t seq = coll_nb_next_seq(r, c);
        coll_nb_args_t a = { .root = c->rank, .extra = v };
        err = coll_nb_start_tag(r, c, rootv_run, &a, coll_nb_tag(seq), request);
        if (err) {
            rootv_free(v);
            free(sb);
            return err;
        }
        MPI_Request sq;
        s = sched_new_seq(r, c, step, &sq, &v->sched_err, &seq);
        if (!s) {
            free(sb);
            return MPI_SUCCESS;
        }
        v->sched = sq;
        s->scratch = sb;
        if (gather)
            s->rbuf = host ? host : ubuf;
        else
            s->sbuf = host ? host : ubuf;
    }
    s->root = c->rank;
    *out = s;
    return MPI_SUCCESS;
}

/* The root of either: false when none of its blocks goes by a schedule
 * (the caller starts the helper thread); else true, with *out as
 * root_parts leaves it (NULL: nothing to start) and the call's error class
 * in *err. */
static bool root_start(p2p_rank_t *r, core_comm_t *c, sched_step_fn *step, const void *ubuf, const int *counts,
                       const int *displs, MPI_Datatype udt, bool own_in_place, MPI_Request *request, sched_t **out,
                       int *err)
{
    bool staged;
    size_t total;
    int taken;
    *out = NULL;
    vblock_t *b = blocks_of(c, ubuf, counts, displs, udt, c->rank, &staged, &total, &taken);
    if (!b) {
        *err = MPI_ERR_NO_MEM;
        return true;
    }
    if (!taken) {
        free(b);
        return false;
    }
    *err = root_parts(r, c, step, b, taken, staged, total, (void *)ubuf, udt, own_in_place, request, out);
    return true;
}

bool coll_sched_igatherv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                         const int *rcounts, const int *displs, MPI_Datatype rdt, int root, MPI_Request *request,
                         int *err)
{
    int n = c->size;
    if (c->rank != root) {
        if (!coll_sched_wanted(c, coll_block_bytes(scount, sdt) * (size_t)n))
            return false;
        *err = coll_sched_igather(r, c, sbuf, scount, sdt, NULL, 0, MPI_DATATYPE_NULL, root, request);
        return true;
    }
    bool in_place = sbuf == MPI_IN_PLACE;
    sched_t *s;
    if (!root_start(r, c, sched_gatherv, rbuf, rcounts, displs, rdt, in_place, request, &s, err))
        return false;
    if (!s)
        return true;
    s->sbuf = sbuf; /* the root's own block */
    if (!in_place && sched_staged(sbuf, scount, sdt, &s->bytes))
        s->sbuf = s->stage_in = sched_host_copy(sbuf, scount, sdt, s->bytes, true);
    sched_start(s);
    return true;
}

bool coll_sched_iscatterv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, const int *scounts, const int *displs,
                          MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
                          MPI_Request *request, int *err)
{
    int n = c->size;
    if (c->rank != root) {
        if (!coll_sched_wanted(c, coll_block_bytes(rcount, rdt) * (size_t)n))
            return false;
        *err = coll_sched_iscatter(r, c, NULL, 0, MPI_DATATYPE_NULL, rbuf, rcount, rdt, root, request);
        return true;
    }
    sched_t *s;
    if (!root_start(r, c, sched_scatterv, sbuf, scounts, displs, sdt, false, request, &s, err))
        return false;
    if (!s)
        return true;
    s->rbuf = rbuf; /* the root's own block */
    if (rbuf != MPI_IN_PLACE && sched_staged(rbuf, rcount, rdt, &s->rbytes)) {
        s->rbuf = s->stage = sched_host_copy(rbuf, rcount, rdt, s->rbytes, false);
        sched_unstage_into(s, rbuf, rcount, rdt, s->rbytes);
    }
    sched_start(s);
    return true;
}
