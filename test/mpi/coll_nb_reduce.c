/* coll_nb_reduce.c - MPI_Ireduce and MPI_Ireduce_scatter(_block) progress
 * while the ranks compute, and reduce the right data.
 *
 * Part 1 (data): two Ireduce outstanding at once (MPI_SUM of ints and
 * MPI_MAX of doubles, roots apart) on MPI_COMM_WORLD and on a split
 * communicator whose ranks come in reverse order, roots that move,
 * MPI_IN_PLACE at the root every other round, non-roots passing a NULL
 * receive buffer, vectors from one element to past the schedules' limit;
 * every element is checked, and the root's receive buffer keeps its
 * sentinel past the last element.  With them, an Ireduce_scatter of uneven
 * blocks (some empty) and an Ireduce_scatter_block, in place every other
 * round, each result block checked with its sentinel.
 *
 * Part 2 (progress; jobs of several processes): rank 0 (the root of an
 * Ireduce; a member of an Ireduce_scatter_block) is the last rank to start,
 * then computes without calling MPI until its receive buffer holds the whole
 * sum, or a generous bound passes (a failure): the
 * sum can only arrive if its process moves the reduction on its own (the
 * progress thread).  Below AMPI_NBC_PROGRESS_MIN the library leaves
 * Ireduce to the helper threads, so part 2 then runs without the computing
 * loop (run.sh also runs this with the limit 0). */
#include <stdbool.h>
#include "mpitest.h"

#define BAIL_S 20.0 /* well inside the run's 60 s: a failure reports itself */
#define SENTINEL (-99)

/* element j of rank `from`'s input in round it: small, so that sums of
 * many ranks stay far from overflow */
static int ival(int from, size_t j, int it)
{
    return (int)(mt_hash((uint32_t)from, 7u, (uint32_t)j, (uint32_t)it) & 0xffff);
}

static double dval(int from, size_t j, int it)
{
    return (double)(mt_hash((uint32_t)from, 11u, (uint32_t)j, (uint32_t)it) % 100000) / 8.0;
}

static int isum(int n, size_t j, int it)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += ival(i, j, it);
    return s;
}

static double dmax(int n, size_t j, int it)
{
    double m = dval(0, j, it);
    for (int i = 1; i < n; i++)
        if (dval(i, j, it) > m)
            m = dval(i, j, it);
    return m;
}

static int part1_on(MPI_Comm comm, const char *name, int it, size_t cnt, bool in_place)
{
    int errs = 0, me, n, wr = mt_rank();
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int iroot = it % n, droot = (it + n / 2) % n;
    int *is = malloc(cnt * sizeof(int)), *ir = malloc((cnt + 1) * sizeof(int));
    double *ds = malloc(cnt * sizeof(double)), *dr = malloc((cnt + 1) * sizeof(double));
    for (size_t j = 0; j < cnt; j++) {
        is[j] = ival(me, j, it);
        ds[j] = dval(me, j, it);
    }
    for (size_t j = 0; j <= cnt; j++) {
        ir[j] = in_place && me == iroot && j < cnt ? ival(me, j, it) : SENTINEL;
        dr[j] = in_place && me == droot && j < cnt ? dval(me, j, it) : SENTINEL;
    }
    /* reduce-scatter: member i keeps blocks[i] ints (uneven, some empty) */
    int *blocks = malloc((size_t)n * sizeof(int));
    size_t total = 0, mine_at = 0;
    for (int i = 0; i < n; i++) {
        blocks[i] = (int)((size_t)(i % 3) * cnt / 2) + (i == 0);
        if (i < me)
            mine_at += (size_t)blocks[i];
        total += (size_t)blocks[i];
    }
    int *vs = malloc((total + 1) * sizeof(int)), *vr = malloc(((size_t)blocks[me] + 1) * sizeof(int));
    int *bs = malloc(cnt * (size_t)n * sizeof(int)), *br = malloc((cnt + 1) * sizeof(int));
    for (size_t j = 0; j < total; j++)
        vs[j] = ival(me, j, it + 1);
    for (size_t j = 0; j < cnt * (size_t)n; j++)
        bs[j] = ival(me, j, it + 2);
    for (size_t j = 0; j <= (size_t)blocks[me]; j++)
        vr[j] = SENTINEL;
    for (size_t j = 0; j <= cnt; j++)
        br[j] = SENTINEL;
    MPI_Request q[4];
    MPI_Ireduce_scatter(in_place ? MPI_IN_PLACE : vs, in_place ? vs : vr, blocks, MPI_INT, MPI_SUM, comm, &q[2]);
    MPI_Ireduce_scatter_block(in_place ? MPI_IN_PLACE : bs, in_place ? bs : br, (int)cnt, MPI_INT, MPI_SUM, comm,
                              &q[3]);
    MPI_Ireduce(in_place && me == iroot ? MPI_IN_PLACE : is, me == iroot || it % 2 ? ir : NULL, (int)cnt, MPI_INT,
                MPI_SUM, iroot, comm, &q[0]);
    MPI_Ireduce(in_place && me == droot ? MPI_IN_PLACE : ds, me == droot || it % 2 ? dr : NULL, (int)cnt,
                MPI_DOUBLE, MPI_MAX, droot, comm, &q[1]);
    MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    const int *vres = in_place ? vs : vr, *bres = in_place ? bs : br;
    for (size_t j = 0; j < (size_t)blocks[me] && !errs; j++)
        if (vres[j] != isum(n, mine_at + j, it + 1))
            errs += mt_fail(wr, "%s Ireduce_scatter (%d ints here%s): element %zu is %d, not %d", name, blocks[me],
                            in_place ? ", in place" : "", j, vres[j], isum(n, mine_at + j, it + 1));
    if (!in_place && vr[blocks[me]] != SENTINEL)
        errs += mt_fail(wr, "%s Ireduce_scatter: the int past the block was overwritten", name);
    for (size_t j = 0; j < cnt && !errs; j++)
        if (bres[j] != isum(n, (size_t)me * cnt + j, it + 2))
            errs += mt_fail(wr, "%s Ireduce_scatter_block (%zu ints%s): element %zu is %d, not %d", name, cnt,
                            in_place ? ", in place" : "", j, bres[j], isum(n, (size_t)me * cnt + j, it + 2));
    if (!in_place && br[cnt] != SENTINEL)
        errs += mt_fail(wr, "%s Ireduce_scatter_block: the int past the block was overwritten", name);
    free(blocks);
    free(vs);
    free(vr);
    free(bs);
    free(br);
    if (me == iroot) {
        for (size_t j = 0; j < cnt && !errs; j++)
            if (ir[j] != isum(n, j, it))
                errs += mt_fail(wr, "%s Ireduce SUM (root %d, %zu ints%s): element %zu is %d, not %d", name, iroot,
                                cnt, in_place ? ", in place" : "", j, ir[j], isum(n, j, it));
        if (ir[cnt] != SENTINEL)
            errs += mt_fail(wr, "%s Ireduce SUM: the int past the result was overwritten (%d)", name, ir[cnt]);
    }
    if (me == droot) {
        for (size_t j = 0; j < cnt && !errs; j++)
            if (dr[j] != dmax(n, j, it))
                errs += mt_fail(wr, "%s Ireduce MAX (root %d, %zu doubles%s): element %zu is %g, not %g", name,
                                droot, cnt, in_place ? ", in place" : "", j, dr[j], dmax(n, j, it));
        if (dr[cnt] != SENTINEL)
            errs += mt_fail(wr, "%s Ireduce MAX: the double past the result was overwritten", name);
    }
    for (size_t j = 0; j < cnt && !errs; j++) /* inputs are read only */
        if (is[j] != ival(me, j, it) || ds[j] != dval(me, j, it))
            errs += mt_fail(wr, "%s Ireduce changed rank %d's input at %zu", name, me, j);
    if (me != iroot && it % 2)
        for (size_t j = 0; j <= cnt && !errs; j++)
            if (ir[j] != SENTINEL)
                errs += mt_fail(wr, "%s Ireduce wrote into non-root %d's receive buffer", name, me);
    free(is);
    free(ir);
    free(ds);
    free(dr);
    return errs;
}

/* Whether rank 0's receive buffer holds the whole sum (volatile: the
 * progress thread writes it). */
static bool complete(const volatile int *buf, size_t cnt, int n, int it)
{
    for (size_t j = cnt; j-- > 0;)
        if (buf[j] != isum(n, j, it))
            return false;
    return true;
}

enum { K_REDUCE, K_REDSCAT };

/* Part 2's collective: Ireduce to root 0, or Ireduce_scatter_block (rank 0
 * keeps block 0). */
typedef struct {
    int kind, size, it;
    int *sb, *rb;
    size_t cnt;
} p2_t;

static void p2_start(void *arg, MPI_Request *q)
{
    const p2_t *a = arg;
    if (a->kind == K_REDUCE)
        MPI_Ireduce(a->sb, a->rb, (int)a->cnt, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, q);
    else
        MPI_Ireduce_scatter_block(a->sb, a->rb, (int)a->cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD, q);
}

static bool p2_done(void *arg)
{
    const p2_t *a = arg;
    return complete(a->rb, a->cnt, a->size, a->it);
}

static int part2(int rank, int size, int kind, size_t cnt, int it)
{
    const char *what = kind == K_REDUCE ? "Ireduce" : "Ireduce_scatter_block";
    size_t in = kind == K_REDUCE ? cnt : cnt * (size_t)size;
    int *sb = malloc(in * sizeof(int)), *rb = malloc(cnt * sizeof(int));
    for (size_t j = 0; j < in; j++)
        sb[j] = ival(rank, j, it);
    for (size_t j = 0; j < cnt; j++)
        rb[j] = SENTINEL;
    p2_t a = { kind, size, it, sb, rb, cnt };
    char name[64];
    snprintf(name, sizeof name, "%s of %zu ints", what, cnt);
    int errs = mt_nbc_progress(&(mt_nbc_progress_t){ p2_start, p2_done, &a, in * sizeof(int), BAIL_S, name });
    if (rank == 0 && !complete(rb, cnt, size, it))
        errs += mt_fail(rank, "%s: wrong result", name);
    free(sb);
    free(rb);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    const size_t counts[] = { 1, 1000, 40000 };
    int it = 0;
    errs += mt_nbc_data(part1_on, counts, 3, &it);
    for (int kind = K_REDUCE; kind <= K_REDSCAT && !errs; kind++)
        for (int b = 0; b < 3 && !errs; b++, it++)
            errs += part2(rank, size, kind, counts[b], it);
    mt_finish(errs, "coll_nb_reduce OK");
    MPI_Finalize();
    return 0;
}
