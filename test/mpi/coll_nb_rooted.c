/* coll_nb_rooted.c - MPI_Igather and MPI_Iscatter progress while the ranks
 * compute, and move the right data; so do MPI_Igatherv and MPI_Iscatterv
 * over equal blocks (part 2; their data: coll_nb_rootedv.c).
 *
 * Part 1 (data): an Igather and an Iscatter outstanding at once on
 * MPI_COMM_WORLD and on a split communicator whose ranks come in reverse
 * order, roots that move, MPI_IN_PLACE at the root every other round,
 * blocks from one int to past the schedules' limit, odd ranks receiving
 * Iscatter's block into a strided type; every element is checked, and the
 * root's receive buffer keeps its sentinel past the last block.
 *
 * Part 2 (progress; jobs of several processes): rank 0 is the last rank to
 * start each collective (root 0 for Igather(v), the last rank for Iscatter(v)),
 * then computes without calling MPI until its result buffer holds the whole
 * result, or a generous bound passes (a failure): the data can only arrive
 * if its process moves the collective on its own (the progress thread).
 * Below AMPI_NBC_PROGRESS_MIN the library leaves these collectives to the
 * helper threads, so part 2 then runs without the computing loop (run.sh
 * also runs this with the limit 0). */
#include <stdbool.h>
#include "mpitest.h"

#define BAIL_S 20.0 /* well inside the run's 60 s: a failure reports itself */
#define SENTINEL (-99)

/* element j of the block that rank `from` holds for rank `to` in round it */
static int val(int from, int to, size_t j, int it)
{
    return (int)(mt_hash((uint32_t)from, (uint32_t)to, (uint32_t)j, (uint32_t)it) >> 1);
}

/* One Igather (root groot) and one Iscatter (root sroot) on comm, both
 * outstanding; in_place: the roots pass MPI_IN_PLACE. */
static int part1_on(MPI_Comm comm, const char *name, int it, size_t blk, bool in_place)
{
    int errs = 0, me, n, wr = mt_rank();
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int groot = it % n, sroot = (it + n / 2) % n;
    size_t all = blk * (size_t)n;
    int *gs = malloc(blk * sizeof(int)), *gr = malloc((all + 1) * sizeof(int));
    int *ss = malloc(all * sizeof(int)), *sr = malloc(2 * blk * sizeof(int));
    for (size_t j = 0; j < blk; j++)
        gs[j] = val(me, groot, j, it);
    for (size_t i = 0; i <= all; i++)
        gr[i] = SENTINEL;
    if (in_place && me == groot) /* the root's own block is in place already */
        for (size_t j = 0; j < blk; j++)
            gr[(size_t)me * blk + j] = val(me, groot, j, it);
    for (size_t i = 0; i < all; i++)
        ss[i] = me == sroot ? val(sroot, (int)(i / blk), i % blk, it) : SENTINEL;
    for (size_t i = 0; i < 2 * blk; i++)
        sr[i] = SENTINEL;
    bool odd = me % 2 && !(in_place && me == sroot);
    MPI_Datatype st = mt_strided_ints((int)blk);
    MPI_Request q[2];
    MPI_Igather(in_place && me == groot ? MPI_IN_PLACE : gs, (int)blk, MPI_INT, gr, (int)blk, MPI_INT, groot, comm,
                &q[0]);
    MPI_Iscatter(ss, (int)blk, MPI_INT, in_place && me == sroot ? MPI_IN_PLACE : sr, odd ? 1 : (int)blk,
                 odd ? st : MPI_INT, sroot, comm, &q[1]);
    MPI_Type_free(&st); /* freed before completion: the library keeps what it needs */
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    if (me == groot) {
        for (size_t i = 0; i < all && !errs; i++)
            if (gr[i] != val((int)(i / blk), groot, i % blk, it))
                errs += mt_fail(wr, "%s Igather (root %d, %zu ints a block%s): block %zu element %zu is %d", name,
                                groot, blk, in_place ? ", in place" : "", i / blk, i % blk, gr[i]);
        if (gr[all] != SENTINEL)
            errs += mt_fail(wr, "%s Igather: the int past the last block was overwritten (%d)", name, gr[all]);
    }
    if (!(in_place && me == sroot)) {
        for (size_t j = 0; j < blk && !errs; j++) {
            int got = sr[odd ? 2 * j : j], gap = odd ? sr[2 * j + 1] : SENTINEL;
            if (got != val(sroot, me, j, it) || gap != SENTINEL)
                errs += mt_fail(wr, "%s Iscatter (root %d, %zu ints a block) into %s: element %zu is %d (gap %d)",
                                name, sroot, blk, odd ? "a strided type" : "ints", j, got, gap);
        }
    } else {
        for (size_t i = 0; i < all && !errs; i++) /* the root's send buffer is left alone */
            if (ss[i] != val(sroot, (int)(i / blk), i % blk, it))
                errs += mt_fail(wr, "%s Iscatter in place: the root's element %zu changed", name, i);
    }
    free(gs);
    free(gr);
    free(ss);
    free(sr);
    return errs;
}

enum { K_GATHER, K_SCATTER };

/* Whether rank 0's result buffer holds the whole result (volatile: the
 * progress thread writes it). */
static bool complete(int kind, const volatile int *buf, size_t blk, int n, int it)
{
    if (kind == K_SCATTER) {
        for (size_t j = blk; j-- > 0;)
            if (buf[j] != val(n - 1, 0, j, it))
                return false;
        return true;
    }
    for (size_t i = blk * (size_t)n; i-- > 0;)
        if (buf[i] != val((int)(i / blk), 0, i % blk, it))
            return false;
    return true;
}

/* Part 2's collective: Igather/Iscatter, or with v their v-forms over equal
 * blocks (counts, displs: a block per rank in order). */
typedef struct {
    int kind, root, size, it;
    bool v;
    int *sb, *rb, *counts, *displs;
    size_t blk;
} p2_t;

static void p2_start(void *arg, MPI_Request *q)
{
    const p2_t *a = arg;
    int b = (int)a->blk;
    if (a->kind == K_GATHER && a->v)
        MPI_Igatherv(a->sb, b, MPI_INT, a->rb, a->counts, a->displs, MPI_INT, a->root, MPI_COMM_WORLD, q);
    else if (a->kind == K_GATHER)
        MPI_Igather(a->sb, b, MPI_INT, a->rb, b, MPI_INT, a->root, MPI_COMM_WORLD, q);
    else if (a->v)
        MPI_Iscatterv(a->sb, a->counts, a->displs, MPI_INT, a->rb, b, MPI_INT, a->root, MPI_COMM_WORLD, q);
    else
        MPI_Iscatter(a->sb, b, MPI_INT, a->rb, b, MPI_INT, a->root, MPI_COMM_WORLD, q);
}

static bool p2_done(void *arg)
{
    const p2_t *a = arg;
    return complete(a->kind, a->rb, a->blk, a->size, a->it);
}

static int part2(int rank, int size, int kind, bool v, size_t blk, int it)
{
    size_t all = blk * (size_t)size;
    int *sb = malloc(all * sizeof(int)), *rb = malloc(all * sizeof(int));
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++) {
        counts[i] = (int)blk;
        displs[i] = (int)((size_t)i * blk);
    }
    for (size_t i = 0; i < all; i++) {
        sb[i] = kind == K_GATHER ? val(rank, 0, i % blk, it) : val(rank, (int)(i / blk), i % blk, it);
        rb[i] = SENTINEL;
    }
    p2_t a = { kind, kind == K_GATHER ? 0 : size - 1, size, it, v, sb, rb, counts, displs, blk };
    char name[64];
    snprintf(name, sizeof name, "%s of %zu ints a block",
             kind == K_GATHER ? (v ? "Igatherv" : "Igather") : (v ? "Iscatterv" : "Iscatter"), blk);
    int errs = mt_nbc_progress(&(mt_nbc_progress_t){ p2_start, p2_done, &a, all * sizeof(int), BAIL_S, name });
    if (rank == 0 && !complete(kind, rb, blk, size, it))
        errs += mt_fail(rank, "%s: wrong result", name);
    free(sb);
    free(rb);
    free(counts);
    free(displs);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    /* 70000 ints: the root's own block is copied in two pieces (coll_sched.c) */
    const size_t blocks[] = { 1, 1000, 40000, 70000 };
    int it = 0;
    errs += mt_nbc_data(part1_on, blocks, 4, &it);
    for (int v = 0; v < 2 && !errs; v++)
        for (int kind = K_GATHER; kind <= K_SCATTER && !errs; kind++)
            for (int b = 0; b < 3 && !errs; b++, it++)
                errs += part2(rank, size, kind, v, blocks[b], it);
    mt_finish(errs, "coll_nb_rooted OK");
    MPI_Finalize();
    return 0;
}
