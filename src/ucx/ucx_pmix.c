#include "ucx/ucx_pmix.h"
#include "ucx/ucx_node.h"
#include "util/util_log.h"

#include <pmix.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t my_proc;
static bool pmix_up;
/* one bit per process of the job: set for those on this node */
static uint64_t *local_bits;
static int local_leader;
static char host_name[256];
/* where PMIx's local peers and the node identities disagreed (ucx_node.h) */
static int pmix_said_more, pmix_said_fewer;

static long value_as_long(const pmix_value_t *v)
{
    switch (v->type) {
    case PMIX_UINT8: return v->data.uint8;
    case PMIX_UINT16: return v->data.uint16;
    case PMIX_UINT32: return v->data.uint32;
    case PMIX_UINT64: return (long)v->data.uint64;
    case PMIX_INT: return v->data.integer;
    case PMIX_INT8: return v->data.int8;
    case PMIX_INT16: return v->data.int16;
    case PMIX_INT32: return v->data.int32;
    case PMIX_INT64: return (long)v->data.int64;
    case PMIX_SIZE: return (long)v->data.size;
    case PMIX_PROC_RANK: return (long)v->data.rank;
    default: return -1;
    }
}

static long get_number(pmix_rank_t rank, const char *key, long dflt)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&p, my_proc.nspace, rank);
    if (PMIx_Get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
        return dflt;
    long r = value_as_long(v);
    PMIX_VALUE_RELEASE(v);
    return r < 0 ? dflt : r;
}

static void mark_local(int proc, int nprocs)
{
    if (proc >= 0 && proc < nprocs)
        local_bits[proc / 64] |= 1ull << (proc % 64);
}

/* Replaces the local bits by the processes that share this one's host and
 * namespaces (ucx_node.h), saying where PMIx named others. */
static void check_local_peers(const ucx_job_t *job, int *nnodes)
{
    bool *local = calloc((size_t)job->nprocs, sizeof *local);
    if (!local)
        util_fatal("out of memory for the node map of %d processes", job->nprocs);
    if (ucx_node_exchange(job->proc, job->nprocs, local, nnodes) != 0)
        ucx_pmix_abort(1, "PMIx could not exchange the node identities of the processes");
    int more = 0, fewer = 0;
    for (int p = 0; p < job->nprocs; p++) {
        bool said = ucx_pmix_is_local(p);
        more += said && !local[p];
        fewer += !said && local[p];
        if (said != local[p])
            local_bits[p / 64] ^= 1ull << (p % 64);
    }
    pmix_said_more = more;
    pmix_said_fewer = fewer;
    free(local);
}

/* The processes of this node from PMIX_LOCAL_PEERS ("0,1,5"); without it the
 * job is taken as one node only when PMIx says every process is local, else
 * as this process alone (no shared memory rather than a wrong guess). */
static void find_local_peers(ucx_job_t *job)
{
    size_t words = ((size_t)job->nprocs + 63) / 64;
    local_bits = calloc(words, sizeof *local_bits);
    if (!local_bits)
        util_fatal("out of memory for the node map of %d processes", job->nprocs);
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&wild, my_proc.nspace, PMIX_RANK_WILDCARD);
    int found = 0;
    if (pmix_up && PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &v) == PMIX_SUCCESS && v && v->type == PMIX_STRING &&
        v->data.string) {
        for (const char *s = v->data.string; *s;) {
            char *end;
            long p = strtol(s, &end, 10);
            if (end == s)
                break;
            mark_local((int)p, job->nprocs);
            found++;
            s = *end == ',' ? end + 1 : end;
        }
    }
    if (v)
        PMIX_VALUE_RELEASE(v);
    if (!found) {
        if (job->local_size == job->nprocs)
            for (int p = 0; p < job->nprocs; p++)
                mark_local(p, job->nprocs);
        else
            util_warn("PMIx names no local peers: shared memory, CMA and CUDA IPC stay off");
    }
    mark_local(job->proc, job->nprocs);
    /* ampirun's own server starts one node only; another engine's view is
     * checked against what the processes share (ucx_node.h) */
    bool checked = pmix_up && job->nprocs > 1 && !getenv("AMPI_LAUNCH_REPORT_FD");
    int checked_nodes = 0;
    if (checked)
        check_local_peers(job, &checked_nodes);
    local_leader = job->proc;
    int count = 0;
    for (int p = job->nprocs - 1; p >= 0; p--)
        if (ucx_pmix_is_local(p)) {
            local_leader = p;
            count++;
        }
    job->node_leader = local_leader;
    job->local_size = count;
    job->nnodes = checked ? checked_nodes
                          : (int)get_number(PMIX_RANK_WILDCARD, PMIX_NUM_NODES, count == job->nprocs ? 1 : 0);
    if (checked) { /* the place among this node's processes, by number */
        job->local_rank = 0;
        for (int p = 0; p < job->proc; p++)
            job->local_rank += ucx_pmix_is_local(p);
    }
    pmix_proc_t self = my_proc;
    v = NULL;
    if (PMIx_Get(&self, PMIX_HOSTNAME, NULL, 0, &v) == PMIX_SUCCESS && v && v->type == PMIX_STRING && v->data.string)
        snprintf(host_name, sizeof host_name, "%s", v->data.string);
    if (v)
        PMIX_VALUE_RELEASE(v);
}

bool ucx_pmix_is_local(int proc)
{
    if (!local_bits)
        return !pmix_up || proc == (int)my_proc.rank;
    return proc >= 0 && (local_bits[proc / 64] >> (proc % 64)) & 1;
}

int ucx_pmix_node_leader(void) { return local_leader; }

void ucx_pmix_local_disagreement(int *more, int *fewer)
{
    *more = pmix_said_more;
    *fewer = pmix_said_fewer;
}

void ucx_pmix_hostname_of(int proc, char *buf, size_t len)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    snprintf(buf, len, "?");
    PMIX_LOAD_PROCID(&p, my_proc.nspace, (pmix_rank_t)proc);
    if (pmix_up && PMIx_Get(&p, PMIX_HOSTNAME, NULL, 0, &v) == PMIX_SUCCESS && v && v->type == PMIX_STRING &&
        v->data.string)
        snprintf(buf, len, "%s", v->data.string);
    if (v)
        PMIX_VALUE_RELEASE(v);
}

const char *ucx_pmix_hostname(void) { return host_name; }

int ucx_pmix_init(ucx_job_t *job)
{
    memset(job, 0, sizeof *job);
    /* A PMIx server announces itself through these; without them we are a
     * singleton and don't pay for a connection attempt. */
    if (!getenv("PMIX_NAMESPACE") && !getenv("PMIX_SERVER_URI41") && !getenv("PMIX_SERVER_URI4") &&
        !getenv("PMIX_SERVER_URI3") && !getenv("PMIX_SERVER_URI21") && !getenv("PMIX_SERVER_URI2")) {
        job->nprocs = job->local_size = job->nnodes = 1;
        job->singleton = true;
        return 0;
    }
    pmix_status_t rc = PMIx_Init(&my_proc, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        util_warn("PMIx_Init failed (%s); running as a singleton", PMIx_Error_string(rc));
        job->nprocs = job->local_size = job->nnodes = 1;
        job->singleton = true;
        return 0;
    }
    pmix_up = true;
    job->proc = (int)my_proc.rank;
    job->nprocs = (int)get_number(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, -1);
    if (job->nprocs < 1)
        util_fatal("PMIx gave no job size");
    job->local_rank = (int)get_number(my_proc.rank, PMIX_LOCAL_RANK, job->proc);
    job->local_size = (int)get_number(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, job->nprocs);
    find_local_peers(job);
    return 0;
}

int ucx_pmix_put(const char *key, const void *data, size_t len)
{
    if (!pmix_up)
        return -1;
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)data;
    v.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    return rc == PMIX_SUCCESS ? 0 : -1;
}

int ucx_pmix_fence(bool collect)
{
    if (!pmix_up)
        return 0;
    if (collect && PMIx_Commit() != PMIX_SUCCESS)
        return -1;
    pmix_info_t info;
    bool yes = collect;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc == PMIX_SUCCESS ? 0 : -1;
}

static void fence_done(pmix_status_t status, void *cbdata)
{
    atomic_store((atomic_int *)cbdata, status == PMIX_SUCCESS ? 1 : -1);
}

int ucx_pmix_fence_progress(int (*progress)(void))
{
    if (!pmix_up)
        return 0;
    atomic_int done = 0;
    if (PMIx_Fence_nb(NULL, 0, NULL, 0, fence_done, &done) != PMIX_SUCCESS)
        return -1;
    while (atomic_load(&done) == 0) {
        if (progress() == 0)
            sched_yield(); /* the PMIx thread needs the core more than we do */
    }
    return atomic_load(&done) == 1 ? 0 : -1;
}

int ucx_pmix_get(int proc, const char *key, void **data, size_t *len)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&p, my_proc.nspace, (pmix_rank_t)proc);
    if (!pmix_up || PMIx_Get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
        return -1;
    int rc = -1;
    if (v->type == PMIX_BYTE_OBJECT) {
        *len = v->data.bo.size;
        *data = malloc(*len ? *len : 1);
        if (*data) {
            memcpy(*data, v->data.bo.bytes, *len);
            rc = 0;
        }
    }
    PMIX_VALUE_RELEASE(v);
    return rc;
}

const char *ucx_pmix_nspace(void) { return pmix_up ? my_proc.nspace : ""; }

void ucx_pmix_abort(int status, const char *msg)
{
    fflush(stdout);
    fprintf(stderr, "ampi: %s\n", msg);
    fflush(stderr);
    if (pmix_up)
        PMIx_Abort(status, msg, NULL, 0); /* the launcher ends the whole job */
    _exit(status ? status : 1);
}

void ucx_pmix_finalize(void)
{
    if (pmix_up)
        PMIx_Finalize(NULL, 0);
    pmix_up = false;
    free(local_bits);
    local_bits = NULL;
}
