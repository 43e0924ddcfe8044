#include "pt2pt/p2p_bsend.h"
#include "util/util_log.h"

#include <stdlib.h>
#include <string.h>

struct p2p_bsend_state;

typedef struct bsend_seg {
    util_dlink_t link; /* in address order (an attached buffer's) */
    size_t off, len;   /* whole segment, record included */
    struct p2p_bsend_state *b;
} bsend_seg_t;

/* A segment is [off, off + MPI_BSEND_OVERHEAD + bytes) of the user's buffer,
 * with no rounding (MPI 3.1 3.6.1: size + MPI_BSEND_OVERHEAD bytes per
 * message are enough); its record sits at the first 16-byte boundary in
 * it, which the overhead leaves room for, and the data follows the
 * overhead.  An automatic buffer's segments are heap blocks of the same
 * layout. */
_Static_assert(sizeof(bsend_seg_t) + 15 <= MPI_BSEND_OVERHEAD, "segment record exceeds MPI_BSEND_OVERHEAD");

#define FLUSH_WAITERS_MAX 8

struct p2p_bsend_state {
    char *buf;       /* NULL: automatic */
    size_t size;
    util_dlist_t segs;
    void *user_buf;  /* as attached, for the detach */
    MPI_Count user_size;
    int inflight;    /* messages copied in that have not gone out */
    int nwaiters;    /* flush requests waiting for inflight to reach 0 */
    p2p_req_t *waiters[FLUSH_WAITERS_MAX];
};

int p2p_bsend_attach(p2p_bsend_state_t **slot, void *buf, MPI_Count size)
{
    if (*slot)
        return MPI_ERR_BUFFER; /* one buffer at a time */
    bool automatic = buf == MPI_BUFFER_AUTOMATIC;
    if (size < 0 || (size > 0 && !buf && !automatic))
        return MPI_ERR_ARG;
    p2p_bsend_state_t *b = calloc(1, sizeof *b);
    if (!b)
        return MPI_ERR_NO_MEM;
    b->buf = automatic ? NULL : buf;
    b->size = automatic ? 0 : (size_t)size;
    util_dlist_init(&b->segs);
    b->user_buf = buf;
    b->user_size = size;
    *slot = b;
    return MPI_SUCCESS;
}

void p2p_bsend_flush(p2p_bsend_state_t *b)
{
    while (b && b->inflight > 0) {
        p2p_progress(NULL);
        if (b->inflight > 0)
            p2p_idle();
    }
}

int p2p_bsend_detach(p2p_bsend_state_t **slot, void **buf, MPI_Count *size)
{
    p2p_bsend_state_t *b = *slot;
    if (!b) {
        *buf = NULL;
        *size = 0;
        return MPI_ERR_BUFFER;
    }
    p2p_bsend_flush(b);
    *buf = b->user_buf;
    *size = b->user_size;
    *slot = NULL;
    free(b);
    return MPI_SUCCESS;
}

void p2p_bsend_free(p2p_bsend_state_t *b)
{
    p2p_bsend_flush(b);
    free(b);
}

/* The flush requests end once the buffer is empty. */
static void flush_waiters_done(p2p_bsend_state_t *b)
{
    int n = b->nwaiters;
    b->nwaiters = 0;
    for (int i = 0; i < n; i++)
        p2p_req_part_done(b->waiters[i]);
}

int p2p_bsend_iflush(p2p_rank_t *r, p2p_bsend_state_t *b, MPI_Request *req)
{
    if (b && b->inflight > 0 && b->nwaiters == FLUSH_WAITERS_MAX)
        p2p_bsend_flush(b); /* more flushes at once than slots: the oldest finish first */
    p2p_req_t *q = p2p_greq_internal(r);
    if (!q)
        return MPI_ERR_NO_MEM;
    if (b && b->inflight > 0)
        b->waiters[b->nwaiters++] = q;
    else
        p2p_req_part_done(q);
    *req = q;
    return MPI_SUCCESS;
}

p2p_bsend_state_t *p2p_bsend_of(p2p_rank_t *r, const core_comm_t *c)
{
    if (c && c->bsend)
        return c->bsend;
    if (c && c->session_bsend && *c->session_bsend)
        return *c->session_bsend;
    return r->bsend;
}

/* First fit in address order. */
static bsend_seg_t *seg_alloc(p2p_bsend_state_t *b, size_t len)
{
    if (!b->buf) { /* automatic */
        char *m = malloc(len + 15);
        if (!m)
            return NULL;
        bsend_seg_t *s = (bsend_seg_t *)(((uintptr_t)m + 15) & ~(uintptr_t)15);
        s->off = (size_t)((char *)s - m); /* to find the block again */
        s->len = len;
        s->b = b;
        return s;
    }
    size_t off = 0;
    util_dlink_t *before = NULL;
    UTIL_DLIST_FOREACH(&b->segs, it) {
        bsend_seg_t *s = UTIL_CONTAINER_OF(it, bsend_seg_t, link);
        if (s->off - off >= len) {
            before = it;
            break;
        }
        off = s->off + s->len;
    }
    if (!before && b->size - off < len)
        return NULL;
    if (before && off + len > UTIL_CONTAINER_OF(before, bsend_seg_t, link)->off)
        return NULL;
    uintptr_t at = ((uintptr_t)(b->buf + off) + 15) & ~(uintptr_t)15;
    bsend_seg_t *s = (bsend_seg_t *)at;
    s->off = off;
    s->len = len;
    s->b = b;
    if (before) { /* insert before `before` */
        s->link.next = before;
        s->link.prev = before->prev;
        before->prev->next = &s->link;
        before->prev = &s->link;
    } else {
        util_dlist_push_back(&b->segs, &s->link);
    }
    return s;
}

/* Where a segment's data starts. */
static char *seg_data(bsend_seg_t *s)
{
    char *start = s->b->buf ? s->b->buf + s->off : (char *)s - s->off;
    return start + MPI_BSEND_OVERHEAD;
}

int p2p_bsend_start(p2p_req_t *q)
{
    p2p_rank_t *r = q->owner;
    q->active = true;
    q->complete = true; /* the user's request is done once the data is copied */
    q->pending = 0;
    q->status.MPI_ERROR = MPI_SUCCESS;
    q->status.ampi_cancelled = 0;
    if (q->peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    p2p_bsend_state_t *b = p2p_bsend_of(r, q->c);
    if (!b)
        return MPI_ERR_BUFFER;
    bsend_seg_t *s = seg_alloc(b, MPI_BSEND_OVERHEAD + q->bytes);
    if (!s)
        return b->buf ? MPI_ERR_BUFFER : MPI_ERR_NO_MEM;
    void *copy = seg_data(s);
    p2p_req_pack(q);
    if (q->dev)
        p2p_copy_sync(copy, q->buf, q->bytes);
    else if (q->bytes)
        memcpy(copy, q->buf, q->bytes);
    p2p_req_t *in = p2p_req_new(r, P2P_REQ_SEND);
    in->mode = P2P_MODE_STANDARD;
    in->internal = true;
    in->buf = copy;
    in->count = (int)q->bytes;
    in->dt = MPI_BYTE;
    in->bytes = q->bytes;
    in->peer = q->peer;
    in->tag = q->tag;
    in->comm = q->comm;
    in->c = q->c;
    if (in->c && !in->c->predefined)
        core_comm_retain(in->c);
    in->ctx = q->ctx;
    in->bsend_seg = s;
    /* MPI_Cancel of q withdraws in's message */
    q->msg_key = p2p_cancel_next_key(r, core_comm_world_rank(q->c, q->peer));
    q->cancel_asked = false;
    r->internal_pending++;
    b->inflight++;
    return p2p_send_start(in);
}

void p2p_bsend_done(p2p_req_t *in)
{
    bsend_seg_t *s = in->bsend_seg;
    p2p_bsend_state_t *b = s->b;
    in->bsend_seg = NULL;
    if (b->buf)
        util_dlist_remove(&s->link);
    else
        free((char *)s - s->off);
    if (--b->inflight == 0 && b->nwaiters > 0)
        flush_waiters_done(b);
}
