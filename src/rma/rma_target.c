/* The target side: one-sided messages applied on arrival (any thread), the
 * lock queue, and the answers to UNLOCK/FLUSH once the operations they count
 * have been applied. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "datatype/dt.h"
#include "pt2pt/p2p.h"
#include "rma/rma.h"
#include "rma/rma_internal.h"
#include "util/util_log.h"

/* Messages decided under a window's mutex go out after it is released: a
 * send takes the UCX worker's lock, which the other thread may hold while
 * its message handler waits for the window's mutex.  Each thread keeps its
 * own outbox. */
typedef struct outmsg {
    int proc;
    rma_hdr_t h;
    void *data;
    size_t len;
    void *free_after;
} outmsg_t;

static _Thread_local outmsg_t *outbox;
static _Thread_local int nout, outcap;

/* A thread's outbox goes with the thread: the progress thread ends when the
 * one-sided worker closes, and a program's own threads (library mode) end
 * when it says; a thread-local pointer alone would leave the array behind. */
static pthread_key_t outbox_key;
static pthread_once_t outbox_once = PTHREAD_ONCE_INIT;
static void outbox_key_create(void) { pthread_key_create(&outbox_key, free); }

static void post(int proc, const rma_hdr_t *h, void *data, size_t len, void *free_after)
{
    if (nout == outcap) {
        int cap = outcap ? 2 * outcap : 16;
        outmsg_t *o = realloc(outbox, (size_t)cap * sizeof *o);
        if (!o)
            util_fatal("out of memory");
        outbox = o;
        outcap = cap;
        pthread_once(&outbox_once, outbox_key_create);
        pthread_setspecific(outbox_key, o);
    }
    outbox[nout++] = (outmsg_t){ proc, *h, data, len, free_after };
}

/* Answers up to this size go eagerly (copied through UCX's buffers) rather
 * than by rendezvous, whose extra round trip (the origin reads, then tells
 * the target) made osu_get_acc_latency H H 1.7-2x slower at 8-64 KiB on a
 * 2-vCPU machine (19-81 against 4-41 us, 3 interleaved rounds); from 128 KiB
 * the rounds did not separate the two. */
#define ANSWER_EAGER_MAX (64 * 1024)

void rma_outbox_flush(void)
{
    for (int i = 0; i < nout; i++) {
        const outmsg_t *o = &outbox[i];
        rma_net_send(o->proc, &o->h, o->data, o->len, NULL, o->free_after,
                     o->h.kind == RMA_RESP && o->len <= ANSWER_EAGER_MAX);
    }
    nout = 0;
}

static void send_ctl(int to_world, uint8_t kind, uint32_t ctx, int from_rank, uint64_t id)
{
    rma_hdr_t a = { .kind = kind, .ctx = ctx, .target = to_world, .origin = from_rank, .id = id };
    post(p2p_proc_of(to_world), &a, NULL, 0, NULL);
}

/* Hand the granted lock to its origin: a flag of its object in this
 * process, else a message.  Holds w->lk (the origin's object is another one). */
void rma_grant_to(rma_win_t *w, int origin, int origin_world)
{
    if (p2p_is_local(origin_world)) {
        rma_win_t *o = rma_peer(w, origin);
        if (!o)
            util_fatal("lock granted to rank %d, which has no window here", origin);
        atomic_fetch_add(&o->grant_cnt[w->rank], 1);
        return;
    }
    send_ctl(origin_world, RMA_GRANT, w->ctx, w->rank, 0);
}

static bool compatible(const rma_win_t *w, int type)
{
    return w->excl < 0 && (type == MPI_LOCK_SHARED || w->nshared == 0);
}

bool rma_lock_try(rma_win_t *w, int origin, int origin_world, int type)
{
    /* first come, first served: a shared request waits behind a queued exclusive one */
    if (!w->waitq && compatible(w, type)) {
        if (type == MPI_LOCK_EXCLUSIVE)
            w->excl = origin;
        else
            w->nshared++;
        return true;
    }
    rma_lockq_t *q = malloc(sizeof *q);
    if (!q)
        util_fatal("out of memory");
    *q = (rma_lockq_t){ NULL, origin, origin_world, type };
    if (w->waitq_tail)
        w->waitq_tail->next = q;
    else
        w->waitq = q;
    w->waitq_tail = q;
    return false;
}

static void grant_waiting(rma_win_t *w)
{
    while (w->waitq && compatible(w, w->waitq->type)) {
        rma_lockq_t *q = w->waitq;
        w->waitq = q->next;
        if (!w->waitq)
            w->waitq_tail = NULL;
        if (q->type == MPI_LOCK_EXCLUSIVE)
            w->excl = q->origin;
        else
            w->nshared++;
        rma_grant_to(w, q->origin, q->origin_world);
        free(q);
    }
}

void rma_unlock_local(rma_win_t *w, int origin, int type)
{
    (void)origin;
    if (type == MPI_LOCK_EXCLUSIVE)
        w->excl = -1;
    else if (w->nshared > 0)
        w->nshared--;
    grant_waiting(w);
}

/* Answer the UNLOCK/FLUSH requests of origin that its count now covers. */
static void settle(rma_win_t *w, int origin)
{
    rma_pend_t **pp = &w->pend;
    while (*pp) {
        rma_pend_t *p = *pp;
        if (p->origin == origin && w->done_from[origin] >= p->count) {
            *pp = p->next;
            if (p->unlock_type)
                rma_unlock_local(w, origin, p->unlock_type);
            send_ctl(p->origin_world, RMA_ACK, w->ctx, w->rank, p->count);
            free(p);
        } else {
            pp = &p->next;
        }
    }
}

void rma_target_done(rma_win_t *w, int origin, uint64_t n)
{
    w->done_from[origin] += n;
    w->done_total += n;
    if (w->pend)
        settle(w, origin);
}

static void answer(const rma_hdr_t *h, void *data, size_t len, void *free_after)
{
    rma_hdr_t a = { .kind = RMA_RESP, .ctx = h->ctx, .target = h->origin_world, .id = h->id, .len = len };
    post(p2p_proc_of(h->origin_world), &a, data, len, free_after);
}

void *rma_resp_place(const rma_hdr_t *h, size_t len)
{
    rma_fetch_t *f = (rma_fetch_t *)(uintptr_t)h->id;
    if (len == 0 || len > f->len)
        return NULL; /* more than the result holds: received aside, then cut */
    return f->tmp ? f->tmp : f->dst; /* host memory (issue_remote) */
}

void rma_resp_placed(const rma_hdr_t *h)
{
    rma_fetch_t *f = (rma_fetch_t *)(uintptr_t)h->id;
    atomic_store(&f->state, 1);
    rma_fetch_arrived(f);
}

static void on_resp(const rma_hdr_t *h, const void *data, size_t len)
{
    rma_fetch_t *f = (rma_fetch_t *)(uintptr_t)h->id;
    if (len > f->len)
        len = f->len;
    if (f->tmp)
        memcpy(f->tmp, data, len);
    else if (len)
        rma_apply_put(f->dst, NULL, 0, data, len, false); /* dst: a contiguous host buffer */
    rma_resp_placed(h);
}

/* Messages for device windows that arrived on the progress thread: device
 * copies belong to the ranks' thread (its CUDA context and streams), which
 * applies them in arrival order before any later message of its own. */
typedef struct deferred {
    struct deferred *next;
    rma_hdr_t h;
    size_t len;
    char data[];
} deferred_t;

static pthread_mutex_t defer_lk = PTHREAD_MUTEX_INITIALIZER;
static deferred_t *defer_head, *defer_tail;
static _Atomic int ndeferred;

static void defer(const rma_hdr_t *h, const void *data, size_t len)
{
    deferred_t *d = malloc(sizeof *d + len);
    if (!d)
        util_fatal("out of memory for a one-sided message of %zu bytes", len);
    d->next = NULL;
    d->h = *h;
    d->len = len;
    if (len)
        memcpy(d->data, data, len);
    pthread_mutex_lock(&defer_lk);
    if (defer_tail)
        defer_tail->next = d;
    else
        defer_head = d;
    defer_tail = d;
    atomic_fetch_add(&ndeferred, 1);
    pthread_mutex_unlock(&defer_lk);
}

static void apply(rma_win_t *w, const rma_hdr_t *h, const void *data, size_t len);

int rma_target_deferred(void)
{
    if (atomic_load_explicit(&ndeferred, memory_order_relaxed) == 0)
        return 0;
    int n = 0;
    for (;;) {
        pthread_mutex_lock(&defer_lk);
        deferred_t *d = defer_head;
        if (d) {
            defer_head = d->next;
            if (!defer_head)
                defer_tail = NULL;
            atomic_fetch_sub(&ndeferred, 1);
        }
        pthread_mutex_unlock(&defer_lk);
        if (!d)
            return n;
        apply(rma_lookup(d->h.target, d->h.ctx), &d->h, d->data, d->len);
        free(d);
        n++;
    }
}

void rma_target_handle(const rma_hdr_t *h, const void *data, size_t len)
{
    if (h->kind == RMA_RESP) {
        on_resp(h, data, len);
        return;
    }
    rma_win_t *w = rma_lookup(h->target, h->ctx);
    if (!w)
        util_fatal("one-sided message (kind %d) for rank %d, which has no such window", h->kind, h->target);
    if (h->kind == RMA_GRANT) {
        atomic_fetch_add(&w->grant_cnt[h->origin], 1);
        return;
    }
    if (h->kind == RMA_ACK) {
        atomic_fetch_add(&w->ack_cnt[h->origin], 1);
        return;
    }
    if (UTIL_UNLIKELY(w->dev)) {
        if (!rank_current_pe()) {
            defer(h, data, len);
            return;
        }
        rma_target_deferred(); /* earlier ones first */
    }
    apply(w, h, data, len);
}

/* Memory that other processes map is also accumulated into by them, under
 * its process-shared accumulate lock (rma_shm.c): take it too (inside lk). */
static void acc_begin(rma_win_t *w)
{
    if (w->acc_lk)
        rma_acc_lock(w->acc_lk);
}

static void acc_end(rma_win_t *w)
{
    if (w->acc_lk)
        rma_acc_unlock(w->acc_lk);
}

static void apply(rma_win_t *w, const rma_hdr_t *h, const void *data, size_t len)
{
    /* the reduction kernels load whole elements (long double pairs with
     * aligned vector loads) and the segments are 8-byte words: a message
     * straight from a UCX buffer may sit at any address, so a misaligned
     * one is copied first (puts of plain bytes excepted) */
    _Alignas(16) char small[256];
    void *aligned = NULL;
    if (len && ((uintptr_t)data & 15) && (h->kind != RMA_PUT || h->nseg)) {
        aligned = len <= sizeof small ? small : malloc(len);
        if (!aligned)
            util_fatal("out of memory");
        memcpy(aligned, data, len);
        data = aligned;
    }
    const rma_seg_t *segs = h->nseg ? data : NULL;
    size_t seglen = (size_t)h->nseg * sizeof(rma_seg_t); /* a multiple of 16: the payload stays aligned */
    const char *payload = (const char *)data + seglen;
    size_t plen = len - seglen;
    char *tbase = (char *)w->base + h->off;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        tbase = (char *)(uintptr_t)h->off;
    pthread_mutex_lock(&w->lk);
    switch (h->kind) {
    case RMA_PUT:
        rma_apply_put(tbase, segs, h->nseg, payload, plen, w->dev);
        rma_target_done(w, h->origin, 1);
        break;
    case RMA_ACC:
        acc_begin(w);
        rma_apply_acc(tbase, segs, h->nseg, payload, plen, h->op, h->basic, w->dev);
        acc_end(w);
        rma_target_done(w, h->origin, 1);
        break;
    case RMA_GET: {
        void *out = NULL;
        if (h->nseg || w->dev) {
            out = rma_buf_get(h->len);
            if (!out)
                util_fatal("out of memory");
            rma_apply_get(tbase, segs, h->nseg, out, h->len, w->dev);
            answer(h, out, h->len, out);
        } else {
            answer(h, tbase, h->len, NULL); /* straight from the window */
        }
        break;
    }
    case RMA_GACC: {
        void *out = rma_buf_get(h->len);
        if (!out)
            util_fatal("out of memory");
        acc_begin(w);
        rma_apply_get(tbase, segs, h->nseg, out, h->len, w->dev);
        rma_apply_acc(tbase, segs, h->nseg, payload, plen, h->op, h->basic, w->dev);
        acc_end(w);
        answer(h, out, h->len, out);
        break;
    }
    case RMA_CAS: {
        void *out = rma_buf_get(h->len);
        if (!out)
            util_fatal("out of memory");
        acc_begin(w);
        rma_apply_cas(tbase, payload, payload + h->len, out, h->len, w->dev);
        acc_end(w);
        answer(h, out, h->len, out);
        break;
    }
    case RMA_LOCK:
        if (rma_lock_try(w, h->origin, h->origin_world, h->lock_type))
            rma_grant_to(w, h->origin, h->origin_world);
        break;
    case RMA_UNLOCK:
    case RMA_FLUSH: {
        rma_pend_t *p = malloc(sizeof *p);
        if (!p)
            util_fatal("out of memory");
        *p = (rma_pend_t){ w->pend, h->origin, h->origin_world, h->kind == RMA_UNLOCK ? h->lock_type : 0, h->id };
        w->pend = p;
        settle(w, h->origin);
        break;
    }
    default:
        util_fatal("one-sided message of unknown kind %d", h->kind);
    }
    pthread_mutex_unlock(&w->lk);
    if (aligned && aligned != small)
        free(aligned);
    rma_outbox_flush();
}
