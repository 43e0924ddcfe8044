/* persistent.c - persistent requests reused over 50 iterations with data
 * that changes every iteration.  Between rank pairs the even rank has
 * Send_init, Ssend_init, Bsend_init and Rsend_init requests plus Recv_inits
 * for the partner's reply and "ready" token; the odd rank has Recv_inits for
 * the four and Send_inits for reply and token.  Both sides use Start and
 * Startall.  Every rank also runs a Send_init/Recv_init loop to itself.
 * Checked: data per iteration, handles stay valid after completion, Wait on
 * an inactive persistent request returns at once with an empty status, and
 * Request_free releases them. */
#include "mpitest.h"

enum { ITERS = 50, N_STD = 1000, N_SYN = 1 << 16, N_BUF = 500, N_RDY = 100,
       N_REP = 100, TAG_STD = 10, TAG_SYN, TAG_BUF, TAG_RDY, TAG_REP,
       TAG_TOK, TAG_SELF };

/* Data key of message kind k in iteration it. */
static uint32_t key(int it, int k) { return (uint32_t)(it * 8 + k); }

static int check_inactive(int rank, MPI_Request *req, const char *what)
{
    MPI_Status st;
    int errs = 0, n = -1;
    MPI_Request before = *req;
    MPI_Wait(req, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    if (*req != before || *req == MPI_REQUEST_NULL)
        errs += mt_fail(rank, "%s: Wait on inactive request changed it", what);
    if (st.MPI_SOURCE != MPI_ANY_SOURCE || st.MPI_TAG != MPI_ANY_TAG || n != 0)
        errs += mt_fail(rank, "%s: Wait on inactive request gave source %d "
                        "tag %d count %d", what, st.MPI_SOURCE, st.MPI_TAG, n);
    return errs;
}

static int free_all(int rank, MPI_Request *req, int n)
{
    int errs = 0;
    for (int i = 0; i < n; i++) {
        MPI_Request_free(&req[i]);
        if (req[i] != MPI_REQUEST_NULL)
            errs += mt_fail(rank, "Request_free left request %d", i);
    }
    return errs;
}

static int even_side(int rank, int peer)
{
    const mt_type dbl = {MPI_DOUBLE, sizeof(double), "MPI_DOUBLE"};
    const mt_type ll = {MPI_LONG_LONG, sizeof(long long), "MPI_LONG_LONG"};
    double *d_std = mt_malloc(N_STD * sizeof(double));
    int *d_syn = mt_malloc(N_SYN * sizeof(int)), d_rdy[N_RDY], rep[N_REP];
    long long d_buf[N_BUF];
    int tok = -1, errs = 0;
    /* room for a few buffered messages: the library may free the space of
     * a delivered one a little later */
    int bsize = 4 * (N_BUF * (int)sizeof(long long) + MPI_BSEND_OVERHEAD);
    char *bbuf = mt_malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);

    MPI_Request req[6]; /* 0 std, 1 syn, 2 buf, 3 rdy, 4 reply, 5 token */
    MPI_Send_init(d_std, N_STD, MPI_DOUBLE, peer, TAG_STD, MPI_COMM_WORLD,
                  &req[0]);
    MPI_Ssend_init(d_syn, N_SYN, MPI_INT, peer, TAG_SYN, MPI_COMM_WORLD,
                   &req[1]);
    MPI_Bsend_init(d_buf, N_BUF, MPI_LONG_LONG, peer, TAG_BUF, MPI_COMM_WORLD,
                   &req[2]);
    MPI_Rsend_init(d_rdy, N_RDY, MPI_INT, peer, TAG_RDY, MPI_COMM_WORLD,
                   &req[3]);
    MPI_Recv_init(rep, N_REP, MPI_INT, peer, TAG_REP, MPI_COMM_WORLD, &req[4]);
    MPI_Recv_init(&tok, 1, MPI_INT, peer, TAG_TOK, MPI_COMM_WORLD, &req[5]);

    for (int it = 0; it < ITERS; it++) {
        mt_fill(d_std, &dbl, N_STD, rank, peer, key(it, 0));
        mt_fill_int(d_syn, N_SYN, rank, peer, key(it, 1));
        mt_fill(d_buf, &ll, N_BUF, rank, peer, key(it, 2));
        mt_fill_int(d_rdy, N_RDY, rank, peer, key(it, 3));
        MPI_Startall(2, &req[4]);
        MPI_Startall(3, &req[0]);
        MPI_Wait(&req[5], MPI_STATUS_IGNORE); /* peer's Rsend recv posted */
        if (tok != it)
            errs += mt_fail(rank, "iteration %d: token %d", it, tok);
        MPI_Start(&req[3]);
        MPI_Waitall(5, req, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 6; i++)
            if (req[i] == MPI_REQUEST_NULL)
                errs += mt_fail(rank, "persistent request %d became NULL", i);
        long bad = mt_check_int(rep, N_REP, peer, rank, key(it, 4));
        if (bad >= 0)
            errs += mt_fail(rank, "iteration %d: reply wrong at %ld", it, bad);
    }
    errs += check_inactive(rank, &req[0], "Send_init");
    errs += check_inactive(rank, &req[4], "Recv_init");
    errs += free_all(rank, req, 6);
    void *addr;
    int got;
    MPI_Buffer_detach(&addr, &got);
    free(bbuf);
    free(d_std);
    free(d_syn);
    return errs;
}

static int odd_side(int rank, int peer)
{
    const mt_type dbl = {MPI_DOUBLE, sizeof(double), "MPI_DOUBLE"};
    const mt_type ll = {MPI_LONG_LONG, sizeof(long long), "MPI_LONG_LONG"};
    double *d_std = mt_malloc(N_STD * sizeof(double));
    int *d_syn = mt_malloc(N_SYN * sizeof(int)), d_rdy[N_RDY], rep[N_REP];
    long long d_buf[N_BUF];
    int tok = -1, errs = 0;
    MPI_Status st[5];

    MPI_Request req[6]; /* 0 std, 1 syn, 2 buf, 3 rdy, 4 token, 5 reply */
    MPI_Recv_init(d_std, N_STD, MPI_DOUBLE, peer, TAG_STD, MPI_COMM_WORLD,
                  &req[0]);
    MPI_Recv_init(d_syn, N_SYN, MPI_INT, peer, TAG_SYN, MPI_COMM_WORLD,
                  &req[1]);
    MPI_Recv_init(d_buf, N_BUF, MPI_LONG_LONG, peer, TAG_BUF, MPI_COMM_WORLD,
                  &req[2]);
    MPI_Recv_init(d_rdy, N_RDY, MPI_INT, peer, TAG_RDY, MPI_COMM_WORLD,
                  &req[3]);
    MPI_Send_init(&tok, 1, MPI_INT, peer, TAG_TOK, MPI_COMM_WORLD, &req[4]);
    MPI_Send_init(rep, N_REP, MPI_INT, peer, TAG_REP, MPI_COMM_WORLD, &req[5]);

    for (int it = 0; it < ITERS; it++) {
        memset(d_std, 0, N_STD * sizeof(double));
        memset(d_rdy, 0, sizeof d_rdy);
        MPI_Startall(4, req);
        tok = it; /* the Rsend receive is posted: tell the sender */
        MPI_Start(&req[4]);
        MPI_Waitall(5, req, st);
        const int tags[4] = {TAG_STD, TAG_SYN, TAG_BUF, TAG_RDY};
        const int counts[4] = {N_STD, N_SYN, N_BUF, N_RDY};
        const MPI_Datatype types[4] = {MPI_DOUBLE, MPI_INT, MPI_LONG_LONG,
                                       MPI_INT};
        for (int k = 0; k < 4; k++) {
            char what[40];
            snprintf(what, sizeof what, "iteration %d kind %d", it, k);
            errs += mt_check_status(rank, what, &st[k], types[k], peer,
                                    tags[k], counts[k]);
        }
        long b0 = mt_check(d_std, &dbl, N_STD, peer, rank, key(it, 0));
        long b1 = mt_check_int(d_syn, N_SYN, peer, rank, key(it, 1));
        long b2 = mt_check(d_buf, &ll, N_BUF, peer, rank, key(it, 2));
        long b3 = mt_check_int(d_rdy, N_RDY, peer, rank, key(it, 3));
        if (b0 >= 0 || b1 >= 0 || b2 >= 0 || b3 >= 0)
            errs += mt_fail(rank, "iteration %d: data wrong (std %ld syn %ld "
                            "buf %ld rdy %ld)", it, b0, b1, b2, b3);
        mt_fill_int(rep, N_REP, rank, peer, key(it, 4));
        MPI_Start(&req[5]);
        MPI_Wait(&req[5], MPI_STATUS_IGNORE);
    }
    errs += check_inactive(rank, &req[1], "Recv_init");
    errs += free_all(rank, req, 6);
    free(d_std);
    free(d_syn);
    return errs;
}

/* Send_init/Recv_init to ourselves; Startall with the receive first. */
static int self_loop(int rank)
{
    int out[64], in[64], errs = 0;
    MPI_Request req[2];
    MPI_Status st[2];
    MPI_Recv_init(in, 64, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD, &req[0]);
    MPI_Send_init(out, 64, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD, &req[1]);
    for (int it = 0; it < ITERS; it++) {
        mt_fill_int(out, 64, rank, rank, key(it, 5));
        MPI_Startall(2, req);
        MPI_Waitall(2, req, st);
        errs += mt_check_status(rank, "self persistent", &st[0], MPI_INT, rank,
                                TAG_SELF, 64);
        if (mt_check_int(in, 64, rank, rank, key(it, 5)) >= 0)
            errs += mt_fail(rank, "self persistent iteration %d: data wrong",
                            it);
    }
    errs += free_all(rank, req, 2);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int peer = (rank % 2 == 0) ? rank + 1 : rank - 1;

    errs += self_loop(rank);
    if (peer < size)
        errs += (rank % 2 == 0) ? even_side(rank, peer) : odd_side(rank, peer);
    else if (size == 1)
        mt_skipped("persistent: 1 rank, the pair tests need 2");

    char ok[80];
    snprintf(ok, sizeof ok, "persistent: %d ranks OK", size);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
