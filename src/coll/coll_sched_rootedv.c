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
#include "coll/coll_p2p.h"

#include <stdlib.h>
#include <string.h>

/* The root's part on its helper thread. */
typedef struct {
    sched_vblock_t *b; /* a block per member */
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
    const sched_vblock_t *b = s->scratch;
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
            sched_copy(s, dst + b[me].at, s->sbuf, min_size(s->bytes, b[me].len));
    }
    return false;
}

/* s->scratch: the blocks; s->sbuf: where they are; s->rbuf, s->rbytes: the
 * root's own receive (MPI_IN_PLACE: none). */
bool sched_scatterv(sched_t *s)
{
    if (s->step > 0)
        return true;
    const sched_vblock_t *b = s->scratch;
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
            sched_copy(s, s->rbuf, src + b[me].at, min_size(s->rbytes, b[me].len));
    }
    return false;
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
        const sched_vblock_t *b = &v->b[i];
        reqs[i] = NULL;
        if (i == me || b->sched)
            continue;
        reqs[i] = v->gather ? coll_irecv(r, c, base + b->at, b->len, i, tag)
                            : coll_isend(r, c, base + b->at, b->len, i, tag);
    }
    coll_keep_err(&err, coll_waitall(reqs, n));
    free(reqs);
    coll_keep_err(&err, sched_part_wait(v->sched, v->sched_err));
    if (v->host && v->gather)
        sched_vunpack(v->b, n, v->own_in_place ? me : -1, v->host, v->ubuf, v->udt);
    rootv_free(v);
    return err;
}

/* The root of either, once its blocks are known: its schedule (*out, not
 * started: the caller adds its own block and starts it) and, where needed,
 * its helper thread, which owns the user's request then.  *out is NULL when
 * there is nothing to start (the helper reports why).  Returns the call's
 * error class. */
static int root_parts(p2p_rank_t *r, core_comm_t *c, sched_step_fn *step, sched_vblock_t *b, int taken, bool staged,
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
        sched_vblock_t *sb = malloc((size_t)n * sizeof *sb); /* the schedule's own, freed with it */
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
                        .own_in_place = own_in_place };
        if (host) {
            dt_retain(udt); /* the user may free it before completion */
            if (!gather) /* the schedule sends from it at once */
                sched_vpack(b, n, ubuf, udt, host);
        }
        s = sched_split(r, c, step, rootv_run, v, request, &v->sched, &v->sched_err, &err);
        if (!s) {
            if (err)
                rootv_free(v);
            free(sb);
            return err;
        }
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
    sched_vblock_t *b = malloc((size_t)c->size * sizeof *b);
    if (!b) {
        *err = MPI_ERR_NO_MEM;
        return true;
    }
    staged = sched_vblocks(c, b, ubuf, counts, displs, udt, c->rank, &total, &taken);
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
