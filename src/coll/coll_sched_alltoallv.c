/* MPI_Ialltoallv as a schedule, block by block (coll_sched.h).
 *
 * The block from member i to member j goes by the schedule when
 * coll_sched_wanted(c, its bytes times the members), which i computes from
 * its send count and j from its receive count: alike, as the signatures
 * match.  Every member works on two v-buffers, so each keeps 2n blocks
 * (sched_vblock_t, coll_sched_impl.h): n to send, then n to receive.
 *
 * Where every block of a member goes so, its schedule is the whole
 * collective (sched_alltoallv: every send and receive in one step, its own
 * block copied meanwhile); a send buffer of device memory or a type with
 * gaps travels from a packed host copy made at the call, a receive buffer
 * so lands in one that goes back at completion.  Where some go so and
 * others not, a helper thread of the member (a2av_run) owns the user's
 * request: it moves the other blocks as the helper path does
 * (coll_alltoall.c: one message each, empty ones too) under the schedule's
 * sequence number, waits for the schedule and copies the received host
 * copy back.  Where none goes so, the caller starts the helper path. */
#include "coll/coll_sched_impl.h"
#include "coll/coll_p2p.h"

#include <stdlib.h>
#include <string.h>

/* The member's helper thread, where its blocks go both ways. */
typedef struct {
    sched_vblock_t *b;      /* 2n blocks: sends, then receives */
    const void *sbuf;       /* the user's send buffer (unused when shost is set) */
    void *rbuf;             /* the user's receive buffer */
    char *shost, *rhost;    /* host copies, or NULL */
    MPI_Datatype rdt;       /* retained while rhost is set */
    p2p_req_t *sched;       /* the schedule's request; NULL if it could not start */
    int sched_err;          /* ... why not */
} a2av_t;

bool sched_alltoallv(sched_t *s)
{
    if (s->step > 0)
        return true;
    int n = s->n, me = s->me;
    const sched_vblock_t *sb = s->scratch, *rb = sb + n;
    const char *src = s->sbuf;
    char *dst = s->rbuf;
    for (int k = 1; k < n; k++) {
        int from = (me - k + n) % n, to = (me + k) % n;
        if (rb[from].sched)
            sched_recv(s, from, dst + rb[from].at, rb[from].len, 0);
        if (sb[to].sched)
            sched_send(s, to, src + sb[to].at, sb[to].len, 0);
    }
    size_t own = sb[me].len < rb[me].len ? sb[me].len : rb[me].len;
    if (sb[me].len > rb[me].len && !s->err)
        s->err = MPI_ERR_TRUNCATE;
    if (own && dst + rb[me].at != src + sb[me].at)
        sched_copy(s, dst + rb[me].at, src + sb[me].at, own);
    return false;
}

/* The ranks' thread, at completion: the received host copy back. */
static void unstage_received(sched_t *s)
{
    sched_vunpack((const sched_vblock_t *)s->scratch + s->n, s->n, -1, s->stage, s->ubuf, s->udt);
    dt_release(s->udt);
}

static void a2av_free(a2av_t *v)
{
    if (v->rhost)
        dt_release(v->rdt);
    free(v->shost);
    free(v->rhost);
    free(v->b);
    free(v);
}

static int a2av_run(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    a2av_t *v = a->extra;
    int n = c->size, me = c->rank, err = MPI_SUCCESS, nreq = 0;
    const sched_vblock_t *sb = v->b, *rb = v->b + n;
    const char *src = v->shost ? v->shost : v->sbuf;
    char *dst = v->rhost ? v->rhost : v->rbuf;
    /* the schedule's completion wakes this thread (sched_split) */
    if (v->sched)
        v->sched->waiter = rank_self();
    p2p_req_t **reqs = coll_malloc((size_t)(2 * n) * sizeof *reqs);
    for (int k = 1; k < n; k++) {
        int from = (me - k + n) % n, to = (me + k) % n;
        if (!rb[from].sched)
            reqs[nreq++] = coll_irecv(r, c, dst + rb[from].at, rb[from].len, from, tag);
        if (!sb[to].sched)
            reqs[nreq++] = coll_isend(r, c, src + sb[to].at, sb[to].len, to, tag);
    }
    coll_keep_err(&err, coll_waitall(reqs, nreq));
    free(reqs);
    coll_keep_err(&err, sched_part_wait(v->sched, v->sched_err));
    if (v->rhost)
        sched_vunpack(rb, n, -1, v->rhost, v->rbuf, v->rdt);
    a2av_free(v);
    return err;
}

/* The schedule on the blocks b (freed with it) and the buffers it works on. */
static void sched_on(sched_t *s, sched_vblock_t *b, const void *src, void *dst)
{
    s->scratch = b;
    s->sbuf = src;
    s->rbuf = dst;
    s->whole = true;
}

/* Where some blocks go by the schedule and some not: the helper thread and
 * the schedule (coll_sched_vblock.c's sched_split). */
static int split(p2p_rank_t *r, core_comm_t *c, sched_vblock_t *b, const void *sbuf, void *rbuf, char *shost,
                 char *rhost, MPI_Datatype rdt, MPI_Request *request)
{
    int n = c->size, err;
    a2av_t *v = malloc(sizeof *v);
    sched_vblock_t *sb = malloc((size_t)(2 * n) * sizeof *sb); /* the schedule's own, freed with it */
    if (!v || !sb) {
        free(v);
        free(sb);
        free(shost);
        free(rhost);
        free(b);
        return MPI_ERR_NO_MEM;
    }
    memcpy(sb, b, (size_t)(2 * n) * sizeof *sb);
    *v = (a2av_t){ .b = b, .sbuf = sbuf, .rbuf = rbuf, .shost = shost, .rhost = rhost, .rdt = rdt };
    if (rhost)
        dt_retain(rdt); /* the user may free it before completion */
    sched_t *s = sched_split(r, c, sched_alltoallv, a2av_run, v, request, &v->sched, &v->sched_err, &err);
    if (!s) {
        if (err)
            a2av_free(v);
        free(sb);
        return err;
    }
    sched_on(s, sb, shost ? shost : sbuf, rhost ? rhost : rbuf);
    sched_start(s);
    return MPI_SUCCESS;
}

bool coll_sched_ialltoallv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, const int *scounts, const int *sdispls,
                           MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls, MPI_Datatype rdt,
                           MPI_Request *request, int *err)
{
    int n = c->size, me = c->rank, staken, rtaken;
    size_t stotal, rtotal;
    bool in_place = sbuf == MPI_IN_PLACE;
    sched_vblock_t *b = malloc((size_t)(2 * n) * sizeof *b);
    if (!b) {
        *err = MPI_ERR_NO_MEM;
        return true;
    }
    bool rstaged = sched_vblocks(c, b + n, rbuf, rcounts, rdispls, rdt, me, &rtotal, &rtaken);
    bool sstaged = true;
    if (in_place) { /* we send what the receive buffer holds: from a packed copy, as it changes */
        sched_vblocks(c, b, rbuf, rcounts, rdispls, rdt, me, &stotal, &staken);
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            b[i].at = (ptrdiff_t)at;
            at += b[i].len;
        }
    } else {
        sstaged = sched_vblocks(c, b, sbuf, scounts, sdispls, sdt, me, &stotal, &staken);
    }
    if (!staken && !rtaken) {
        free(b);
        return false;
    }
    char *shost = sstaged ? malloc(stotal ? stotal : 1) : NULL;
    char *rhost = rstaged ? malloc(rtotal ? rtotal : 1) : NULL;
    if ((sstaged && !shost) || (rstaged && !rhost)) {
        free(shost);
        free(rhost);
        free(b);
        *err = MPI_ERR_NO_MEM;
        return true;
    }
    if (shost)
        sched_vpack(b, n, in_place ? rbuf : sbuf, in_place ? rdt : sdt, shost);
    if (staken < n - 1 || rtaken < n - 1) {
        *err = split(r, c, b, sbuf, rbuf, shost, rhost, rdt, request);
        return true;
    }
    sched_t *s = sched_new(r, c, sched_alltoallv, request, err);
    if (!s) {
        free(shost);
        free(rhost);
        free(b);
        return true;
    }
    sched_on(s, b, shost ? shost : sbuf, rhost ? rhost : rbuf);
    s->stage_in = shost;
    if (rhost) {
        s->stage = rhost;
        s->ubuf = rbuf;
        s->udt = rdt;
        s->unstage = unstage_received;
        dt_retain(rdt); /* the user may free it before completion */
    }
    sched_start(s);
    return true;
}
