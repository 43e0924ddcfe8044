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
    char excluded_tls[32]; /* "^a,b", or "" (excluded_transports) */
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_ep_h *eps; /* by process, created on first use */
    int proc, nprocs;
    uint64_t counter; /* for fresh payload tags */
    ucx_handlers_t h;
    bool active;
    bool ending; /* ucx_ending: peers' resets are their teardown */
} U;

/* The active message id of envelopes (the only AM handler we register). */
#define UCX_AM_ENVELOPE 0

static void env_handler_set(void);

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

/* The UCX transports this job leaves out ("^a,b" form; empty: none). */
static void excluded_transports(bool one_node, bool no_cuda_ipc, char *out, size_t cap)
{
    /* A job on one node needs no network: without TCP no process listens
     * on an address that other machines reach.  While the library's own
     * CUDA IPC route moves device payloads between processes of a node,
     * UCX's cuda_ipc must stay out: both would open the same peer
     * allocation's IPC handle in one process, which CUDA allows once per
     * process (the second open fails with CUDA_ERROR_ALREADY_MAPPED, which
     * UCX treats as fatal), and both map it at the exporter's address, so a
     * cached mapping of one blocks a new allocation at that address for
     * the other.  In a job of several nodes it stays out as well: UCX takes
     * a peer for one of its machine by the host's machine id, which
     * containers and namespaces of one host share although the library
     * counts them as nodes of their own (ucx_node.h), and moved device
     * payloads between them by cuda_ipc, a route of one node (the caller
     * sets no_cuda_ipc for both reasons). */
    snprintf(out, cap, "%s%s%s%s", (one_node || no_cuda_ipc) ? "^" : "", one_node ? "tcp" : "",
             (one_node && no_cuda_ipc) ? "," : "", no_cuda_ipc ? "cuda_ipc" : "");
}

void ucx_config_transports(void *ucp_config)
{
    const char *tls = U.excluded_tls;
    if (tls[0] && !getenv("UCX_TLS") && ucp_config_modify(ucp_config, "TLS", tls) != UCS_OK)
        util_debug("UCX refused TLS=%s; keeping its default transports", tls);
}

int ucx_init(int proc, int nprocs, bool one_node, bool no_cuda_ipc, const ucx_handlers_t *h)
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
    /* The user's UCX_TLS wins (docs/gpu.md says what to leave out). */
    excluded_transports(one_node, no_cuda_ipc, U.excluded_tls, sizeof U.excluded_tls);
    ucx_config_transports(config);
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS,
        .features = UCP_FEATURE_TAG | UCP_FEATURE_AM, /* AM: envelopes; tags: rendezvous payloads */
        .estimated_num_eps = (size_t)nprocs,
    };
    st = ucp_init(&params, config, &U.context);
    ucp_config_release(config);
    if (st != UCS_OK)
        util_fatal("ucp_init: %s", ucs_status_string(st));

    ucp_worker_params_t wp = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        /* one OS thread drives each worker, or (library mode) any thread
         * under the library's lock */
        .thread_mode = h->any_thread ? UCS_THREAD_MODE_SERIALIZED : UCS_THREAD_MODE_SINGLE,
    };
    st = ucp_worker_create(U.context, &wp, &U.worker);
    if (st != UCS_OK)
        util_fatal("ucp_worker_create: %s", ucs_status_string(st));

    env_handler_set(); /* before anyone can know our address */

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

/* A connection to a process of another node failed: end the job, naming
 * the process and what UCX saw (the launcher ends the other processes). */
static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    int peer = (int)(intptr_t)arg;
    if (U.ending) { /* the peer closed its side of the connection first */
        util_debug("connection to process %d closed by it at the end (%s)", peer, ucs_status_string(status));
        return;
    }
    char host[128], msg[384];
    ucx_pmix_hostname_of(peer, host, sizeof host);
    snprintf(msg, sizeof msg, "process %d lost its connection to process %d on node %s (%s): ending the job",
             U.proc, peer, host, ucs_status_string(status));
    ucx_pmix_abort(1, msg);
}

/* The first message to a process connects (out of line: ep_of is on every send's path). */
static __attribute__((noinline, cold)) ucp_ep_h ep_connect(int proc)
{
    ucp_ep_h ep;
    void *addr;
    size_t alen;
    if (ucx_pmix_get(proc, UCX_ADDR_KEY, &addr, &alen) != 0)
        util_fatal("no UCX address for process %d in PMIx", proc);
    /* A process of another node can vanish with its node or its link: UCX
     * then reports the endpoint as failed (keepalive) and the job ends with
     * a message instead of waiting forever.  Within a node the launcher
     * sees a process die, and the error mode stays NONE, which every
     * transport (cuda_ipc, shared memory) supports at full speed. */
    bool remote = !ucx_pmix_is_local(proc);
    ucp_ep_params_t ep_params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      (remote ? UCP_EP_PARAM_FIELD_ERR_HANDLER : 0),
        .address = addr,
        .err_mode = remote ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE,
        .err_handler = { .cb = ep_failed, .arg = (void *)(intptr_t)proc },
    };
    ucs_status_t st = ucp_ep_create(U.worker, &ep_params, &ep);
    free(addr);
    if (st != UCS_OK)
        util_fatal("ucp_ep_create to process %d: %s", proc, ucs_status_string(st));
    U.eps[proc] = ep;
    return ep;
}

static inline ucp_ep_h ep_of(int proc)
{
    ucp_ep_h ep = U.eps[proc];
    return UTIL_LIKELY(ep != NULL) ? ep : ep_connect(proc);
}

uint64_t ucx_fresh_tag(int type)
{
    return ucx_tag_make((ucx_tag_type_t)type, (uint32_t)U.proc, ++U.counter);
}

/* ---- completions ---- */

unsigned ucx_ops_in_flight;

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    ucx_op_t *op = user_data;
    ucx_ops_in_flight--;
    ucp_request_free(request);
    op->done(op, status == UCS_OK ? 0 : (int)status, 0);
}

static void recv_cb(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info, void *user_data)
{
    ucx_op_t *op = user_data;
    size_t len = info ? info->length : 0;
    ucx_ops_in_flight--;
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
    ucx_ops_in_flight++;
    return 1;
}

static ucs_memory_type_t mem_type(ucx_mem_t m)
{
    return m == UCX_MEM_CUDA           ? UCS_MEMORY_TYPE_CUDA
           : m == UCX_MEM_CUDA_MANAGED ? UCS_MEMORY_TYPE_CUDA_MANAGED
                                       : UCS_MEMORY_TYPE_HOST;
}

/* Envelopes travel as UCX active messages (id UCX_AM_ENVELOPE), always
 * eager.  The first part goes as the AM's user header, the second (when
 * there is one) as its data: no iov and no copy at the sender, and the
 * receiver's callback sees the bytes without any tag matching.  The
 * parameters of every envelope send but user_data are filled once, not built
 * (about 100 bytes) on each send; UCX copies what it keeps. */
static ucp_request_param_t env_prm = {
    .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_MEMORY_TYPE |
                    UCP_OP_ATTR_FIELD_FLAGS,
    .flags = UCP_AM_SEND_FLAG_EAGER, /* the receiver's callback must get the bytes at once */
    .cb.send = send_cb,
    .memory_type = UCS_MEMORY_TYPE_HOST, /* spares UCX a memory-type lookup */
};

int ucx_send_envelope(int proc, const void *hdr, size_t hlen, const void *data, size_t dlen, ucx_op_t *op)
{
    ucp_ep_h ep = ep_of(proc);
    env_prm.user_data = op;
    ucs_status_ptr_t r;
    if (dlen == 0) /* one contiguous envelope: all of it as data (the short path) */
        r = ucp_am_send_nbx(ep, UCX_AM_ENVELOPE, NULL, 0, hdr, hlen, &env_prm);
    else
        r = ucp_am_send_nbx(ep, UCX_AM_ENVELOPE, hdr, hlen, data, dlen, &env_prm);
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
 * The AM callback runs inside ucp_worker_progress: pt2pt's intake delivers
 * the envelope or copies it into a buffer that is queued; ucx_progress hands the queue
 * up once ucp_worker_progress has returned, in arrival order, so that the
 * handler may call UCX itself (ACKs, rendezvous receives).  Earlier versions
 * kept tagged receives for "any envelope" posted; each arrival then paid for
 * UCX's wildcard tag search, a request, a completion callback and the
 * re-post of the receive -- about 400 instructions that the AM path does not
 * have. */

typedef struct env_arrival {
    void *buf;
    size_t len;
} env_arrival_t;

static struct {
    env_arrival_t *q;  /* ring of arrivals not yet handed up */
    size_t cap, head, n; /* cap: a power of two, so that wrapping is a mask */
    bool closed;       /* ucx_close ran: nobody takes envelopes any more */
    ucx_env_intake_fn intake; /* pt2pt's intake (ucx_set_env_intake) */
} E;

void ucx_set_env_intake(ucx_env_intake_fn fn) { E.intake = fn; }

static void env_queue(void *buf, size_t len)
{
    if (E.n == E.cap) { /* grow the ring, keeping arrival order */
        size_t cap = E.cap ? 2 * E.cap : 64;
        env_arrival_t *q = malloc(cap * sizeof *q);
        if (!q)
            util_fatal("out of memory for arrived envelopes");
        for (size_t i = 0; i < E.n; i++)
            q[i] = E.q[(E.head + i) & (E.cap - 1)];
        free(E.q);
        E.q = q;
        E.cap = cap;
        E.head = 0;
    }
    E.q[(E.head + E.n) & (E.cap - 1)] = (env_arrival_t){ buf, len };
    E.n++;
}

static ucs_status_t env_am_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                              const ucp_am_recv_param_t *param)
{
    (void)arg;
    if (UTIL_UNLIKELY(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV))
        util_fatal("envelope arrived by rendezvous (the sender forces eager)");
    if (UTIL_UNLIKELY(E.closed))
        return UCS_OK; /* a message nobody receives (MPI leaves this erroneous) */
    size_t wire_len;
    void *wire = E.intake(header, header_length, data, length, E.n == 0, &wire_len);
    if (wire)
        env_queue(wire, wire_len);
    return UCS_OK;
}

static void env_handler_set(void)
{
    ucp_am_handler_param_t hp = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                      UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG,
        .id = UCX_AM_ENVELOPE,
        .flags = UCP_AM_FLAG_WHOLE_MSG,
        .cb = env_am_cb,
        .arg = NULL,
    };
    ucs_status_t st = ucp_worker_set_am_recv_handler(U.worker, &hp);
    if (st != UCS_OK)
        util_fatal("ucp_worker_set_am_recv_handler: %s", ucs_status_string(st));
}

int ucx_progress(void)
{
    if (!U.active)
        return 0;
    int n = (int)ucp_worker_progress(U.worker);
    /* the handler may send, and a send may progress UCX and queue more:
     * take one arrival at a time from the ring */
    while (E.n) {
        env_arrival_t a = E.q[E.head];
        E.head = (E.head + 1) & (E.cap - 1);
        E.n--;
        U.h.env_arrived(a.buf, a.len);
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

void ucx_ending(void) { U.ending = true; }

void ucx_close(void)
{
    if (!U.active)
        return;
    /* arrived but never handed up, and anything arriving from now on, is
     * a message nobody receives */
    E.closed = true;
    while (E.n) {
        U.h.env_free(E.q[E.head].buf);
        E.head = (E.head + 1) & (E.cap - 1);
        E.n--;
    }
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
    free(E.q);
    E.q = NULL;
    E.cap = E.head = E.n = 0;
    ucp_worker_destroy(U.worker);
    ucp_cleanup(U.context);
    U.active = false;
}
