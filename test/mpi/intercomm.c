/* intercomm.c - intercommunicators between the even and the odd world
 * ranks: MPI_Intercomm_create, local and remote sizes and groups,
 * point-to-point both ways (named and wildcard sources, MPI_PROC_NULL,
 * MPI_SOURCE in the remote numbering), MPI_Bcast (MPI_ROOT / MPI_PROC_NULL)
 * and MPI_Barrier, MPI_Intercomm_merge with either group high,
 * MPI_Comm_dup / idup / compare / free (the other collectives and
 * constructors: intercomm_coll.c, intercomm_split.c).  With one rank
 * only the intracommunicator answers are checked. */
#include "mpitest.h"

#include <stdbool.h>

/* The value world rank `from` sends to remote rank `to` in round `round`. */
static int value(int from, int to, int round) { return from * 10000 + to * 10 + round; }

/* Every rank sends one message to every remote rank and receives one from
 * each, by name (round 0) or with MPI_ANY_SOURCE (round 1). */
static int traffic(MPI_Comm inter, int rank, int round)
{
    int errs = 0, me, rsize;
    MPI_Comm_rank(inter, &me);
    MPI_Comm_remote_size(inter, &rsize);
    int *out = mt_malloc((size_t)rsize * sizeof *out), *in = mt_malloc((size_t)rsize * sizeof *in);
    MPI_Request *rq = mt_malloc((size_t)rsize * sizeof *rq);
    MPI_Group rgroup, wgroup;
    MPI_Comm_remote_group(inter, &rgroup);
    MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
    for (int i = 0; i < rsize; i++) {
        out[i] = value(rank, i, round);
        MPI_Isend(&out[i], 1, MPI_INT, i, 5 + round, inter, &rq[i]);
    }
    for (int i = 0; i < rsize; i++) {
        MPI_Status st;
        int src = round == 0 ? i : MPI_ANY_SOURCE, got = -1;
        MPI_Recv(&got, 1, MPI_INT, src, 5 + round, inter, &st);
        int from = st.MPI_SOURCE, wfrom = -1;
        if (from < 0 || from >= rsize || (round == 0 && from != i)) {
            errs += mt_fail(rank, "round %d: MPI_SOURCE %d (remote size %d, asked %d)", round, from, rsize, src);
            continue;
        }
        MPI_Group_translate_ranks(rgroup, 1, &from, wgroup, &wfrom);
        if (got != value(wfrom, me, round))
            errs += mt_fail(rank, "round %d: got %d from remote %d (world %d), want %d", round, got, from, wfrom,
                            value(wfrom, me, round));
    }
    MPI_Waitall(rsize, rq, MPI_STATUSES_IGNORE);
    /* MPI_PROC_NULL: completes at once, source MPI_PROC_NULL */
    MPI_Status st;
    int dummy = 7;
    MPI_Send(&dummy, 1, MPI_INT, MPI_PROC_NULL, 0, inter);
    MPI_Recv(&dummy, 1, MPI_INT, MPI_PROC_NULL, 0, inter, &st);
    if (st.MPI_SOURCE != MPI_PROC_NULL || dummy != 7)
        errs += mt_fail(rank, "MPI_PROC_NULL receive: source %d, buffer %d", st.MPI_SOURCE, dummy);
    MPI_Group_free(&rgroup);
    MPI_Group_free(&wgroup);
    free(out);
    free(in);
    free(rq);
    return errs;
}

/* The world ranks of group g in order, checked against parity p. */
static int check_group(int rank, MPI_Group g, int parity, int size, const char *what)
{
    int errs = 0, n;
    MPI_Group wgroup;
    MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
    MPI_Group_size(g, &n);
    int want_n = (size + 1 - parity) / 2;
    if (n != want_n)
        errs += mt_fail(rank, "%s: size %d, want %d", what, n, want_n);
    for (int i = 0; i < n && i < want_n; i++) {
        int w = -1;
        MPI_Group_translate_ranks(g, 1, &i, wgroup, &w);
        if (w != 2 * i + parity)
            errs += mt_fail(rank, "%s: member %d is world %d, want %d", what, i, w, 2 * i + parity);
    }
    MPI_Group_free(&wgroup);
    return errs;
}

/* Merged with the group of `first_parity` first: ranks in that order. */
static int check_merge(MPI_Comm inter, int rank, int size, int high, int first_parity)
{
    int errs = 0, mrank = -1, msize = -1;
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, high, &merged);
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    int nfirst = (size + 1 - first_parity) / 2;
    int want = rank % 2 == first_parity ? rank / 2 : nfirst + rank / 2;
    if (msize != size || mrank != want)
        errs += mt_fail(rank, "merge(high=%d): rank %d of %d, want %d of %d", high, mrank, msize, want, size);
    int flag = 1;
    MPI_Comm_test_inter(merged, &flag);
    if (flag)
        errs += mt_fail(rank, "merged communicator claims to be an intercommunicator");
    /* the merged communicator works: the sum of world ranks */
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
    if (sum != size * (size - 1) / 2)
        errs += mt_fail(rank, "merge(high=%d): allreduce %d, want %d", high, sum, size * (size - 1) / 2);
    MPI_Comm_free(&merged);
    return errs;
}

static int check_bcast(MPI_Comm inter, int rank, int size);

/* MPI_Comm_idup while an MPI_Ibarrier on the same intercommunicator is in
 * flight: a working copy over the same groups. */
static int check_idup(MPI_Comm inter, int rank, int size)
{
    int errs = 0, flag = 0, cmp = -1;
    MPI_Comm nc = MPI_COMM_NULL;
    MPI_Request rq[2];
    MPI_Comm_idup(inter, &nc, &rq[0]);
    MPI_Ibarrier(inter, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Comm_test_inter(nc, &flag);
    MPI_Comm_compare(inter, nc, &cmp);
    if (!flag || cmp != MPI_CONGRUENT)
        return mt_fail(rank, "idup: test_inter %d, compare %d", flag, cmp);
    errs += traffic(nc, rank, 0);
    errs += check_bcast(nc, rank, size);
    MPI_Comm_free(&nc);
    return errs;
}

/* MPI_Bcast from each member of each group in turn (MPI_ROOT at the root,
 * MPI_PROC_NULL at the rest of its group), then MPI_Barrier. */
static int check_bcast(MPI_Comm inter, int rank, int size)
{
    int errs = 0, me, lsize, rsize;
    MPI_Comm_rank(inter, &me);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    int buf[3];
    for (int g = 0; g < 2; g++) {                     /* the group of world parity g sends */
        int n = g == rank % 2 ? lsize : rsize;
        for (int root = 0; root < n; root++) {
            int wroot = 2 * root + g, want = 1000 + wroot;
            buf[0] = buf[1] = buf[2] = -1;
            if (g == rank % 2) {
                bool is_root = root == me;
                if (is_root)
                    buf[0] = buf[1] = buf[2] = want;
                MPI_Bcast(buf, 3, MPI_INT, is_root ? MPI_ROOT : MPI_PROC_NULL, inter);
                int keep = is_root ? want : -1; /* the root's group gets nothing */
                if (buf[0] != keep || buf[2] != keep)
                    errs += mt_fail(rank, "bcast from world %d: own group's buffer %d, want %d", wroot, buf[0], keep);
            } else {
                MPI_Bcast(buf, 3, MPI_INT, root, inter);
                if (buf[0] != want || buf[1] != want || buf[2] != want)
                    errs += mt_fail(rank, "bcast from world %d: got %d %d %d", wroot, buf[0], buf[1], buf[2]);
            }
        }
    }
    for (int i = 0; i < 3; i++)
        MPI_Barrier(inter);
    (void)size;
    return errs;
}

static int check_inter(int rank, int size)
{
    int errs = 0, parity = rank % 2, flag = -1, n = -1;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, parity, rank, &local);
    /* leaders: world 0 (even group) and world 1 (odd group) */
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - parity, 17, &inter);
    MPI_Comm_test_inter(inter, &flag);
    if (flag != 1)
        errs += mt_fail(rank, "MPI_Comm_test_inter: %d", flag);
    int lsize = (size + 1 - parity) / 2, rsize = size - lsize, me = -1;
    MPI_Comm_size(inter, &n);
    MPI_Comm_rank(inter, &me);
    if (n != lsize || me != rank / 2)
        errs += mt_fail(rank, "local size %d rank %d, want %d %d", n, me, lsize, rank / 2);
    MPI_Comm_remote_size(inter, &n);
    if (n != rsize)
        errs += mt_fail(rank, "remote size %d, want %d", n, rsize);
    MPI_Group g;
    MPI_Comm_group(inter, &g);
    errs += check_group(rank, g, parity, size, "local group");
    MPI_Group_free(&g);
    MPI_Comm_remote_group(inter, &g);
    errs += check_group(rank, g, 1 - parity, size, "remote group");
    MPI_Group_free(&g);

    errs += traffic(inter, rank, 0);
    errs += traffic(inter, rank, 1);
    errs += check_bcast(inter, rank, size);
    errs += check_merge(inter, rank, size, parity, 0);     /* odd high: even first */
    errs += check_merge(inter, rank, size, 1 - parity, 1); /* even high: odd first */

    MPI_Comm dup;
    MPI_Comm_dup(inter, &dup);
    int cmp = -1;
    MPI_Comm_compare(inter, dup, &cmp);
    if (cmp != MPI_CONGRUENT)
        errs += mt_fail(rank, "compare(inter, dup) = %d, want MPI_CONGRUENT", cmp);
    MPI_Comm_compare(inter, inter, &cmp);
    if (cmp != MPI_IDENT)
        errs += mt_fail(rank, "compare(inter, inter) = %d, want MPI_IDENT", cmp);
    MPI_Comm_compare(inter, local, &cmp);
    if (cmp != MPI_UNEQUAL)
        errs += mt_fail(rank, "compare(inter, local) = %d, want MPI_UNEQUAL", cmp);
    MPI_Comm_test_inter(dup, &flag);
    if (flag != 1)
        errs += mt_fail(rank, "dup: MPI_Comm_test_inter %d", flag);
    errs += traffic(dup, rank, 1);
    errs += check_merge(dup, rank, size, parity, 0);
    MPI_Comm_free(&inter); /* the dup lives on without it */
    errs += traffic(dup, rank, 0);
    errs += check_bcast(dup, rank, size);
    errs += check_idup(dup, rank, size);
    MPI_Comm_free(&dup);
    if (dup != MPI_COMM_NULL)
        errs += mt_fail(rank, "MPI_Comm_free left the handle");
    MPI_Comm_free(&local);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0, flag = -1, cls;
    MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
    if (flag != 0)
        errs += mt_fail(rank, "MPI_COMM_WORLD: MPI_Comm_test_inter %d", flag);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int n;
    MPI_Error_class(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), &cls);
    if (cls != MPI_ERR_COMM)
        errs += mt_fail(rank, "MPI_Comm_remote_size(MPI_COMM_WORLD): class %d", cls);
    MPI_Comm merged;
    MPI_Error_class(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &merged), &cls);
    if (cls != MPI_ERR_COMM)
        errs += mt_fail(rank, "MPI_Intercomm_merge(MPI_COMM_WORLD): class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (size >= 2)
        errs += check_inter(rank, size);
    else
        mt_note("one rank: no intercommunicator to build");
    MPI_Barrier(MPI_COMM_WORLD);
    mt_finish(errs, "intercomm: OK");
    MPI_Finalize();
    return 0;
}
