/* Generalized requests (MPI 3.1 12.2): operations the program itself
 * carries out, completed by MPI_Grequest_complete and then waited for or
 * tested like any request.
 *
 * The request has kind GREQ and one pending part, which
 * MPI_Grequest_complete finishes (waking a rank blocked on it).  Its
 * status is the query callback's, asked when Wait/Test retire it (and by
 * MPI_Request_get_status); the free callback runs once, when the request
 * is retired or, after MPI_Request_free, released; MPI_Cancel calls the
 * cancel callback with whether it has completed. */
#include "pt2pt/p2p_api.h"

#include <stdlib.h>

struct p2p_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    bool freed; /* the free callback has run */
};

/* The status the query callback writes, over an empty one; MPI_ERROR is
 * the caller's business (single completions leave it). */
int p2p_greq_query(const p2p_req_t *q, MPI_Status *st)
{
    MPI_Status mine;
    if (st == MPI_STATUS_IGNORE)
        st = &mine;
    int keep = st == &mine ? MPI_SUCCESS : st->MPI_ERROR;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->ampi_cancelled = 0;
    st->ampi_count = 0;
    int err = q->greq->query(q->greq->extra, st);
    st->MPI_ERROR = keep;
    return err;
}

static int run_free(p2p_greq_t *g)
{
    if (g->freed)
        return MPI_SUCCESS;
    g->freed = true;
    return g->free(g->extra);
}

int p2p_greq_retire(MPI_Request *handle, MPI_Status *st)
{
    p2p_req_t *q = *handle;
    int err = p2p_greq_query(q, st);
    int ferr = run_free(q->greq);
    p2p_req_release(q);
    *handle = MPI_REQUEST_NULL;
    return err ? err : ferr;
}

int p2p_greq_cancel(p2p_req_t *q) { return q->greq->cancel(q->greq->extra, q->complete); }

void p2p_greq_cleanup(p2p_req_t *q)
{
    (void)run_free(q->greq); /* MPI_Request_free's release: no one to tell an error */
    free(q->greq);
    q->greq = NULL;
}

#pragma weak MPI_Grequest_start = PMPI_Grequest_start
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
    P2P_ENTER(r, "MPI_Grequest_start");
    if (!query_fn || !free_fn || !cancel_fn || !request)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Grequest_start");
    p2p_greq_t *g = malloc(sizeof *g);
    if (!g)
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start");
    *g = (p2p_greq_t){ query_fn, free_fn, cancel_fn, extra_state, false };
    p2p_req_t *q = p2p_req_new(r, P2P_REQ_GREQ);
    q->greq = g;
    q->active = true;
    q->pending = 1;
    q->comm = MPI_COMM_NULL;
    *request = q;
    return MPI_SUCCESS;
}

static int internal_query(void *extra, MPI_Status *st)
{
    (void)extra;
    (void)st; /* p2p_greq_query made it empty */
    return MPI_SUCCESS;
}
static int internal_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}
static int internal_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete; /* the operation goes on: cancelling does not apply to it */
    return MPI_SUCCESS;
}

p2p_req_t *p2p_greq_internal(p2p_rank_t *r)
{
    p2p_greq_t *g = malloc(sizeof *g);
    if (!g)
        return NULL;
    *g = (p2p_greq_t){ internal_query, internal_free, internal_cancel, NULL, false };
    p2p_req_t *q = p2p_req_new(r, P2P_REQ_GREQ);
    q->greq = g;
    q->active = true;
    q->pending = 1;
    q->comm = MPI_COMM_NULL;
    return q;
}

#pragma weak MPI_Grequest_complete = PMPI_Grequest_complete
int PMPI_Grequest_complete(MPI_Request request)
{
    P2P_ENTER(r, "MPI_Grequest_complete");
    (void)r;
    if (!request || request->kind != P2P_REQ_GREQ || request->complete)
        return core_error(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete");
    p2p_req_part_done(request);
    return MPI_SUCCESS;
}
