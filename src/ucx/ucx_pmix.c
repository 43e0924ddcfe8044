#include "ucx/ucx_pmix.h"
#include "util/util_log.h"

#include <pmix.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t my_proc;
static bool pmix_up;

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

int ucx_pmix_init(ucx_job_t *job)
{
    memset(job, 0, sizeof *job);
    /* A PMIx server announces itself through these; without them we are a
     * singleton and don't pay for a connection attempt. */
    if (!getenv("PMIX_NAMESPACE") && !getenv("PMIX_SERVER_URI41") && !getenv("PMIX_SERVER_URI4") &&
        !getenv("PMIX_SERVER_URI3") && !getenv("PMIX_SERVER_URI21") && !getenv("PMIX_SERVER_URI2")) {
        job->nprocs = job->local_size = 1;
        job->singleton = true;
        return 0;
    }
    pmix_status_t rc = PMIx_Init(&my_proc, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        util_warn("PMIx_Init failed (%s); running as a singleton", PMIx_Error_string(rc));
        job->nprocs = job->local_size = 1;
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
}
