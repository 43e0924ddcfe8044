/* coll_nb_alltoallv.c - MPI_Ialltoallv moves the right data whichever way
 * each block goes.
 *
 * The library decides block by block whether the block from one member to
 * another goes by a progress thread's schedule or by the helper threads
 * (both ends compute the same answer from the block's size), so one
 * collective can mix both, each member taking part in each way at once.
 *
 * Two Ialltoallv outstanding at once, on MPI_COMM_WORLD and on a split
 * communicator whose ranks come in reverse order, one of them in place
 * (MPI_IN_PLACE), with three layouts, the first by round, the second the
 * next: equal blocks; uneven blocks (the
 * blocks between members i and j hold blk ints when i + j is odd, else 0-2:
 * below the schedules' limit when the others are above it, empty ones
 * too); uneven blocks received into a type with gaps (a host copy).  The
 * block sizes are symmetric (i to j as j to i), as MPI_IN_PLACE requires.
 * Blocks lie in reverse rank order with a hole after each; every element,
 * hole and gap is checked, and the count arrays change before completion.
 * That the collective progresses while the ranks compute is
 * coll_nb_async.c's part 2. */
#include <stdbool.h>
#include "mpitest.h"

#define SENTINEL (-99)

static int val(int from, int to, size_t j, int it)
{
    return (int)(mt_hash((uint32_t)from, (uint32_t)to, (uint32_t)j, (uint32_t)it) >> 1);
}

enum { EQUAL, UNEVEN, GAPS };

/* the ints between members a and b, either way */
static int count_of(int layout, int a, int b, size_t blk)
{
    return layout == EQUAL || (a + b) % 2 ? (int)blk : (a * b + a + b) % 3;
}

/* Member me's blocks with every other member: reverse rank order, one
 * element of hole after each; returns the elements spanned. */
static size_t layout_of(int layout, int n, int me, size_t blk, int *counts, int *displs)
{
    size_t at = 0;
    for (int i = n; i-- > 0;) {
        counts[i] = count_of(layout, me, i, blk);
        displs[i] = (int)at;
        at += (size_t)counts[i] + 1;
    }
    return at;
}

typedef struct {
    int *counts, *displs, *sb, *rb;
    size_t ints;
    int stride; /* ints per element of the receive type */
    MPI_Datatype rt;
} side_t;

static void start_on(MPI_Comm comm, int it, int layout, size_t blk, bool in_place, side_t *x, MPI_Request *q)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    x->counts = malloc((size_t)n * sizeof(int));
    x->displs = malloc((size_t)n * sizeof(int));
    size_t span = layout_of(layout, n, me, blk, x->counts, x->displs);
    x->stride = layout == GAPS ? 2 : 1;
    x->rt = layout == GAPS ? mt_strided_ints(1) : MPI_INT;
    x->ints = span * (size_t)x->stride + 1;
    x->sb = malloc((span + 1) * sizeof(int));
    x->rb = malloc(x->ints * sizeof(int));
    for (size_t i = 0; i < x->ints; i++)
        x->rb[i] = SENTINEL;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < x->counts[i]; j++) {
            int v = val(me, i, (size_t)j, it);
            x->sb[x->displs[i] + j] = v;
            if (in_place) /* what we send lies in the receive buffer */
                x->rb[((size_t)x->displs[i] + (size_t)j) * (size_t)x->stride] = v;
        }
    if (in_place)
        MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, x->rb, x->counts, x->displs, x->rt, comm, q);
    else
        MPI_Ialltoallv(x->sb, x->counts, x->displs, MPI_INT, x->rb, x->counts, x->displs, x->rt, comm, q);
    if (layout == GAPS)
        MPI_Type_free(&x->rt); /* freed before completion: the library keeps what it needs */
    for (int i = 0; i < n; i++) /* and the arrays may change meanwhile (mpi4py does) */
        x->counts[i] = x->displs[i] = -1;
}

static int check_on(MPI_Comm comm, const char *name, int it, int layout, size_t blk, bool in_place, side_t *x)
{
    int errs = 0, me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    layout_of(layout, n, me, blk, x->counts, x->displs);
    int *want = malloc(x->ints * sizeof(int));
    for (size_t i = 0; i < x->ints; i++)
        want[i] = SENTINEL;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < x->counts[i]; j++)
            want[((size_t)x->displs[i] + (size_t)j) * (size_t)x->stride] = val(i, me, (size_t)j, it);
    const char *what[] = { "equal blocks", "uneven blocks", "uneven blocks, receive type with gaps" };
    for (size_t i = 0; i < x->ints && !errs; i++)
        if (x->rb[i] != want[i])
            errs += mt_fail(mt_rank(), "%s Ialltoallv (%s, %zu ints a block%s): int %zu is %d, not %d", name,
                            what[layout], blk, in_place ? ", in place" : "", i, x->rb[i], want[i]);
    free(want);
    free(x->counts);
    free(x->displs);
    free(x->sb);
    free(x->rb);
    return errs;
}

/* Two at once on comm: layouts by round, the first in place when in_place,
 * the second when not (their values differ by round: 2 it and 2 it + 1). */
static int part1_on(MPI_Comm comm, const char *name, int it, size_t blk, bool in_place)
{
    side_t x[2];
    MPI_Request q[2];
    for (int k = 0; k < 2; k++)
        start_on(comm, 2 * it + k, (it + k) % 3, blk, in_place == (k == 0), &x[k], &q[k]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    int errs = 0;
    for (int k = 0; k < 2; k++)
        errs += check_on(comm, name, 2 * it + k, (it + k) % 3, blk, in_place == (k == 0), &x[k]);
    return errs;
}

int main(int argc, char **argv)
{
    return mt_nbc_layouts_main(&argc, &argv, part1_on, "coll_nb_alltoallv OK");
}
