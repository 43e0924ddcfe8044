/* truncate.c - a receive buffer smaller than the message gives error class
 * MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN (16 B into 8 B and 1 MiB into
 * 64 KiB, blocking and nonblocking), writes nothing past the receive buffer
 * (a guard pattern follows it), and the next messages on the same pair
 * still arrive intact.  Between rank pairs (even sends, odd receives) and
 * from every rank to itself. */
#include "mpitest.h"

enum { TAG = 9, SMALL = 4, SMALL_RECV = 2, BIG = 1 << 18, BIG_RECV = 1 << 14,
       GUARD_INTS = 1 << 14 };

static void guard_fill(int *p, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = 0x6d6d0000 + i;
}

static int guard_check(int rank, const char *what, const int *p, int n)
{
    for (int i = 0; i < n; i++)
        if (p[i] != 0x6d6d0000 + i)
            return mt_fail(rank, "%s: %d bytes past the receive buffer were "
                           "overwritten", what, (int)(i * sizeof(int)));
    return 0;
}

static int expect_truncate(int rank, const char *what, int rc)
{
    int cls = -1;
    if (rc == MPI_SUCCESS)
        return mt_fail(rank, "%s: receive succeeded, expected MPI_ERR_TRUNCATE",
                       what);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_TRUNCATE)
        return mt_fail(rank, "%s: error class %d, expected MPI_ERR_TRUNCATE "
                       "(%d)", what, cls, MPI_ERR_TRUNCATE);
    return 0;
}

/* Receive `sent` ints into room for `room` ints (followed by the guard);
 * nonblocking with Irecv+Wait if nb. */
static int truncated_recv(int rank, int src, int *buf, int room, int nb,
                          const char *what)
{
    int rc;
    MPI_Status st;
    guard_fill(buf + room, GUARD_INTS);
    if (nb) {
        MPI_Request req;
        rc = MPI_Irecv(buf, room, MPI_INT, src, TAG, MPI_COMM_WORLD, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, &st);
    } else
        rc = MPI_Recv(buf, room, MPI_INT, src, TAG, MPI_COMM_WORLD, &st);
    int errs = expect_truncate(rank, what, rc);
    return errs + guard_check(rank, what, buf + room, GUARD_INTS);
}

static int intact_recv(int rank, int src, int *buf, int n, uint32_t key,
                       const char *what)
{
    MPI_Status st;
    int rc = MPI_Recv(buf, n, MPI_INT, src, TAG, MPI_COMM_WORLD, &st);
    if (rc != MPI_SUCCESS)
        return mt_fail(rank, "%s: receive failed with %d", what, rc);
    int errs = mt_check_status(rank, what, &st, MPI_INT, src, TAG, n);
    if (mt_check_int(buf, (size_t)n, src, rank, key) >= 0)
        errs += mt_fail(rank, "%s: data wrong", what);
    return errs;
}

/* The messages of the pair test, in send order. */
static const int msg_len[] = {SMALL, BIG, SMALL, BIG, BIG, SMALL};

static int sender(int rank, int peer, int *buf)
{
    int errs = 0;
    for (int i = 0; i < (int)(sizeof msg_len / sizeof msg_len[0]); i++) {
        mt_fill_int(buf, (size_t)msg_len[i], rank, peer, (uint32_t)i);
        int rc = MPI_Send(buf, msg_len[i], MPI_INT, peer, TAG, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            errs += mt_fail(rank, "send %d failed with %d", i, rc);
    }
    return errs;
}

static int receiver(int rank, int peer, int *buf)
{
    int errs = 0;
    errs += truncated_recv(rank, peer, buf, SMALL_RECV, 0, "16 B into 8 B");
    errs += truncated_recv(rank, peer, buf, BIG_RECV, 0, "1 MiB into 64 KiB");
    errs += truncated_recv(rank, peer, buf, SMALL_RECV, 1,
                           "Irecv 16 B into 8 B");
    errs += truncated_recv(rank, peer, buf, BIG_RECV, 1,
                           "Irecv 1 MiB into 64 KiB");
    errs += intact_recv(rank, peer, buf, BIG, 4, "1 MiB after truncation");
    errs += intact_recv(rank, peer, buf, SMALL, 5, "16 B after truncation");
    return errs;
}

static int self_truncate(int rank, int *buf)
{
    int out[SMALL], errs;
    MPI_Request req;
    mt_fill_int(out, SMALL, rank, rank, 7);
    MPI_Isend(out, SMALL, MPI_INT, rank, TAG, MPI_COMM_WORLD, &req);
    errs = truncated_recv(rank, rank, buf, SMALL_RECV, 0, "self 16 B into 8 B");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Isend(out, SMALL, MPI_INT, rank, TAG, MPI_COMM_WORLD, &req);
    errs += intact_recv(rank, rank, buf, SMALL, 7, "self 16 B after");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int peer = (rank % 2 == 0) ? rank + 1 : rank - 1;
    int *buf = mt_malloc((BIG + GUARD_INTS) * sizeof(int));

    errs += self_truncate(rank, buf);
    if (peer < size)
        errs += (rank % 2 == 0) ? sender(rank, peer, buf)
                                : receiver(rank, peer, buf);
    else if (size == 1)
        mt_skipped("truncate: 1 rank, the pair tests need 2");

    char ok[80];
    snprintf(ok, sizeof ok, "truncate: %d ranks OK", size);
    mt_finish(errs, ok);
    free(buf);
    MPI_Finalize();
    return 0;
}
