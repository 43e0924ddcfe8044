/* pt2pt_modes.c - the send modes' completion rules, between rank pairs
 * (even rank sends, next odd rank receives):
 *  - Issend must not complete before the receive is posted: the receiver
 *    waits for a separate "go" message before posting it, and the sender
 *    checks that MPI_Test stays false until it sent "go";
 *  - blocking Ssend lasts at least until the (delayed) receive is posted;
 *  - Rsend/Irsend after the receiver said its Irecv is posted;
 *  - Bsend/Ibsend complete with the receiver not yet receiving, in a buffer
 *    sized exactly as sum(bytes + MPI_BSEND_OVERHEAD); Buffer_detach gives
 *    back the attached address and size, and the buffer can be reattached.
 * Every rank also checks Issend/Rsend/Bsend to itself. */
#include "mpitest.h"

enum {
    TAG_DATA = 10, TAG_GO = 11, TAG_READY = 12, TAG_DONE = 13,
    SMALL = 8, LARGE = 1 << 18 /* ints: 1 MiB */
};

/* Poll req with MPI_Test for up to `seconds`; returns whether it completed. */
static int test_for(MPI_Request *req, double seconds)
{
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < seconds)
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    return flag;
}

static int recv_check(int rank, int src, int *buf, int count, uint32_t key,
                      const char *what)
{
    MPI_Status st;
    MPI_Recv(buf, count, MPI_INT, src, TAG_DATA, MPI_COMM_WORLD, &st);
    int errs = mt_check_status(rank, what, &st, MPI_INT, src, TAG_DATA, count);
    long bad = mt_check_int(buf, (size_t)count, src, rank, key);
    if (bad >= 0)
        errs += mt_fail(rank, "%s: data wrong at int %ld", what, bad);
    return errs;
}

static int issend_sender(int rank, int peer, int *buf, int count, uint32_t key)
{
    int errs = 0, go = 1;
    MPI_Request req;
    mt_fill_int(buf, (size_t)count, rank, peer, key);
    MPI_Issend(buf, count, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req);
    if (test_for(&req, 0.1))
        errs += mt_fail(rank, "Issend of %d ints completed before the "
                        "receive was posted", count);
    /* "go" even after a failure, so the receiver does not hang */
    MPI_Send(&go, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return errs;
}

static int issend_receiver(int rank, int peer, int *buf, int count,
                           uint32_t key)
{
    int go;
    MPI_Recv(&go, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return recv_check(rank, peer, buf, count, key, "Issend");
}

/* Blocking Ssend: the receiver posts 0.25 s after saying "ready", so the
 * Ssend started after "ready" arrived must last a good part of that. */
static int ssend_sender(int rank, int peer, int *buf, int count, uint32_t key)
{
    int ready;
    mt_fill_int(buf, (size_t)count, rank, peer, key);
    MPI_Recv(&ready, 1, MPI_INT, peer, TAG_READY, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    double t0 = MPI_Wtime();
    MPI_Ssend(buf, count, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD);
    double dt = MPI_Wtime() - t0;
    if (dt < 0.05)
        return mt_fail(rank, "Ssend of %d ints returned after %.3f s, before "
                       "the receive was posted (0.25 s delay)", count, dt);
    return 0;
}

static int ssend_receiver(int rank, int peer, int *buf, int count,
                          uint32_t key)
{
    int ready = 1;
    MPI_Send(&ready, 1, MPI_INT, peer, TAG_READY, MPI_COMM_WORLD);
    mt_delay(0.25);
    return recv_check(rank, peer, buf, count, key, "Ssend");
}

static int rsend_sender(int rank, int peer, int *buf, int count, uint32_t key,
                        int nonblocking)
{
    int ready;
    mt_fill_int(buf, (size_t)count, rank, peer, key);
    MPI_Recv(&ready, 1, MPI_INT, peer, TAG_READY, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (nonblocking) {
        MPI_Request req;
        MPI_Irsend(buf, count, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else
        MPI_Rsend(buf, count, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD);
    return 0;
}

static int rsend_receiver(int rank, int peer, int *buf, int count,
                          uint32_t key, int nonblocking)
{
    MPI_Request req;
    MPI_Status st;
    int ready = 1, errs;
    MPI_Irecv(buf, count, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req);
    MPI_Send(&ready, 1, MPI_INT, peer, TAG_READY, MPI_COMM_WORLD);
    MPI_Wait(&req, &st);
    const char *what = nonblocking ? "Irsend" : "Rsend";
    errs = mt_check_status(rank, what, &st, MPI_INT, peer, TAG_DATA, count);
    long bad = mt_check_int(buf, (size_t)count, peer, rank, key);
    if (bad >= 0)
        errs += mt_fail(rank, "%s: data wrong at int %ld", what, bad);
    return errs;
}

/* Buffered messages of one phase: Bsend, Bsend, Ibsend, Ibsend. */
static const int bsend_counts[] = {1, 1000, 65536, 7};
enum { NBSEND = sizeof bsend_counts / sizeof bsend_counts[0] };

static int bsend_sender(int rank, int peer, int phase, char *bbuf, int bsize)
{
    int errs = 0, done = 1, *data[NBSEND];
    MPI_Request req[NBSEND];
    MPI_Buffer_attach(bbuf, bsize);
    for (int i = 0; i < NBSEND; i++) {
        data[i] = mt_malloc((size_t)bsend_counts[i] * sizeof(int));
        mt_fill_int(data[i], (size_t)bsend_counts[i], rank, peer,
                    (uint32_t)(phase * 16 + i));
        if (i < 2) {
            int rc = MPI_Bsend(data[i], bsend_counts[i], MPI_INT, peer,
                               TAG_DATA, MPI_COMM_WORLD);
            if (rc != MPI_SUCCESS)
                errs += mt_fail(rank, "Bsend %d failed: %d", i, rc);
        } else {
            MPI_Ibsend(data[i], bsend_counts[i], MPI_INT, peer, TAG_DATA,
                       MPI_COMM_WORLD, &req[i]);
            if (!test_for(&req[i], 5.0))
                errs += mt_fail(rank, "Ibsend %d not complete after 5 s "
                                "without a matching receive", i);
        }
        /* the message lives in the attached buffer now: scribble ours */
        memset(data[i], 0xEE, (size_t)bsend_counts[i] * sizeof(int));
    }
    MPI_Send(&done, 1, MPI_INT, peer, TAG_DONE, MPI_COMM_WORLD);
    void *addr = NULL;
    int got = -1;
    MPI_Buffer_detach(&addr, &got);
    if (addr != (void *)bbuf || got != bsize)
        errs += mt_fail(rank, "Buffer_detach gave %p/%d, attached %p/%d", addr,
                        got, (void *)bbuf, bsize);
    for (int i = 0; i < NBSEND; i++)
        free(data[i]);
    return errs;
}

static int bsend_receiver(int rank, int peer, int phase)
{
    int errs = 0, done;
    /* receive only after the sender finished all its buffered sends */
    MPI_Recv(&done, 1, MPI_INT, peer, TAG_DONE, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    for (int i = 0; i < NBSEND; i++) {
        int *buf = mt_malloc((size_t)bsend_counts[i] * sizeof(int));
        char what[32];
        snprintf(what, sizeof what, "Bsend phase %d msg %d", phase, i);
        MPI_Status st;
        MPI_Recv(buf, bsend_counts[i], MPI_INT, peer, TAG_DATA,
                 MPI_COMM_WORLD, &st);
        errs += mt_check_status(rank, what, &st, MPI_INT, peer, TAG_DATA,
                                bsend_counts[i]);
        long bad = mt_check_int(buf, (size_t)bsend_counts[i], peer, rank,
                                (uint32_t)(phase * 16 + i));
        if (bad >= 0)
            errs += mt_fail(rank, "%s: data wrong at int %ld", what, bad);
        free(buf);
    }
    return errs;
}

/* The same rules for messages a rank sends to itself. */
static int self_modes(int rank, int *buf, int *rbuf)
{
    int errs = 0;
    MPI_Request req;

    mt_fill_int(buf, SMALL, rank, rank, 40);
    MPI_Issend(buf, SMALL, MPI_INT, rank, TAG_DATA, MPI_COMM_WORLD, &req);
    if (test_for(&req, 0.02))
        errs += mt_fail(rank, "self Issend completed before the receive");
    errs += recv_check(rank, rank, rbuf, SMALL, 40, "self Issend");
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    mt_fill_int(buf, LARGE, rank, rank, 41);
    MPI_Irecv(rbuf, LARGE, MPI_INT, rank, TAG_DATA, MPI_COMM_WORLD, &req);
    MPI_Rsend(buf, LARGE, MPI_INT, rank, TAG_DATA, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (mt_check_int(rbuf, LARGE, rank, rank, 41) >= 0)
        errs += mt_fail(rank, "self Rsend: data wrong");

    int bsize = 1000 * (int)sizeof(int) + MPI_BSEND_OVERHEAD, got = 0;
    char *bbuf = mt_malloc((size_t)bsize);
    void *addr = NULL;
    MPI_Buffer_attach(bbuf, bsize);
    mt_fill_int(buf, 1000, rank, rank, 42);
    MPI_Bsend(buf, 1000, MPI_INT, rank, TAG_DATA, MPI_COMM_WORLD);
    memset(buf, 0, 1000 * sizeof(int));
    errs += recv_check(rank, rank, rbuf, 1000, 42, "self Bsend");
    MPI_Buffer_detach(&addr, &got);
    if (addr != (void *)bbuf || got != bsize)
        errs += mt_fail(rank, "self Buffer_detach gave %p/%d, attached %p/%d",
                        addr, got, (void *)bbuf, bsize);
    free(bbuf);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int peer = (rank % 2 == 0) ? rank + 1 : rank - 1;
    int sender = (rank % 2 == 0);
    int *buf = mt_malloc(LARGE * sizeof(int));
    int *rbuf = mt_malloc(LARGE * sizeof(int));
    const int counts[2] = {SMALL, LARGE};

    errs += self_modes(rank, buf, rbuf);
    if (size == 1)
        mt_skipped("pt2pt_modes: 1 rank, the pair tests need 2 (only the self-sends ran)");
    if (rank == 0 && size > 1 && size % 2 == 1)
        mt_note("pt2pt_modes: rank %d has no partner (self tests only)",
                size - 1);
    if (peer < size) {
        for (int k = 0; k < 2; k++) {
            uint32_t key = (uint32_t)k;
            if (sender)
                errs += issend_sender(rank, peer, buf, counts[k], key);
            else
                errs += issend_receiver(rank, peer, buf, counts[k], key);
        }
        if (sender)
            errs += ssend_sender(rank, peer, buf, SMALL, 2);
        else
            errs += ssend_receiver(rank, peer, buf, SMALL, 2);
        for (int k = 0; k < 4; k++) {
            uint32_t key = (uint32_t)(10 + k);
            int nb = k & 1, count = counts[k / 2];
            if (sender)
                errs += rsend_sender(rank, peer, buf, count, key, nb);
            else
                errs += rsend_receiver(rank, peer, buf, count, key, nb);
        }
        int bsize = 0;
        for (int i = 0; i < NBSEND; i++)
            bsize += bsend_counts[i] * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
        char *bbuf = mt_malloc((size_t)bsize);
        for (int phase = 0; phase < 2; phase++) {
            if (sender)
                errs += bsend_sender(rank, peer, phase, bbuf, bsize);
            else
                errs += bsend_receiver(rank, peer, phase);
        }
        free(bbuf);
    }

    char ok[80];
    snprintf(ok, sizeof ok, "pt2pt_modes: %d ranks OK", size);
    mt_finish(errs, ok);
    free(buf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
