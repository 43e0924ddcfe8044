/* intercomm_split.c - communicator constructors on an intercommunicator
 * between the even and the odd world ranks: MPI_Comm_split (colors that
 * leave one side empty, MPI_UNDEFINED, keys that reverse the order),
 * MPI_Comm_create (a subgroup in each group, and an empty group on one
 * side), MPI_Comm_split_type and MPI_Comm_dup of the results.  Every
 * result is checked for its local and remote groups (world ranks, in
 * order) and used: an allreduce and a broadcast across it, and
 * point-to-point.  Then the calls MPI defines on intracommunicators only. */
#include "mpitest.h"

#include <stdbool.h>

/* World ranks of group g, in order, into w (room for n). */
static int world_ranks(MPI_Group g, int *w, int n)
{
    MPI_Group wg;
    int size = 0;
    MPI_Group_size(g, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < size && i < n; i++)
        MPI_Group_translate_ranks(g, 1, &i, wg, &w[i]);
    MPI_Group_free(&wg);
    return size;
}

/* Checks that nc is an intercommunicator whose local and remote groups
 * are want_l[nl] and want_r[nr] (world ranks in order), then uses it. */
static int check_result(int rank, MPI_Comm nc, const int *want_l, int nl, const int *want_r, int nr,
                        const char *what)
{
    int errs = 0, flag = 0, got[64];
    MPI_Comm_test_inter(nc, &flag);
    if (!flag)
        return mt_fail(rank, "%s: not an intercommunicator", what);
    MPI_Group g;
    MPI_Comm_group(nc, &g);
    int n = world_ranks(g, got, 64);
    MPI_Group_free(&g);
    for (int i = 0; i < nl && n == nl; i++)
        if (got[i] != want_l[i])
            errs += mt_fail(rank, "%s: local member %d is world %d, want %d", what, i, got[i], want_l[i]);
    if (n != nl)
        errs += mt_fail(rank, "%s: local size %d, want %d", what, n, nl);
    MPI_Comm_remote_group(nc, &g);
    n = world_ranks(g, got, 64);
    MPI_Group_free(&g);
    for (int i = 0; i < nr && n == nr; i++)
        if (got[i] != want_r[i])
            errs += mt_fail(rank, "%s: remote member %d is world %d, want %d", what, i, got[i], want_r[i]);
    if (n != nr)
        errs += mt_fail(rank, "%s: remote size %d, want %d", what, n, nr);
    if (errs)
        return errs;
    /* it works: the sum of the remote world ranks, the remote leader's
     * world rank by broadcast, and a message to and from each remote rank */
    int sum = -1, want = 0;
    for (int i = 0; i < nr; i++)
        want += want_r[i];
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, nc);
    if (sum != want)
        errs += mt_fail(rank, "%s: allreduce %d, want %d", what, sum, want);
    int me, v = rank;
    MPI_Comm_rank(nc, &me);
    bool lower = want_l[0] < want_r[0]; /* the group of the lower leader broadcasts */
    MPI_Bcast(&v, 1, MPI_INT, lower ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, nc);
    if (v != (lower ? rank : want_r[0]))
        errs += mt_fail(rank, "%s: bcast %d, want %d", what, v, lower ? rank : want_r[0]);
    for (int i = 0; i < nr; i++) {
        int in = -1;
        MPI_Sendrecv(&rank, 1, MPI_INT, i, 3, &in, 1, MPI_INT, i, 3, nc, MPI_STATUS_IGNORE);
        if (in != want_r[i])
            errs += mt_fail(rank, "%s: message from remote %d is %d, want %d", what, i, in, want_r[i]);
    }
    return errs;
}

static int color_of(int w) { return w % 5 == 4 ? MPI_UNDEFINED : w % 3; }

/* The world ranks of parity p with color col, by decreasing world rank
 * (key -w); returns the count. */
static int piece(int size, int p, int col, int *out)
{
    int n = 0;
    for (int w = size - 1; w >= 0; w--)
        if (w % 2 == p && color_of(w) == col)
            out[n++] = w;
    return n;
}

static int check_split(int rank, int size, MPI_Comm inter)
{
    int errs = 0, col = color_of(rank), wl[64], wr[64];
    MPI_Comm nc;
    MPI_Comm_split(inter, col, -rank, &nc);
    int nl = col == MPI_UNDEFINED ? 0 : piece(size, rank % 2, col, wl);
    int nr = col == MPI_UNDEFINED ? 0 : piece(size, 1 - rank % 2, col, wr);
    if (nl == 0 || nr == 0) {
        if (nc != MPI_COMM_NULL)
            errs += mt_fail(rank, "split (color %d): a communicator where one side is empty", col);
        return errs;
    }
    if (nc == MPI_COMM_NULL)
        return mt_fail(rank, "split (color %d): MPI_COMM_NULL, want %d and %d ranks", col, nl, nr);
    errs += check_result(rank, nc, wl, nl, wr, nr, "split");
    MPI_Comm dup;
    MPI_Comm_dup(nc, &dup);
    MPI_Comm_free(&nc);
    errs += check_result(rank, dup, wl, nl, wr, nr, "dup of split");
    /* split again, everybody one color: the same groups */
    MPI_Comm_split(dup, 0, 0, &nc);
    /* key 0: the order of dup's ranks, so still by decreasing world rank */
    errs += check_result(rank, nc, wl, nl, wr, nr, "split of split");
    MPI_Comm_free(&nc);
    MPI_Comm_free(&dup);
    return errs;
}

/* MPI_Comm_create: the first half (rounded up) of each group; then the
 * odd group passes MPI_GROUP_EMPTY and nobody gets a communicator. */
static int check_create(int rank, int size, MPI_Comm inter)
{
    int errs = 0, lsize, rsize, me, wl[64], wr[64];
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &me);
    MPI_Group g, half;
    MPI_Comm_group(inter, &g);
    int range[1][3] = { { 0, (lsize + 1) / 2 - 1, 1 } };
    MPI_Group_range_incl(g, 1, range, &half);
    MPI_Comm nc;
    MPI_Comm_create(inter, half, &nc);
    int nl = (lsize + 1) / 2, nr = (rsize + 1) / 2;
    for (int i = 0; i < nl; i++)
        wl[i] = 2 * i + rank % 2;
    for (int i = 0; i < nr; i++)
        wr[i] = 2 * i + 1 - rank % 2;
    if (me < nl) {
        if (nc == MPI_COMM_NULL)
            errs += mt_fail(rank, "create: MPI_COMM_NULL for a member");
        else
            errs += check_result(rank, nc, wl, nl, wr, nr, "create");
    } else if (nc != MPI_COMM_NULL) {
        errs += mt_fail(rank, "create: a communicator for a non-member");
    }
    if (nc != MPI_COMM_NULL)
        MPI_Comm_free(&nc);
    MPI_Comm_create(inter, rank % 2 ? MPI_GROUP_EMPTY : half, &nc);
    if (nc != MPI_COMM_NULL) {
        errs += mt_fail(rank, "create with an empty remote group: a communicator");
        MPI_Comm_free(&nc);
    }
    MPI_Group_free(&half);
    MPI_Group_free(&g);
    (void)size;
    return errs;
}

/* One node: MPI_COMM_TYPE_SHARED keeps both groups whole. */
static int check_split_type(int rank, int size, MPI_Comm inter)
{
    int errs = 0, wl[64], wr[64], nl = 0, nr = 0;
    for (int w = 0; w < size; w++) {
        if (w % 2 == rank % 2)
            wl[nl++] = w;
        else
            wr[nr++] = w;
    }
    MPI_Comm nc;
    MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &nc);
    if (nc == MPI_COMM_NULL)
        return mt_fail(rank, "split_type: MPI_COMM_NULL");
    errs += check_result(rank, nc, wl, nl, wr, nr, "split_type");
    MPI_Comm_free(&nc);
    MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &nc);
    if (nc != MPI_COMM_NULL)
        errs += mt_fail(rank, "split_type(MPI_UNDEFINED): a communicator");
    return errs;
}

/* What MPI defines on intracommunicators only answers MPI_ERR_COMM. */
static int check_intra_only(int rank, MPI_Comm inter)
{
    int errs = 0, cls, dims[1] = { 1 }, periods[1] = { 0 };
    MPI_Comm nc = MPI_COMM_NULL;
    MPI_Group g;
    MPI_Comm_group(inter, &g);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    MPI_Error_class(MPI_Comm_create_group(inter, g, 0, &nc), &cls);
    errs += cls != MPI_ERR_COMM ? mt_fail(rank, "MPI_Comm_create_group: class %d", cls) : 0;
    MPI_Error_class(MPI_Cart_create(inter, 1, dims, periods, 0, &nc), &cls);
    errs += cls != MPI_ERR_COMM ? mt_fail(rank, "MPI_Cart_create: class %d", cls) : 0;
    MPI_Error_class(MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, 0, 9, &nc), &cls);
    errs += cls != MPI_ERR_COMM ? mt_fail(rank, "MPI_Intercomm_create(intercommunicator): class %d", cls) : 0;
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL);
    MPI_Group_free(&g);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    if (size < 2 || size > 64) {
        mt_skipped("needs 2 to 64 ranks");
    } else {
        MPI_Comm local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - rank % 2, 7, &inter);
        errs += check_split(rank, size, inter);
        errs += check_create(rank, size, inter);
        errs += check_split_type(rank, size, inter);
        errs += check_intra_only(rank, inter);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }
    mt_finish(errs, "intercomm_split: OK");
    MPI_Finalize();
    return 0;
}
