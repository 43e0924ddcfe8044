/* coll_basic.c - every collective with MPI_INT and MPI_DOUBLE, 1, 7, 1000
 * and 100000 elements, roots 0 and last, with and without MPI_IN_PLACE.
 * Inputs are small integers made from (rank, index, case key, salt): every
 * rank can compute everybody's input, sums are exact in both types, and
 * results are checked against values computed locally.  Receive buffers
 * start as a sentinel, which the gaps of the v-variants must keep.  Vector
 * collectives use blocks of min(count, 400000 / size) elements (memory).
 * A wildcard user receive posted first must match no collective message.
 * (Argument errors: coll_args.c.) */
#include "mpitest.h"

#define SENTINEL (-7777)
#define VEC_CAP 400000
typedef struct {
    int rank, size, root, in_place, count, blk;
    MPI_Datatype type;
    size_t esize;
    const char *tname;
    uint32_t key;
} tc_t;

static long val(const tc_t *t, int r, size_t i, int salt)
{
    uint32_t h = (uint32_t)i * 2654435761u ^ ((uint32_t)r * 40503u + t->key * 2246822519u +
                                              (uint32_t)salt * 3266489917u);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (long)(h % 2001u) - 1000;
}

static void put(const tc_t *t, void *buf, size_t i, long v)
{
    if (t->type == MPI_INT)
        ((int *)buf)[i] = (int)v;
    else
        ((double *)buf)[i] = (double)v;
}

static double get(const tc_t *t, const void *buf, size_t i)
{
    return t->type == MPI_INT ? ((const int *)buf)[i] : ((const double *)buf)[i];
}

static void *alloc_fill(const tc_t *t, size_t n)
{
    void *p = mt_malloc(n * t->esize);
    for (size_t i = 0; i < n; i++)
        put(t, p, i, SENTINEL);
    return p;
}

/* 1 and a message if buf[i] != want. */
static int differs(const tc_t *t, const char *what, const void *buf, size_t i, long want)
{
    if (get(t, buf, i) == (double)want)
        return 0;
    return mt_fail(t->rank, "%s %s count %d root %d%s: element %zu is %.1f, expected %ld", what, t->tname,
                   t->count, t->root, t->in_place ? " in place" : "", i, get(t, buf, i), want);
}

/* Count of rank r's block in the v-variants (some are 0), and of r -> s
 * (in place needs r -> s == s -> r). */
static int clamp0(int k) { return k > 0 ? k : 0; }
static int vcnt(const tc_t *t, int r) { return clamp0(t->blk + r % 3 - 1); }
static int vcnt2(const tc_t *t, int r, int s) { return clamp0(t->blk + (t->in_place ? r + s : r + 2 * s) % 3 - 1); }

/* Sum over ranks [lo, hi) of input element i. */
static long sum(const tc_t *t, int lo, int hi, size_t i, int salt)
{
    long s = 0;
    for (int r = lo; r < hi; r++)
        s += val(t, r, i, salt);
    return s;
}

static int t_bcast(const tc_t *t)
{
    int errs = 0;
    void *b = alloc_fill(t, (size_t)t->count);
    if (t->rank == t->root)
        for (int i = 0; i < t->count; i++)
            put(t, b, (size_t)i, val(t, t->root, (size_t)i, 1));
    MPI_Bcast(b, t->count, t->type, t->root, MPI_COMM_WORLD);
    for (int i = 0; i < t->count && !errs; i++)
        errs += differs(t, "Bcast", b, (size_t)i, val(t, t->root, (size_t)i, 1));
    free(b);
    return errs;
}

/* Reduce (root >= 0) or Allreduce (root < 0) with MPI_SUM. */
static int t_reduce(const tc_t *t, int root)
{
    int errs = 0, n = t->count, me_root = root < 0 || t->rank == root;
    void *s = alloc_fill(t, (size_t)n), *r = alloc_fill(t, (size_t)n);
    for (int i = 0; i < n; i++)
        put(t, t->in_place && me_root ? r : s, (size_t)i, val(t, t->rank, (size_t)i, 2));
    const void *sb = t->in_place && me_root ? MPI_IN_PLACE : s;
    if (root >= 0)
        MPI_Reduce(sb, r, n, t->type, MPI_SUM, root, MPI_COMM_WORLD);
    else
        MPI_Allreduce(sb, r, n, t->type, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n && me_root && !errs; i++)
        errs += differs(t, root >= 0 ? "Reduce" : "Allreduce", r, (size_t)i, sum(t, 0, t->size, (size_t)i, 2));
    free(s);
    free(r);
    return errs;
}

/* Gather/Gatherv (root >= 0) or Allgather/Allgatherv (root < 0). */
static int t_gather(const tc_t *t, int root, int v)
{
    int errs = 0, n = t->size, me = t->rank, mine = v ? vcnt(t, me) : t->blk, all = root < 0 || me == root;
    int *counts = mt_malloc(sizeof(int) * (size_t)n), *displs = mt_malloc(sizeof(int) * (size_t)n), total = 0;
    for (int q = 0; q < n; q++) {
        counts[q] = v ? vcnt(t, q) : t->blk;
        displs[q] = total;
        total += counts[q] + v; /* the v-variants leave a one-element gap */
    }
    void *s = alloc_fill(t, (size_t)mine), *r = alloc_fill(t, (size_t)total);
    for (int i = 0; i < mine; i++)
        put(t, t->in_place && all ? r : s, (size_t)(t->in_place && all ? displs[me] + i : i),
            val(t, me, (size_t)i, 3));
    const void *sb = t->in_place && all ? MPI_IN_PLACE : s;
    const char *what = root >= 0 ? (v ? "Gatherv" : "Gather") : (v ? "Allgatherv" : "Allgather");
    if (root >= 0 && v)
        MPI_Gatherv(sb, mine, t->type, r, counts, displs, t->type, root, MPI_COMM_WORLD);
    else if (root >= 0)
        MPI_Gather(sb, mine, t->type, r, t->blk, t->type, root, MPI_COMM_WORLD);
    else if (v)
        MPI_Allgatherv(sb, mine, t->type, r, counts, displs, t->type, MPI_COMM_WORLD);
    else
        MPI_Allgather(sb, mine, t->type, r, t->blk, t->type, MPI_COMM_WORLD);
    for (int q = 0; q < n && all && !errs; q++) {
        for (int i = 0; i < counts[q] && !errs; i++)
            errs += differs(t, what, r, (size_t)(displs[q] + i), val(t, q, (size_t)i, 3));
        if (v && !errs)
            errs += differs(t, what, r, (size_t)(displs[q] + counts[q]), SENTINEL);
    }
    free(s), free(r), free(counts), free(displs);
    return errs;
}

static int t_scatter(const tc_t *t, int v)
{
    int errs = 0, n = t->size, me = t->rank, root = t->root, mine = v ? vcnt(t, me) : t->blk;
    int *counts = mt_malloc(sizeof(int) * (size_t)n), *displs = mt_malloc(sizeof(int) * (size_t)n), total = 0;
    for (int q = 0; q < n; q++) {
        counts[q] = v ? vcnt(t, q) : t->blk;
        displs[q] = total;
        total += counts[q] + v;
    }
    void *s = alloc_fill(t, (size_t)total), *r = alloc_fill(t, (size_t)mine + 1);
    if (me == root)
        for (int q = 0; q < n; q++)
            for (int i = 0; i < counts[q]; i++)
                put(t, s, (size_t)(displs[q] + i), val(t, q, (size_t)i, 4));
    void *rb = t->in_place && me == root ? MPI_IN_PLACE : r;
    if (v)
        MPI_Scatterv(s, counts, displs, t->type, rb, mine, t->type, root, MPI_COMM_WORLD);
    else
        MPI_Scatter(s, t->blk, t->type, rb, mine, t->type, root, MPI_COMM_WORLD);
    const void *got = rb == MPI_IN_PLACE ? (char *)s + (size_t)displs[me] * t->esize : r;
    for (int i = 0; i < mine && !errs; i++)
        errs += differs(t, v ? "Scatterv" : "Scatter", got, (size_t)i, val(t, me, (size_t)i, 4));
    if (!errs)
        errs += differs(t, v ? "Scatterv" : "Scatter", r, (size_t)(rb == MPI_IN_PLACE ? 0 : mine), SENTINEL);
    free(s), free(r), free(counts), free(displs);
    return errs;
}

static int t_alltoall(const tc_t *t, int v)
{
    int errs = 0, n = t->size, me = t->rank;
    int *sc = mt_malloc(sizeof(int) * 4 * (size_t)n), *sd = sc + n, *rc = sd + n, *rd = rc + n, stot = 0, rtot = 0;
    for (int q = 0; q < n; q++) {
        sc[q] = v ? vcnt2(t, me, q) : t->blk;
        rc[q] = v ? vcnt2(t, q, me) : t->blk;
        sd[q] = stot;
        rd[q] = rtot;
        stot += sc[q] + v;
        rtot += rc[q] + v;
    }
    void *s = alloc_fill(t, (size_t)stot), *r = alloc_fill(t, (size_t)rtot);
    void *in = t->in_place ? r : s;
    const int *ind = t->in_place ? rd : sd;
    for (int q = 0; q < n; q++)
        for (int i = 0; i < sc[q]; i++)
            put(t, in, (size_t)(ind[q] + i), val(t, me, (size_t)i, 100 + q));
    const void *sb = t->in_place ? MPI_IN_PLACE : s;
    if (v)
        MPI_Alltoallv(sb, sc, sd, t->type, r, rc, rd, t->type, MPI_COMM_WORLD);
    else
        MPI_Alltoall(sb, t->blk, t->type, r, t->blk, t->type, MPI_COMM_WORLD);
    for (int q = 0; q < n && !errs; q++) {
        for (int i = 0; i < rc[q] && !errs; i++)
            errs += differs(t, v ? "Alltoallv" : "Alltoall", r, (size_t)(rd[q] + i), val(t, q, (size_t)i, 100 + me));
        if (v && !errs)
            errs += differs(t, "Alltoallv", r, (size_t)(rd[q] + rc[q]), SENTINEL);
    }
    free(s), free(r), free(sc);
    return errs;
}

/* Reduce_scatter_block (v == 0) or Reduce_scatter with uneven counts. */
static int t_redscat(const tc_t *t, int v)
{
    int errs = 0, n = t->size, me = t->rank, total = 0, at = 0;
    int *counts = mt_malloc(sizeof(int) * (size_t)n);
    for (int q = 0; q < n; q++) {
        counts[q] = v ? vcnt(t, q) : t->blk;
        at = q < me ? at + counts[q] : at;
        total += counts[q];
    }
    void *s = alloc_fill(t, (size_t)total), *r = alloc_fill(t, (size_t)total + 1);
    for (int i = 0; i < total; i++)
        put(t, t->in_place ? r : s, (size_t)i, val(t, me, (size_t)i, 6));
    const void *sb = t->in_place ? MPI_IN_PLACE : s;
    if (v)
        MPI_Reduce_scatter(sb, r, counts, t->type, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Reduce_scatter_block(sb, r, t->blk, t->type, MPI_SUM, MPI_COMM_WORLD);
    const char *what = v ? "Reduce_scatter" : "Reduce_scatter_block";
    for (int i = 0; i < counts[me] && !errs; i++)
        errs += differs(t, what, r, (size_t)i, sum(t, 0, n, (size_t)(at + i), 6));
    if (!t->in_place && !errs)
        errs += differs(t, what, r, (size_t)counts[me], SENTINEL);
    free(s), free(r), free(counts);
    return errs;
}

static int t_scan(const tc_t *t, int exclusive)
{
    int errs = 0, n = t->count, me = t->rank;
    void *s = alloc_fill(t, (size_t)n), *r = alloc_fill(t, (size_t)n);
    for (int i = 0; i < n; i++)
        put(t, t->in_place ? r : s, (size_t)i, val(t, me, (size_t)i, 7));
    const void *sb = t->in_place ? MPI_IN_PLACE : s;
    if (exclusive)
        MPI_Exscan(sb, r, n, t->type, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Scan(sb, r, n, t->type, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n && !errs && (me > 0 || !exclusive); i++)
        errs += differs(t, exclusive ? "Exscan" : "Scan", r, (size_t)i,
                        sum(t, 0, exclusive ? me : me + 1, (size_t)i, 7));
    free(s), free(r);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0, cases = 0;
    static const int counts[] = {1, 7, 1000, 100000};
    uint32_t key = 1;
    /* A wildcard receive on the communicator must not see collective traffic. */
    int wild = -1, flag = 0;
    MPI_Request wreq;
    MPI_Irecv(&wild, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &wreq);
    for (int ty = 0; ty < 2; ty++)
        for (int ci = 0; ci < 4; ci++)
            for (int ip = 0; ip < 2; ip++) {
                tc_t t = {.rank = rank, .size = size, .in_place = ip, .count = counts[ci],
                          .type = ty ? MPI_DOUBLE : MPI_INT, .esize = ty ? sizeof(double) : sizeof(int),
                          .tname = ty ? "double" : "int"};
                t.blk = (long)t.count * size <= VEC_CAP ? t.count : VEC_CAP / size;
                for (int ri = 0; ri < (size > 1 ? 2 : 1); ri++) {
                    t.root = ri ? size - 1 : 0;
                    t.key = key++;
                    if (!ip)
                        errs += t_bcast(&t);
                    errs += t_reduce(&t, t.root) + t_gather(&t, t.root, 0) + t_gather(&t, t.root, 1);
                    errs += t_scatter(&t, 0) + t_scatter(&t, 1);
                    cases += 6 - ip;
                }
                t.root = -1, t.key = key++;
                errs += t_reduce(&t, -1) + t_gather(&t, -1, 0) + t_gather(&t, -1, 1);
                errs += t_alltoall(&t, 0) + t_alltoall(&t, 1) + t_redscat(&t, 0) + t_redscat(&t, 1);
                errs += t_scan(&t, 0) + t_scan(&t, 1);
                cases += 9;
            }
    MPI_Test(&wreq, &flag, MPI_STATUS_IGNORE);
    if (flag)
        errs += mt_fail(rank, "a wildcard user receive matched collective traffic (got %d)", wild);
    MPI_Barrier(MPI_COMM_WORLD); /* everybody has looked before the first token goes out */
    int left = (rank + size - 1) % size, token = 1000 + rank;
    MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD);
    MPI_Status wst;
    MPI_Wait(&wreq, &wst);
    MPI_Barrier(MPI_COMM_WORLD); /* no later user message can race the token */
    if (!flag && (wild != 1000 + left || wst.MPI_SOURCE != left || wst.MPI_TAG != 5))
        errs += mt_fail(rank, "wildcard receive got %d from %d tag %d, expected %d from %d tag 5", wild,
                        wst.MPI_SOURCE, wst.MPI_TAG, 1000 + left, left);
    char ok[96];
    snprintf(ok, sizeof ok, "coll_basic: %d ranks, %d cases OK", size, cases);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
