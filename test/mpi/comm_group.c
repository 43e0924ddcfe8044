/* comm_group.c - every group operation against member lists computed here.
 *
 * A group is checked by translating each of its ranks to the world group
 * (the world group's own translation is checked against the identity and
 * against Group_rank first).  Expected lists come from a plain O(n^2)
 * reference of each operation on arrays of world ranks.  Covered: incl,
 * excl, range_incl/range_excl (positive and negative strides), union,
 * intersection, difference (also with empty results, which must compare
 * IDENT to MPI_GROUP_EMPTY), compare (IDENT/SIMILAR/UNEQUAL), Group_rank
 * of non-members, translate_ranks with MPI_PROC_NULL and non-members,
 * Comm_group of a split communicator, Group_free. */
#include "mpitest.h"

typedef struct {
    int n;
    int *w; /* world ranks */
} list_t;

static list_t list_new(int cap)
{
    list_t l = { 0, mt_malloc((size_t)(cap > 0 ? cap : 1) * sizeof(int)) };
    return l;
}

static int list_has(const list_t *l, int x)
{
    for (int i = 0; i < l->n; i++)
        if (l->w[i] == x)
            return 1;
    return 0;
}

/* Checks g's size, members (in order) and the caller's rank in it. */
static int check_group(int me, const char *what, MPI_Group g, const list_t *want)
{
    int errs = 0, size = -1, rank = -2;
    MPI_Group_size(g, &size);
    MPI_Group_rank(g, &rank);
    if (size != want->n)
        return mt_fail(me, "%s: size %d, expected %d", what, size, want->n);
    int pos = MPI_UNDEFINED;
    for (int i = 0; i < want->n; i++)
        if (want->w[i] == me)
            pos = i;
    if (rank != pos)
        errs += mt_fail(me, "%s: Group_rank %d, expected %d", what, rank, pos);
    MPI_Group wg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *idx = mt_malloc((size_t)(size + 1) * sizeof *idx), *got = mt_malloc((size_t)(size + 1) * sizeof *got);
    for (int i = 0; i < size; i++) {
        idx[i] = i;
        got[i] = -7;
    }
    MPI_Group_translate_ranks(g, size, idx, wg, got);
    for (int i = 0; i < size; i++)
        if (got[i] != want->w[i])
            errs += mt_fail(me, "%s: member %d is world rank %d, expected %d", what, i, got[i], want->w[i]);
    free(idx);
    free(got);
    MPI_Group_free(&wg);
    return errs;
}

static int expect_cmp(int me, const char *what, MPI_Group a, MPI_Group b, int want)
{
    int got = -1;
    MPI_Group_compare(a, b, &got);
    return got == want ? 0 : mt_fail(me, "compare %s: %d, expected %d", what, got, want);
}

/* MPI_Group_compare's answer for two lists. */
static int ref_cmp(const list_t *a, const list_t *b)
{
    if (a->n != b->n)
        return MPI_UNEQUAL;
    int same_order = 1, same_set = 1;
    for (int i = 0; i < a->n; i++) {
        same_order &= a->w[i] == b->w[i];
        same_set &= list_has(b, a->w[i]);
    }
    return same_order ? MPI_IDENT : same_set ? MPI_SIMILAR : MPI_UNEQUAL;
}

/* References of the set operations on world-rank lists. */
static list_t ref_union(const list_t *a, const list_t *b)
{
    list_t o = list_new(a->n + b->n);
    for (int i = 0; i < a->n; i++)
        o.w[o.n++] = a->w[i];
    for (int i = 0; i < b->n; i++)
        if (!list_has(a, b->w[i]))
            o.w[o.n++] = b->w[i];
    return o;
}

static list_t ref_filter(const list_t *a, const list_t *b, int keep_if_in_b)
{
    list_t o = list_new(a->n);
    for (int i = 0; i < a->n; i++)
        if (list_has(b, a->w[i]) == keep_if_in_b)
            o.w[o.n++] = a->w[i];
    return o;
}

/* World ranks of incl/excl by position lists on a base list. */
static list_t ref_incl(const list_t *base, const int *pos, int n)
{
    list_t o = list_new(n);
    for (int i = 0; i < n; i++)
        o.w[o.n++] = base->w[pos[i]];
    return o;
}

static list_t ref_excl(const list_t *base, const int *pos, int n)
{
    list_t o = list_new(base->n);
    for (int i = 0; i < base->n; i++) {
        int out = 0;
        for (int j = 0; j < n; j++)
            out |= pos[j] == i;
        if (!out)
            o.w[o.n++] = base->w[i];
    }
    return o;
}

/* Positions named by range triplets. */
static int ref_ranges(int ranges[][3], int n, int *pos)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int x = ranges[i][0]; ranges[i][2] > 0 ? x <= ranges[i][1] : x >= ranges[i][1]; x += ranges[i][2])
            pos[k++] = x;
    return k;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = mt_rank(), size = mt_size(), errs = 0;
    MPI_Group wg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    list_t world = list_new(size);
    for (int i = 0; i < size; i++)
        world.w[world.n++] = i;
    errs += check_group(me, "world group", wg, &world);

    /* a: every third rank from the top down; b: the lower half reversed,
     * then rank 0 again is not allowed, so b is the ranks below size/2 + 1 */
    int *pos = mt_malloc((size_t)size * sizeof *pos), npos = 0;
    for (int i = size - 1; i >= 0; i -= 3)
        pos[npos++] = i;
    list_t la = ref_incl(&world, pos, npos);
    MPI_Group a, b;
    MPI_Group_incl(wg, npos, pos, &a);
    errs += check_group(me, "incl", a, &la);
    int nb = 0;
    for (int i = size / 2; i >= 0; i--)
        pos[nb++] = i;
    list_t lb = ref_incl(&world, pos, nb);
    MPI_Group_incl(wg, nb, pos, &b);
    errs += check_group(me, "incl 2", b, &lb);

    /* excl of every rank whose index is 1 mod 3 */
    int ne = 0;
    for (int i = 1; i < size; i += 3)
        pos[ne++] = i;
    list_t lx = ref_excl(&world, pos, ne);
    MPI_Group x;
    MPI_Group_excl(wg, ne, pos, &x);
    errs += check_group(me, "excl", x, &lx);

    /* ranges on the group a (positions inside a), both stride signs */
    if (la.n >= 2) {
        int ranges[2][3] = { { la.n - 1, la.n / 2, -1 }, { 0, la.n / 2 - 1, 2 } };
        int *rp = mt_malloc((size_t)(2 * la.n) * sizeof *rp);
        int nr = ref_ranges(ranges, 2, rp);
        list_t lri = ref_incl(&la, rp, nr), lre = ref_excl(&la, rp, nr);
        MPI_Group ri, re;
        MPI_Group_range_incl(a, 2, ranges, &ri);
        MPI_Group_range_excl(a, 2, ranges, &re);
        errs += check_group(me, "range_incl", ri, &lri);
        errs += check_group(me, "range_excl", re, &lre);
        MPI_Group_free(&ri);
        MPI_Group_free(&re);
        free(lri.w);
        free(lre.w);
        free(rp);
    }

    /* set operations, both argument orders */
    MPI_Group sets[6];
    list_t lsets[6] = { ref_union(&la, &lb), ref_union(&lb, &la), ref_filter(&la, &lb, 1),
                        ref_filter(&lb, &la, 1), ref_filter(&la, &lb, 0), ref_filter(&lb, &la, 0) };
    MPI_Group_union(a, b, &sets[0]);
    MPI_Group_union(b, a, &sets[1]);
    MPI_Group_intersection(a, b, &sets[2]);
    MPI_Group_intersection(b, a, &sets[3]);
    MPI_Group_difference(a, b, &sets[4]);
    MPI_Group_difference(b, a, &sets[5]);
    const char *names[6] = { "union a b", "union b a", "intersection a b", "intersection b a",
                             "difference a b", "difference b a" };
    for (int i = 0; i < 6; i++) {
        errs += check_group(me, names[i], sets[i], &lsets[i]);
        if (lsets[i].n == 0)
            errs += expect_cmp(me, names[i], sets[i], MPI_GROUP_EMPTY, MPI_IDENT);
    }
    /* unions with the same members in another order are similar */
    errs += expect_cmp(me, "union/union", sets[0], sets[1], ref_cmp(&lsets[0], &lsets[1]));
    errs += expect_cmp(me, "a/b", a, b, ref_cmp(&la, &lb));

    /* empty results */
    MPI_Group e1, e2, e3;
    MPI_Group_difference(a, a, &e1);
    MPI_Group_incl(wg, 0, pos, &e2);
    MPI_Group_intersection(MPI_GROUP_EMPTY, b, &e3);
    int esize = -1, erank = -1;
    MPI_Group_size(e1, &esize);
    MPI_Group_rank(e1, &erank);
    if (esize != 0 || erank != MPI_UNDEFINED)
        errs += mt_fail(me, "a - a: size %d rank %d", esize, erank);
    errs += expect_cmp(me, "a - a", e1, MPI_GROUP_EMPTY, MPI_IDENT);
    errs += expect_cmp(me, "incl of none", e2, MPI_GROUP_EMPTY, MPI_IDENT);
    errs += expect_cmp(me, "empty & b", e3, MPI_GROUP_EMPTY, MPI_IDENT);

    /* compare */
    MPI_Group wg2, rev;
    MPI_Comm_group(MPI_COMM_WORLD, &wg2);
    for (int i = 0; i < size; i++)
        pos[i] = size - 1 - i;
    MPI_Group_incl(wg, size, pos, &rev);
    errs += expect_cmp(me, "world/world", wg, wg2, MPI_IDENT);
    errs += expect_cmp(me, "world/reversed", wg, rev, size > 1 ? MPI_SIMILAR : MPI_IDENT);
    errs += expect_cmp(me, "world/a", wg, a, ref_cmp(&world, &la));
    errs += expect_cmp(me, "x/x", x, x, MPI_IDENT);

    /* translate_ranks: a -> b, with MPI_PROC_NULL in the middle */
    int n = la.n + 1;
    int *in = mt_malloc((size_t)n * sizeof *in), *out = mt_malloc((size_t)n * sizeof *out);
    for (int i = 0, k = 0; i < n; i++)
        in[i] = i == n / 2 ? MPI_PROC_NULL : k++;
    MPI_Group_translate_ranks(a, n, in, b, out);
    for (int i = 0; i < n; i++) {
        int want = MPI_PROC_NULL;
        if (in[i] != MPI_PROC_NULL) {
            want = MPI_UNDEFINED;
            for (int j = 0; j < lb.n; j++)
                if (lb.w[j] == la.w[in[i]])
                    want = j;
        }
        if (out[i] != want)
            errs += mt_fail(me, "translate a->b: rank %d -> %d, expected %d", in[i], out[i], want);
    }
    free(in);
    free(out);

    /* the group of a split communicator: odd/even, ordered by -rank */
    MPI_Comm sc;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &sc);
    MPI_Group sg;
    MPI_Comm_group(sc, &sg);
    list_t ls = list_new(size);
    for (int r = size - 1; r >= 0; r--)
        if (r % 2 == me % 2)
            ls.w[ls.n++] = r;
    errs += check_group(me, "split group", sg, &ls);

    MPI_Group *all[] = { &a, &b, &x, &sets[0], &sets[1], &sets[2], &sets[3], &sets[4], &sets[5],
                         &e1, &e2, &e3, &wg2, &rev, &sg, &wg };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        MPI_Group_free(all[i]);
        if (*all[i] != MPI_GROUP_NULL)
            errs += mt_fail(me, "Group_free left handle %zu", i);
    }
    MPI_Comm_free(&sc);
    for (int i = 0; i < 6; i++)
        free(lsets[i].w);
    free(la.w), free(lb.w), free(lx.w), free(ls.w), free(world.w), free(pos);
    mt_finish(errs, "comm_group OK");
    MPI_Finalize();
    return 0;
}
