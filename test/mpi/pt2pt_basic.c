/* pt2pt_basic.c - every pair of ranks exchanges messages of many sizes and
 * datatypes with blocking, nonblocking, Sendrecv and Sendrecv_replace calls;
 * every rank also sends to itself with Isend + Recv.
 *
 * Pairs are scheduled as a round-robin tournament so each rank talks to one
 * partner per round.  To keep the run short with 16 ranks, every datatype is
 * used in the first round and one (rotating) per size and call after that,
 * and sizes of 1 MiB and more are only used in the first round (and to
 * self). */
#include "mpitest.h"

enum { NTYPES = 4, NOPS = 4, LARGE = 1 << 20 };
enum { OP_BLOCKING, OP_NONBLOCKING, OP_SENDRECV, OP_REPLACE };
static const char *const op_names[NOPS] = {"Send/Recv", "Isend/Irecv",
                                           "Sendrecv", "Sendrecv_replace"};
static const size_t sizes[] = {0, 1, 8, 1000, 4096, 65536, 1 << 20, 4 << 20};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

/* Partner of `rank` in round r of a round-robin over m = size rounded up to
 * even; returns -1 when the partner is the dummy rank (odd size). */
static int partner(int rank, int size, int r)
{
    int m = size + (size & 1), p;
    if (rank == m - 1)
        p = (r * (m / 2)) % (m - 1);
    else {
        p = ((r - rank) % (m - 1) + (m - 1)) % (m - 1);
        if (p == rank)
            p = m - 1;
    }
    return p < size ? p : -1;
}

/* Element count of a message of `bytes` bytes of type t (at least one
 * element unless bytes is 0). */
static int elems(size_t bytes, const mt_type *t)
{
    return (int)((bytes + t->size - 1) / t->size);
}

/* One exchange between rank and peer (peer == rank is not used here). */
static int exchange(int rank, int peer, int op, const mt_type *t, int count,
                    int tag, void *sbuf, void *rbuf)
{
    int errs = 0;
    uint32_t key = (uint32_t)tag;
    MPI_Status st[2];
    char what[96];
    snprintf(what, sizeof what, "%s %s x%d with %d", op_names[op], t->name,
             count, peer);

    mt_fill(sbuf, t, (size_t)count, rank, peer, key);
    memset(rbuf, 0xA5, (size_t)count * t->size);
    switch (op) {
    case OP_BLOCKING: /* lower rank sends first so large sends cannot block */
        if (rank < peer) {
            MPI_Send(sbuf, count, t->type, peer, tag, MPI_COMM_WORLD);
            MPI_Recv(rbuf, count, t->type, peer, tag, MPI_COMM_WORLD, &st[0]);
        } else {
            MPI_Recv(rbuf, count, t->type, peer, tag, MPI_COMM_WORLD, &st[0]);
            MPI_Send(sbuf, count, t->type, peer, tag, MPI_COMM_WORLD);
        }
        break;
    case OP_NONBLOCKING: {
        MPI_Request req[2];
        MPI_Irecv(rbuf, count, t->type, peer, tag, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(sbuf, count, t->type, peer, tag, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, st);
        if (req[0] != MPI_REQUEST_NULL || req[1] != MPI_REQUEST_NULL)
            errs += mt_fail(rank, "%s: Waitall left a request", what);
        break;
    }
    case OP_SENDRECV:
        MPI_Sendrecv(sbuf, count, t->type, peer, tag, rbuf, count, t->type,
                     peer, tag, MPI_COMM_WORLD, &st[0]);
        break;
    case OP_REPLACE:
        memcpy(rbuf, sbuf, (size_t)count * t->size);
        MPI_Sendrecv_replace(rbuf, count, t->type, peer, tag, peer, tag,
                             MPI_COMM_WORLD, &st[0]);
        break;
    }
    errs += mt_check_status(rank, what, &st[0], t->type, peer, tag, count);
    long bad = mt_check(rbuf, t, (size_t)count, peer, rank, key);
    if (bad >= 0)
        errs += mt_fail(rank, "%s: data wrong at element %ld", what, bad);
    return errs;
}

/* Isend to ourselves, then a blocking Recv: must not deadlock at any size. */
static int self_send(int rank, const mt_type *t, int count, int tag,
                     void *sbuf, void *rbuf)
{
    MPI_Request req;
    MPI_Status st;
    char what[64];
    snprintf(what, sizeof what, "self %s x%d", t->name, count);
    mt_fill(sbuf, t, (size_t)count, rank, rank, (uint32_t)tag);
    memset(rbuf, 0x5A, (size_t)count * t->size);
    MPI_Isend(sbuf, count, t->type, rank, tag, MPI_COMM_WORLD, &req);
    MPI_Recv(rbuf, count, t->type, rank, tag, MPI_COMM_WORLD, &st);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    int errs = mt_check_status(rank, what, &st, t->type, rank, tag, count);
    long bad = mt_check(rbuf, t, (size_t)count, rank, rank, (uint32_t)tag);
    if (bad >= 0)
        errs += mt_fail(rank, "%s: data wrong at element %ld", what, bad);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    const mt_type types[NTYPES] = {
        {MPI_CHAR, sizeof(char), "MPI_CHAR"},
        {MPI_INT, sizeof(int), "MPI_INT"},
        {MPI_DOUBLE, sizeof(double), "MPI_DOUBLE"},
        {MPI_LONG_LONG, sizeof(long long), "MPI_LONG_LONG"},
    };
    size_t maxbytes = sizes[NSIZES - 1] + 8;
    void *sbuf = mt_malloc(maxbytes), *rbuf = mt_malloc(maxbytes);

    int rounds = size + (size & 1) - 1;
    for (int r = 0; r < rounds; r++) {
        int peer = partner(rank, size, r);
        if (peer < 0)
            continue;
        for (int s = 0; s < (int)NSIZES; s++) {
            for (int op = 0; op < NOPS; op++) {
                for (int ti = 0; ti < NTYPES; ti++) {
                    if (sizes[s] >= LARGE) {
                        /* large: first round only, one type per (size, op) */
                        if (r >= 1 || ti != (s + op) % NTYPES)
                            continue;
                        if (op == OP_SENDRECV || (op == OP_REPLACE && s != 6))
                            continue;
                    } else if (r > 0 && ti != (s + op + r) % NTYPES) {
                        continue; /* all types in round 0, then one each */
                    }
                    int tag = 1000 + r * 100 + s * 10 + op * 2 + (ti & 1);
                    errs += exchange(rank, peer, op, &types[ti],
                                     elems(sizes[s], &types[ti]), tag % 30000,
                                     sbuf, rbuf);
                }
            }
        }
    }
    if (size == 1)
        mt_skipped("pt2pt_basic: 1 rank, the pair exchanges need 2 (only the self-sends ran)");

    for (int s = 0; s < (int)NSIZES; s++)
        for (int ti = 0; ti < NTYPES; ti++) {
            if (sizes[s] >= LARGE && ti != s % NTYPES)
                continue;
            errs += self_send(rank, &types[ti], elems(sizes[s], &types[ti]),
                              100 + s * 10 + ti, sbuf, rbuf);
        }

    char ok[80];
    snprintf(ok, sizeof ok, "pt2pt_basic: %d ranks OK", size);
    mt_finish(errs, ok);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
