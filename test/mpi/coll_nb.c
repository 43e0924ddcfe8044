/* coll_nb.c - nonblocking collectives.  Every kind is started and checked
 * alone; then all kinds at once on MPI_COMM_WORLD and on a duplicate,
 * started in interleaved order and completed in reverse order (so that
 * several collectives of one communicator are outstanding together); then
 * overlapped with point-to-point messages, completed by MPI_Test and
 * MPI_Testall loops, and with the communicator and a datatype freed while
 * the operation is pending.  Inputs are small integers of (rank, index,
 * salt): every rank can compute everybody's input, sums are exact, and
 * every result is compared with a value computed locally.  Receive buffers
 * start as a sentinel, which the gaps of the v-variants must keep. */
#include "mpitest.h"

#define SENTINEL (-7777)
#define BIG 5000 /* Iallreduce of 20000 bytes: the reduce-scatter algorithm */

enum { BARRIER, BCAST, REDUCE, ALLRED, ALLRED_BIG, GATHER, GATHERV, SCATTER, SCATTERV, ALLGATHER, ALLGATHERV,
       ALLTOALL, ALLTOALLV, REDSCAT_BLOCK, REDSCAT, SCAN, EXSCAN, NKINDS };
static const char *const kind_name[NKINDS] = { "Ibarrier", "Ibcast", "Ireduce", "Iallreduce", "Iallreduce(big)",
    "Igather", "Igatherv", "Iscatter", "Iscatterv", "Iallgather", "Iallgatherv", "Ialltoall", "Ialltoallv",
    "Ireduce_scatter_block", "Ireduce_scatter", "Iscan", "Iexscan" };

/* One started collective: its buffers and what is needed to check it. */
typedef struct {
    int kind, me, n, salt, root;
    int *sb, *rb, *sc, *sd, *rc, *rd; /* buffers, counts and displacements */
    size_t rlen;                      /* elements of rb */
} op_t;

static int in(int r, int i, int salt) { return (r * 131 + i * 17 + salt * 7) % 1000 - 500; }
static int sum_in(int from, int to, int i, int salt) /* ranks [from, to) */
{
    int s = 0;
    for (int r = from; r < to; r++)
        s += in(r, i, salt);
    return s;
}
static int blk(int r) { return r % 3 + 1; }
static int pair(int s, int d, int n) { return (s + 2 * d) % 3 + (n > 4 ? 0 : 1); } /* alltoallv; may be 0 */

static int *ints(size_t n, int fill)
{
    int *p = mt_malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = fill;
    return p;
}

/* counts c[0..n) of block sizes cnt(r) with displacements leaving a gap of
 * `gap` elements before each block; returns the total span. */
static size_t layout(int n, int *c, int *d, int gap, int me, int by_pair)
{
    size_t at = 0;
    for (int r = 0; r < n; r++) {
        c[r] = by_pair ? pair(by_pair > 0 ? me : r, by_pair > 0 ? r : me, n) : blk(r);
        d[r] = (int)at + gap;
        at += (size_t)(gap + c[r]);
    }
    return at;
}

static void start(op_t *o, MPI_Comm comm, MPI_Request *req)
{
    int n = o->n, me = o->me, s = o->salt;
    o->root = s % n;
    o->sc = ints((size_t)n, 0), o->sd = ints((size_t)n, 0), o->rc = ints((size_t)n, 0), o->rd = ints((size_t)n, 0);
    size_t slen = 8 * (size_t)n + BIG;
    o->sb = ints(slen, SENTINEL);
    for (size_t i = 0; i < slen; i++)
        o->sb[i] = in(me, (int)i, s);
    o->rlen = 8 * (size_t)n + BIG;
    o->rb = ints(o->rlen, SENTINEL);
    int *sb = o->sb, *rb = o->rb, root = o->root;
    switch (o->kind) {
    case BARRIER: MPI_Ibarrier(comm, req); break;
    case BCAST: MPI_Ibcast(me == root ? sb : rb, 1000, MPI_INT, root, comm, req); break;
    case REDUCE: MPI_Ireduce(sb, rb, 7, MPI_INT, MPI_SUM, root, comm, req); break;
    case ALLRED: MPI_Iallreduce(sb, rb, 7, MPI_INT, MPI_SUM, comm, req); break;
    case ALLRED_BIG: /* in place */
        memcpy(rb, sb, BIG * sizeof *rb);
        MPI_Iallreduce(MPI_IN_PLACE, rb, BIG, MPI_INT, MPI_SUM, comm, req);
        break;
    case GATHER: MPI_Igather(sb, 3, MPI_INT, rb, 3, MPI_INT, root, comm, req); break;
    case GATHERV:
        layout(n, o->rc, o->rd, 1, me, 0);
        MPI_Igatherv(sb, blk(me), MPI_INT, rb, o->rc, o->rd, MPI_INT, root, comm, req);
        break;
    case SCATTER:
        for (int i = 0; i < 3 * n; i++)
            sb[i] = in(i / 3, i % 3, s);
        MPI_Iscatter(sb, 3, MPI_INT, rb, 3, MPI_INT, root, comm, req);
        break;
    case SCATTERV:
        layout(n, o->sc, o->sd, 2, me, 0);
        for (int r = 0; r < n; r++)
            for (int i = 0; i < o->sc[r]; i++)
                sb[o->sd[r] + i] = in(r, i, s);
        MPI_Iscatterv(sb, o->sc, o->sd, MPI_INT, rb, blk(me), MPI_INT, root, comm, req);
        break;
    case ALLGATHER: MPI_Iallgather(sb, 2, MPI_INT, rb, 2, MPI_INT, comm, req); break;
    case ALLGATHERV:
        layout(n, o->rc, o->rd, 1, me, 0);
        MPI_Iallgatherv(sb, blk(me), MPI_INT, rb, o->rc, o->rd, MPI_INT, comm, req);
        break;
    case ALLTOALL:
        for (int i = 0; i < 2 * n; i++)
            sb[i] = in(me * 64 + i / 2, i % 2, s);
        MPI_Ialltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, comm, req);
        break;
    case ALLTOALLV:
        layout(n, o->sc, o->sd, 0, me, 1);
        layout(n, o->rc, o->rd, 1, me, -1);
        for (int d = 0; d < n; d++)
            for (int i = 0; i < o->sc[d]; i++)
                sb[o->sd[d] + i] = in(me * 64 + d, i, s);
        MPI_Ialltoallv(sb, o->sc, o->sd, MPI_INT, rb, o->rc, o->rd, MPI_INT, comm, req);
        break;
    case REDSCAT_BLOCK: MPI_Ireduce_scatter_block(sb, rb, 2, MPI_INT, MPI_SUM, comm, req); break;
    case REDSCAT:
        layout(n, o->rc, o->rd, 0, me, 0);
        MPI_Ireduce_scatter(sb, rb, o->rc, MPI_INT, MPI_SUM, comm, req);
        break;
    case SCAN: MPI_Iscan(sb, rb, 4, MPI_INT, MPI_SUM, comm, req); break;
    case EXSCAN: MPI_Iexscan(sb, rb, 4, MPI_INT, MPI_SUM, comm, req); break;
    }
}

/* Expected rb[i] (SENTINEL: must be untouched). */
static int want(const op_t *o, int i)
{
    int n = o->n, me = o->me, s = o->salt, root = o->root, am_root = me == root, r;
    switch (o->kind) {
    case BCAST: return i < 1000 && !am_root ? in(root, i, s) : SENTINEL;
    case REDUCE: return i < 7 && am_root ? sum_in(0, n, i, s) : SENTINEL;
    case ALLRED: return i < 7 ? sum_in(0, n, i, s) : SENTINEL;
    case ALLRED_BIG: return i < BIG ? sum_in(0, n, i, s) : SENTINEL;
    case GATHER: return i < 3 * n && am_root ? in(i / 3, i % 3, s) : SENTINEL;
    case SCATTER: return i < 3 ? in(me, i, s) : SENTINEL;
    case SCATTERV: return i < blk(me) ? in(me, i, s) : SENTINEL;
    case ALLGATHER: return i < 2 * n ? in(i / 2, i % 2, s) : SENTINEL;
    case ALLTOALL: return i < 2 * n ? in((i / 2) * 64 + me, i % 2, s) : SENTINEL;
    case REDSCAT_BLOCK: return i < 2 ? sum_in(0, n, 2 * me + i, s) : SENTINEL;
    case REDSCAT: return i < blk(me) ? sum_in(0, n, o->rd[me] + i, s) : SENTINEL;
    case SCAN: return i < 4 ? sum_in(0, me + 1, i, s) : SENTINEL;
    case EXSCAN: return i < 4 && me > 0 ? sum_in(0, me, i, s) : SENTINEL;
    case GATHERV: case ALLGATHERV: case ALLTOALLV:
        if (o->kind == GATHERV && !am_root)
            return SENTINEL;
        for (r = 0; r < n; r++)
            if (i >= o->rd[r] && i < o->rd[r] + o->rc[r])
                return o->kind == ALLTOALLV ? in(r * 64 + me, i - o->rd[r], s) : in(r, i - o->rd[r], s);
        return SENTINEL;
    }
    return SENTINEL; /* BARRIER: nothing received */
}

static int check(op_t *o, const char *what)
{
    int errs = 0;
    if (o->kind == EXSCAN && o->me == 0)
        return 0; /* rank 0's result is undefined */
    for (size_t i = 0; i < o->rlen && errs < 3; i++)
        if (o->rb[i] != want(o, (int)i))
            errs += mt_fail(o->me, "%s %s salt %d: element %zu is %d, expected %d", what, kind_name[o->kind],
                            o->salt, i, o->rb[i], want(o, (int)i));
    return errs;
}

static void drop(op_t *o)
{
    free(o->sb), free(o->rb), free(o->sc), free(o->sd), free(o->rc), free(o->rd);
}

static op_t make(int kind, MPI_Comm comm, int salt)
{
    op_t o = { .kind = kind, .salt = salt };
    MPI_Comm_rank(comm, &o.me);
    MPI_Comm_size(comm, &o.n);
    return o;
}

/* Each kind alone: started, then MPI_Wait (even kinds) or an MPI_Test loop. */
static int t_each(MPI_Comm comm)
{
    int errs = 0;
    for (int k = 0; k < NKINDS; k++) {
        op_t o = make(k, comm, k + 1);
        MPI_Request req;
        start(&o, comm, &req);
        int flag = 0;
        if (k % 2 == 0)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        while (!flag)
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (req != MPI_REQUEST_NULL)
            errs += mt_fail(o.me, "%s: request not freed by completion", kind_name[k]);
        errs += check(&o, "alone");
        drop(&o);
    }
    return errs;
}

/* Every kind outstanding at once on two communicators, interleaved, then
 * completed in reverse order of start. */
static int t_all_at_once(MPI_Comm a, MPI_Comm b)
{
    op_t ops[2 * NKINDS];
    MPI_Request reqs[2 * NKINDS];
    for (int k = 0; k < NKINDS; k++) {
        MPI_Comm c = k % 2 ? b : a, other = k % 2 ? a : b;
        ops[2 * k] = make(k, c, 100 + k);
        start(&ops[2 * k], c, &reqs[2 * k]);
        ops[2 * k + 1] = make(NKINDS - 1 - k, other, 200 + k);
        start(&ops[2 * k + 1], other, &reqs[2 * k + 1]);
    }
    for (int i = 2 * NKINDS - 1; i >= 0; i--)
        MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    int errs = 0;
    for (int i = 0; i < 2 * NKINDS; i++) {
        errs += check(&ops[i], "all at once");
        drop(&ops[i]);
    }
    return errs;
}

/* Ring messages around an Iallreduce and an Ibcast, completed by Testall;
 * the Ibcast's communicator and datatype are freed before completion. */
static int t_overlap(int me, int n)
{
    int errs = 0, token = -1, mine = 1000 + me, left = (me + n - 1) % n;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Datatype pair2;
    MPI_Type_contiguous(2, MPI_INT, &pair2);
    MPI_Type_commit(&pair2);
    op_t ar = make(ALLRED_BIG, MPI_COMM_WORLD, 7);
    int bc[8] = { 0 };
    if (me == n - 1)
        for (int i = 0; i < 8; i++)
            bc[i] = in(n - 1, i, 9);
    MPI_Request reqs[4];
    MPI_Irecv(&token, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &reqs[0]);
    start(&ar, MPI_COMM_WORLD, &reqs[1]);
    MPI_Ibcast(bc, 4, pair2, n - 1, dup, &reqs[2]);
    MPI_Comm_free(&dup);
    MPI_Type_free(&pair2);
    MPI_Isend(&mine, 1, MPI_INT, (me + 1) % n, 3, MPI_COMM_WORLD, &reqs[3]);
    int flag = 0;
    while (!flag)
        MPI_Testall(4, reqs, &flag, MPI_STATUSES_IGNORE);
    if (token != 1000 + left)
        errs += mt_fail(me, "overlap: ring token %d, expected %d", token, 1000 + left);
    for (int i = 0; i < 8; i++)
        if (bc[i] != in(n - 1, i, 9))
            errs += mt_fail(me, "overlap: Ibcast element %d is %d, expected %d", i, bc[i], in(n - 1, i, 9));
    errs += check(&ar, "overlap");
    drop(&ar);
    return errs;
}

/* MPI_Ibarrier completes on no rank before the last has entered it: the
 * last member of comm enters only once every other has started its
 * Ibarrier and seen it stay incomplete through `polls` MPI_Test calls
 * (size 2 takes a path of its own, coll_barrier.c). */
static int t_barrier_waits(MPI_Comm comm, const char *name, int polls)
{
    int me, n, errs = 0, flag = 0;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    MPI_Request req;
    if (me != n - 1) {
        MPI_Ibarrier(comm, &req);
        for (int i = 0; i < polls && !flag; i++)
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            errs += mt_fail(mt_rank(), "Ibarrier on %s completed before its last member entered it", name);
        MPI_Send(NULL, 0, MPI_INT, n - 1, 9, comm);
        if (!flag)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        for (int i = 0; i < n - 1; i++)
            MPI_Recv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, 9, comm, MPI_STATUS_IGNORE);
        MPI_Ibarrier(comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = mt_rank(), n = mt_size(), errs = 0;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    errs += t_each(MPI_COMM_WORLD);
    errs += t_each(dup);
    for (int rep = 0; rep < 3; rep++)
        errs += t_all_at_once(MPI_COMM_WORLD, dup);
    errs += t_overlap(me, n);
    errs += t_barrier_waits(MPI_COMM_WORLD, "world", 2000);
    MPI_Comm pairs; /* ranks 2k and 2k+1; the last alone when n is odd */
    MPI_Comm_split(MPI_COMM_WORLD, me / 2, me, &pairs);
    errs += t_barrier_waits(pairs, "a pair", 2000);
    MPI_Comm_free(&pairs);
    /* a blocking collective right after nonblocking ones on the same comm */
    op_t o = make(SCAN, dup, 55);
    MPI_Request req;
    start(&o, dup, &req);
    int total = 0, one = 1;
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, dup);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (total != n)
        errs += mt_fail(me, "Allreduce between nonblocking ones: %d, expected %d", total, n);
    errs += check(&o, "mixed");
    drop(&o);
    MPI_Comm_free(&dup);
    char ok[96];
    snprintf(ok, sizeof ok, "coll_nb: %d ranks, %d kinds OK", n, NKINDS);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
