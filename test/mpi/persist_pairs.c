/* persist_pairs.c - persistent send/receive pairs between processes: a
 * large persistent send and a persistent receive with a fixed source and
 * tag, restarted every round.  Each rank exchanges with partner (rank + size/2) % size, which lies
 * in another process when there are several.  Checked every round: the data
 * and status (source, tag, count) of every receive, while
 *   - some rounds add an ordinary message on the same tag, sent before or
 *     after the persistent one (small Isend, large Isend, blocking Send), and
 *     a second receive: MPI's order decides which receive gets which;
 *   - completion alternates Waitall, Waitany and Testall;
 *   - the send and the receive are freed and made again (inactive), a send is
 *     freed while active (its data must still arrive), a receive is freed
 *     while active (the next receive must get the next round);
 *   - two persistent pairs share one tag (they must pair up in start order),
 *     beside a third pair on another tag. */
#include <stdlib.h>
#include "mpitest.h"

#include <stdbool.h>

enum { N = 4096, NS = 100, NL = 3000, ROUNDS = 40, TAG = 7, TAG_B = 8 };
enum { FREE_SEND_AT = 12, FREE_RECV_AT = 18, FREE_ACTIVE_SEND_AT = 24, FREE_ACTIVE_RECV_AT = 30 };

typedef struct {
    int rank, partner, errs;
    int *sbuf, *rbuf, *xbuf, *obuf;
    int *kept[2]; /* buffers of requests freed while active, never touched again */
    MPI_Request s, r;
} pair_t;

static uint32_t key(int round, int what) { return (uint32_t)(round * 16 + what); }

static void make_send(pair_t *p) { MPI_Send_init(p->sbuf, N, MPI_INT, p->partner, TAG, MPI_COMM_WORLD, &p->s); }
static void make_recv(pair_t *p) { MPI_Recv_init(p->rbuf, N, MPI_INT, p->partner, TAG, MPI_COMM_WORLD, &p->r); }

/* style 0: Waitall, 1: Waitany until none is active, 2: Testall */
static void complete(MPI_Request *req, int n, MPI_Status *st, int style)
{
    if (style == 0) {
        MPI_Waitall(n, req, st);
        return;
    }
    if (style == 1) {
        for (;;) {
            int i = -1;
            MPI_Status s;
            MPI_Waitany(n, req, &i, &s);
            if (i == MPI_UNDEFINED)
                return;
            st[i] = s;
        }
    }
    int flag = 0;
    while (!flag)
        MPI_Testall(n, req, &flag, st);
}

static void check(pair_t *p, const char *what, int it, const int *buf, const MPI_Status *st, int count, uint32_t k)
{
    char name[64];
    snprintf(name, sizeof name, "round %d %s", it, what);
    p->errs += mt_check_status(p->rank, name, st, MPI_INT, p->partner, TAG, count);
    long bad = mt_check_int(buf, (size_t)count, p->partner, p->rank, k);
    if (bad >= 0)
        p->errs += mt_fail(p->rank, "%s: element %ld differs", name, bad);
}

/* mode 0/1: the persistent message alone; 2: small Isend before it; 3: small
 * Isend after it; 4: large Isend before it; 5: blocking small Send before it */
static void round_of(pair_t *p, int it)
{
    int mode = it % 6, style = it % 3;
    bool free_send = it == FREE_ACTIVE_SEND_AT, free_recv = it == FREE_ACTIVE_RECV_AT;
    if (free_send || free_recv)
        mode = 0;
    bool extra = mode >= 2, before = mode == 2 || mode == 4 || mode == 5;
    int on = mode == 4 ? NL : NS;
    uint32_t okey = key(it, mode == 4 ? 2 : 1);
    MPI_Request req[4] = { p->r, p->s, MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    MPI_Status st[4];
    mt_fill_int(p->sbuf, N, p->rank, p->partner, key(it, 0));
    for (int i = 0; i < N; i++)
        p->rbuf[i] = p->xbuf[i] = -1;
    MPI_Start(&p->r);
    if (free_recv) { /* its message must not go to the next receive */
        MPI_Request_free(&p->r);
        p->kept[1] = p->rbuf;
        p->rbuf = mt_malloc(N * sizeof(int));
        req[0] = MPI_REQUEST_NULL;
    }
    if (extra) {
        MPI_Irecv(p->xbuf, N, MPI_INT, p->partner, TAG, MPI_COMM_WORLD, &req[2]);
        mt_fill_int(p->obuf, (size_t)on, p->rank, p->partner, okey);
    }
    if (mode == 2 || mode == 4)
        MPI_Isend(p->obuf, on, MPI_INT, p->partner, TAG, MPI_COMM_WORLD, &req[3]);
    if (mode == 5) /* the receives on both sides are posted already */
        MPI_Send(p->obuf, on, MPI_INT, p->partner, TAG, MPI_COMM_WORLD);
    MPI_Start(&p->s);
    if (free_send) {
        MPI_Request_free(&p->s);
        p->kept[0] = p->sbuf;
        p->sbuf = mt_malloc(N * sizeof(int));
        req[1] = MPI_REQUEST_NULL;
    }
    if (mode == 3)
        MPI_Isend(p->obuf, on, MPI_INT, p->partner, TAG, MPI_COMM_WORLD, &req[3]);
    complete(req, 4, st, style);
    if (!free_recv)
        check(p, before ? "receive (ordinary message)" : "receive", it, p->rbuf, &st[0], before ? on : N,
              before ? okey : key(it, 0));
    if (extra)
        check(p, before ? "second receive (persistent message)" : "second receive", it, p->xbuf, &st[2],
              before ? N : on, before ? key(it, 0) : okey);
    if (free_send)
        make_send(p);
    if (free_recv)
        make_recv(p);
}

/* Two persistent pairs on one tag pair up in start order; a third on another tag. */
static int shared_tag(int rank, int partner)
{
    int errs = 0;
    int *s[3], *r[3];
    MPI_Request req[6];
    const int tags[3] = { TAG, TAG, TAG_B };
    for (int i = 0; i < 3; i++) {
        s[i] = mt_malloc(N * sizeof(int));
        r[i] = mt_malloc(N * sizeof(int));
        MPI_Recv_init(r[i], N, MPI_INT, partner, tags[i], MPI_COMM_WORLD, &req[i]);
        MPI_Send_init(s[i], N, MPI_INT, partner, tags[i], MPI_COMM_WORLD, &req[3 + i]);
    }
    for (int it = 0; it < 12; it++) {
        MPI_Status st[6];
        for (int i = 0; i < 3; i++)
            mt_fill_int(s[i], N, rank, partner, key(it, 4 + i));
        MPI_Startall(3, req);
        MPI_Startall(3, &req[3]);
        complete(req, 6, st, it % 3);
        for (int i = 0; i < 3; i++) {
            char name[64];
            snprintf(name, sizeof name, "shared tag round %d receive %d", it, i);
            errs += mt_check_status(rank, name, &st[i], MPI_INT, partner, tags[i], N);
            if (mt_check_int(r[i], N, partner, rank, key(it, 4 + i)) >= 0)
                errs += mt_fail(rank, "%s: wrong data", name);
        }
    }
    for (int i = 0; i < 6; i++)
        MPI_Request_free(&req[i]);
    for (int i = 0; i < 3; i++) {
        free(s[i]);
        free(r[i]);
    }
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    if (size % 2) {
        if (rank == 0)
            mt_note("persist_pairs: %d ranks, needs an even number: nothing to do", size);
        mt_finish(0, "persist_pairs OK");
        MPI_Finalize();
        return 0;
    }
    pair_t p = { .rank = rank, .partner = (rank + size / 2) % size };
    p.sbuf = mt_malloc(N * sizeof(int));
    p.rbuf = mt_malloc(N * sizeof(int));
    p.xbuf = mt_malloc(N * sizeof(int));
    p.obuf = mt_malloc(N * sizeof(int));
    make_send(&p);
    make_recv(&p);
    for (int it = 0; it < ROUNDS; it++) {
        round_of(&p, it);
        if (it == FREE_SEND_AT) { /* inactive: free and make again */
            MPI_Request_free(&p.s);
            make_send(&p);
        }
        if (it == FREE_RECV_AT) {
            MPI_Request_free(&p.r);
            make_recv(&p);
        }
        if (p.s == MPI_REQUEST_NULL || p.r == MPI_REQUEST_NULL)
            p.errs += mt_fail(rank, "round %d: a persistent request became null", it);
    }
    MPI_Request_free(&p.s);
    MPI_Request_free(&p.r);
    errs += p.errs + shared_tag(rank, p.partner);
    MPI_Barrier(MPI_COMM_WORLD);
    free(p.sbuf);
    free(p.rbuf);
    free(p.xbuf);
    free(p.obuf);
    mt_finish(errs, "persist_pairs OK");
    MPI_Finalize(); /* the requests freed while active finished before it */
    free(p.kept[0]);
    free(p.kept[1]);
    return 0;
}
