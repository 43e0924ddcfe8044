/* MPI groups: ordered sets of world ranks behind per-rank handles.  Set
 * operations look members up in a sorted copy of the other group, so every
 * operation is O(n log n) whatever the sizes. */
#include "comm/comm_internal.h"

#include <stdlib.h>

core_group_t *comm_group_lookup(core_comm_state_t *s, MPI_Group h)
{
    return (unsigned)h < (unsigned)s->ngroups ? s->groups[h] : NULL;
}

core_group_t *comm_group_new(const int *ranks, int n, int world_me)
{
    core_group_t *g = calloc(1, sizeof *g);
    int *copy = comm_copy_ints(ranks, n);
    if (!g || !copy) {
        free(g);
        free(copy);
        return NULL;
    }
    *g = (core_group_t){ .refs = 1, .size = n, .me = MPI_UNDEFINED, .ranks = copy };
    for (int i = 0; i < n; i++)
        if (copy[i] == world_me)
            g->me = i;
    return g;
}

MPI_Group comm_group_handle(core_comm_state_t *s, core_group_t *g)
{
    if (g->size == 0) {
        comm_group_release(g);
        return MPI_GROUP_EMPTY;
    }
    int h = 2;
    while (h < s->ngroups && s->groups[h])
        h++;
    core_group_t **tab = comm_grow(s->groups, &s->ngroups, h + 1, sizeof *tab);
    if (!tab) {
        comm_group_release(g);
        return MPI_GROUP_NULL;
    }
    s->groups = tab;
    tab[h] = g;
    return h;
}

bool comm_group_same(const core_group_t *a, const core_group_t *b)
{
    if (a == b)
        return true;
    if (a->size != b->size)
        return false;
    for (int i = 0; i < a->size; i++)
        if (core_group_world(a, i) != core_group_world(b, i))
            return false;
    return true;
}

/* ---- position of a world rank in a group ---- */

typedef struct {
    int world, pos;
} member_t;

typedef struct {
    const core_group_t *g;
    member_t *sorted; /* NULL for the identity group: world == pos */
} finder_t;

static int by_world(const void *a, const void *b)
{
    int x = ((const member_t *)a)->world, y = ((const member_t *)b)->world;
    return (x > y) - (x < y);
}

static int finder_init(finder_t *f, const core_group_t *g)
{
    f->g = g;
    f->sorted = NULL;
    if (!g->ranks || g->size == 0)
        return MPI_SUCCESS;
    f->sorted = malloc((size_t)g->size * sizeof *f->sorted);
    if (!f->sorted)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < g->size; i++)
        f->sorted[i] = (member_t){ g->ranks[i], i };
    qsort(f->sorted, (size_t)g->size, sizeof *f->sorted, by_world);
    return MPI_SUCCESS;
}

/* Position of world rank w in the group, or -1. */
static int finder_pos(const finder_t *f, int w)
{
    if (!f->g->ranks)
        return w >= 0 && w < f->g->size ? w : -1;
    member_t key = { w, 0 };
    const member_t *m = bsearch(&key, f->sorted, (size_t)f->g->size, sizeof key, by_world);
    return m ? m->pos : -1;
}

static void finder_fini(finder_t *f) { free(f->sorted); }

int comm_group_compare(const core_group_t *g1, const core_group_t *g2, int *result)
{
    if (comm_group_same(g1, g2)) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    *result = MPI_UNEQUAL;
    if (g1->size != g2->size)
        return MPI_SUCCESS;
    finder_t f;
    if (finder_init(&f, g2))
        return MPI_ERR_NO_MEM;
    int i = 0;
    while (i < g1->size && finder_pos(&f, core_group_world(g1, i)) >= 0)
        i++;
    finder_fini(&f);
    if (i == g1->size) /* same size, members distinct, all found: same set */
        *result = MPI_SIMILAR;
    return MPI_SUCCESS;
}

/* ---- entry helpers ---- */

#define GROUP_GET(G, S, h, fn)                       \
    core_group_t *G = comm_group_lookup(S, h);       \
    if (UTIL_UNLIKELY(!G))                           \
        return core_error(NULL, MPI_ERR_GROUP, fn)

/* Hands out a handle for the n world ranks in ranks[] (or an error). */
static int new_group(core_comm_state_t *s, const int *ranks, int n, MPI_Group *out, const char *fn)
{
    core_group_t *g = comm_group_new(ranks, n, s->world.rank);
    MPI_Group h = g ? comm_group_handle(s, g) : MPI_GROUP_NULL;
    if (h == MPI_GROUP_NULL)
        return core_error(NULL, MPI_ERR_NO_MEM, fn);
    *out = h;
    return MPI_SUCCESS;
}

static int *scratch(int n) { return malloc((size_t)(n > 0 ? n : 1) * sizeof(int)); }

/* ---- queries ---- */

#pragma weak MPI_Comm_group = PMPI_Comm_group
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    COMM_ENTER(r, s, "MPI_Comm_group");
    COMM_GET(c, s, comm, "MPI_Comm_group");
    if (!group)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_group");
    comm_group_retain(c->group);
    MPI_Group h = comm_group_handle(s, c->group);
    if (h == MPI_GROUP_NULL)
        return core_error(c, MPI_ERR_NO_MEM, "MPI_Comm_group");
    *group = h;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_size = PMPI_Group_size
int PMPI_Group_size(MPI_Group group, int *size)
{
    COMM_ENTER(r, s, "MPI_Group_size");
    GROUP_GET(g, s, group, "MPI_Group_size");
    if (!size)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Group_size");
    *size = g->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_rank = PMPI_Group_rank
int PMPI_Group_rank(MPI_Group group, int *rank)
{
    COMM_ENTER(r, s, "MPI_Group_rank");
    GROUP_GET(g, s, group, "MPI_Group_rank");
    if (!rank)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Group_rank");
    *rank = g->me;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    const char *fn = "MPI_Group_translate_ranks";
    COMM_ENTER(r, s, fn);
    GROUP_GET(g1, s, group1, fn);
    GROUP_GET(g2, s, group2, fn);
    if (n < 0 || (n > 0 && (!ranks1 || !ranks2)))
        return core_error(NULL, MPI_ERR_ARG, fn);
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->size))
            return core_error(NULL, MPI_ERR_RANK, fn);
    finder_t f;
    if (finder_init(&f, g2))
        return core_error(NULL, MPI_ERR_NO_MEM, fn);
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int p = finder_pos(&f, core_group_world(g1, ranks1[i]));
        ranks2[i] = p < 0 ? MPI_UNDEFINED : p;
    }
    finder_fini(&f);
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_compare = PMPI_Group_compare
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    COMM_ENTER(r, s, "MPI_Group_compare");
    GROUP_GET(g1, s, group1, "MPI_Group_compare");
    GROUP_GET(g2, s, group2, "MPI_Group_compare");
    if (!result)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Group_compare");
    int err = comm_group_compare(g1, g2, result);
    return err ? core_error(NULL, err, "MPI_Group_compare") : MPI_SUCCESS;
}

/* ---- set operations ---- */

enum { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE };

static int set_op(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, int op, const char *fn)
{
    COMM_ENTER(r, s, fn);
    GROUP_GET(g1, s, group1, fn);
    GROUP_GET(g2, s, group2, fn);
    if (!newgroup)
        return core_error(NULL, MPI_ERR_ARG, fn);
    /* union: g1 in order, then what g2 adds, in g2's order; intersection
     * and difference: g1's members that are (not) in g2, in g1's order */
    const core_group_t *probe = op == SET_UNION ? g1 : g2;
    int *out = scratch(g1->size + g2->size);
    finder_t f;
    if (!out || finder_init(&f, probe)) {
        free(out);
        return core_error(NULL, MPI_ERR_NO_MEM, fn);
    }
    int n = 0;
    if (op == SET_UNION) {
        for (int i = 0; i < g1->size; i++)
            out[n++] = core_group_world(g1, i);
        for (int i = 0; i < g2->size; i++)
            if (finder_pos(&f, core_group_world(g2, i)) < 0)
                out[n++] = core_group_world(g2, i);
    } else {
        bool keep_found = op == SET_INTERSECTION;
        for (int i = 0; i < g1->size; i++)
            if ((finder_pos(&f, core_group_world(g1, i)) >= 0) == keep_found)
                out[n++] = core_group_world(g1, i);
    }
    finder_fini(&f);
    int err = new_group(s, out, n, newgroup, fn);
    free(out);
    return err;
}

#pragma weak MPI_Group_union = PMPI_Group_union
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, SET_UNION, "MPI_Group_union");
}

#pragma weak MPI_Group_intersection = PMPI_Group_intersection
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, SET_INTERSECTION, "MPI_Group_intersection");
}

#pragma weak MPI_Group_difference = PMPI_Group_difference
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, SET_DIFFERENCE, "MPI_Group_difference");
}

/* ---- subsets by rank ---- */

/* Marks the n group ranks in sel[] in picked[] (size g->size); MPI_ERR_RANK
 * if one is out of range or named twice. */
static int pick(const core_group_t *g, const int *sel, int n, unsigned char *picked)
{
    for (int i = 0; i < n; i++) {
        if (sel[i] < 0 || sel[i] >= g->size || picked[sel[i]])
            return MPI_ERR_RANK;
        picked[sel[i]] = 1;
    }
    return MPI_SUCCESS;
}

/* Group of g's members selected by sel[] (incl: in sel's order) or of the
 * others (excl: in g's order). */
static int subset(core_comm_state_t *s, const core_group_t *g, const int *sel, int n, bool incl, MPI_Group *newgroup,
                  const char *fn)
{
    unsigned char *picked = calloc((size_t)(g->size > 0 ? g->size : 1), 1);
    int *out = scratch(g->size);
    if (!picked || !out) {
        free(picked);
        free(out);
        return core_error(NULL, MPI_ERR_NO_MEM, fn);
    }
    int err = pick(g, sel, n, picked), m = 0;
    if (!err && incl)
        for (int i = 0; i < n; i++)
            out[m++] = core_group_world(g, sel[i]);
    else if (!err)
        for (int i = 0; i < g->size; i++)
            if (!picked[i])
                out[m++] = core_group_world(g, i);
    free(picked);
    err = err ? core_error(NULL, err, fn) : new_group(s, out, m, newgroup, fn);
    free(out);
    return err;
}

static int incl_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup, bool incl, const char *fn)
{
    COMM_ENTER(r, s, fn);
    GROUP_GET(g, s, group, fn);
    if (n < 0 || (n > 0 && !ranks) || !newgroup)
        return core_error(NULL, MPI_ERR_ARG, fn);
    return subset(s, g, ranks, n, incl, newgroup, fn);
}

#pragma weak MPI_Group_incl = PMPI_Group_incl
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, newgroup, true, "MPI_Group_incl");
}

#pragma weak MPI_Group_excl = PMPI_Group_excl
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, newgroup, false, "MPI_Group_excl");
}

/* Expands (first, last, stride) triplets into ranks; the count is checked
 * against the group size first, so a valid list never needs more than
 * g->size entries (a longer one must repeat a rank). */
static int expand_ranges(const core_group_t *g, int n, int ranges[][3], int **out, int *m)
{
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0 || first < 0 || first >= g->size || last < 0 || last >= g->size)
            return MPI_ERR_RANK;
        if ((stride > 0 && last < first) || (stride < 0 && last > first))
            return MPI_ERR_ARG;
        total += ((long)last - first) / stride + 1;
        if (total > g->size)
            return MPI_ERR_RANK;
    }
    int *v = scratch((int)total);
    if (!v)
        return MPI_ERR_NO_MEM;
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        for (long x = first; stride > 0 ? x <= last : x >= last; x += stride)
            v[k++] = (int)x;
    }
    *out = v;
    *m = k;
    return MPI_SUCCESS;
}

static int range_incl_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup, bool incl, const char *fn)
{
    COMM_ENTER(r, s, fn);
    GROUP_GET(g, s, group, fn);
    if (n < 0 || (n > 0 && !ranges) || !newgroup)
        return core_error(NULL, MPI_ERR_ARG, fn);
    int *sel = NULL, m = 0;
    int err = expand_ranges(g, n, ranges, &sel, &m);
    if (err)
        return core_error(NULL, err, fn);
    err = subset(s, g, sel, m, incl, newgroup, fn);
    free(sel);
    return err;
}

#pragma weak MPI_Group_range_incl = PMPI_Group_range_incl
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl(group, n, ranges, newgroup, true, "MPI_Group_range_incl");
}

#pragma weak MPI_Group_range_excl = PMPI_Group_range_excl
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl(group, n, ranges, newgroup, false, "MPI_Group_range_excl");
}

/* MPI_GROUP_EMPTY is predefined: freeing it only nulls the handle. */
#pragma weak MPI_Group_free = PMPI_Group_free
int PMPI_Group_free(MPI_Group *group)
{
    COMM_ENTER(r, s, "MPI_Group_free");
    if (!group)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Group_free");
    GROUP_GET(g, s, *group, "MPI_Group_free");
    if (*group != MPI_GROUP_EMPTY) {
        s->groups[*group] = NULL;
        comm_group_release(g);
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
