/* The embedded PMIx server: one namespace whose P processes all live on this
 * node.  Callbacks arrive on PMIx's progress thread; they record what
 * happened under state_lock and poke the main thread through wake_fd.
 *
 * Ordering that the exit decision relies on: connected/finalized/abort are
 * recorded *before* the client gets its reply (PMIx holds the client until
 * the callback completes), so by the time the main thread reaps a process,
 * everything that process told the server is already visible here. */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>
#include <pmix_server.h>

typedef struct client_state {
    bool connected;
    bool finalized;
} client_state_t;

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static client_state_t *clients;
static int nclients;
static bool abort_recorded;  /* an abort happened (only the first counts) */
static bool abort_delivered; /* ... and the main thread was told */
static launch_abort_info_t abort_info;
static int wake_fd = -1;
static pmix_nspace_t job_nspace;
static bool server_up;

static void wake_main_thread(void)
{
    char byte = 1;
    /* The pipe is non-blocking: when full, the main thread has wake-ups
     * pending anyway, so a lost byte loses nothing. */
    ssize_t n = write(wake_fd, &byte, 1);
    (void)n;
}

/* The client_state_t of proc, or NULL when proc is not one of ours. */
static client_state_t *state_of(const pmix_proc_t *proc)
{
    if (!PMIX_CHECK_NSPACE(proc->nspace, job_nspace))
        return NULL;
    if (proc->rank >= (pmix_rank_t)nclients)
        return NULL;
    return &clients[proc->rank];
}

/* ---- module callbacks (PMIx progress thread) ---- */

static pmix_status_t on_client_connected(const pmix_proc_t *proc, void *server_object,
                                         pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)server_object, (void)cbfunc, (void)cbdata;
    pthread_mutex_lock(&state_lock);
    client_state_t *st = state_of(proc);
    if (st != NULL)
        st->connected = true;
    pthread_mutex_unlock(&state_lock);
    /* Done on the spot: PMIx 4 passes no cbfunc here, PMIx 5 does and takes
     * this return value as "completed, no callback will follow". */
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_client_finalized(const pmix_proc_t *proc, void *server_object,
                                         pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)server_object, (void)cbfunc, (void)cbdata;
    pthread_mutex_lock(&state_lock);
    client_state_t *st = state_of(proc);
    if (st != NULL)
        st->finalized = true;
    pthread_mutex_unlock(&state_lock);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    /* procs names whom to abort; MPI_Abort on any communicator ends the
     * whole job here, as the MPI standard allows. */
    (void)server_object, (void)procs, (void)nprocs;
    pthread_mutex_lock(&state_lock);
    if (!abort_recorded && state_of(proc) != NULL) {
        abort_recorded = true;
        abort_info.rank = (int)proc->rank;
        abort_info.status = status;
        /* msg belongs to PMIx and is gone after we return. */
        snprintf(abort_info.msg, sizeof abort_info.msg, "%s", msg != NULL ? msg : "");
    }
    pthread_mutex_unlock(&state_lock);
    wake_main_thread();
    /* Release the client only now that the abort is on record. */
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static void release_fence_data(void *cbdata)
{
    free(cbdata);
}

static pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                              void *cbdata)
{
    /* All participants are local, so the server library has already
     * collected every contribution: the local blob is the global result.
     * The blob is ours from here on (the library handed it over); it must
     * live until PMIx calls the release function, which then frees it. */
    (void)procs, (void)nprocs, (void)info, (void)ninfo;
    if (cbfunc == NULL) {
        free(data);
        return PMIX_SUCCESS;
    }
    cbfunc(PMIX_SUCCESS, data, ndata, cbdata, release_fence_data, data);
    return PMIX_SUCCESS;
}

static pmix_status_t on_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[],
                                     size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    /* Every process is local: the server library answers from its own
     * store, so there is no remote server to ask. */
    (void)proc, (void)info, (void)ninfo, (void)cbfunc, (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

static pmix_server_module_t server_module = {
    .client_connected = on_client_connected,
    .client_finalized = on_client_finalized,
    .abort = on_abort,
    .fence_nb = on_fence,
    .direct_modex = on_direct_modex,
};

/* ---- waiting for non-blocking registration calls ---- */

typedef struct op_wait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    pmix_status_t status;
} op_wait_t;

static void op_wait_init(op_wait_t *w)
{
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->done = false;
    w->status = PMIX_SUCCESS;
}

static void op_done(pmix_status_t status, void *cbdata)
{
    op_wait_t *w = cbdata;
    pthread_mutex_lock(&w->lock);
    w->status = status;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/* rc is what the non-blocking call returned: PMIX_SUCCESS means op_done
 * will be called, PMIX_OPERATION_SUCCEEDED that it completed already. */
static pmix_status_t op_wait_finish(op_wait_t *w, pmix_status_t rc)
{
    if (rc == PMIX_SUCCESS) {
        pthread_mutex_lock(&w->lock);
        while (!w->done)
            pthread_cond_wait(&w->cond, &w->lock);
        rc = w->status;
        pthread_mutex_unlock(&w->lock);
    } else if (rc == PMIX_OPERATION_SUCCEEDED) {
        rc = PMIX_SUCCESS;
    }
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    return rc;
}

/* ---- job description ---- */

static char *rank_list(int n)
{
    size_t cap = (size_t)n * 8 + 1;
    char *s = malloc(cap);
    if (s == NULL)
        return NULL;
    size_t len = 0;
    s[0] = '\0';
    for (int r = 0; r < n; r++)
        len += (size_t)snprintf(s + len, cap - len, r ? ",%d" : "%d", r);
    return s;
}

/* Add key with a value to list, remembering the first failure in *rc. */
static void add(void *list, const char *key, const void *value, pmix_data_type_t type,
                pmix_status_t *rc)
{
    if (*rc != PMIX_SUCCESS)
        return;
    *rc = PMIx_Info_list_add(list, key, value, type);
}

/* Convert sub (and release it) into a data array and add that to list. */
static void add_array(void *list, const char *key, void *sub, pmix_status_t *rc)
{
    pmix_data_array_t darray;
    memset(&darray, 0, sizeof darray);
    if (*rc == PMIX_SUCCESS)
        *rc = PMIx_Info_list_convert(sub, &darray);
    PMIx_Info_list_release(sub);
    add(list, key, &darray, PMIX_DATA_ARRAY, rc);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
}

/* What a client may PMIx_Get about its job, node and peers. */
static pmix_status_t describe_job(void *list, int nprocs, const char *hostname,
                                  const char *peers)
{
    pmix_status_t rc = PMIX_SUCCESS;
    uint32_t size = (uint32_t)nprocs, zero = 0, one = 1;
    pmix_rank_t leader = 0;
    bool no = false;
    char *node_map = NULL, *proc_map = NULL;

    add(list, PMIX_JOBID, job_nspace, PMIX_STRING, &rc);
    add(list, PMIX_JOB_SIZE, &size, PMIX_UINT32, &rc);
    add(list, PMIX_UNIV_SIZE, &size, PMIX_UINT32, &rc);
    add(list, PMIX_MAX_PROCS, &size, PMIX_UINT32, &rc);
    add(list, PMIX_APP_SIZE, &size, PMIX_UINT32, &rc);
    add(list, PMIX_JOB_NUM_APPS, &one, PMIX_UINT32, &rc);
    add(list, PMIX_APPNUM, &zero, PMIX_UINT32, &rc);
    add(list, PMIX_SPAWNED, &no, PMIX_BOOL, &rc);
    add(list, PMIX_NUM_NODES, &one, PMIX_UINT32, &rc);
    add(list, PMIX_NODEID, &zero, PMIX_UINT32, &rc);
    add(list, PMIX_HOSTNAME, hostname, PMIX_STRING, &rc);
    add(list, PMIX_LOCAL_SIZE, &size, PMIX_UINT32, &rc);
    add(list, PMIX_NODE_SIZE, &size, PMIX_UINT32, &rc);
    add(list, PMIX_LOCAL_PEERS, peers, PMIX_STRING, &rc);
    add(list, PMIX_LOCALLDR, &leader, PMIX_PROC_RANK, &rc);

    /* The maps are what PMIx itself derives node membership from; their
     * text form is opaque, hence the PMIX_REGEX type. */
    if (rc == PMIX_SUCCESS)
        rc = PMIx_generate_regex(hostname, &node_map);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_generate_ppn(peers, &proc_map);
    add(list, PMIX_NODE_MAP, node_map, PMIX_REGEX, &rc);
    add(list, PMIX_PROC_MAP, proc_map, PMIX_REGEX, &rc);
    free(node_map);
    free(proc_map);

    for (int r = 0; r < nprocs && rc == PMIX_SUCCESS; r++) {
        void *proc = PMIx_Info_list_start();
        pmix_rank_t rank = (pmix_rank_t)r;
        uint16_t local = (uint16_t)r;
        /* The rank must come first: it says whom the array describes. */
        add(proc, PMIX_RANK, &rank, PMIX_PROC_RANK, &rc);
        add(proc, PMIX_LOCAL_RANK, &local, PMIX_UINT16, &rc);
        add(proc, PMIX_NODE_RANK, &local, PMIX_UINT16, &rc);
        add(proc, PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK, &rc);
        add(proc, PMIX_APP_RANK, &rank, PMIX_PROC_RANK, &rc);
        add(proc, PMIX_APPNUM, &zero, PMIX_UINT32, &rc);
        add(proc, PMIX_NODEID, &zero, PMIX_UINT32, &rc);
        add(proc, PMIX_HOSTNAME, hostname, PMIX_STRING, &rc);
        add_array(list, PMIX_PROC_INFO_ARRAY, proc, &rc);
    }
    return rc;
}

/* ---- public interface (main thread) ---- */

int launch_pmix_start(const launch_options_t *opt, const char *tmpdir, int fd)
{
    if (opt->nprocs > UINT16_MAX) {
        launch_say("-np %d is more than one node can host (local ranks are 16-bit)",
                   opt->nprocs);
        return -1;
    }
    wake_fd = fd;
    nclients = opt->nprocs;
    clients = calloc((size_t)nclients, sizeof *clients);
    if (clients == NULL)
        return -1;
    PMIX_LOAD_NSPACE(job_nspace, launch_nspace());

    /* Keep every rendezvous file in our private directory: nothing is left
     * in the shared system tmpdir, and no tool can attach to this job. */
    bool no = false;
    pmix_status_t rc = PMIX_SUCCESS;
    void *list = PMIx_Info_list_start();
    add(list, PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING, &rc);
    add(list, PMIX_SYSTEM_TMPDIR, tmpdir, PMIX_STRING, &rc);
    add(list, PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL, &rc);
    add(list, PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL, &rc);
    pmix_data_array_t init_info;
    memset(&init_info, 0, sizeof init_info);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Info_list_convert(list, &init_info);
    PMIx_Info_list_release(list);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_server_init(&server_module, init_info.array, init_info.size);
    PMIX_DATA_ARRAY_DESTRUCT(&init_info);
    if (rc != PMIX_SUCCESS) {
        launch_say("cannot start the PMIx server: %s", PMIx_Error_string(rc));
        return -1;
    }
    server_up = true;

    char hostname[256] = "localhost";
    if (gethostname(hostname, sizeof hostname) != 0)
        snprintf(hostname, sizeof hostname, "localhost");
    hostname[sizeof hostname - 1] = '\0';
    char *peers = rank_list(opt->nprocs);
    if (peers == NULL)
        return -1;

    list = PMIx_Info_list_start();
    rc = describe_job(list, opt->nprocs, hostname, peers);
    free(peers);
    pmix_data_array_t job_info;
    memset(&job_info, 0, sizeof job_info);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Info_list_convert(list, &job_info);
    PMIx_Info_list_release(list);
    if (rc == PMIX_SUCCESS) {
        op_wait_t w;
        op_wait_init(&w);
        rc = PMIx_server_register_nspace(job_nspace, opt->nprocs, job_info.array, job_info.size,
                                         op_done, &w);
        rc = op_wait_finish(&w, rc);
    }
    PMIX_DATA_ARRAY_DESTRUCT(&job_info);
    if (rc != PMIX_SUCCESS) {
        launch_say("cannot register the job with PMIx: %s", PMIx_Error_string(rc));
        return -1;
    }

    /* Lets PMIx prepare node-local resources (e.g. fabric) for the job; a
     * server without such plugins may decline. */
    op_wait_t w;
    op_wait_init(&w);
    rc = PMIx_server_setup_local_support(job_nspace, NULL, 0, op_done, &w);
    rc = op_wait_finish(&w, rc);
    if (rc != PMIX_SUCCESS && rc != PMIX_ERR_NOT_SUPPORTED) {
        launch_say("cannot set up PMIx local support: %s", PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

int launch_pmix_prepare_client(int rank, char ***env)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, job_nspace, (pmix_rank_t)rank);
    op_wait_t w;
    op_wait_init(&w);
    pmix_status_t rc =
        PMIx_server_register_client(&proc, geteuid(), getegid(), NULL, op_done, &w);
    /* Registration must be complete before the client can connect. */
    rc = op_wait_finish(&w, rc);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_server_setup_fork(&proc, env);
    if (rc != PMIX_SUCCESS) {
        launch_say("cannot register process %d with PMIx: %s", rank, PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

void launch_pmix_client_state(int rank, bool *connected, bool *finalized)
{
    pthread_mutex_lock(&state_lock);
    *connected = clients[rank].connected;
    *finalized = clients[rank].finalized;
    pthread_mutex_unlock(&state_lock);
}

bool launch_pmix_take_abort(launch_abort_info_t *out)
{
    bool fresh = false;
    pthread_mutex_lock(&state_lock);
    if (abort_recorded && !abort_delivered) {
        abort_delivered = true;
        *out = abort_info;
        fresh = true;
    }
    pthread_mutex_unlock(&state_lock);
    return fresh;
}

void launch_pmix_stop(bool job_was_clean)
{
    /* PMIx 4.2's teardown can crash (use after free in
     * PMIx_server_finalize) once clients died in the middle of a fence, the
     * common case of a failed job.  ampirun exits right after this and
     * removes the server's directory itself, so after a failure the server
     * is simply left to die with the process. */
    if (server_up && job_was_clean) {
        server_up = false;
        pmix_status_t rc = PMIx_server_finalize();
        if (rc != PMIX_SUCCESS)
            launch_say("warning: PMIx server finalize: %s", PMIx_Error_string(rc));
    }
    free(clients);
    clients = NULL;
}
