/* waitany.c - completion calls over request arrays, between rank pairs
 * (even sends, odd receives): Waitany/Waitall/Waitsome/Testany/Testall/
 * Testsome with MPI_REQUEST_NULL entries, MPI_UNDEFINED when all are null,
 * statuses filled per index (empty status for null entries), Testall/
 * Testany/Testsome reporting nothing while a message is still unsent,
 * Request_free on an active send, Cancel of a pending receive with
 * Test_cancelled, and Request_get_status (which must not free the request).
 * The parts needing no partner run on every rank. */
#include "mpitest.h"

enum { NREQ = 8, LEN = 4, BIG = 1 << 16 };
enum { TAG_ANY = 100, TAG_ALL = 200, TAG_SOME = 300, TAG_TSOME = 400,
       TAG_TALL = 500, TAG_FREE = 600, TAG_CANCEL = 700, TAG_GSTAT = 800,
       TAG_SYNC = 900 };

/* Which slots of the NREQ-array stay MPI_REQUEST_NULL. */
static int is_null_slot(int i) { return i == 1 || i == 5; }

static void sync_send(int peer)
{
    int one = 1;
    MPI_Send(&one, 1, MPI_INT, peer, TAG_SYNC, MPI_COMM_WORLD);
}

static void sync_recv(int peer)
{
    int one;
    MPI_Recv(&one, 1, MPI_INT, peer, TAG_SYNC, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
}

static void send_slot(int rank, int peer, int base, int i)
{
    int buf[LEN];
    mt_fill_int(buf, LEN, rank, peer, (uint32_t)(base + i));
    MPI_Send(buf, LEN, MPI_INT, peer, base + i, MPI_COMM_WORLD);
}

/* Post Irecvs for the non-null slots of tag block `base`. */
static void post_slots(int peer, int base, int bufs[NREQ][LEN],
                       MPI_Request *req)
{
    for (int i = 0; i < NREQ; i++) {
        req[i] = MPI_REQUEST_NULL;
        if (!is_null_slot(i))
            MPI_Irecv(bufs[i], LEN, MPI_INT, peer, base + i, MPI_COMM_WORLD,
                      &req[i]);
    }
}

/* Slot i completed with status st: check envelope, data and the handle. */
static int check_slot(int rank, int peer, int base, int i, int bufs[NREQ][LEN],
                      const MPI_Request *req, const MPI_Status *st,
                      const char *call)
{
    char what[48];
    snprintf(what, sizeof what, "%s slot %d", call, i);
    int errs = mt_check_status(rank, what, st, MPI_INT, peer, base + i, LEN);
    if (mt_check_int(bufs[i], LEN, peer, rank, (uint32_t)(base + i)) >= 0)
        errs += mt_fail(rank, "%s: data wrong", what);
    if (req[i] != MPI_REQUEST_NULL)
        errs += mt_fail(rank, "%s: request not set to MPI_REQUEST_NULL", what);
    return errs;
}

static int check_empty(int rank, const char *what, const MPI_Status *st)
{
    int n = -1, errs = 0;
    MPI_Get_count(st, MPI_INT, &n);
    if (st->MPI_SOURCE != MPI_ANY_SOURCE || st->MPI_TAG != MPI_ANY_TAG ||
        n != 0)
        errs += mt_fail(rank, "%s: status not empty (source %d tag %d "
                        "count %d)", what, st->MPI_SOURCE, st->MPI_TAG, n);
    return errs;
}

/* Record index i as done; complain about out-of-range, null or repeated. */
static int mark_done(int rank, const char *call, int i, int *done)
{
    if (i < 0 || i >= NREQ || is_null_slot(i) || done[i])
        return mt_fail(rank, "%s returned bad or repeated index %d", call, i);
    done[i] = 1;
    return 0;
}

static int count_live(void)
{
    int n = 0;
    for (int i = 0; i < NREQ; i++)
        n += !is_null_slot(i);
    return n;
}

/* ---- partner-less checks, every rank ---- */
static int local_checks(int rank)
{
    int errs = 0, idx = 0, flag = 0, buf = 0;
    MPI_Request req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                          MPI_REQUEST_NULL};
    MPI_Status st;

    MPI_Waitany(3, req, &idx, &st);
    if (idx != MPI_UNDEFINED)
        errs += mt_fail(rank, "Waitany on all-null gave index %d", idx);
    errs += check_empty(rank, "Waitany all-null", &st);
    MPI_Testany(3, req, &idx, &flag, &st);
    if (!flag || idx != MPI_UNDEFINED)
        errs += mt_fail(rank, "Testany on all-null: flag %d index %d", flag,
                        idx);
    MPI_Testall(3, req, &flag, MPI_STATUSES_IGNORE);
    if (!flag)
        errs += mt_fail(rank, "Testall on all-null gave false");
    int outcount = 0, idxs[3];
    MPI_Waitsome(3, req, &outcount, idxs, MPI_STATUSES_IGNORE);
    if (outcount != MPI_UNDEFINED)
        errs += mt_fail(rank, "Waitsome on all-null gave %d", outcount);
    MPI_Testsome(3, req, &outcount, idxs, MPI_STATUSES_IGNORE);
    if (outcount != MPI_UNDEFINED)
        errs += mt_fail(rank, "Testsome on all-null gave %d", outcount);
    MPI_Request nreq = MPI_REQUEST_NULL;
    memset(&st, 0x5a, sizeof st); /* an empty status sets every field */
    MPI_Request_get_status(nreq, &flag, &st);
    if (!flag)
        errs += mt_fail(rank, "Request_get_status(NULL) flag false");
    errs += check_empty(rank, "Request_get_status(NULL)", &st);
    if (st.MPI_ERROR != MPI_SUCCESS)
        errs += mt_fail(rank, "Request_get_status(NULL): error field %d", st.MPI_ERROR);
    MPI_Wait(&nreq, &st);
    errs += check_empty(rank, "Wait(NULL)", &st);

    /* cancel a receive nobody sends to (from ourselves) */
    MPI_Irecv(&buf, 1, MPI_INT, rank, TAG_CANCEL, MPI_COMM_WORLD, &req[0]);
    MPI_Cancel(&req[0]);
    MPI_Wait(&req[0], &st);
    MPI_Test_cancelled(&st, &flag);
    if (!flag)
        errs += mt_fail(rank, "self Irecv not cancelled");
    /* and the same tag still works afterwards */
    int out = 4242;
    MPI_Isend(&out, 1, MPI_INT, rank, TAG_CANCEL, MPI_COMM_WORLD, &req[1]);
    MPI_Recv(&buf, 1, MPI_INT, rank, TAG_CANCEL, MPI_COMM_WORLD, &st);
    MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    MPI_Test_cancelled(&st, &flag);
    if (buf != 4242 || flag)
        errs += mt_fail(rank, "self message after cancel: %d, cancelled %d",
                        buf, flag);
    return errs;
}

/* ---- sender side (even rank) ---- */
static int sender(int rank, int peer)
{
    int errs = 0;
    for (int i = NREQ - 1; i >= 0; i--) /* Waitany: reverse order */
        if (!is_null_slot(i))
            send_slot(rank, peer, TAG_ANY, i);
    for (int i = 0; i < NREQ; i++) /* Waitall */
        if (!is_null_slot(i))
            send_slot(rank, peer, TAG_ALL, i);
    for (int i = 0; i < NREQ; i++) { /* Waitsome: two batches */
        if (i == NREQ / 2)
            sync_recv(peer);
        if (!is_null_slot(i))
            send_slot(rank, peer, TAG_SOME, i);
    }
    sync_recv(peer); /* Testsome: nothing until the receiver looked */
    for (int i = 0; i < NREQ; i++)
        if (!is_null_slot(i))
            send_slot(rank, peer, TAG_TSOME, i);
    for (int i = 0; i < NREQ; i++) { /* Testall: last one after sync */
        if (i == NREQ - 1)
            sync_recv(peer);
        if (!is_null_slot(i))
            send_slot(rank, peer, TAG_TALL, i);
    }

    /* Request_free on active sends, small and large */
    int *big = mt_malloc(BIG * sizeof(int)), small[LEN];
    MPI_Request req;
    mt_fill_int(small, LEN, rank, peer, TAG_FREE);
    mt_fill_int(big, BIG, rank, peer, TAG_FREE + 1);
    MPI_Isend(small, LEN, MPI_INT, peer, TAG_FREE, MPI_COMM_WORLD, &req);
    MPI_Request_free(&req);
    if (req != MPI_REQUEST_NULL)
        errs += mt_fail(rank, "Request_free did not reset the handle");
    MPI_Isend(big, BIG, MPI_INT, peer, TAG_FREE + 1, MPI_COMM_WORLD, &req);
    MPI_Request_free(&req);
    sync_recv(peer); /* only now may the buffers go */
    free(big);

    sync_recv(peer); /* receiver cancelled its receive */
    send_slot(rank, peer, TAG_CANCEL, 0);
    sync_recv(peer); /* receiver checked Request_get_status is false */
    send_slot(rank, peer, TAG_GSTAT, 0);
    return errs;
}

/* ---- receiver side (odd rank) ---- */
static int recv_waitany(int rank, int peer)
{
    int bufs[NREQ][LEN], done[NREQ] = {0}, errs = 0, idx, n = 0;
    MPI_Request req[NREQ];
    MPI_Status st;
    post_slots(peer, TAG_ANY, bufs, req);
    for (;;) {
        MPI_Waitany(NREQ, req, &idx, &st);
        if (idx == MPI_UNDEFINED)
            break;
        if (mark_done(rank, "Waitany", idx, done))
            return errs + 1;
        errs += check_slot(rank, peer, TAG_ANY, idx, bufs, req, &st,
                           "Waitany");
        n++;
    }
    if (n != count_live())
        errs += mt_fail(rank, "Waitany completed %d, expected %d", n,
                        count_live());
    errs += check_empty(rank, "Waitany after all done", &st);
    return errs;
}

static int recv_waitall(int rank, int peer)
{
    int bufs[NREQ][LEN], errs = 0;
    MPI_Request req[NREQ];
    MPI_Status st[NREQ];
    post_slots(peer, TAG_ALL, bufs, req);
    MPI_Waitall(NREQ, req, st);
    for (int i = 0; i < NREQ; i++) {
        if (is_null_slot(i))
            errs += check_empty(rank, "Waitall null entry", &st[i]);
        else
            errs += check_slot(rank, peer, TAG_ALL, i, bufs, req, &st[i],
                               "Waitall");
    }
    return errs;
}

static int recv_waitsome(int rank, int peer)
{
    int bufs[NREQ][LEN], done[NREQ] = {0}, errs = 0, n = 0, synced = 0;
    int idx[NREQ], outcount;
    MPI_Request req[NREQ];
    MPI_Status st[NREQ];
    int first_batch = 0;
    for (int i = 0; i < NREQ / 2; i++)
        first_batch += !is_null_slot(i);
    post_slots(peer, TAG_SOME, bufs, req);
    for (;;) {
        MPI_Waitsome(NREQ, req, &outcount, idx, st);
        if (outcount == MPI_UNDEFINED)
            break;
        if (outcount < 1)
            return errs + mt_fail(rank, "Waitsome returned outcount %d",
                                  outcount);
        for (int k = 0; k < outcount; k++) {
            if (mark_done(rank, "Waitsome", idx[k], done))
                return errs + 1;
            if (!synced && idx[k] >= NREQ / 2)
                errs += mt_fail(rank, "Waitsome completed slot %d before it "
                                "was sent", idx[k]);
            errs += check_slot(rank, peer, TAG_SOME, idx[k], bufs, req, &st[k],
                               "Waitsome");
            n++;
        }
        if (!synced && n == first_batch) {
            synced = 1;
            sync_send(peer);
        }
    }
    if (n != count_live())
        errs += mt_fail(rank, "Waitsome completed %d, expected %d", n,
                        count_live());
    return errs;
}

static int recv_testsome(int rank, int peer)
{
    int bufs[NREQ][LEN], done[NREQ] = {0}, errs = 0, n = 0, flag, i;
    int idx[NREQ], outcount;
    MPI_Request req[NREQ];
    MPI_Status st[NREQ];
    post_slots(peer, TAG_TSOME, bufs, req);
    MPI_Testsome(NREQ, req, &outcount, idx, st);
    if (outcount != 0)
        errs += mt_fail(rank, "Testsome before any send gave %d", outcount);
    MPI_Testany(NREQ, req, &i, &flag, &st[0]);
    if (flag || i != MPI_UNDEFINED)
        errs += mt_fail(rank, "Testany before any send: flag %d index %d",
                        flag, i);
    sync_send(peer);
    while (n < count_live()) {
        MPI_Testsome(NREQ, req, &outcount, idx, st);
        if (outcount == MPI_UNDEFINED || outcount < 0)
            return errs + mt_fail(rank, "Testsome gave %d with %d pending",
                                  outcount, count_live() - n);
        for (int k = 0; k < outcount; k++) {
            if (mark_done(rank, "Testsome", idx[k], done))
                return errs + 1;
            errs += check_slot(rank, peer, TAG_TSOME, idx[k], bufs, req,
                               &st[k], "Testsome");
            n++;
        }
    }
    MPI_Testsome(NREQ, req, &outcount, idx, st);
    if (outcount != MPI_UNDEFINED)
        errs += mt_fail(rank, "Testsome after all done gave %d", outcount);
    return errs;
}

static int recv_testall(int rank, int peer)
{
    int bufs[NREQ][LEN], errs = 0, flag = 0;
    MPI_Request req[NREQ];
    MPI_Status st[NREQ];
    post_slots(peer, TAG_TALL, bufs, req);
    /* wait until the earlier messages are surely here, then Testall must
     * still say false (the last one is not sent) and keep every request */
    MPI_Wait(&req[0], &st[0]);
    errs += check_slot(rank, peer, TAG_TALL, 0, bufs, req, &st[0], "Testall");
    for (int k = 0; k < 20; k++) {
        MPI_Testall(NREQ, req, &flag, st);
        if (flag)
            return errs + mt_fail(rank, "Testall true before last send");
    }
    int live = 0;
    for (int i = 1; i < NREQ; i++)
        live += (req[i] != MPI_REQUEST_NULL);
    if (live != count_live() - 1)
        errs += mt_fail(rank, "false Testall changed requests (%d live)",
                        live);
    sync_send(peer);
    do
        MPI_Testall(NREQ, req, &flag, st);
    while (!flag);
    for (int i = 1; i < NREQ; i++) {
        if (is_null_slot(i))
            errs += check_empty(rank, "Testall null entry", &st[i]);
        else
            errs += check_slot(rank, peer, TAG_TALL, i, bufs, req, &st[i],
                               "Testall");
    }
    return errs;
}

static int recv_rest(int rank, int peer)
{
    int errs = 0, flag = 0, small[LEN], buf[LEN];
    int *big = mt_malloc(BIG * sizeof(int));
    MPI_Request req;
    MPI_Status st;

    /* the freed sends still arrive intact */
    MPI_Recv(small, LEN, MPI_INT, peer, TAG_FREE, MPI_COMM_WORLD, &st);
    if (mt_check_int(small, LEN, peer, rank, TAG_FREE) >= 0)
        errs += mt_fail(rank, "freed small Isend: data wrong");
    MPI_Recv(big, BIG, MPI_INT, peer, TAG_FREE + 1, MPI_COMM_WORLD, &st);
    if (mt_check_int(big, BIG, peer, rank, TAG_FREE + 1) >= 0)
        errs += mt_fail(rank, "freed large Isend: data wrong");
    free(big);
    sync_send(peer);

    /* cancel a pending receive; the later message must not be lost in it */
    MPI_Irecv(buf, LEN, MPI_INT, peer, TAG_CANCEL, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    if (!flag)
        errs += mt_fail(rank, "pending Irecv was not cancelled");
    sync_send(peer);
    MPI_Recv(buf, LEN, MPI_INT, peer, TAG_CANCEL, MPI_COMM_WORLD, &st);
    if (mt_check_int(buf, LEN, peer, rank, TAG_CANCEL) >= 0)
        errs += mt_fail(rank, "message after cancel: data wrong");

    /* Request_get_status: false while unsent, then true without freeing */
    MPI_Irecv(buf, LEN, MPI_INT, peer, TAG_GSTAT, MPI_COMM_WORLD, &req);
    MPI_Request_get_status(req, &flag, &st);
    if (flag)
        errs += mt_fail(rank, "Request_get_status true before the send");
    sync_send(peer);
    do
        MPI_Request_get_status(req, &flag, &st);
    while (!flag);
    if (req == MPI_REQUEST_NULL)
        errs += mt_fail(rank, "Request_get_status freed the request");
    errs += mt_check_status(rank, "Request_get_status", &st, MPI_INT, peer,
                            TAG_GSTAT, LEN);
    MPI_Wait(&req, &st);
    errs += mt_check_status(rank, "Wait after Request_get_status", &st,
                            MPI_INT, peer, TAG_GSTAT, LEN);
    if (req != MPI_REQUEST_NULL)
        errs += mt_fail(rank, "Wait did not free the request");
    if (mt_check_int(buf, LEN, peer, rank, TAG_GSTAT) >= 0)
        errs += mt_fail(rank, "Request_get_status message: data wrong");
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int peer = (rank % 2 == 0) ? rank + 1 : rank - 1;

    errs += local_checks(rank);
    if (peer < size) {
        if (rank % 2 == 0)
            errs += sender(rank, peer);
        else {
            errs += recv_waitany(rank, peer);
            errs += recv_waitall(rank, peer);
            errs += recv_waitsome(rank, peer);
            errs += recv_testsome(rank, peer);
            errs += recv_testall(rank, peer);
            errs += recv_rest(rank, peer);
        }
    } else if (size == 1) {
        mt_skipped("waitany: 1 rank, the pair tests need 2");
    }

    char ok[80];
    snprintf(ok, sizeof ok, "waitany: %d ranks OK", size);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
