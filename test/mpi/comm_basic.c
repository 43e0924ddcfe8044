/* comm_basic.c - communicator construction, isolation, names, attributes.
 *
 *  - Comm_dup / Comm_split (three colors, MPI_UNDEFINED for some ranks,
 *    keys that reverse or scramble the order) / Comm_create (even ranks) /
 *    Comm_create_group (odd ranks, called by them only) / Comm_split_type:
 *    rank, size and member list checked against what every rank computes
 *    from the arguments alone.
 *  - Isolation: on every live communicator at once, wildcard receives are
 *    posted and every rank sends the same tag on each; each message must
 *    arrive on the communicator it was sent on, from the expected rank.
 *    Repeated after many dup/free cycles (fresh contexts every time).
 *  - Comm_compare: IDENT, CONGRUENT, SIMILAR and UNEQUAL cases.
 *  - Names (WORLD/SELF standard names, set/get, truncation, dup unnamed).
 *  - Attributes: copy/delete callbacks counted through extra_state (a
 *    per-rank struct on the stack), MPI_COMM_DUP_FN / MPI_COMM_NULL_COPY_FN,
 *    replacing a value, freeing a keyval that is still in use, and the
 *    predefined attributes on a derived communicator.
 *  - Intercommunicator queries on an intracommunicator. */
#include "mpitest.h"

#include <unistd.h>

enum { TAG_CROSS = 11, MAX_COMMS = 8, CYCLES = 60 };

/* ---- expected membership, from the arguments every rank can compute ---- */

static int split_color(int r) { return r % 5 == 4 ? MPI_UNDEFINED : r % 3; }
static int split_key(int r, int size) { return (r * 7 + 3) % size - (r % 2) * size; }

/* World ranks of the split communicator that world rank `me` lands in,
 * ordered by (key, world rank).  Returns the member count. */
static int split_members(int me, int size, int *out)
{
    int n = 0;
    for (int r = 0; r < size; r++)
        if (split_color(r) == split_color(me))
            out[n++] = r;
    for (int i = 1; i < n; i++) /* insertion sort by key; ties keep rank order */
        for (int j = i; j > 0 && split_key(out[j - 1], size) > split_key(out[j], size); j--) {
            int t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

/* Checks comm's rank, size and members (world ranks via its group). */
static int check_members(int me, const char *what, MPI_Comm comm, const int *want, int n)
{
    int errs = 0, size = -1, rank = -1, pos = -1;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    for (int i = 0; i < n; i++)
        if (want[i] == me)
            pos = i;
    if (size != n || rank != pos)
        return mt_fail(me, "%s: rank %d size %d, expected %d of %d", what, rank, size, pos, n);
    MPI_Group g, wg;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *idx = mt_malloc((size_t)n * sizeof *idx), *got = mt_malloc((size_t)n * sizeof *got);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(g, n, idx, wg, got);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            errs += mt_fail(me, "%s: member %d is world rank %d, expected %d", what, i, got[i], want[i]);
    free(idx);
    free(got);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    return errs;
}

/* ---- isolation: same tag on every communicator, wildcard receives ---- */

/* ids[i] names comms[i] the same way on every rank (ranks may hold
 * different subsets of the communicators). */
static int cross_check(int me, const MPI_Comm *comms, const int *ids, int ncomms, int round)
{
    int errs = 0;
    int in[MAX_COMMS][3], out[MAX_COMMS][3];
    MPI_Request rq[2 * MAX_COMMS];
    /* receives first and in reverse order: any context confusion shows */
    for (int i = ncomms - 1; i >= 0; i--) {
        in[i][0] = in[i][1] = in[i][2] = -1;
        MPI_Irecv(in[i], 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comms[i], &rq[i]);
    }
    for (int i = 0; i < ncomms; i++) {
        int rank, size;
        MPI_Comm_rank(comms[i], &rank);
        MPI_Comm_size(comms[i], &size);
        out[i][0] = ids[i];
        out[i][1] = rank;
        out[i][2] = round;
        MPI_Isend(out[i], 3, MPI_INT, (rank + 1) % size, TAG_CROSS, comms[i], &rq[ncomms + i]);
    }
    MPI_Status st[2 * MAX_COMMS];
    MPI_Waitall(2 * ncomms, rq, st);
    for (int i = 0; i < ncomms; i++) {
        int rank, size;
        MPI_Comm_rank(comms[i], &rank);
        MPI_Comm_size(comms[i], &size);
        int left = (rank - 1 + size) % size;
        if (in[i][0] != ids[i] || in[i][1] != left || in[i][2] != round || st[i].MPI_SOURCE != left ||
            st[i].MPI_TAG != TAG_CROSS)
            errs += mt_fail(me, "round %d comm %d: got (comm %d, rank %d, round %d) from %d tag %d, expected "
                            "(comm %d, rank %d) from %d", round, ids[i], in[i][0], in[i][1], in[i][2],
                            st[i].MPI_SOURCE, st[i].MPI_TAG, ids[i], left, left);
    }
    return errs;
}

/* ---- attributes ---- */

typedef struct {
    int copies, deletes;
    int last_deleted; /* value of the last attribute deleted */
} counters_t;

/* Copies the attribute as value + 100 (pointing into a per-rank table). */
static int copy_plus_100(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm, (void)keyval;
    counters_t *c = extra;
    c->copies++;
    int *v = in;
    *(int **)out = v + 100; /* vals[k] -> vals[k + 100] */
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval;
    counters_t *c = extra;
    c->deletes++;
    c->last_deleted = *(int *)val;
    return MPI_SUCCESS;
}

static int get_int_attr(MPI_Comm comm, int keyval, int *flag)
{
    int *p = NULL;
    MPI_Comm_get_attr(comm, keyval, &p, flag);
    return *flag && p ? *p : -1;
}

static int test_attributes(int me)
{
    int errs = 0;
    int vals[200];
    for (int i = 0; i < 200; i++)
        vals[i] = i * 3 + me;
    counters_t cnt = { 0, 0, -1 };
    int kv_count, kv_dup, kv_null;
    MPI_Comm_create_keyval(copy_plus_100, count_delete, &kv_count, &cnt);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv_dup, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv_null, NULL);
    if (kv_count == kv_dup || kv_dup == kv_null || kv_count == MPI_KEYVAL_INVALID)
        errs += mt_fail(me, "keyvals not distinct: %d %d %d", kv_count, kv_dup, kv_null);

    MPI_Comm a, b, c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    int flag = -1;
    get_int_attr(a, kv_count, &flag);
    if (flag)
        errs += mt_fail(me, "attribute set before any set_attr");
    MPI_Comm_set_attr(a, kv_count, &vals[1]);
    MPI_Comm_set_attr(a, kv_count, &vals[2]); /* replaces: deletes vals[1] */
    if (cnt.deletes != 1 || cnt.last_deleted != vals[1])
        errs += mt_fail(me, "replacing an attribute: %d deletes (last %d), expected 1 (%d)", cnt.deletes,
                        cnt.last_deleted, vals[1]);
    MPI_Comm_set_attr(a, kv_dup, &vals[3]);
    MPI_Comm_set_attr(a, kv_null, &vals[4]);

    MPI_Comm_dup(a, &b);
    if (cnt.copies != 1)
        errs += mt_fail(me, "dup ran the copy callback %d times, expected 1", cnt.copies);
    int v = get_int_attr(b, kv_count, &flag);
    if (!flag || v != vals[102])
        errs += mt_fail(me, "copied attribute: flag %d value %d, expected %d", flag, v, vals[102]);
    v = get_int_attr(b, kv_dup, &flag);
    if (!flag || v != vals[3])
        errs += mt_fail(me, "MPI_COMM_DUP_FN attribute: flag %d value %d, expected %d", flag, v, vals[3]);
    get_int_attr(b, kv_null, &flag);
    if (flag)
        errs += mt_fail(me, "MPI_COMM_NULL_COPY_FN attribute was copied");
    v = get_int_attr(a, kv_count, &flag);
    if (!flag || v != vals[2])
        errs += mt_fail(me, "original attribute changed by dup: %d, expected %d", v, vals[2]);

    /* delete_attr runs the callback; a second delete finds nothing */
    MPI_Comm_delete_attr(b, kv_count);
    if (cnt.deletes != 2 || cnt.last_deleted != vals[102])
        errs += mt_fail(me, "delete_attr: %d deletes (last %d), expected 2 (%d)", cnt.deletes, cnt.last_deleted,
                        vals[102]);
    get_int_attr(b, kv_count, &flag);
    if (flag)
        errs += mt_fail(me, "attribute still there after delete_attr");

    /* a freed keyval stays alive for the attributes that use it */
    MPI_Comm_dup(a, &c2); /* copies kv_count: vals[102] again */
    int kv_saved = kv_count;
    MPI_Comm_free_keyval(&kv_count);
    if (kv_count != MPI_KEYVAL_INVALID)
        errs += mt_fail(me, "free_keyval left the handle %d", kv_count);
    (void)kv_saved;
    MPI_Comm_free(&c2);
    if (cnt.copies != 2 || cnt.deletes != 3 || cnt.last_deleted != vals[102])
        errs += mt_fail(me, "after free of a copy: %d copies %d deletes (last %d), expected 2 3 (%d)", cnt.copies,
                        cnt.deletes, cnt.last_deleted, vals[102]);
    MPI_Comm_free(&a);
    if (cnt.deletes != 4 || cnt.last_deleted != vals[2])
        errs += mt_fail(me, "Comm_free: %d deletes (last %d), expected 4 (%d)", cnt.deletes, cnt.last_deleted,
                        vals[2]);
    if (a != MPI_COMM_NULL)
        errs += mt_fail(me, "Comm_free did not null the handle");

    /* the predefined attributes answer on every communicator */
    int *tag_ub = NULL;
    MPI_Comm_get_attr(b, MPI_TAG_UB, &tag_ub, &flag);
    if (!flag || !tag_ub || *tag_ub < 32767)
        errs += mt_fail(me, "MPI_TAG_UB on a dup: flag %d value %d", flag, tag_ub ? *tag_ub : -1);
    MPI_Comm_free(&b);
    MPI_Comm_free_keyval(&kv_dup);
    MPI_Comm_free_keyval(&kv_null);
    return errs;
}

/* ---- names ---- */

static int test_names(int me)
{
    int errs = 0, len = -1;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    if (strcmp(name, "MPI_COMM_WORLD") || len != (int)strlen(name))
        errs += mt_fail(me, "WORLD is named \"%s\" (%d)", name, len);
    MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
    if (strcmp(name, "MPI_COMM_SELF"))
        errs += mt_fail(me, "SELF is named \"%s\"", name);
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_get_name(d, name, &len);
    if (len != 0 || name[0])
        errs += mt_fail(me, "a dup is named \"%s\", expected no name", name);
    char want[40];
    snprintf(want, sizeof want, "rank %d's comm", me);
    MPI_Comm_set_name(d, want);
    MPI_Comm_get_name(d, name, &len);
    if (strcmp(name, want) || len != (int)strlen(want))
        errs += mt_fail(me, "name \"%s\" (%d), expected \"%s\"", name, len, want);
    char longname[3 * MPI_MAX_OBJECT_NAME];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    MPI_Comm_set_name(d, longname);
    MPI_Comm_get_name(d, name, &len);
    if (len != (int)strlen(name) || len >= MPI_MAX_OBJECT_NAME || len < 1 || strspn(name, "x") != (size_t)len)
        errs += mt_fail(me, "long name came back with length %d", len);
    MPI_Comm_free(&d);
    return errs;
}

/* ---- compare ---- */

static int expect_compare(int me, const char *what, MPI_Comm a, MPI_Comm b, int want)
{
    int got = -1;
    MPI_Comm_compare(a, b, &got);
    return got == want ? 0 : mt_fail(me, "compare %s: %d, expected %d", what, got, want);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = mt_rank(), size = mt_size(), errs = 0;
    int *want = mt_malloc((size_t)size * sizeof *want);

    /* dup */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int i = 0; i < size; i++)
        want[i] = i;
    errs += check_members(me, "dup", dup, want, size);
    errs += expect_compare(me, "world/world", MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT);
    errs += expect_compare(me, "world/dup", MPI_COMM_WORLD, dup, MPI_CONGRUENT);

    /* split: three colors, some ranks out */
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, split_color(me), split_key(me, size), &split);
    if (split_color(me) == MPI_UNDEFINED) {
        if (split != MPI_COMM_NULL)
            errs += mt_fail(me, "MPI_UNDEFINED color got a communicator");
    } else {
        int n = split_members(me, size, want);
        errs += check_members(me, "split", split, want, n);
        int in_order = 1;
        for (int i = 0; i < n; i++)
            in_order &= want[i] == i;
        int cmp = n != size ? MPI_UNEQUAL : in_order ? MPI_CONGRUENT : MPI_SIMILAR;
        errs += expect_compare(me, "world/split", MPI_COMM_WORLD, split, cmp);
    }

    /* the whole world in reverse order: similar; twice the same: congruent */
    MPI_Comm rev, rev2;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - me, &rev);
    MPI_Comm_split(dup, 7, -me, &rev2);
    for (int i = 0; i < size; i++)
        want[i] = size - 1 - i;
    errs += check_members(me, "reversed", rev, want, size);
    errs += expect_compare(me, "world/reversed", MPI_COMM_WORLD, rev, size > 1 ? MPI_SIMILAR : MPI_CONGRUENT);
    errs += expect_compare(me, "reversed/reversed", rev, rev2, MPI_CONGRUENT);

    /* create: even ranks, in descending order */
    MPI_Group world_group, evens, odds;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int ne = 0, no = 0;
    for (int r = size - 1; r >= 0; r--)
        if (r % 2 == 0)
            want[ne++] = r;
    MPI_Group_incl(world_group, ne, want, &evens);
    MPI_Comm ecomm;
    MPI_Comm_create(MPI_COMM_WORLD, evens, &ecomm);
    if (me % 2 == 0)
        errs += check_members(me, "create", ecomm, want, ne);
    else if (ecomm != MPI_COMM_NULL)
        errs += mt_fail(me, "odd rank got a communicator from Comm_create");

    /* create_group: odd ranks only, called by them alone */
    for (int r = 1; r < size; r += 2)
        want[no++] = r;
    MPI_Group_incl(world_group, no, want, &odds);
    MPI_Comm ocomm = MPI_COMM_NULL;
    if (me % 2 == 1) {
        MPI_Comm_create_group(MPI_COMM_WORLD, odds, 5, &ocomm);
        errs += check_members(me, "create_group", ocomm, want, no);
        int sum = -1;
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, ocomm);
        if (sum != no * no) /* 1 + 3 + ... + (2 no - 1) */
            errs += mt_fail(me, "allreduce on create_group's comm: %d, expected %d", sum, no * no);
    }

    /* create_group with the largest tag: even ranks (descending) */
    int *tag_ub = NULL, ubflag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &ubflag);
    if (me % 2 == 0 && ubflag && tag_ub) {
        MPI_Comm gcomm;
        for (int r = size - 1, k = 0; r >= 0; r--)
            if (r % 2 == 0)
                want[k++] = r;
        MPI_Comm_create_group(MPI_COMM_WORLD, evens, *tag_ub, &gcomm);
        errs += check_members(me, "create_group, tag MPI_TAG_UB", gcomm, want, ne);
        int sum = -1;
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, gcomm);
        if (sum != ne * (ne - 1)) /* 0 + 2 + ... + 2 (ne - 1) */
            errs += mt_fail(me, "allreduce on create_group's comm: %d, expected %d", sum, ne * (ne - 1));
        MPI_Comm_free(&gcomm);
    }

    /* split_type: the ranks whose process runs on my node (same host name) */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
    char host[64] = { 0 };
    gethostname(host, sizeof host - 1);
    char *hosts = mt_malloc(sizeof host * (size_t)size);
    MPI_Allgather(host, sizeof host, MPI_CHAR, hosts, sizeof host, MPI_CHAR, MPI_COMM_WORLD);
    int nwant = 0;
    for (int i = 0; i < size; i++)
        if (strcmp(hosts + sizeof host * (size_t)i, host) == 0)
            want[nwant++] = i;
    free(hosts);
    errs += check_members(me, "split_type", node, want, nwant);

    /* isolation across everything alive */
    MPI_Comm all[MAX_COMMS] = { MPI_COMM_WORLD, dup, rev, rev2, node, MPI_COMM_SELF, split, ecomm };
    MPI_Comm live[MAX_COMMS];
    int ids[MAX_COMMS], nlive = 0;
    for (int i = 0; i < MAX_COMMS; i++)
        if (all[i] != MPI_COMM_NULL) {
            ids[nlive] = i;
            live[nlive++] = all[i];
        }
    errs += cross_check(me, live, ids, nlive, 0);

    /* many dup/free cycles: fresh contexts, still isolated */
    for (int k = 1; k <= CYCLES && !errs; k++) {
        MPI_Comm a, b;
        MPI_Comm_dup(k % 2 ? MPI_COMM_WORLD : rev, &a);
        MPI_Comm_split(a, me % 2, me, &b);
        MPI_Comm four[4] = { MPI_COMM_WORLD, a, b, rev };
        int four_ids[4] = { 0, 1, 2, 3 };
        errs += cross_check(me, four, four_ids, 4, k);
        MPI_Comm_free(&b);
        MPI_Comm_free(&a);
    }

    /* intercommunicator queries on an intracommunicator */
    int flag = -1, rsize = -1, cls = -1;
    MPI_Comm_test_inter(dup, &flag);
    if (flag)
        errs += mt_fail(me, "Comm_test_inter says intercommunicator");
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_remote_size(dup, &rsize);
    MPI_Error_class(rc, &cls);
#ifdef AMPI_UCX /* erroneous per the standard; Open MPI lets it pass */
    if (rc == MPI_SUCCESS || cls != MPI_ERR_COMM)
        errs += mt_fail(me, "Comm_remote_size on an intracommunicator: class %d, expected MPI_ERR_COMM", cls);
#endif
    /* a derived communicator inherits the error handler */
    MPI_Comm child;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Comm_dup(dup, &child);
    MPI_Comm_get_errhandler(child, &eh);
    if (eh != MPI_ERRORS_RETURN)
        errs += mt_fail(me, "dup does not inherit MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&child);

    errs += test_names(me);
    errs += test_attributes(me);

    MPI_Comm_free(&node);
    if (ocomm != MPI_COMM_NULL)
        MPI_Comm_free(&ocomm);
    if (ecomm != MPI_COMM_NULL)
        MPI_Comm_free(&ecomm);
    MPI_Group_free(&odds);
    MPI_Group_free(&evens);
    MPI_Group_free(&world_group);
    MPI_Comm_free(&rev2);
    MPI_Comm_free(&rev);
    if (split != MPI_COMM_NULL)
        MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    if (dup != MPI_COMM_NULL)
        errs += mt_fail(me, "Comm_free left the handle");
    free(want);
    mt_finish(errs, "comm_basic OK");
    MPI_Finalize();
    return 0;
}
