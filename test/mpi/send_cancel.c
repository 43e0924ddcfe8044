/* send_cancel.c - MPI_Cancel of sends (MPI 3.1 3.8.4): a send that no
 * receive has matched is withdrawn -- small (eager) and large (rendezvous)
 * ones, synchronous, buffered and persistent ones, to a rank of the same
 * process or of another -- its wait returns with MPI_Test_cancelled true
 * and the message never arrives; withdrawing the second of two messages of
 * one envelope leaves the first to be received; a send already received
 * is not cancelled.  Every rank sends to the next and receives from the
 * previous one. */
#include "mpitest.h"

#define SMALL 4
#define LARGE (256 * 1024) /* ints: above every eager limit */

typedef struct {
    int rank, size, to, from;
} ring_t;

static int cancelled_wait(const ring_t *g, MPI_Request *rq, const char *what, int expect)
{
    MPI_Status st;
    MPI_Cancel(rq);
    MPI_Wait(rq, &st);
    int flag = -1;
    MPI_Test_cancelled(&st, &flag);
    if (flag != expect)
        return mt_fail(g->rank, "%s: Test_cancelled %d, expected %d", what, flag, expect);
    if (*rq != MPI_REQUEST_NULL)
        return mt_fail(g->rank, "%s: Wait left the request", what);
    return 0;
}

/* After everyone's cancels: nothing with tag arrived here. */
static int nothing_arrived(const ring_t *g, int tag, const char *what)
{
    MPI_Barrier(MPI_COMM_WORLD);
    int flag = 1;
    MPI_Iprobe(g->from, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD); /* no one sends the next case's messages before every probe */
    return flag ? mt_fail(g->rank, "%s: a cancelled message from %d arrived", what, g->from) : 0;
}

static int test_unmatched(const ring_t *g, int count, int mode, int tag, const char *what)
{
    int *out = mt_malloc((size_t)count * sizeof(int));
    mt_fill_int(out, (size_t)count, g->rank, g->to, (uint32_t)tag);
    MPI_Request rq;
    char *bbuf = NULL;
    if (mode == 'b') {
        int bsize = count * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
        bbuf = mt_malloc((size_t)bsize);
        MPI_Buffer_attach(bbuf, bsize);
        MPI_Ibsend(out, count, MPI_INT, g->to, tag, MPI_COMM_WORLD, &rq);
    } else if (mode == 's') {
        MPI_Issend(out, count, MPI_INT, g->to, tag, MPI_COMM_WORLD, &rq);
    } else {
        MPI_Isend(out, count, MPI_INT, g->to, tag, MPI_COMM_WORLD, &rq);
    }
    int errs = cancelled_wait(g, &rq, what, 1);
    if (bbuf) {
        void *back;
        int bsize;
        MPI_Buffer_detach(&back, &bsize); /* waits for the carrier: it must end */
        free(bbuf);
    }
    free(out);
    return errs + nothing_arrived(g, tag, what);
}

/* A persistent send cancelled once, then started again and received. */
static int test_persistent(const ring_t *g)
{
    enum { TAG = 40 };
    int errs = 0, out[SMALL], in[SMALL];
    mt_fill_int(out, SMALL, g->rank, g->to, TAG);
    MPI_Request rq;
    MPI_Send_init(out, SMALL, MPI_INT, g->to, TAG, MPI_COMM_WORLD, &rq);
    MPI_Start(&rq);
    MPI_Status st;
    MPI_Cancel(&rq);
    MPI_Wait(&rq, &st);
    int flag = 0;
    MPI_Test_cancelled(&st, &flag);
    if (!flag)
        errs += mt_fail(g->rank, "persistent send: not cancelled");
    errs += nothing_arrived(g, TAG, "persistent send");
    MPI_Start(&rq);
    MPI_Recv(in, SMALL, MPI_INT, g->from, TAG, MPI_COMM_WORLD, &st);
    MPI_Wait(&rq, &st);
    MPI_Test_cancelled(&st, &flag);
    if (flag)
        errs += mt_fail(g->rank, "persistent send started again: cancelled without MPI_Cancel");
    if (mt_check_int(in, SMALL, g->from, g->rank, TAG) >= 0)
        errs += mt_fail(g->rank, "persistent send started again: wrong data from %d", g->from);
    MPI_Request_free(&rq);
    return errs;
}

/* Two messages of one envelope, the second withdrawn: the first arrives. */
static int test_order(const ring_t *g)
{
    enum { TAG = 50 };
    int a = 1000 + g->rank, b = 2000 + g->rank, got = -1;
    MPI_Request ra, rb;
    MPI_Isend(&a, 1, MPI_INT, g->to, TAG, MPI_COMM_WORLD, &ra);
    MPI_Isend(&b, 1, MPI_INT, g->to, TAG, MPI_COMM_WORLD, &rb);
    int errs = cancelled_wait(g, &rb, "second of two sends", 1);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(&got, 1, MPI_INT, g->from, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&ra, MPI_STATUS_IGNORE);
    if (got != 1000 + g->from)
        errs += mt_fail(g->rank, "after cancelling the second send got %d, expected %d", got, 1000 + g->from);
    return errs + nothing_arrived(g, TAG, "second of two sends");
}

/* A send already received: MPI_Cancel changes nothing. */
static int test_matched(const ring_t *g, int count)
{
    enum { TAG = 60 };
    int *out = mt_malloc((size_t)count * sizeof(int)), *in = mt_zalloc((size_t)count * sizeof(int));
    mt_fill_int(out, (size_t)count, g->rank, g->to, TAG);
    MPI_Request rr, rs;
    MPI_Irecv(in, count, MPI_INT, g->from, TAG, MPI_COMM_WORLD, &rr);
    MPI_Isend(out, count, MPI_INT, g->to, TAG, MPI_COMM_WORLD, &rs);
    MPI_Wait(&rr, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD); /* every message has been received */
    int errs = cancelled_wait(g, &rs, "a received send", 0);
    if (mt_check_int(in, (size_t)count, g->from, g->rank, TAG) >= 0)
        errs += mt_fail(g->rank, "received send of %d ints: wrong data from %d", count, g->from);
    free(out);
    free(in);
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
    int errs = 0;
    errs += test_unmatched(&g, SMALL, 'n', 10, "small Isend");
    errs += test_unmatched(&g, LARGE, 'n', 11, "large Isend");
    errs += test_unmatched(&g, SMALL, 's', 12, "small Issend");
    errs += test_unmatched(&g, LARGE, 's', 13, "large Issend");
    errs += test_unmatched(&g, SMALL, 'b', 14, "small Ibsend");
    errs += test_unmatched(&g, LARGE, 'b', 15, "large Ibsend");
    errs += test_unmatched(&g, 0, 'n', 16, "empty Isend");
    errs += test_persistent(&g);
    errs += test_order(&g);
    errs += test_matched(&g, SMALL);
    errs += test_matched(&g, LARGE);
    mt_finish(errs, "send_cancel OK");
    MPI_Finalize();
    return 0;
}
