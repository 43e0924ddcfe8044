/* Completion: Wait/Test and their any/all/some forms, Request_free, Cancel.
 * A blocked rank sleeps in rank_block(); any completion of one of its
 * requests wakes it and it looks again. */
#include "pt2pt/p2p_api.h"

/* Null handles and inactive persistent requests count as "nothing to wait for". */
static inline bool req_inactive(const p2p_req_t *q) { return !q || (q->persistent && !q->active); }

/* A handle that no longer names a live request: a copy kept after Wait, Test
 * or Request_free retired the request (released: DEAD), or after
 * Request_free of one still running (released when it completes).  Using
 * it would release the request a second time.  A released request's memory
 * serves the rank's next request, and a stale handle then names that one:
 * handles are the requests' addresses. */
static inline bool req_stale(const p2p_req_t *q) { return q && (q->kind == P2P_REQ_DEAD || q->freed); }

static bool any_stale(int count, const MPI_Request reqs[])
{
    for (int i = 0; i < count; i++)
        if (UTIL_UNLIKELY(req_stale(reqs[i])))
            return true;
    return false;
}

/* The request may hold the last reference to its communicator (freed by
 * the user meanwhile): keep it alive until its error handler has run. */
static core_comm_t *hold_comm(core_comm_t *c)
{
    if (c && UTIL_UNLIKELY(!c->predefined))
        core_comm_retain(c);
    return c;
}
static void drop_comm(core_comm_t *c)
{
    if (c && UTIL_UNLIKELY(!c->predefined))
        core_comm_release(c);
}

/* Requests retired together (Waitall, Testsome ...): the communicator of the
 * first that failed, held until its error handler has run, for the
 * MPI_ERR_IN_STATUS the call returns. */
typedef struct {
    bool failed;
    core_comm_t *comm;
} retire_set_t;

/* Retires one request of a set; its status (if any) gets its own error code. */
static void retire_in_set(retire_set_t *set, MPI_Request *h, MPI_Status *st)
{
    core_comm_t *c = hold_comm((*h)->c);
    int err = p2p_req_retire(h, st);
    if (err && !set->failed) {
        set->failed = true;
        set->comm = c;
    } else {
        drop_comm(c);
    }
    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = err;
}

static int retire_set_end(retire_set_t *set, const char *func)
{
    int ret = set->failed ? core_error(set->comm, MPI_ERR_IN_STATUS, func) : MPI_SUCCESS;
    drop_comm(set->comm);
    return ret;
}

static int retire_checked(MPI_Request *h, MPI_Status *st, const char *func)
{
    core_comm_t *c = hold_comm((*h)->c);
    int err = p2p_req_retire(h, st);
    if (UTIL_UNLIKELY(err))
        err = core_error(c, err, func);
    drop_comm(c);
    return err;
}

#pragma weak MPI_Wait = PMPI_Wait
int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Wait");
    (void)r;
    if (!request || req_stale(*request))
        return core_error(NULL, MPI_ERR_REQUEST, "MPI_Wait");
    if (req_inactive(*request)) {
        p2p_status_empty(status);
        return MPI_SUCCESS;
    }
    p2p_wait_complete(*request);
    return retire_checked(request, status, "MPI_Wait");
}

#pragma weak MPI_Test = PMPI_Test
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Test");
    (void)r;
    if (!request || !flag)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Test");
    p2p_req_t *q = *request;
    if (req_stale(q))
        return core_error(NULL, MPI_ERR_REQUEST, "MPI_Test");
    if (req_inactive(q)) {
        *flag = 1;
        p2p_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!q->complete) {
        p2p_poll();
        if (!q->complete) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return retire_checked(request, status, "MPI_Test");
}

/* Index of a completed active request, -1 if none, -2 if all are inactive. */
static int find_done(int count, MPI_Request reqs[])
{
    bool any_active = false;
    for (int i = 0; i < count; i++) {
        if (req_inactive(reqs[i]))
            continue;
        any_active = true;
        if (reqs[i]->complete)
            return i;
    }
    return any_active ? -1 : -2;
}

/* find_done after letting things move: progress once, then either block
 * until one completes or (Test forms) let the other ranks run once. */
static int wait_for_done(int count, MPI_Request reqs[], bool block)
{
    int i = find_done(count, reqs);
    if (i == -1) {
        p2p_progress(NULL);
        i = find_done(count, reqs);
    }
    if (i == -1 && !block) {
        p2p_yield();
        i = find_done(count, reqs);
    }
    if (i == -1 && block) {
        P2P_WAITING;
        do {
            p2p_idle();
            i = find_done(count, reqs);
        } while (i == -1);
    }
    return i;
}

static int any_common(int count, MPI_Request reqs[], int *indx, int *flag, MPI_Status *status, bool block,
                      const char *func)
{
    if (count < 0 || (count > 0 && !reqs) || !indx)
        return core_error(NULL, MPI_ERR_ARG, func);
    if (any_stale(count, reqs))
        return core_error(NULL, MPI_ERR_REQUEST, func);
    int i = wait_for_done(count, reqs, block);
    if (flag)
        *flag = i != -1;
    if (i == -1)
        return MPI_SUCCESS;
    if (i == -2) {
        *indx = MPI_UNDEFINED;
        p2p_status_empty(status);
        return MPI_SUCCESS;
    }
    *indx = i;
    return retire_checked(&reqs[i], status, func);
}

#pragma weak MPI_Waitany = PMPI_Waitany
int PMPI_Waitany(int count, MPI_Request reqs[], int *indx, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Waitany");
    (void)r;
    return any_common(count, reqs, indx, NULL, status, true, "MPI_Waitany");
}

#pragma weak MPI_Testany = PMPI_Testany
int PMPI_Testany(int count, MPI_Request reqs[], int *indx, int *flag, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Testany");
    (void)r;
    if (!flag)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Testany");
    *indx = MPI_UNDEFINED;
    return any_common(count, reqs, indx, flag, status, false, "MPI_Testany");
}

/* Index of the first request at or after `from` that is still running, or
 * count.  A request never goes back from complete to running, so a caller
 * waiting for all of them resumes where it left off: a window of n requests
 * completing in order costs n checks in all, not n per poll. */
static int first_running(int count, MPI_Request reqs[], int from)
{
    int i = from;
    while (i < count && (req_inactive(reqs[i]) || reqs[i]->complete))
        i++;
    return i;
}

static bool all_done(int count, MPI_Request reqs[]) { return first_running(count, reqs, 0) == count; }

/* Retire every request of a completed set; MPI_ERR_IN_STATUS if any failed. */
static int retire_all(int count, MPI_Request reqs[], MPI_Status statuses[], const char *func)
{
    retire_set_t set = { false, NULL };
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        if (req_inactive(reqs[i])) {
            p2p_status_empty(st);
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = MPI_SUCCESS;
            continue;
        }
        if (UTIL_LIKELY(reqs[i]->status.MPI_ERROR == MPI_SUCCESS)) {
            /* nothing to report: the communicator need not outlive it */
            p2p_req_retire(&reqs[i], st);
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = MPI_SUCCESS;
            continue;
        }
        retire_in_set(&set, &reqs[i], st);
    }
    return retire_set_end(&set, func);
}

#pragma weak MPI_Waitall = PMPI_Waitall
int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    P2P_ENTER(r, "MPI_Waitall");
    (void)r;
    if (count < 0 || (count > 0 && !reqs))
        return core_error(NULL, MPI_ERR_ARG, "MPI_Waitall");
    if (any_stale(count, reqs))
        return core_error(NULL, MPI_ERR_REQUEST, "MPI_Waitall");
    int i = first_running(count, reqs, 0);
    if (i < count) {
        P2P_WAITING;
        p2p_progress(NULL);
        while ((i = first_running(count, reqs, i)) < count)
            p2p_idle();
    }
    return retire_all(count, reqs, statuses, "MPI_Waitall");
}

#pragma weak MPI_Testall = PMPI_Testall
int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    P2P_ENTER(r, "MPI_Testall");
    (void)r;
    if (count < 0 || (count > 0 && !reqs) || !flag)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Testall");
    if (any_stale(count, reqs))
        return core_error(NULL, MPI_ERR_REQUEST, "MPI_Testall");
    if (!all_done(count, reqs)) {
        p2p_poll();
        if (!all_done(count, reqs)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return retire_all(count, reqs, statuses, "MPI_Testall");
}

static int some_common(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[],
                       bool block, const char *func)
{
    if (incount < 0 || (incount > 0 && (!reqs || !indices)) || !outcount)
        return core_error(NULL, MPI_ERR_ARG, func);
    if (any_stale(incount, reqs))
        return core_error(NULL, MPI_ERR_REQUEST, func);
    int i = wait_for_done(incount, reqs, block);
    if (i == -2) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    int n = 0;
    retire_set_t set = { false, NULL };
    for (int k = 0; i >= 0 && k < incount; k++) {
        if (req_inactive(reqs[k]) || !reqs[k]->complete)
            continue;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        retire_in_set(&set, &reqs[k], st);
        indices[n++] = k;
    }
    *outcount = n;
    return retire_set_end(&set, func);
}

#pragma weak MPI_Waitsome = PMPI_Waitsome
int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    P2P_ENTER(r, "MPI_Waitsome");
    (void)r;
    return some_common(incount, reqs, outcount, indices, statuses, true, "MPI_Waitsome");
}

#pragma weak MPI_Testsome = PMPI_Testsome
int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    P2P_ENTER(r, "MPI_Testsome");
    (void)r;
    return some_common(incount, reqs, outcount, indices, statuses, false, "MPI_Testsome");
}

#pragma weak MPI_Request_get_status = PMPI_Request_get_status
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    P2P_ENTER(r, "MPI_Request_get_status");
    (void)r;
    if (!flag)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Request_get_status");
    if (req_stale(request))
        return core_error(NULL, MPI_ERR_REQUEST, "MPI_Request_get_status");
    if (req_inactive(request)) {
        *flag = 1;
        p2p_status_empty(status);
        /* here the empty status's error field is set as well (MPI_SUCCESS,
         * as MPICH's rqstatus asks); Wait and Recv leave that field alone */
        if (status != MPI_STATUS_IGNORE)
            status->MPI_ERROR = MPI_SUCCESS;
        return MPI_SUCCESS;
    }
    if (!request->complete)
        p2p_poll();
    *flag = request->complete;
    if (*flag && request->kind == P2P_REQ_GREQ) {
        int err = p2p_greq_query(request, status);
        return err ? core_error(NULL, err, "MPI_Request_get_status") : MPI_SUCCESS;
    }
    if (*flag)
        p2p_status_copy(status, request);
    return MPI_SUCCESS;
}

#pragma weak MPI_Request_free = PMPI_Request_free
int PMPI_Request_free(MPI_Request *request)
{
    P2P_ENTER(r, "MPI_Request_free");
    (void)r;
    if (!request || !*request || req_stale(*request))
        return core_error(NULL, MPI_ERR_REQUEST, "MPI_Request_free");
    p2p_req_t *q = *request;
    if (q->complete || req_inactive(q))
        p2p_req_release(q);
    else {
        q->parent = NULL;
        q->freed = true; /* released when it completes */
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Cancel = PMPI_Cancel
int PMPI_Cancel(MPI_Request *request)
{
    P2P_ENTER(r, "MPI_Cancel");
    if (!request || !*request || req_stale(*request))
        return core_error(NULL, MPI_ERR_REQUEST, "MPI_Cancel");
    p2p_req_t *q = *request;
    if (q->kind == P2P_REQ_GREQ) {
        int err = p2p_greq_cancel(q);
        return err ? core_error(NULL, err, "MPI_Cancel") : MPI_SUCCESS;
    }
    /* A receive or a send not matched yet is withdrawn (sends: p2p_cancel.c). */
    if (q->kind == P2P_REQ_SEND) {
        p2p_send_cancel(q);
        return MPI_SUCCESS;
    }
    if (q->kind == P2P_REQ_RECV && q->posted) {
        p2p_posted_remove(&r->posted, &q->m);
        q->posted = false;
        q->status.ampi_cancelled = 1;
        q->status.MPI_SOURCE = MPI_ANY_SOURCE;
        q->status.MPI_TAG = MPI_ANY_TAG;
        p2p_req_part_done(q);
    }
    return MPI_SUCCESS;
}
