#include "pt2pt/p2p_bsend.h"
#include "util/util_log.h"

#include <stdlib.h>
#include <string.h>

typedef struct bsend_seg {
    util_dlink_t link; /* in address order */
    size_t off, len;   /* whole segment, record included */
} bsend_seg_t;

/* A segment is [off, off + MPI_BSEND_OVERHEAD + bytes) of the user's buffer,
 * with no rounding (MPI 3.1 3.6.1: size + MPI_BSEND_OVERHEAD bytes per
 * message are enough); its record sits at the first 16-byte boundary in
 * it, which the overhead leaves room for, and the data follows the
 * overhead. */
_Static_assert(sizeof(bsend_seg_t) + 15 <= MPI_BSEND_OVERHEAD, "segment record exceeds MPI_BSEND_OVERHEAD");

struct p2p_bsend_state {
    char *buf;
    size_t size;
    util_dlist_t segs;
};

int p2p_bsend_attach(p2p_rank_t *r, void *buf, int size)
{
    if (r->bsend)
        return MPI_ERR_BUFFER; /* one buffer at a time */
    if (size < 0 || (size > 0 && !buf))
        return MPI_ERR_ARG;
    p2p_bsend_state_t *b = malloc(sizeof *b);
    if (!b)
        return MPI_ERR_NO_MEM;
    b->buf = buf;
    b->size = (size_t)size;
    util_dlist_init(&b->segs);
    r->bsend = b;
    r->bsend_user_buf = buf;
    r->bsend_user_size = size;
    return MPI_SUCCESS;
}

int p2p_bsend_detach(p2p_rank_t *r, void **buf, int *size)
{
    if (!r->bsend) {
        *(void **)buf = NULL;
        *size = 0;
        return MPI_ERR_BUFFER;
    }
    while (r->internal_pending > 0) {
        p2p_progress(NULL);
        if (r->internal_pending > 0)
            p2p_idle();
    }
    *(void **)buf = r->bsend_user_buf;
    *size = r->bsend_user_size;
    free(r->bsend);
    r->bsend = NULL;
    return MPI_SUCCESS;
}

/* First fit in address order. */
static bsend_seg_t *seg_alloc(p2p_bsend_state_t *b, size_t len)
{
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
    if (!r->bsend)
        return MPI_ERR_BUFFER;
    bsend_seg_t *s = seg_alloc(r->bsend, MPI_BSEND_OVERHEAD + q->bytes);
    if (!s)
        return MPI_ERR_BUFFER;
    void *copy = r->bsend->buf + s->off + MPI_BSEND_OVERHEAD;
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
    r->internal_pending++;
    return p2p_send_start(in);
}

void p2p_bsend_done(p2p_req_t *in)
{
    bsend_seg_t *s = in->bsend_seg;
    util_dlist_remove(&s->link);
    in->bsend_seg = NULL;
}
