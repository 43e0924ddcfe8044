/* intercomm_coll.c - every collective on intercommunicators (MPI-3.1
 * 5.2.2), blocking, nonblocking and persistent, on two shapes: the even
 * against the odd world ranks, and world rank 0 alone against the rest
 * (groups of 1 and n-1).  Rooted ones run from the first and the last rank
 * of each group (MPI_ROOT at the root, MPI_PROC_NULL in the rest of its
 * group, the root's remote rank in the other group).  Each rank checks
 * every element it receives -- data from the other group only -- and that
 * the ranks that receive nothing keep their buffers; a non-commutative
 * user op checks that reductions combine in rank order, and types with gaps
 * go through the broadcasts and allgathers.  Then several
 * nonblocking collectives in flight at once, a large message through the
 * leaders, and the argument errors (MPI_IN_PLACE, a bad root, MPI_Scan). */
#include "mpitest.h"

#include <stdbool.h>

#define CNT 3
#define SENTINEL (-7)

typedef struct {
    MPI_Comm ic;
    int world, lrank, lsize, rsize;
    int *wl, *wr; /* world rank of each local / remote rank */
    bool in_a;    /* our group holds world rank 0 */
} ic_t;

/* Block content sent by world rank w (element i), and the one w sends to
 * world rank to. */
static int val(int w, int i) { return w * 1000 + i; }
static int val2(int w, int to, int i) { return w * 100000 + to * 100 + i; }

/* MPI_Xxx, MPI_Ixxx + wait, or MPI_Xxx_init + two starts (mode 0, 1, 2). */
#define WITH_REQ(...) (__VA_ARGS__, &rq_)
#define WITH_INFO_REQ(...) (__VA_ARGS__, MPI_INFO_NULL, &rq_)
#define COLL(mode, Name, name, args)                                   \
    do {                                                               \
        MPI_Request rq_;                                               \
        if ((mode) == 0) {                                             \
            MPI_##Name args;                                           \
        } else if ((mode) == 1) {                                      \
            MPI_I##name WITH_REQ args;                                 \
            MPI_Wait(&rq_, MPI_STATUS_IGNORE);                         \
        } else {                                                       \
            MPI_##Name##_init WITH_INFO_REQ args;                      \
            for (int k_ = 0; k_ < 2; k_++) {                           \
                MPI_Start(&rq_);                                       \
                MPI_Wait(&rq_, MPI_STATUS_IGNORE);                     \
            }                                                          \
            MPI_Request_free(&rq_);                                    \
        }                                                              \
    } while (0)

static const char *mode_name[] = { "blocking", "nonblocking", "persistent" };

static void fill(int *buf, int n, int v)
{
    for (int i = 0; i < n; i++)
        buf[i] = v;
}

/* The root argument for root `root` of group `a_roots` (true: group A). */
static int root_arg(const ic_t *x, bool a_roots, int root)
{
    if (a_roots != x->in_a)
        return root;
    return x->lrank == root ? MPI_ROOT : MPI_PROC_NULL;
}

/* The roots tried in a group of n: the first and the last. */
static int nroots(int n) { return n > 1 ? 2 : 1; }
static int nth_root(int n, int k) { return k == 0 ? 0 : n - 1; }

static int check_gather(const ic_t *x, int mode, bool vform)
{
    int errs = 0, n = x->rsize;
    int *rb = mt_malloc((size_t)(n * (CNT + 1) + 1) * sizeof *rb), *counts = mt_malloc((size_t)n * sizeof *counts),
        *displs = mt_malloc((size_t)n * sizeof *displs), sb[CNT + 2];
    int mycount = vform ? x->lrank % 3 + 1 : CNT, at = 0;
    for (int i = 0; i < n; i++) { /* v-form: 1..3 elements, a gap of one after each block */
        counts[i] = vform ? i % 3 + 1 : CNT;
        displs[i] = at;
        at += counts[i] + (vform ? 1 : 0);
    }
    for (int i = 0; i < mycount; i++)
        sb[i] = val(x->world, i);
    for (int g = 0; g < 2; g++) {
        bool a_roots = g == 0;
        int gsize = a_roots == x->in_a ? x->lsize : x->rsize;
        for (int k = 0; k < nroots(gsize); k++) {
            int root = root_arg(x, a_roots, nth_root(gsize, k));
            fill(rb, at + 1, SENTINEL);
            if (vform)
                COLL(mode, Gatherv, gatherv, (sb, mycount, MPI_INT, rb, counts, displs, MPI_INT, root, x->ic));
            else
                COLL(mode, Gather, gather, (sb, CNT, MPI_INT, rb, CNT, MPI_INT, root, x->ic));
            for (int i = 0; i < n && root == MPI_ROOT; i++) {
                for (int j = 0; j < counts[i]; j++)
                    if (rb[displs[i] + j] != val(x->wr[i], j))
                        errs += mt_fail(x->world, "%s gather%s: block %d[%d] = %d, want %d", mode_name[mode],
                                        vform ? "v" : "", i, j, rb[displs[i] + j], val(x->wr[i], j));
                if (vform && rb[displs[i] + counts[i]] != SENTINEL)
                    errs += mt_fail(x->world, "gatherv wrote the gap after block %d", i);
            }
            if (root != MPI_ROOT && rb[0] != SENTINEL)
                errs += mt_fail(x->world, "%s gather: a rank that is not the root got data", mode_name[mode]);
        }
    }
    free(rb);
    free(counts);
    free(displs);
    return errs;
}

static int check_scatter(const ic_t *x, int mode, bool vform)
{
    int errs = 0, n = x->rsize;
    int *sb = mt_malloc((size_t)(n * (CNT + 1) + 1) * sizeof *sb), *counts = mt_malloc((size_t)n * sizeof *counts),
        *displs = mt_malloc((size_t)n * sizeof *displs), rb[CNT + 1];
    int mycount = vform ? x->lrank % 3 + 1 : CNT, at = 0;
    for (int i = 0; i < n; i++) {
        counts[i] = vform ? i % 3 + 1 : CNT;
        displs[i] = at;
        for (int j = 0; j < counts[i]; j++)
            sb[at + j] = val2(x->world, x->wr[i], j);
        at += counts[i] + (vform ? 1 : 0);
    }
    for (int g = 0; g < 2; g++) {
        bool a_roots = g == 0;
        int gsize = a_roots == x->in_a ? x->lsize : x->rsize;
        for (int k = 0; k < nroots(gsize); k++) {
            int rroot = nth_root(gsize, k), root = root_arg(x, a_roots, rroot);
            fill(rb, CNT + 1, SENTINEL);
            if (vform)
                COLL(mode, Scatterv, scatterv, (sb, counts, displs, MPI_INT, rb, mycount, MPI_INT, root, x->ic));
            else
                COLL(mode, Scatter, scatter, (sb, CNT, MPI_INT, rb, CNT, MPI_INT, root, x->ic));
            bool receives = root >= 0;
            for (int j = 0; j < CNT + 1; j++) {
                int want = receives && j < mycount ? val2(x->wr[rroot], x->world, j) : SENTINEL;
                if (rb[j] != want)
                    errs += mt_fail(x->world, "%s scatter%s (root %d): element %d = %d, want %d", mode_name[mode],
                                    vform ? "v" : "", root, j, rb[j], want);
            }
        }
    }
    free(sb);
    free(counts);
    free(displs);
    return errs;
}

/* (a, b) . (c, d) = (a c, a d + b): affine maps composed, associative and
 * not commutative; inout = in . inout, in from the lower ranks. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    unsigned *x = in, *y = inout;
    for (int i = 0; i < *len; i++, x += 2, y += 2) {
        unsigned a = x[0], b = x[1], c = y[0], d = y[1];
        y[0] = a * c;
        y[1] = a * d + b;
    }
}

/* The pair world rank w contributes to element i. */
static void pair_of(int w, int i, unsigned *p)
{
    p[0] = 2u * (unsigned)w + 3u + (unsigned)i;
    p[1] = 7u * (unsigned)w + 1u;
}

/* The composition of the pairs of world ranks ws[0..n) in order. */
static void composed(const int *ws, int n, int i, unsigned *p)
{
    pair_of(ws[n - 1], i, p);
    for (int k = n - 2; k >= 0; k--) {
        unsigned q[2];
        pair_of(ws[k], i, q);
        int one = 1;
        compose(q, p, &one, NULL);
    }
}

static int sum_val(const int *ws, int n, int i)
{
    int s = 0;
    for (int k = 0; k < n; k++)
        s += val(ws[k], i);
    return s;
}

static int check_reduce(const ic_t *x, int mode, MPI_Op affine, MPI_Datatype pair)
{
    int errs = 0, sb[CNT], rb[CNT];
    unsigned ps[2 * CNT], pr[2 * CNT], want[2];
    for (int i = 0; i < CNT; i++) {
        sb[i] = val(x->world, i);
        pair_of(x->world, i, &ps[2 * i]);
    }
    for (int g = 0; g < 2; g++) {
        bool a_roots = g == 0;
        int gsize = a_roots == x->in_a ? x->lsize : x->rsize;
        for (int k = 0; k < nroots(gsize); k++) {
            int root = root_arg(x, a_roots, nth_root(gsize, k));
            fill(rb, CNT, SENTINEL);
            for (int i = 0; i < 2 * CNT; i++)
                pr[i] = 0;
            COLL(mode, Reduce, reduce, (sb, rb, CNT, MPI_INT, MPI_SUM, root, x->ic));
            COLL(mode, Reduce, reduce, (ps, pr, CNT, pair, affine, root, x->ic));
            for (int i = 0; i < CNT; i++) {
                int w = root == MPI_ROOT ? sum_val(x->wr, x->rsize, i) : SENTINEL;
                if (rb[i] != w)
                    errs += mt_fail(x->world, "%s reduce (root %d): sum[%d] = %d, want %d", mode_name[mode], root,
                                    i, rb[i], w);
                if (root == MPI_ROOT)
                    composed(x->wr, x->rsize, i, want);
                else
                    want[0] = want[1] = 0;
                if (pr[2 * i] != want[0] || pr[2 * i + 1] != want[1])
                    errs += mt_fail(x->world, "%s reduce (root %d): user op [%d] = (%u, %u), want (%u, %u)",
                                    mode_name[mode], root, i, pr[2 * i], pr[2 * i + 1], want[0], want[1]);
            }
        }
    }
    return errs;
}

static int check_allreduce(const ic_t *x, int mode, MPI_Op affine, MPI_Datatype pair)
{
    int errs = 0, sb[CNT], rb[CNT];
    unsigned ps[2 * CNT], pr[2 * CNT], want[2];
    for (int i = 0; i < CNT; i++) {
        sb[i] = val(x->world, i);
        pair_of(x->world, i, &ps[2 * i]);
    }
    fill(rb, CNT, SENTINEL);
    COLL(mode, Allreduce, allreduce, (sb, rb, CNT, MPI_INT, MPI_SUM, x->ic));
    COLL(mode, Allreduce, allreduce, (ps, pr, CNT, pair, affine, x->ic));
    for (int i = 0; i < CNT; i++) {
        if (rb[i] != sum_val(x->wr, x->rsize, i))
            errs += mt_fail(x->world, "%s allreduce: sum[%d] = %d, want %d", mode_name[mode], i, rb[i],
                            sum_val(x->wr, x->rsize, i));
        composed(x->wr, x->rsize, i, want);
        if (pr[2 * i] != want[0] || pr[2 * i + 1] != want[1])
            errs += mt_fail(x->world, "%s allreduce: user op [%d] = (%u, %u), want (%u, %u)", mode_name[mode], i,
                            pr[2 * i], pr[2 * i + 1], want[0], want[1]);
    }
    return errs;
}

/* Both groups reduce vectors of lsize * rsize elements (the same in both);
 * MPI_Reduce_scatter_block gives each rank rsize of them, the v-form gives
 * rank 0 none and rank 1 twice as many where the group has two ranks. */
static int check_reduce_scatter(const ic_t *x, int mode, bool vform)
{
    int errs = 0, total = x->lsize * x->rsize;
    int *sb = mt_malloc((size_t)total * sizeof *sb), *rb = mt_malloc((size_t)(total + 1) * sizeof *rb);
    int *counts = mt_malloc((size_t)x->lsize * sizeof *counts);
    for (int i = 0; i < total; i++)
        sb[i] = val(x->world, i);
    for (int i = 0; i < x->lsize; i++)
        counts[i] = x->rsize;
    if (vform && x->lsize > 1) {
        counts[0] = 0;
        counts[1] = 2 * x->rsize;
    }
    int first = 0;
    for (int i = 0; i < x->lrank; i++)
        first += counts[i];
    fill(rb, total + 1, SENTINEL);
    if (vform)
        COLL(mode, Reduce_scatter, reduce_scatter, (sb, rb, counts, MPI_INT, MPI_SUM, x->ic));
    else
        COLL(mode, Reduce_scatter_block, reduce_scatter_block, (sb, rb, x->rsize, MPI_INT, MPI_SUM, x->ic));
    int mine = counts[x->lrank];
    for (int j = 0; j <= mine; j++) {
        int want = j < mine ? sum_val(x->wr, x->rsize, first + j) : SENTINEL;
        if (rb[j] != want)
            errs += mt_fail(x->world, "%s reduce_scatter%s: element %d = %d, want %d", mode_name[mode],
                            vform ? "" : "_block", j, rb[j], want);
    }
    free(sb);
    free(rb);
    free(counts);
    return errs;
}

static int check_allgather(const ic_t *x, int mode, bool vform)
{
    int errs = 0, n = x->rsize;
    int *rb = mt_malloc((size_t)(n * (CNT + 1) + 1) * sizeof *rb), *counts = mt_malloc((size_t)n * sizeof *counts),
        *displs = mt_malloc((size_t)n * sizeof *displs), sb[CNT];
    int mycount = vform ? x->lrank % 3 + 1 : CNT, at = 0;
    for (int i = 0; i < n; i++) {
        counts[i] = vform ? i % 3 + 1 : CNT;
        displs[i] = at;
        at += counts[i] + (vform ? 1 : 0);
    }
    for (int i = 0; i < mycount; i++)
        sb[i] = val(x->world, i);
    fill(rb, at + 1, SENTINEL);
    if (vform)
        COLL(mode, Allgatherv, allgatherv, (sb, mycount, MPI_INT, rb, counts, displs, MPI_INT, x->ic));
    else
        COLL(mode, Allgather, allgather, (sb, CNT, MPI_INT, rb, CNT, MPI_INT, x->ic));
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < counts[i]; j++)
            if (rb[displs[i] + j] != val(x->wr[i], j))
                errs += mt_fail(x->world, "%s allgather%s: block %d[%d] = %d, want %d", mode_name[mode],
                                vform ? "v" : "", i, j, rb[displs[i] + j], val(x->wr[i], j));
        if (vform && rb[displs[i] + counts[i]] != SENTINEL)
            errs += mt_fail(x->world, "allgatherv wrote the gap after block %d", i);
    }
    free(rb);
    free(counts);
    free(displs);
    return errs;
}

/* Alltoall(v): the v-form sends (w + w') % 3 elements between world ranks
 * w and w' (zero included), blocks with a gap of one after each. */
static int check_alltoall(const ic_t *x, int mode, bool vform)
{
    int errs = 0, n = x->rsize, len = n * (CNT + 1) + 1;
    int *sb = mt_malloc((size_t)len * sizeof *sb), *rb = mt_malloc((size_t)len * sizeof *rb);
    int *sc = mt_malloc((size_t)n * sizeof *sc), *sd = mt_malloc((size_t)n * sizeof *sd);
    int *rc = mt_malloc((size_t)n * sizeof *rc), *rd = mt_malloc((size_t)n * sizeof *rd);
    int sat = 0, rat = 0;
    for (int i = 0; i < n; i++) {
        sc[i] = rc[i] = vform ? (x->world + x->wr[i]) % 3 : CNT;
        sd[i] = sat;
        rd[i] = rat;
        for (int j = 0; j < sc[i]; j++)
            sb[sat + j] = val2(x->world, x->wr[i], j);
        sat += sc[i] + (vform ? 1 : 0);
        rat += rc[i] + (vform ? 1 : 0);
    }
    fill(rb, len, SENTINEL);
    if (vform)
        COLL(mode, Alltoallv, alltoallv, (sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, x->ic));
    else
        COLL(mode, Alltoall, alltoall, (sb, CNT, MPI_INT, rb, CNT, MPI_INT, x->ic));
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < rc[i]; j++)
            if (rb[rd[i] + j] != val2(x->wr[i], x->world, j))
                errs += mt_fail(x->world, "%s alltoall%s: block %d[%d] = %d, want %d", mode_name[mode],
                                vform ? "v" : "", i, j, rb[rd[i] + j], val2(x->wr[i], x->world, j));
        if (vform && rb[rd[i] + rc[i]] != SENTINEL)
            errs += mt_fail(x->world, "alltoallv wrote the gap after block %d", i);
    }
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    return errs;
}

/* Alltoallw: CNT ints to every remote rank; the blocks from odd remote
 * ranks land strided (a vector type), byte displacements. */
static int check_alltoallw(const ic_t *x, int mode)
{
    int errs = 0, n = x->rsize, slot = 2 * CNT;
    int *sb = mt_malloc((size_t)(n * CNT) * sizeof *sb), *rb = mt_malloc((size_t)(n * slot) * sizeof *rb);
    int *sc = mt_malloc((size_t)n * sizeof *sc), *sd = mt_malloc((size_t)n * sizeof *sd);
    int *rc = mt_malloc((size_t)n * sizeof *rc), *rd = mt_malloc((size_t)n * sizeof *rd);
    MPI_Datatype *st = mt_malloc((size_t)n * sizeof *st), *rt = mt_malloc((size_t)n * sizeof *rt), strided;
    MPI_Type_vector(CNT, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    for (int i = 0; i < n; i++) {
        sc[i] = CNT;
        sd[i] = i * CNT * (int)sizeof(int);
        st[i] = MPI_INT;
        rc[i] = i % 2 ? 1 : CNT;
        rt[i] = i % 2 ? strided : MPI_INT;
        rd[i] = i * slot * (int)sizeof(int);
        for (int j = 0; j < CNT; j++)
            sb[i * CNT + j] = val2(x->world, x->wr[i], j);
    }
    fill(rb, n * slot, SENTINEL);
    COLL(mode, Alltoallw, alltoallw, (sb, sc, sd, st, rb, rc, rd, rt, x->ic));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < slot; j++) {
            bool data = i % 2 ? j % 2 == 0 && j / 2 < CNT : j < CNT;
            int want = !data ? SENTINEL : val2(x->wr[i], x->world, i % 2 ? j / 2 : j);
            if (rb[i * slot + j] != want)
                errs += mt_fail(x->world, "%s alltoallw: block %d[%d] = %d, want %d", mode_name[mode], i, j,
                                rb[i * slot + j], want);
        }
    MPI_Type_free(&strided);
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(st);
    free(rt);
    return errs;
}

static int check_bcast(const ic_t *x, int mode)
{
    int errs = 0, buf[CNT];
    for (int g = 0; g < 2; g++) {
        bool a_roots = g == 0;
        int gsize = a_roots == x->in_a ? x->lsize : x->rsize;
        for (int k = 0; k < nroots(gsize); k++) {
            int rroot = nth_root(gsize, k), root = root_arg(x, a_roots, rroot);
            for (int i = 0; i < CNT; i++)
                buf[i] = root == MPI_ROOT ? val(x->world, i) : SENTINEL;
            COLL(mode, Bcast, bcast, (buf, CNT, MPI_INT, root, x->ic));
            for (int i = 0; i < CNT; i++) {
                int want = root == MPI_ROOT ? val(x->world, i) : root >= 0 ? val(x->wr[rroot], i) : SENTINEL;
                if (buf[i] != want)
                    errs += mt_fail(x->world, "%s bcast (root %d): [%d] = %d, want %d", mode_name[mode], root, i,
                                    buf[i], want);
            }
        }
    }
    COLL(mode, Barrier, barrier, (x->ic));
    return errs;
}

/* Types with gaps (every other int): a broadcast from the first rank of
 * group A, and allgather(v) into such blocks (uniform, then v-form blocks
 * one extent apart). */
static int check_gaps(const ic_t *x, int mode)
{
    int errs = 0, ext = 2 * CNT - 1, n = x->rsize, len = 2 * n * ext + 1, sb[CNT], buf[2 * CNT];
    int *rb = mt_malloc((size_t)len * sizeof *rb), *counts = mt_malloc((size_t)n * sizeof *counts),
        *displs = mt_malloc((size_t)n * sizeof *displs);
    MPI_Datatype st;
    MPI_Type_vector(CNT, 1, 2, MPI_INT, &st);
    MPI_Type_commit(&st);
    int root = root_arg(x, true, 0);
    fill(buf, 2 * CNT, SENTINEL);
    for (int j = 0; j < CNT; j++) {
        sb[j] = val(x->world, j);
        if (root == MPI_ROOT)
            buf[2 * j] = val(x->world, j);
    }
    COLL(mode, Bcast, bcast, (buf, 1, st, root, x->ic));
    for (int k = 0; k < 2 * CNT; k++) {
        int from = root == MPI_ROOT ? x->world : root >= 0 ? x->wr[0] : -1;
        int want = k % 2 == 0 && from >= 0 ? val(from, k / 2) : SENTINEL;
        if (buf[k] != want)
            errs += mt_fail(x->world, "%s strided bcast (root %d): [%d] = %d, want %d", mode_name[mode], root, k,
                            buf[k], want);
    }
    for (int v = 0; v < 2; v++) {
        for (int i = 0; i < n; i++) {
            counts[i] = 1;
            displs[i] = 2 * i;
        }
        fill(rb, len, SENTINEL);
        if (v)
            COLL(mode, Allgatherv, allgatherv, (sb, CNT, MPI_INT, rb, counts, displs, st, x->ic));
        else
            COLL(mode, Allgather, allgather, (sb, CNT, MPI_INT, rb, 1, st, x->ic));
        int step = v ? 2 * ext : ext;
        for (int k = 0; k < len; k++) {
            int i = k / step, off = k % step;
            int want = i < n && off < ext && off % 2 == 0 ? val(x->wr[i], off / 2) : SENTINEL;
            if (rb[k] != want)
                errs += mt_fail(x->world, "%s strided allgather%s: [%d] = %d, want %d", mode_name[mode],
                                v ? "v" : "", k, rb[k], want);
        }
    }
    MPI_Type_free(&st);
    free(rb);
    free(counts);
    free(displs);
    return errs;
}

/* Several nonblocking collectives in flight at once, completed in reverse
 * order: each keeps its own messages. */
static int check_overlap(const ic_t *x)
{
    int errs = 0, a[CNT], b[CNT], s[CNT], *g = mt_malloc((size_t)(x->rsize * CNT) * sizeof *g);
    MPI_Request rq[4];
    for (int i = 0; i < CNT; i++) {
        s[i] = val(x->world, i);
        a[i] = x->in_a && x->lrank == 0 ? val(x->world, i) : SENTINEL;
    }
    int root = x->in_a ? (x->lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Ibcast(a, CNT, MPI_INT, root, x->ic, &rq[0]);
    MPI_Iallreduce(s, b, CNT, MPI_INT, MPI_SUM, x->ic, &rq[1]);
    MPI_Iallgather(s, CNT, MPI_INT, g, CNT, MPI_INT, x->ic, &rq[2]);
    MPI_Ibarrier(x->ic, &rq[3]);
    for (int k = 3; k >= 0; k--)
        MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
    for (int i = 0; i < CNT; i++) {
        int wa = x->in_a && x->lrank != 0 ? SENTINEL : x->in_a ? val(x->world, i) : val(x->wr[0], i);
        if (a[i] != wa || b[i] != sum_val(x->wr, x->rsize, i))
            errs += mt_fail(x->world, "overlapped: bcast[%d] = %d (want %d), allreduce %d (want %d)", i, a[i], wa,
                            b[i], sum_val(x->wr, x->rsize, i));
        for (int k = 0; k < x->rsize; k++)
            if (g[k * CNT + i] != val(x->wr[k], i))
                errs += mt_fail(x->world, "overlapped allgather: block %d[%d] = %d", k, i, g[k * CNT + i]);
    }
    free(g);
    return errs;
}

/* An allreduce and a broadcast of 1 MiB: rendezvous through the leaders. */
static int check_large(const ic_t *x)
{
    int errs = 0, n = 1 << 18;
    int *s = mt_malloc((size_t)n * sizeof *s), *r = mt_malloc((size_t)n * sizeof *r);
    for (int i = 0; i < n; i++)
        s[i] = x->world + i;
    MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, x->ic);
    int wsum = 0;
    for (int k = 0; k < x->rsize; k++)
        wsum += x->wr[k];
    for (int i = 0; i < n; i++)
        if (r[i] != wsum + x->rsize * i) {
            errs += mt_fail(x->world, "large allreduce: [%d] = %d, want %d", i, r[i], wsum + x->rsize * i);
            break;
        }
    int root = x->in_a ? (x->lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Bcast(s, n, MPI_INT, root, x->ic);
    for (int i = 0; i < n && !x->in_a; i++)
        if (s[i] != i) { /* world rank 0's data */
            errs += mt_fail(x->world, "large bcast: [%d] = %d, want %d", i, s[i], i);
            break;
        }
    free(s);
    free(r);
    return errs;
}

static int check_errors(const ic_t *x)
{
    int errs = 0, cls, s[CNT] = { 0 }, r[CNT * 64];
    MPI_Comm_set_errhandler(x->ic, MPI_ERRORS_RETURN);
    MPI_Error_class(MPI_Allreduce(MPI_IN_PLACE, r, CNT, MPI_INT, MPI_SUM, x->ic), &cls);
    errs += cls != MPI_ERR_BUFFER ? mt_fail(x->world, "Allreduce(MPI_IN_PLACE): class %d", cls) : 0;
    MPI_Error_class(MPI_Allgather(MPI_IN_PLACE, CNT, MPI_INT, r, CNT, MPI_INT, x->ic), &cls);
    errs += cls != MPI_ERR_BUFFER ? mt_fail(x->world, "Allgather(MPI_IN_PLACE): class %d", cls) : 0;
    MPI_Error_class(MPI_Bcast(s, CNT, MPI_INT, x->rsize, x->ic), &cls);
    errs += cls != MPI_ERR_ROOT ? mt_fail(x->world, "Bcast(root = remote size): class %d", cls) : 0;
    MPI_Error_class(MPI_Reduce(s, r, CNT, MPI_INT, MPI_SUM, -5, x->ic), &cls);
    errs += cls != MPI_ERR_ROOT ? mt_fail(x->world, "Reduce(root -5): class %d", cls) : 0;
    MPI_Error_class(MPI_Scan(s, r, CNT, MPI_INT, MPI_SUM, x->ic), &cls);
    errs += cls != MPI_ERR_COMM ? mt_fail(x->world, "Scan: class %d", cls) : 0;
    MPI_Error_class(MPI_Exscan(s, r, CNT, MPI_INT, MPI_SUM, x->ic), &cls);
    errs += cls != MPI_ERR_COMM ? mt_fail(x->world, "Exscan: class %d", cls) : 0;
    /* reductions over the leaders move contiguous types only */
    MPI_Datatype strided;
    MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    MPI_Error_class(MPI_Allreduce(s, r, 1, strided, MPI_SUM, x->ic), &cls);
    errs += cls != MPI_ERR_UNSUPPORTED_OPERATION ? mt_fail(x->world, "Allreduce(vector type): class %d", cls) : 0;
    MPI_Type_free(&strided);
    MPI_Comm_set_errhandler(x->ic, MPI_ERRORS_ARE_FATAL);
    return errs;
}

/* Group A: world ranks with in_a; the leaders are world 0 and the first
 * rank of B. */
static int run_shape(const char *shape, bool in_a, int b_leader, MPI_Op affine, MPI_Datatype pair)
{
    ic_t x = { .world = mt_rank() };
    x.in_a = in_a;
    MPI_Comm local;
    MPI_Comm_split(MPI_COMM_WORLD, in_a ? 0 : 1, x.world, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? b_leader : 0, 31, &x.ic);
    MPI_Comm_rank(x.ic, &x.lrank);
    MPI_Comm_size(x.ic, &x.lsize);
    MPI_Comm_remote_size(x.ic, &x.rsize);
    x.wl = mt_malloc((size_t)x.lsize * sizeof *x.wl);
    x.wr = mt_malloc((size_t)x.rsize * sizeof *x.wr);
    MPI_Allgather(&x.world, 1, MPI_INT, x.wl, 1, MPI_INT, local);
    /* the remote group's world ranks, from its group (no collective needed) */
    MPI_Group rg, wg;
    MPI_Comm_remote_group(x.ic, &rg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < x.rsize; i++)
        MPI_Group_translate_ranks(rg, 1, &i, wg, &x.wr[i]);
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);

    int errs = 0;
    for (int mode = 0; mode < 3; mode++) {
        errs += check_bcast(&x, mode);
        for (int v = 0; v < 2; v++) {
            errs += check_gather(&x, mode, v);
            errs += check_scatter(&x, mode, v);
            errs += check_allgather(&x, mode, v);
            errs += check_alltoall(&x, mode, v);
            errs += check_reduce_scatter(&x, mode, v);
        }
        errs += check_reduce(&x, mode, affine, pair);
        errs += check_allreduce(&x, mode, affine, pair);
        errs += check_alltoallw(&x, mode);
        errs += check_gaps(&x, mode);
    }
    errs += check_overlap(&x);
    errs += check_large(&x);
    errs += check_errors(&x);
    if (errs)
        mt_note("rank %d: %d failures on shape %s", x.world, errs, shape);
    MPI_Comm_free(&x.ic);
    MPI_Comm_free(&local);
    free(x.wl);
    free(x.wr);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    if (size < 2) {
        mt_skipped("an intercommunicator needs two ranks");
    } else {
        MPI_Op affine;
        MPI_Datatype pair;
        MPI_Op_create(compose, 0, &affine);
        MPI_Type_contiguous(2, MPI_UNSIGNED, &pair);
        MPI_Type_commit(&pair);
        errs += run_shape("even/odd", rank % 2 == 0, 1, affine, pair);
        errs += run_shape("0/rest", rank == 0, 1, affine, pair);
        MPI_Op_free(&affine);
        MPI_Type_free(&pair);
    }
    mt_finish(errs, "intercomm_coll: OK");
    MPI_Finalize();
    return 0;
}
