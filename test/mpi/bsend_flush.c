/* bsend_flush.c - the buffers of buffered sends of MPI 4.1 (3.6): flushing
 * the rank's buffer (MPI_Buffer_flush, MPI_Buffer_iflush) lets a buffer of
 * room for one message take the next; buffers attached to a communicator
 * and to a session serve that communicator's sends (and the session's
 * communicators') before the rank's; MPI_BUFFER_AUTOMATIC takes any number
 * of messages; the large-count attach/detach; the error classes of a
 * second attach and of a detach with nothing attached.  Every message goes
 * to the next rank and is checked at the previous one's receiver. */
#include "mpitest.h"

#define N 40000 /* ints: above the eager limit, so a send lasts until received */

typedef struct {
    int rank, size, to, from;
} ring_t;

static int one_bsend(const ring_t *g, MPI_Comm comm, int tag, int *expect_err)
{
    int *out = mt_malloc(N * sizeof(int));
    mt_fill_int(out, N, g->rank, g->to, (uint32_t)tag);
    int err = MPI_Bsend(out, N, MPI_INT, g->to, tag, comm);
    free(out); /* the library copied it */
    int cls = MPI_SUCCESS;
    if (err)
        MPI_Error_class(err, &cls);
    int errs = 0;
    if (cls != *expect_err)
        errs += mt_fail(g->rank, "Bsend tag %d: error class %d, expected %d", tag, cls, *expect_err);
    *expect_err = cls;
    return errs;
}

static int recv_check(const ring_t *g, MPI_Comm comm, int tag)
{
    int *in = mt_zalloc(N * sizeof(int));
    MPI_Status st;
    MPI_Recv(in, N, MPI_INT, g->from, tag, comm, &st);
    int errs = mt_check_status(g->rank, "buffered message", &st, MPI_INT, g->from, tag, N);
    long bad = mt_check_int(in, N, g->from, g->rank, (uint32_t)tag);
    if (bad >= 0)
        errs += mt_fail(g->rank, "message tag %d from %d: wrong int at %ld", tag, g->from, bad);
    free(in);
    return errs;
}

/* A buffer of room for one message: the second fails until a flush. */
static int test_rank_buffer(const ring_t *g, int use_iflush)
{
    int errs = 0, e = MPI_SUCCESS, size = N * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    char *buf = mt_malloc((size_t)size);
    MPI_Buffer_attach(buf, size);
    errs += one_bsend(g, MPI_COMM_WORLD, 1, &e);
    int e2 = MPI_ERR_BUFFER;
    errs += one_bsend(g, MPI_COMM_WORLD, 99, &e2); /* no room: not sent */
    MPI_Barrier(MPI_COMM_WORLD); /* no receive matched the first before */
    MPI_Request rq;
    if (use_iflush) {
        MPI_Buffer_iflush(&rq); /* completes once our message is received */
        errs += recv_check(g, MPI_COMM_WORLD, 1);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (rq != MPI_REQUEST_NULL)
            errs += mt_fail(g->rank, "Wait left the iflush request");
    } else {
        int *in = mt_zalloc(N * sizeof(int));
        MPI_Irecv(in, N, MPI_INT, g->from, 1, MPI_COMM_WORLD, &rq);
        MPI_Buffer_flush();
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (mt_check_int(in, N, g->from, g->rank, 1) >= 0)
            errs += mt_fail(g->rank, "flushed message from %d: wrong data", g->from);
        free(in);
    }
    e = MPI_SUCCESS; /* flushed: room again */
    errs += one_bsend(g, MPI_COMM_WORLD, 2, &e);
    errs += recv_check(g, MPI_COMM_WORLD, 2);
    void *back;
    int bsize;
    MPI_Buffer_detach(&back, &bsize);
    if (back != buf || bsize != size)
        errs += mt_fail(g->rank, "Buffer_detach gave %p %d, attached %p %d", back, bsize, (void *)buf, size);
    free(buf);
    return errs;
}

/* A communicator's buffer: its sends use it, MPI_COMM_WORLD's find none. */
static int test_comm_buffer(const ring_t *g)
{
    int errs = 0, e = MPI_SUCCESS, size = N * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    char *buf = mt_malloc((size_t)size);
    MPI_Comm_attach_buffer(dup, buf, size);
    errs += one_bsend(g, dup, 3, &e);
    int none = MPI_ERR_BUFFER;
    errs += one_bsend(g, MPI_COMM_WORLD, 98, &none);
    MPI_Request rq;
    MPI_Comm_iflush_buffer(dup, &rq);
    errs += recv_check(g, dup, 3);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    e = MPI_SUCCESS;
    errs += one_bsend(g, dup, 4, &e);
    int *in = mt_zalloc(N * sizeof(int));
    MPI_Irecv(in, N, MPI_INT, g->from, 4, dup, &rq);
    MPI_Comm_flush_buffer(dup);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (mt_check_int(in, N, g->from, g->rank, 4) >= 0)
        errs += mt_fail(g->rank, "comm-flushed message from %d: wrong data", g->from);
    free(in);
    int second = MPI_Comm_attach_buffer(dup, buf, size), cls = MPI_SUCCESS;
    if (second)
        MPI_Error_class(second, &cls);
    if (cls != MPI_ERR_BUFFER)
        errs += mt_fail(g->rank, "a second Comm_attach_buffer: class %d, expected MPI_ERR_BUFFER", cls);
    void *back;
    int bsize;
    MPI_Comm_detach_buffer(dup, &back, &bsize);
    if (back != buf || bsize != size)
        errs += mt_fail(g->rank, "Comm_detach_buffer gave %p %d, attached %p %d", back, bsize, (void *)buf, size);
    int again = MPI_Comm_detach_buffer(dup, &back, &bsize);
    cls = MPI_SUCCESS;
    if (again)
        MPI_Error_class(again, &cls);
    if (cls != MPI_ERR_BUFFER)
        errs += mt_fail(g->rank, "Comm_detach_buffer with none: class %d, expected MPI_ERR_BUFFER", cls);
    free(buf);
    MPI_Comm_free(&dup);
    return errs;
}

/* A session's buffer serves the communicators made from its groups. */
static int test_session_buffer(const ring_t *g)
{
    int errs = 0, e = MPI_SUCCESS, size = N * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    MPI_Session s;
    MPI_Group grp;
    MPI_Comm comm;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    MPI_Group_from_session_pset(s, "mpi://WORLD", &grp);
    MPI_Comm_create_from_group(grp, "bsend_flush", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    char *buf = mt_malloc((size_t)size);
    MPI_Session_attach_buffer(s, buf, size);
    errs += one_bsend(g, comm, 5, &e);
    MPI_Request rq;
    MPI_Session_iflush_buffer(s, &rq);
    errs += recv_check(g, comm, 5);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    e = MPI_SUCCESS;
    errs += one_bsend(g, comm, 6, &e);
    int *in = mt_zalloc(N * sizeof(int));
    MPI_Irecv(in, N, MPI_INT, g->from, 6, comm, &rq);
    MPI_Session_flush_buffer(s);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (mt_check_int(in, N, g->from, g->rank, 6) >= 0)
        errs += mt_fail(g->rank, "session-flushed message from %d: wrong data", g->from);
    free(in);
    void *back;
    int bsize;
    MPI_Session_detach_buffer(s, &back, &bsize);
    if (back != buf || bsize != size)
        errs += mt_fail(g->rank, "Session_detach_buffer gave %p %d, attached %p %d", back, bsize, (void *)buf, size);
    free(buf);
    MPI_Comm_free(&comm);
    MPI_Group_free(&grp);
    MPI_Session_finalize(&s);
    return errs;
}

/* MPI_BUFFER_AUTOMATIC: many messages outstanding at once, attached
 * through the large-count call. */
static int test_automatic(const ring_t *g)
{
    enum { MSGS = 8 };
    int errs = 0;
    MPI_Buffer_attach_c(MPI_BUFFER_AUTOMATIC, 0);
    for (int k = 0; k < MSGS; k++) {
        int e = MPI_SUCCESS;
        errs += one_bsend(g, MPI_COMM_WORLD, 10 + k, &e);
    }
    for (int k = 0; k < MSGS; k++)
        errs += recv_check(g, MPI_COMM_WORLD, 10 + k);
    void *back;
    MPI_Count bsize = -1;
    MPI_Buffer_detach_c(&back, &bsize);
    if (back != MPI_BUFFER_AUTOMATIC || bsize != 0)
        errs += mt_fail(g->rank, "Buffer_detach_c gave %p %lld, attached MPI_BUFFER_AUTOMATIC 0", back, bsize);
    int isize, none = MPI_Buffer_detach(&back, &isize), cls = MPI_SUCCESS;
    if (none)
        MPI_Error_class(none, &cls);
    if (cls != MPI_ERR_BUFFER)
        errs += mt_fail(g->rank, "Buffer_detach with none: class %d, expected MPI_ERR_BUFFER", cls);
    MPI_Request rq;
    MPI_Buffer_iflush(&rq); /* nothing attached: done at once */
    int flag = 0;
    MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    if (!flag)
        errs += mt_fail(g->rank, "Buffer_iflush with no buffer did not complete");
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ring_t g;
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g.size);
    g.to = (g.rank + 1) % g.size;
    g.from = (g.rank + g.size - 1) % g.size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int errs = test_rank_buffer(&g, 1);
    errs += test_rank_buffer(&g, 0);
    errs += test_comm_buffer(&g);
    errs += test_session_buffer(&g);
    errs += test_automatic(&g);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mt_finish(errs, "bsend_flush OK");
    MPI_Finalize();
    return 0;
}
