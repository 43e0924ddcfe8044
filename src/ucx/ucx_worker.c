/* UCP context, worker, endpoints and progress.  See ucx.h and ucx_tag.h. */
#include "ucx/ucx.h"
#include "ucx/ucx_pmix.h"
#include "ucx/ucx_tag.h"
#include "util/util_log.h"

#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#define UCX_ADDR_KEY "ampi.ucx.worker"

static struct {
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_ep_h *eps; /* by process, created on first use */
    int proc, nprocs;
    uint64_t counter; /* for fresh payload tags */
    ucx_handlers_t h;
    bool active;
} U;

_Static_assert(sizeof(ucp_dt_iov_t) * 2 <= UCX_IOV_STORE_SIZE, "iov store too small");

bool ucx_active(void) { return U.active; }

bool ucx_supports_cuda(void)
{
    if (!U.active)
        return false;
    ucp_context_attr_t attr = { .field_mask = UCP_ATTR_FIELD_MEMORY_TYPES };
    if (ucp_context_query(U.context, &attr) != UCS_OK)
        return false;
    return attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA);
}

const char *ucx_version(void) { return ucp_get_version_string(); }

int ucx_init(int proc, int nprocs, const ucx_handlers_t *h)
{
    if (nprocs > UCX_TAG_MAX_PES)
        util_fatal("%d processes exceed the %d PEs the tag layout can name", nprocs, UCX_TAG_MAX_PES);
    U.proc = proc;
    U.nprocs = nprocs;
    U.h = *h;

    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK)
        util_fatal("ucp_config_read: %s", ucs_status_string(st));
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS,
        .features = UCP_FEATURE_TAG,
        .estimated_num_eps = (size_t)nprocs,
    };
    st = ucp_init(&params, config, &U.context);
    ucp_config_release(config);
    if (st != UCS_OK)
        util_fatal("ucp_init: %s", ucs_status_string(st));

    ucp_worker_params_t wp = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE, /* one OS thread drives each worker */
    };
    st = ucp_worker_create(U.context, &wp, &U.worker);
    if (st != UCS_OK)
        util_fatal("ucp_worker_create: %s", ucs_status_string(st));

    ucp_address_t *addr;
    size_t alen;
    st = ucp_worker_get_address(U.worker, &addr, &alen);
    if (st != UCS_OK)
        util_fatal("ucp_worker_get_address: %s", ucs_status_string(st));
    if (ucx_pmix_put(UCX_ADDR_KEY, addr, alen) != 0)
        util_fatal("cannot publish the UCX worker address through PMIx");
    ucp_worker_release_address(U.worker, addr);

    U.eps = calloc((size_t)nprocs, sizeof *U.eps);
    if (!U.eps)
        util_fatal("out of memory");
    U.active = true;
    return 0;
}

static ucp_ep_h ep_of(int proc)
{
    ucp_ep_h ep = U.eps[proc];
    if (UTIL_LIKELY(ep != NULL))
        return ep;
    void *addr;
    size_t alen;
    if (ucx_pmix_get(proc, UCX_ADDR_KEY, &addr, &alen) != 0)
        util_fatal("no UCX address for process %d in PMIx", proc);
    ucp_ep_params_t ep_params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
        .address = addr,
        .err_mode = UCP_ERR_HANDLING_MODE_NONE,
    };
    ucs_status_t st = ucp_ep_create(U.worker, &ep_params, &ep);
    free(addr);
    if (st != UCS_OK)
        util_fatal("ucp_ep_create to process %d: %s", proc, ucs_status_string(st));
    U.eps[proc] = ep;
    return ep;
}

uint64_t ucx_fresh_tag(int type)
{
    return ucx_tag_make((ucx_tag_type_t)type, (uint32_t)U.proc, ++U.counter);
}

/* ---- completions ---- */

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    ucx_op_t *op = user_data;
    ucp_request_free(request);
    op->done(op, status == UCS_OK ? 0 : (int)status, 0);
}

static void recv_cb(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info, void *user_data)
{
    ucx_op_t *op = user_data;
    size_t len = info ? info->length : 0;
    ucp_request_free(request);
    op->done(op, status == UCS_OK ? 0 : (int)status, len);
}

static int started(ucs_status_ptr_t r, const char *what)
{
    if (UTIL_LIKELY(r == NULL))
        return 0;
    if (UCS_PTR_IS_ERR(r)) {
        util_warn("%s failed: %s", what, ucs_status_string(UCS_PTR_STATUS(r)));
        return -1;
    }
    return 1;
}

static ucs_memory_type_t mem_type(ucx_mem_t m)
{
    return m == UCX_MEM_CUDA ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
}

int ucx_send_envelope(int proc, const void *hdr, size_t hlen, const void *data, size_t dlen, ucx_op_t *op,
                      void *iov_store)
{
    ucp_ep_h ep = ep_of(proc);
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_MEMORY_TYPE,
        .cb.send = send_cb,
        .user_data = op,
        .memory_type = UCS_MEMORY_TYPE_HOST,
    };
    uint64_t tag = ucx_tag_make(UCX_TAG_ENVELOPE, (uint32_t)U.proc, 0);
    ucs_status_ptr_t r;
    if (dlen == 0) {
        r = ucp_tag_send_nbx(ep, hdr, hlen, tag, &prm);
    } else {
        /* header and user data go out as one message without a copy; UCX
         * reads the iov array until completion, so it lives in the caller's
         * request (iov_store) */
        ucp_dt_iov_t *iov = iov_store;
        iov[0].buffer = (void *)hdr;
        iov[0].length = hlen;
        iov[1].buffer = (void *)data;
        iov[1].length = dlen;
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
        prm.datatype = ucp_dt_make_iov();
        r = ucp_tag_send_nbx(ep, iov, 2, tag, &prm);
    }
    return started(r, "envelope send");
}

int ucx_send_tagged(int proc, const void *buf, size_t len, uint64_t tag, ucx_mem_t mem, ucx_op_t *op)
{
    ucp_ep_h ep = ep_of(proc);
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_MEMORY_TYPE,
        .cb.send = send_cb,
        .user_data = op,
        .memory_type = mem_type(mem),
    };
    return started(ucp_tag_send_nbx(ep, buf, len, tag, &prm), "payload send");
}

int ucx_recv_tagged(void *buf, size_t len, uint64_t tag, ucx_mem_t mem, ucx_op_t *op)
{
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_MEMORY_TYPE,
        .cb.recv = recv_cb,
        .user_data = op,
        .memory_type = mem_type(mem),
    };
    return started(ucp_tag_recv_nbx(U.worker, buf, len, tag, UCX_TAG_FULL_MASK, &prm), "payload receive");
}

/* ---- envelopes ----
 * A few receives for "any envelope" stay posted all the time, so an arriving
 * envelope lands straight in our buffer (UCX's expected path, one copy)
 * instead of waiting in UCX's unexpected queue for a probe.  Completed
 * slots are handed up after ucp_worker_progress returns, in completion
 * order, and posted again with a fresh buffer. */

#define UCX_ENV_SLOTS 16

typedef struct env_slot {
    void *buf;
    void *req;                 /* UCX request while posted and not done */
    size_t len;                /* received length once done */
    struct env_slot *next_done;
    bool posted;
} env_slot_t;

static env_slot_t env_slots[UCX_ENV_SLOTS];
static env_slot_t *env_done_head, **env_done_tail = &env_done_head;
static size_t env_cap;

static void env_slot_done(env_slot_t *s, size_t len)
{
    s->len = len;
    s->posted = false;
    s->next_done = NULL;
    *env_done_tail = s;
    env_done_tail = &s->next_done;
}

static void env_recv_cb(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info, void *user_data)
{
    env_slot_t *s = user_data;
    ucp_request_free(request);
    s->req = NULL;
    if (status == UCS_ERR_CANCELED) { /* shutting down */
        s->posted = false;
        U.h.env_free(s->buf);
        return;
    }
    if (status != UCS_OK)
        util_fatal("envelope receive failed: %s", ucs_status_string(status));
    env_slot_done(s, info->length);
}

static void env_post(env_slot_t *s)
{
    s->buf = U.h.env_alloc(env_cap);
    s->posted = true;
    ucp_tag_recv_info_t info;
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_MEMORY_TYPE |
                        UCP_OP_ATTR_FIELD_RECV_INFO,
        .cb.recv = env_recv_cb,
        .user_data = s,
        .memory_type = UCS_MEMORY_TYPE_HOST,
        .recv_info.tag_info = &info,
    };
    ucs_status_ptr_t r = ucp_tag_recv_nbx(U.worker, s->buf, env_cap, ucx_tag_make(UCX_TAG_ENVELOPE, 0, 0),
                                          UCX_TAG_TYPE_MASK, &prm);
    if (r == NULL)
        env_slot_done(s, info.length); /* it was waiting in UCX's unexpected queue */
    else if (UCS_PTR_IS_ERR(r))
        util_fatal("cannot post an envelope receive: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    else
        s->req = r;
}

void ucx_post_envelopes(size_t max_envelope)
{
    env_cap = max_envelope;
    for (int i = 0; i < UCX_ENV_SLOTS; i++)
        env_post(&env_slots[i]);
}

int ucx_progress(void)
{
    if (!U.active)
        return 0;
    int n = (int)ucp_worker_progress(U.worker);
    while (env_done_head) {
        env_slot_t *s = env_done_head;
        env_done_head = s->next_done;
        if (!env_done_head)
            env_done_tail = &env_done_head;
        void *buf = s->buf;
        size_t len = s->len;
        env_post(s); /* before handing over: the handler may send, and we want the slot back soon */
        U.h.env_arrived(buf, len);
        n++;
    }
    return n;
}

static void wait_req(ucs_status_ptr_t r, const char *what)
{
    if (r == NULL)
        return;
    if (UCS_PTR_IS_ERR(r)) {
        util_warn("%s: %s", what, ucs_status_string(UCS_PTR_STATUS(r)));
        return;
    }
    while (ucp_request_check_status(r) == UCS_INPROGRESS)
        ucp_worker_progress(U.worker);
    ucp_request_free(r);
}

void ucx_close(void)
{
    if (!U.active)
        return;
    /* withdraw the posted envelope receives (their buffers come back through
     * the callback with UCS_ERR_CANCELED); anything still arriving now would
     * be a message nobody receives */
    for (int i = 0; i < UCX_ENV_SLOTS; i++) {
        env_slot_t *s = &env_slots[i];
        if (s->posted && s->req)
            ucp_request_cancel(U.worker, s->req);
        while (s->posted && s->req)
            ucp_worker_progress(U.worker);
    }
    while (env_done_head) { /* arrived but never handed up */
        env_slot_t *s = env_done_head;
        env_done_head = s->next_done;
        U.h.env_free(s->buf);
    }
    env_done_tail = &env_done_head;
    ucp_request_param_t flush = { .op_attr_mask = 0 };
    wait_req(ucp_worker_flush_nbx(U.worker, &flush), "worker flush");
    for (int i = 0; i < U.nprocs; i++) {
        if (!U.eps[i])
            continue;
        /* flush mode: our last messages reach the peer before the endpoint goes */
        ucp_request_param_t prm = { .op_attr_mask = 0 };
        wait_req(ucp_ep_close_nbx(U.eps[i], &prm), "endpoint close");
        U.eps[i] = NULL;
    }
}

void ucx_fini(void)
{
    if (!U.active)
        return;
    free(U.eps);
    ucp_worker_destroy(U.worker);
    ucp_cleanup(U.context);
    U.active = false;
}
