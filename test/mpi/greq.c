/* greq.c - generalized requests (MPI 3.1 12.2): MPI_Test and MPI_Waitall
 * (beside a receive) return once MPI_Grequest_complete has run, the status is
 * the query callback's, the free callback runs exactly once (at the wait,
 * or at MPI_Request_free), MPI_Cancel calls the cancel callback with the
 * completion state, and the query's error reaches the caller. */
#include "mpitest.h"

typedef struct {
    int queried, freed, cancelled, cancel_complete;
    int query_err;
} state_t;

static int query_fn(void *extra, MPI_Status *st)
{
    state_t *s = extra;
    s->queried++;
    MPI_Status_set_elements(st, MPI_INT, 5);
    MPI_Status_set_cancelled(st, s->cancelled > 0);
    st->MPI_SOURCE = 3;
    st->MPI_TAG = 44;
    return s->query_err;
}

static int free_fn(void *extra)
{
    ((state_t *)extra)->freed++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    state_t *s = extra;
    s->cancelled++;
    s->cancel_complete = complete;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), errs = 0, flag = -1, n = -1;
    MPI_Request q;
    MPI_Status st;

    /* Test before and after completion; the status is the query's */
    state_t a = { 0 };
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &a, &q);
    MPI_Test(&q, &flag, &st);
    if (flag || a.queried || a.freed)
        errs += mt_fail(rank, "Test before Grequest_complete: flag %d, queried %d, freed %d", flag, a.queried,
                        a.freed);
    MPI_Grequest_complete(q);
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Test(&q, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    if (!flag || q != MPI_REQUEST_NULL || a.queried != 1 || a.freed != 1 || n != 5 || st.MPI_SOURCE != 3 ||
        st.MPI_TAG != 44 || st.MPI_ERROR != MPI_ERR_DIMS)
        errs += mt_fail(rank, "Test after completion: flag %d, queried %d, freed %d, count %d, source %d, tag %d",
                        flag, a.queried, a.freed, n, st.MPI_SOURCE, st.MPI_TAG);

    /* cancel (not complete yet), then Wait with another request in Waitall */
    state_t b = { 0 };
    int msg = -1, other = (rank + 1) % mt_size(), from = (rank + mt_size() - 1) % mt_size();
    MPI_Request two[2];
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &b, &two[0]);
    MPI_Cancel(&two[0]);
    MPI_Irecv(&msg, 1, MPI_INT, from, 9, MPI_COMM_WORLD, &two[1]);
    MPI_Send(&rank, 1, MPI_INT, other, 9, MPI_COMM_WORLD);
    MPI_Grequest_complete(two[0]);
    MPI_Status sts[2];
    MPI_Waitall(2, two, sts);
    MPI_Test_cancelled(&sts[0], &flag);
    if (b.cancelled != 1 || b.cancel_complete != 0 || !flag || b.freed != 1 || msg != from)
        errs += mt_fail(rank, "cancelled greq: cancel calls %d (complete %d), Test_cancelled %d, freed %d, msg %d",
                        b.cancelled, b.cancel_complete, flag, b.freed, msg);

    /* Request_free before completion: freed once, at completion; the
     * query's error reaches MPI_Wait */
    state_t c = { 0 };
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &q);
    MPI_Request keep = q;
    MPI_Request_free(&q);
    if (c.freed)
        errs += mt_fail(rank, "Request_free of a running greq ran the free callback at once");
    MPI_Grequest_complete(keep);
    if (c.freed != 1 || c.queried != 0)
        errs += mt_fail(rank, "greq freed before completion: freed %d, queried %d", c.freed, c.queried);

    state_t d = { .query_err = MPI_ERR_OTHER };
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &d, &q);
    MPI_Grequest_complete(q);
    int err = MPI_Wait(&q, MPI_STATUS_IGNORE), cls = -1;
    MPI_Error_class(err, &cls);
    if (cls != MPI_ERR_OTHER || d.freed != 1)
        errs += mt_fail(rank, "query error: Wait gave class %d, freed %d", cls, d.freed);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    mt_finish(errs, "greq OK");
    MPI_Finalize();
    return 0;
}
