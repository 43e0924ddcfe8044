/* The UCX worker of one-sided traffic, and its progress thread (whose policy
 * src/ucx/ucx_side.h states).
 *
 * One-sided messages travel on a UCP context and worker of their own, in
 * UCX's multi-threaded mode, apart from the point-to-point worker: so a
 * second OS thread may progress them while the ranks compute (the seeds'
 * helper threads) without ever touching the ranks' matching queues, which
 * stay single-threaded and lock-free.  The thread sleeps in the worker's
 * wakeup descriptor (no core spent while nothing arrives) with a short
 * timeout as a safety net; AMPI_RMA_PROGRESS=0 leaves it out, and then
 * passive-target operations progress only while the target is in MPI.
 * None of this exists before the first window: point-to-point pays nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>
#include "pt2pt/p2p.h"
#include "rma/rma.h"
#include "rma/rma_internal.h"
#include "core/core_settings.h"
#include "ucx/ucx_side.h"
#include "util/util_log.h"

#define RMA_WHAT "one-sided"

static struct {
    bool up;
    ucx_side_t w;
    /* Held (recursively: handlers send) around every call of UCX on the
     * worker; the ranks' thread and the progress thread only try it before
     * progressing, and go on when the other holds it.  UCX's own lock of a
     * multi-threaded worker is a spin lock: the progress thread, which runs
     * on the ranks' core, spun on it while the ranks' thread held it in a
     * send or a handler, each waiting for the other until the scheduler's
     * next tick (4 ms), and osu_get_acc_latency took 4.9 ms at 1 MiB, 10x
     * Open MPI's, on a 2 x H200 host. */
    pthread_mutex_t worker_lk;
    pthread_mutex_t ep_lk;
    ucp_address_t *own;
    size_t own_len;
    _Atomic(rma_fetch_t *) done; /* finished fetches for the ranks' thread */
} N = { .ep_lk = PTHREAD_MUTEX_INITIALIZER };

/* A send whose data UCX still reads. */
typedef struct net_send {
    _Atomic int *sending;
    void *free_after;
} net_send_t;

static void send_done(void *request, ucs_status_t status, void *user_data)
{
    net_send_t *s = user_data;
    if (status != UCS_OK)
        util_fatal("one-sided message failed: %s", ucs_status_string(status));
    if (s->sending)
        atomic_fetch_sub(s->sending, 1);
    rma_buf_put(s->free_after);
    free(s);
    ucp_request_free(request);
}

/* Data arriving by rendezvous: received into its place, then handled. */
typedef struct net_rndv {
    rma_hdr_t h;
    void *buf;
    bool placed; /* an answer received straight into its fetch's buffer */
} net_rndv_t;

static void rndv_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
    net_rndv_t *r = user_data;
    if (status != UCS_OK)
        util_fatal("one-sided data failed to arrive: %s", ucs_status_string(status));
    if (r->placed) {
        rma_resp_placed(&r->h);
    } else {
        rma_target_handle(&r->h, r->buf, length);
        free(r->buf);
    }
    free(r);
    ucp_request_free(request);
}

static ucs_status_t am_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                          const ucp_am_recv_param_t *param)
{
    (void)arg;
    if (header_length != sizeof(rma_hdr_t))
        util_fatal("one-sided message with a header of %zu bytes", header_length);
    rma_hdr_t h;
    memcpy(&h, header, sizeof h);
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        rma_target_handle(&h, data, length);
        return UCS_OK;
    }
    /* an answer lands in its fetch's buffer: a fresh buffer this large is
     * fresh pages from the kernel each time, and a second copy */
    void *place = h.kind == RMA_RESP ? rma_resp_place(&h, length) : NULL;
    net_rndv_t *r = malloc(sizeof *r);
    void *buf = place ? place : malloc(length ? length : 1);
    if (!r || !buf)
        util_fatal("out of memory for %zu bytes of one-sided data", length);
    r->h = h;
    r->buf = buf;
    r->placed = place != NULL;
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.recv_am = rndv_done,
        .user_data = r,
    };
    void *req = ucp_am_recv_data_nbx(N.w.worker, data, buf, length, &prm);
    if (UCS_PTR_IS_ERR(req))
        util_fatal("one-sided data receive: %s", ucs_status_string(UCS_PTR_STATUS(req)));
    if (req == NULL) { /* done at once: the callback is not called */
        if (place) {
            rma_resp_placed(&h);
        } else {
            rma_target_handle(&h, buf, length);
            free(buf);
        }
        free(r);
    }
    return UCS_OK;
}

int rma_net_init(void)
{
    if (N.up)
        return 0;
    pthread_mutexattr_t recursive;
    pthread_mutexattr_init(&recursive);
    pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&N.worker_lk, &recursive);
    pthread_mutexattr_destroy(&recursive);
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        .features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP,
        .mt_workers_shared = 1,
    };
    /* multi-threaded: the ranks' thread and the progress thread */
    ucs_status_t st = ucx_side_open(&N.w, &params, UCS_THREAD_MODE_MULTI, core_proc.nprocs, am_cb, RMA_WHAT);
    if (st != UCS_OK) {
        util_debug("rma: ucp_init: %s", ucs_status_string(st));
        return -1;
    }
    st = ucp_worker_get_address(N.w.worker, &N.own, &N.own_len);
    if (st != UCS_OK)
        util_fatal("one-sided worker address: %s", ucs_status_string(st));
    N.up = true;
    if (core_proc.nprocs > 1 && core_setting_bool(CORE_SET_RMA_PROGRESS))
        ucx_side_thread_start(&N.w, &N.worker_lk);
    return 0;
}

size_t rma_net_address(const void **addr)
{
    *addr = N.own;
    return N.own_len;
}

/* An answer to a process whose address we have yet to learn: a target
 * may hear from an origin that has finished creating a window while it is
 * itself still inside the creation's exchange.  Kept (with a copy of its
 * data) until rma_net_learn. */
typedef struct held {
    struct held *next;
    int proc;
    rma_hdr_t h;
    size_t len;
    bool eager;
    char data[];
} held_t;
static held_t *held_list;

/* Connects to proc (the ranks' thread, at window creation, never inside a
 * UCX callback), then sends what waited for it.  ep_lk guards eps[] and the
 * held list only, and nobody calls UCX while holding it: a handler runs
 * with the worker's lock held and may need ep_lk (lock order). */
void rma_net_learn(int proc, const void *addr, size_t len)
{
    if (proc == core_proc.proc || __atomic_load_n(&N.w.eps[proc], __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&N.worker_lk);
    ucp_ep_h ep = ucx_side_connect(&N.w, proc, addr, RMA_WHAT);
    pthread_mutex_unlock(&N.worker_lk);
    (void)len;
    pthread_mutex_lock(&N.ep_lk);
    __atomic_store_n(&N.w.eps[proc], ep, __ATOMIC_RELEASE);
    held_t *mine = NULL, **pp = &held_list;
    while (*pp) {
        held_t *x = *pp;
        if (x->proc == proc) {
            *pp = x->next;
            x->next = mine;
            mine = x;
        } else {
            pp = &x->next;
        }
    }
    pthread_mutex_unlock(&N.ep_lk);
    /* held_list is newest first, so mine came out oldest first: the order they were held */
    while (mine) {
        held_t *n = mine->next;
        rma_net_send(proc, &mine->h, mine->data, mine->len, NULL, mine, mine->eager);
        mine = n;
    }
}

/* Holds the message while proc has no endpoint yet (true). */
static bool hold(int proc, const rma_hdr_t *h, const void *data, size_t len, bool eager)
{
    pthread_mutex_lock(&N.ep_lk);
    bool unknown = N.w.eps[proc] == NULL;
    if (unknown) {
        held_t *x = malloc(sizeof *x + len);
        if (!x)
            util_fatal("out of memory");
        *x = (held_t){ held_list, proc, *h, len, eager };
        if (len)
            memcpy(x->data, data, len);
        held_list = x;
    }
    pthread_mutex_unlock(&N.ep_lk);
    return unknown;
}

int rma_net_send(int proc, const rma_hdr_t *h, const void *data, size_t len, _Atomic int *sending,
                 void *free_after, bool eager)
{
    ucp_ep_h ep = __atomic_load_n(&N.w.eps[proc], __ATOMIC_ACQUIRE);
    if (UTIL_UNLIKELY(ep == NULL)) {
        if (hold(proc, h, data, len, eager)) {
            rma_buf_put(free_after); /* copied */
            return 0;
        }
        ep = __atomic_load_n(&N.w.eps[proc], __ATOMIC_ACQUIRE);
    }
    net_send_t *s = malloc(sizeof *s);
    if (!s)
        util_fatal("out of memory");
    s->sending = sending;
    s->free_after = free_after;
    if (sending)
        atomic_fetch_add(sending, 1);
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
        .cb.send = send_done,
        .user_data = s,
        .flags = UCP_AM_SEND_FLAG_COPY_HEADER | (eager ? UCP_AM_SEND_FLAG_EAGER : 0),
    };
    pthread_mutex_lock(&N.worker_lk);
    void *req = ucp_am_send_nbx(ep, UCX_SIDE_AM_ID, h, sizeof *h, data, len, &prm);
    pthread_mutex_unlock(&N.worker_lk);
    if (UCS_PTR_IS_ERR(req))
        util_fatal("one-sided send to process %d: %s", proc, ucs_status_string(UCS_PTR_STATUS(req)));
    if (req == NULL) { /* done at once */
        if (sending)
            atomic_fetch_sub(sending, 1);
        rma_buf_put(free_after);
        free(s);
    }
    return 0;
}

int rma_net_progress(void)
{
    if (!N.up)
        return 0;
    /* the ranks' thread is in the library and polls: the progress thread stands aside (one writer) */
    ucx_side_polling(&N.w);
    if (pthread_mutex_trylock(&N.worker_lk) != 0)
        return rma_finish_fetches(); /* the progress thread is at it */
    int n = (int)ucp_worker_progress(N.w.worker);
    pthread_mutex_unlock(&N.worker_lk);
    return n + rma_finish_fetches();
}

void rma_fetch_arrived(rma_fetch_t *f)
{
    rma_fetch_t *head = atomic_load(&N.done);
    do
        f->next = head;
    while (!atomic_compare_exchange_weak(&N.done, &head, f));
}

/* Takes the finished fetches (oldest first) for the ranks' thread. */
rma_fetch_t *rma_net_take_done(void);
rma_fetch_t *rma_net_take_done(void)
{
    rma_fetch_t *l = atomic_exchange(&N.done, NULL), *rev = NULL;
    while (l) {
        rma_fetch_t *n = l->next;
        l->next = rev;
        rev = l;
        l = n;
    }
    return rev;
}

void rma_net_fini(void)
{
    if (!N.up)
        return;
    ucp_worker_release_address(N.w.worker, N.own);
    ucx_side_close(&N.w);
    rma_buf_fini();
    N.up = false;
}

void rma_fini(void) { rma_net_fini(); }
