/* coll_nb_allgather.c - MPI_Iallgather and MPI_Iallgatherv progress while
 * the ranks compute, and move the right data.
 *
 * Part 1 (data): an Iallgather and an Iallgatherv outstanding at once on
 * MPI_COMM_WORLD and on a split communicator whose ranks come in reverse
 * order, MPI_IN_PLACE every other round, blocks from one int to past the
 * schedules' limit, uneven counts for the v-form (some zero, blocks in
 * reverse rank order with gaps between them), odd ranks receiving
 * Iallgather's blocks into a strided type; every element is checked, the
 * gaps and the int past the last block keep their sentinels.
 *
 * Part 2 (progress; jobs of several processes): rank 0 is the last rank to
 * start each collective, then computes without calling MPI until its
 * receive buffer holds the whole result, or a generous bound passes (a
 * failure): the data can only arrive if its process moves the collective on
 * its own (the progress thread).  Below AMPI_NBC_PROGRESS_MIN the library
 * leaves these collectives to the helper threads, so part 2 then runs
 * without the computing loop (run.sh also runs this with the limit 0). */
#include <stdbool.h>
#include "mpitest.h"

#define BAIL_S 20.0 /* well inside the run's 60 s: a failure reports itself */
#define SENTINEL (-99)
#define GAP 3 /* ints between the v-form's blocks */

/* element j of rank `from`'s block in round it (kind: which collective) */
static int val(int from, int kind, size_t j, int it)
{
    return (int)(mt_hash((uint32_t)from, (uint32_t)kind, (uint32_t)j, (uint32_t)it) >> 1);
}

/* The v-form's count of rank i: 0 for every third rank, else uneven. */
static int vcount(int i, size_t blk) { return i % 3 == 1 ? 0 : (int)(blk + (size_t)i * (blk / 4 + 1)); }

/* The v-form's layout: blocks in reverse rank order, GAP ints apart;
 * returns the ints the buffer spans. */
static size_t vlayout(int n, size_t blk, int *counts, int *displs)
{
    size_t at = 0;
    for (int i = n; i-- > 0;) {
        counts[i] = vcount(i, blk);
        displs[i] = (int)at;
        at += (size_t)counts[i] + GAP;
    }
    return at;
}

enum { K_ALL, K_ALLV };

/* One Iallgather and one Iallgatherv on comm, both outstanding. */
static int part1_on(MPI_Comm comm, const char *name, int it, size_t blk, bool in_place)
{
    int errs = 0, me, n, wr = mt_rank();
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    bool strided = me % 2;
    size_t all = blk * (size_t)n, stride = strided ? 2 : 1;
    int *counts = malloc((size_t)n * sizeof(int)), *displs = malloc((size_t)n * sizeof(int));
    size_t vspan = vlayout(n, blk, counts, displs);
    int *as = malloc(blk * sizeof(int)), *ar = malloc((stride * all + 1) * sizeof(int));
    int *vs = malloc(((size_t)counts[me] + 1) * sizeof(int)), *vr = malloc((vspan + 1) * sizeof(int));
    for (size_t j = 0; j < blk; j++)
        as[j] = val(me, K_ALL, j, it);
    for (size_t j = 0; j < (size_t)counts[me]; j++)
        vs[j] = val(me, K_ALLV, j, it);
    for (size_t i = 0; i <= stride * all; i++)
        ar[i] = SENTINEL;
    for (size_t i = 0; i <= vspan; i++)
        vr[i] = SENTINEL;
    if (in_place) { /* our own blocks are in place already */
        for (size_t j = 0; j < blk; j++)
            ar[stride * ((size_t)me * blk + j)] = val(me, K_ALL, j, it);
        for (size_t j = 0; j < (size_t)counts[me]; j++)
            vr[(size_t)displs[me] + j] = val(me, K_ALLV, j, it);
    }
    MPI_Datatype st = mt_strided_ints((int)blk);
    MPI_Request q[2];
    MPI_Iallgather(in_place ? MPI_IN_PLACE : as, (int)blk, MPI_INT, ar, strided ? 1 : (int)blk,
                   strided ? st : MPI_INT, comm, &q[0]);
    MPI_Iallgatherv(in_place ? MPI_IN_PLACE : vs, counts[me], MPI_INT, vr, counts, displs, MPI_INT, comm, &q[1]);
    MPI_Type_free(&st); /* freed before completion: the library keeps what it needs */
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    for (size_t i = 0; i < all && !errs; i++) {
        int got = ar[stride * i], gap = strided ? ar[2 * i + 1] : SENTINEL;
        if (got != val((int)(i / blk), K_ALL, i % blk, it) || gap != SENTINEL)
            errs += mt_fail(wr, "%s Iallgather (%zu ints a block%s) into %s: block %zu element %zu is %d (gap %d)",
                            name, blk, in_place ? ", in place" : "", strided ? "a strided type" : "ints", i / blk,
                            i % blk, got, gap);
    }
    if (ar[stride * all] != SENTINEL)
        errs += mt_fail(wr, "%s Iallgather: the int past the last block was overwritten (%d)", name,
                        ar[stride * all]);
    for (int i = 0; i < n && !errs; i++) {
        for (size_t j = 0; j < (size_t)counts[i] && !errs; j++)
            if (vr[(size_t)displs[i] + j] != val(i, K_ALLV, j, it))
                errs += mt_fail(wr, "%s Iallgatherv (%zu ints a block%s): block %d element %zu is %d", name, blk,
                                in_place ? ", in place" : "", i, j, vr[(size_t)displs[i] + j]);
        for (size_t j = 0; j < GAP && !errs; j++) /* the gap after block i, the last one's included */
            if (vr[(size_t)displs[i] + (size_t)counts[i] + j] != SENTINEL)
                errs += mt_fail(wr, "%s Iallgatherv: the gap after block %d was overwritten", name, i);
    }
    if (vr[vspan] != SENTINEL)
        errs += mt_fail(wr, "%s Iallgatherv: the int past the buffer was overwritten (%d)", name, vr[vspan]);
    free(counts);
    free(displs);
    free(as);
    free(ar);
    free(vs);
    free(vr);
    return errs;
}

/* Whether rank 0's receive buffer holds the whole result (volatile: the
 * progress thread writes it); the v-form's blocks are uneven here. */
static bool complete(int kind, const volatile int *buf, const int *counts, const int *displs, int n, int it)
{
    for (int i = n; i-- > 0;)
        for (size_t j = (size_t)counts[i]; j-- > 0;)
            if (buf[(size_t)displs[i] + j] != val(i, kind, j, it))
                return false;
    return true;
}

/* Part 2's collective: Iallgather, or Iallgatherv of uneven blocks. */
typedef struct {
    int kind, size, it;
    int *sb, *rb, *counts, *displs;
} p2_t;

static void p2_start(void *arg, MPI_Request *q)
{
    const p2_t *a = arg;
    int me = mt_rank();
    if (a->kind == K_ALL)
        MPI_Iallgather(a->sb, a->counts[me], MPI_INT, a->rb, a->counts[me], MPI_INT, MPI_COMM_WORLD, q);
    else
        MPI_Iallgatherv(a->sb, a->counts[me], MPI_INT, a->rb, a->counts, a->displs, MPI_INT, MPI_COMM_WORLD, q);
}

static bool p2_done(void *arg)
{
    const p2_t *a = arg;
    return complete(a->kind, a->rb, a->counts, a->displs, a->size, a->it);
}

static int part2(int rank, int size, int kind, size_t blk, int it)
{
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    size_t all = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = kind == K_ALL ? (int)blk : vcount(i, blk);
        displs[i] = (int)all;
        all += (size_t)counts[i];
    }
    int *sb = malloc(((size_t)counts[rank] + 1) * sizeof(int)), *rb = malloc((all + 1) * sizeof(int));
    for (size_t j = 0; j < (size_t)counts[rank]; j++)
        sb[j] = val(rank, kind, j, it);
    for (size_t i = 0; i < all; i++)
        rb[i] = SENTINEL;
    p2_t a = { kind, size, it, sb, rb, counts, displs };
    char name[64];
    snprintf(name, sizeof name, "%s of %zu ints", kind == K_ALL ? "Iallgather" : "Iallgatherv", all);
    int errs = mt_nbc_progress(&(mt_nbc_progress_t){ p2_start, p2_done, &a, all * sizeof(int), BAIL_S, name });
    if (!complete(kind, rb, counts, displs, size, it))
        errs += mt_fail(rank, "%s: wrong result", name);
    free(counts);
    free(displs);
    free(sb);
    free(rb);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    const size_t blocks[] = { 1, 1000, 40000 };
    int it = 0;
    errs += mt_nbc_data(part1_on, blocks, 3, &it);
    for (int kind = K_ALL; kind <= K_ALLV && !errs; kind++)
        for (int b = 0; b < 3 && !errs; b++, it++)
            errs += part2(rank, size, kind, blocks[b], it);
    mt_finish(errs, "coll_nb_allgather OK");
    MPI_Finalize();
    return 0;
}
