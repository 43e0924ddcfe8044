/* The worker and progress thread of ucx_async.h. */
#include "ucx/ucx_async.h"

#include <pthread.h>
#include <stdlib.h>
#include <ucp/api/ucp.h>
#include "ucx/ucx.h"
#include "ucx/ucx_pmix.h"
#include "ucx/ucx_side.h"
#include "util/util_log.h"

#define ASYNC_ADDR_KEY "ampi.ucx.async"
#define ASYNC_WHAT "nonblocking collectives'"
#define ASYNC_CPU_KEY "ampi.ucx.async.cpu"

static struct {
    bool up;
    ucx_side_t w; /* endpoints made on first use */
    ucx_async_handler_fn handler;
} A;

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;

typedef struct pending {
    ucx_async_done_fn done;
    void *arg;
} pending_t;

static ucs_status_t am_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                          const ucp_am_recv_param_t *param)
{
    (void)arg;
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        A.handler(header, header_length, data, NULL, length);
        return UCS_OK;
    }
    /* a descriptor kept for a later ucx_async_recv_data must outlive the call */
    return A.handler(header, header_length, NULL, data, length) ? UCS_INPROGRESS : UCS_OK;
}

void ucx_async_init(int proc, int nprocs, ucx_async_handler_fn handler)
{
    (void)proc;
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS,
        .features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP,
        .estimated_num_eps = (size_t)nprocs,
    };
    /* serialized: under lk, from any thread */
    ucs_status_t st = ucx_side_open(&A.w, &params, UCS_THREAD_MODE_SERIALIZED, nprocs, am_cb, ASYNC_WHAT);
    /* fatal, not a quiet fallback: every process must take the same path */
    if (st != UCS_OK)
        util_fatal(ASYNC_WHAT " UCX context: %s (AMPI_NBC_PROGRESS=0 does without it)", ucs_status_string(st));
    A.w.stamped = true; /* its polls happen only while schedules are active */
    ucp_address_t *addr;
    size_t alen;
    st = ucp_worker_get_address(A.w.worker, &addr, &alen);
    if (st != UCS_OK)
        util_fatal(ASYNC_WHAT " worker address: %s", ucs_status_string(st));
    if (ucx_pmix_put(ASYNC_ADDR_KEY, addr, alen) != 0)
        util_fatal("cannot publish the nonblocking collectives' worker address through PMIx");
    ucp_worker_release_address(A.w.worker, addr);
    unsigned char cpu = ucx_side_has_cpu();
    if (ucx_pmix_put(ASYNC_CPU_KEY, &cpu, 1) != 0)
        util_fatal("cannot publish whether the progress thread has a CPU through PMIx");
    A.handler = handler;
    A.up = true;
}

bool ucx_async_up(void) { return A.up; }
static _Atomic unsigned long lock_waits, lock_wait_ns, polls_refused; /* the ranks' thread's, counted while debugging */
void ucx_async_lock(void)
{
    if (pthread_mutex_trylock(&lk) == 0)
        return;
    bool counted = UTIL_UNLIKELY(util_debug_enabled) && !ucx_side_on_thread();
    uint64_t t0 = counted ? ucx_side_now() : 0;
    pthread_mutex_lock(&lk);
    if (counted) {
        atomic_fetch_add_explicit(&lock_waits, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&lock_wait_ns, ucx_side_now() - t0, memory_order_relaxed);
    }
}

void ucx_async_report(void)
{
    util_debug("nonblocking collectives' worker: the ranks' thread waited for its lock %lu times, %.1f us in all; "
               "%lu of its polls found it taken",
               atomic_load(&lock_waits), (double)atomic_load(&lock_wait_ns) / 1e3, atomic_load(&polls_refused));
    ucx_side_report(&A.w, ASYNC_WHAT);
}
void ucx_async_unlock(void) { pthread_mutex_unlock(&lk); }
bool ucx_async_trylock(void) { return pthread_mutex_trylock(&lk) == 0; }
void ucx_async_set_work(int (*fn)(void)) { A.w.work = fn; }

bool ucx_async_job_has_cpu(void)
{
    static _Atomic int known = -1; /* whichever thread reads it first sets it: all get the same answer */
    int v = atomic_load_explicit(&known, memory_order_relaxed);
    if (v < 0) {
        void *data = NULL;
        size_t len = 0;
        /* fatal, not a quiet no: every process must take the same path */
        if (A.up && (ucx_pmix_get(0, ASYNC_CPU_KEY, &data, &len) != 0 || len != 1))
            util_fatal("no answer from process 0 through PMIx on whether its progress thread has a CPU");
        v = A.up && *(unsigned char *)data;
        free(data);
        atomic_store_explicit(&known, v, memory_order_relaxed);
    }
    return v;
}
bool ucx_async_on_thread(void) { return ucx_side_on_thread(); }

static ucp_ep_h ep_of(int proc)
{
    if (A.w.eps[proc])
        return A.w.eps[proc];
    void *addr;
    size_t alen;
    if (ucx_pmix_get(proc, ASYNC_ADDR_KEY, &addr, &alen) != 0)
        util_fatal("no nonblocking collectives' address for process %d in PMIx", proc);
    A.w.eps[proc] = ucx_side_connect(&A.w, proc, addr, ASYNC_WHAT);
    free(addr);
    return A.w.eps[proc];
}

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    pending_t *p = user_data;
    p->done(p->arg, status == UCS_OK ? 0 : (int)status);
    free(p);
    ucp_request_free(request);
}

static void recv_cb(void *request, ucs_status_t status, size_t length, void *user_data)
{
    (void)length;
    send_cb(request, status, user_data);
}

static pending_t *pending_new(ucx_async_done_fn done, void *arg)
{
    pending_t *p = malloc(sizeof *p);
    if (!p)
        util_fatal("out of memory");
    *p = (pending_t){ done, arg };
    return p;
}

/* 0 when req finished at once (p freed), 1 when p's callback comes later. */
static int settle(void *req, pending_t *p, const char *what)
{
    if (UCS_PTR_IS_ERR(req))
        util_fatal("nonblocking collective %s: %s", what, ucs_status_string(UCS_PTR_STATUS(req)));
    if (req == NULL) {
        free(p);
        return 0;
    }
    return 1;
}

int ucx_async_send(int proc, const void *hdr, size_t hlen, const void *data, size_t len, ucx_async_done_fn done,
                   void *arg)
{
    pending_t *p = pending_new(done, arg);
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
        .cb.send = send_cb,
        .user_data = p,
        .flags = UCP_AM_SEND_FLAG_COPY_HEADER,
    };
    return settle(ucp_am_send_nbx(ep_of(proc), UCX_SIDE_AM_ID, hdr, hlen, data, len, &prm), p, "send");
}

int ucx_async_recv_data(void *desc, void *buf, size_t len, ucx_async_done_fn done, void *arg)
{
    pending_t *p = pending_new(done, arg);
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.recv_am = recv_cb,
        .user_data = p,
    };
    return settle(ucp_am_recv_data_nbx(A.w.worker, desc, buf, len, &prm), p, "receive");
}

void ucx_async_drop(void *desc) { ucp_am_data_release(A.w.worker, desc); }

int ucx_async_poll(void)
{
    if (!A.up)
        return 0;
    ucx_side_polling(&A.w);
    if (pthread_mutex_trylock(&lk) != 0) {
        if (UTIL_UNLIKELY(util_debug_enabled))
            atomic_fetch_add_explicit(&polls_refused, 1, memory_order_relaxed);
        return 0; /* the progress thread is at it */
    }
    int n = (int)ucp_worker_progress(A.w.worker);
    pthread_mutex_unlock(&lk);
    return n;
}

void ucx_async_busy(int n) { ucx_side_busy(&A.w, n); }
void ucx_async_inside(void)
{
    if (A.up)
        ucx_side_inside(&A.w);
}
void ucx_async_watch(const _Atomic bool *flag) { A.w.waiting = flag; }

void ucx_async_thread_start(void)
{
    if (A.up)
        ucx_side_thread_start(&A.w, &lk); /* the worker is serialized by lk */
}

void ucx_async_fini(void)
{
    if (!A.up)
        return;
    ucx_side_close(&A.w);
    A.up = false;
}
