/* coll_nb_rootedv.c - MPI_Igatherv and MPI_Iscatterv move the right data
 * whichever way each block goes.
 *
 * The library decides block by block whether a member's block goes by a
 * progress thread's schedule or by the helper threads (a member knows only
 * its own block), so one collective can mix both, with the root taking part
 * in each way at once.
 *
 * An Igatherv and an Iscatterv outstanding at once on
 * MPI_COMM_WORLD and on a split communicator whose ranks come in reverse
 * order, roots that move, MPI_IN_PLACE at the root every other round, and
 * three layouts by round: equal blocks; uneven blocks (odd ranks a whole
 * block, even ranks 0-2 ints: below the schedules' limit when the others
 * are above it); uneven blocks in a root buffer whose type has gaps (a host
 * copy at the root).  Blocks lie in reverse rank order with a hole after
 * each; every element, hole and gap is checked.  That they progress while
 * the ranks compute is coll_nb_rooted.c's part 2. */
#include <stdbool.h>
#include "mpitest.h"

#define SENTINEL (-99)

static int val(int from, int to, size_t j, int it)
{
    return (int)(mt_hash((uint32_t)from, (uint32_t)to, (uint32_t)j, (uint32_t)it) >> 1);
}

enum { EQUAL, UNEVEN, GAPS };

static int count_of(int layout, int i, size_t blk)
{
    return layout == EQUAL || i % 2 ? (int)blk : i % 3;
}

/* Displacements (in elements of the root's type): reverse rank order, one
 * element of hole after each block; returns the elements spanned. */
static size_t layout_displs(int layout, int n, size_t blk, int *counts, int *displs)
{
    size_t at = 0;
    for (int i = n; i-- > 0;) {
        counts[i] = count_of(layout, i, blk);
        displs[i] = (int)at;
        at += (size_t)counts[i] + 1;
    }
    return at;
}

static int part1_on(MPI_Comm comm, const char *name, int it, size_t blk, bool in_place)
{
    int errs = 0, me, n, wr = mt_rank(), layout = it % 3;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int groot = it % n, sroot = (it + n / 2) % n;
    int *counts = malloc((size_t)n * sizeof(int)), *displs = malloc((size_t)n * sizeof(int));
    size_t span = layout_displs(layout, n, blk, counts, displs);
    int stride = layout == GAPS ? 2 : 1; /* ints per element of the root's type */
    MPI_Datatype rt = MPI_INT;
    if (layout == GAPS) {
        rt = mt_strided_ints(1);
    }
    size_t ints = span * (size_t)stride + 1;
    int mine = counts[me];
    int *gs = malloc(((size_t)mine + 1) * sizeof(int)), *gr = malloc(ints * sizeof(int));
    int *ss = malloc(ints * sizeof(int)), *sr = malloc(((size_t)mine + 1) * sizeof(int));
    for (int j = 0; j < mine; j++)
        gs[j] = val(me, groot, (size_t)j, it);
    for (size_t i = 0; i < ints; i++)
        gr[i] = ss[i] = SENTINEL;
    for (int j = 0; j <= mine; j++)
        sr[j] = SENTINEL;
    if (me == groot && in_place)
        for (int j = 0; j < mine; j++)
            gr[((size_t)displs[me] + (size_t)j) * (size_t)stride] = val(me, groot, (size_t)j, it);
    if (me == sroot)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < counts[i]; j++)
                ss[((size_t)displs[i] + (size_t)j) * (size_t)stride] = val(sroot, i, (size_t)j, it);
    MPI_Request q[2];
    MPI_Igatherv(in_place && me == groot ? MPI_IN_PLACE : gs, mine, MPI_INT, gr, counts, displs, rt, groot, comm,
                 &q[0]);
    MPI_Iscatterv(ss, counts, displs, rt, in_place && me == sroot ? MPI_IN_PLACE : sr, mine, MPI_INT, sroot, comm,
                  &q[1]);
    if (layout == GAPS)
        MPI_Type_free(&rt); /* freed before completion: the library keeps what it needs */
    for (int i = 0; i < n; i++) /* and the arrays may change meanwhile (mpi4py does) */
        counts[i] = displs[i] = -1;
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    layout_displs(layout, n, blk, counts, displs);
    const char *what[] = { "equal blocks", "uneven blocks", "uneven blocks, root type with gaps" };
    if (me == groot) {
        int *want = malloc(ints * sizeof(int));
        for (size_t i = 0; i < ints; i++)
            want[i] = SENTINEL;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < counts[i]; j++)
                want[((size_t)displs[i] + (size_t)j) * (size_t)stride] = val(i, groot, (size_t)j, it);
        for (size_t i = 0; i < ints && !errs; i++)
            if (gr[i] != want[i])
                errs += mt_fail(wr, "%s Igatherv (root %d, %s, %zu ints a block%s): int %zu is %d, not %d", name,
                                groot, what[layout], blk, in_place ? ", in place" : "", i, gr[i], want[i]);
        free(want);
    }
    if (!(in_place && me == sroot)) {
        for (int j = 0; j <= mine && !errs; j++) {
            int want = j < mine ? val(sroot, me, (size_t)j, it) : SENTINEL;
            if (sr[j] != want)
                errs += mt_fail(wr, "%s Iscatterv (root %d, %s, %d ints here): int %d is %d, not %d", name, sroot,
                                what[layout], mine, j, sr[j], want);
        }
    } else {
        for (int i = 0; i < n && !errs; i++) /* the root's send buffer is left alone */
            for (int j = 0; j < counts[i] && !errs; j++)
                if (ss[((size_t)displs[i] + (size_t)j) * (size_t)stride] != val(sroot, i, (size_t)j, it))
                    errs += mt_fail(wr, "%s Iscatterv in place: the root's block %d changed", name, i);
    }
    free(gs);
    free(gr);
    free(ss);
    free(sr);
    free(counts);
    free(displs);
    return errs;
}

int main(int argc, char **argv)
{
    return mt_nbc_layouts_main(&argc, &argv, part1_on, "coll_nb_rootedv OK");
}
