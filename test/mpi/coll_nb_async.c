/* coll_nb_async.c - MPI_Ibcast, MPI_Iallreduce and MPI_Ialltoall(v) progress
 * while the ranks compute, and move the right data.
 *
 * Part 1 (data): several collectives outstanding at once on MPI_COMM_WORLD
 * and on a split communicator whose ranks come in reverse order, with
 * MPI_IN_PLACE, roots that move, sizes from one element to 512 KiB, then
 * completed by MPI_Waitall or an MPI_Test loop; every element is checked.
 *
 * Part 1b: ranks of one collective with different layouts of the same
 * signature: odd ranks receive an Ibcast and an Ialltoall's blocks into
 * strided types (every other int), even ranks into contiguous ints.
 *
 * Part 2 (progress; jobs of several processes): rank 0 is the last rank
 * to start each collective (every other rank starts it and tells rank 0
 * so), then computes without calling MPI until its own result buffer holds
 * the whole result, or a generous bound passes (a failure).  Rank 0's PE is
 * held meanwhile, so neither rank 0 nor the other ranks of its process enter
 * MPI: the result can only arrive if their process moves the collective on
 * its own (the progress thread).  With one process the ranks could not
 * even start, so there part 2 runs without the computing loop; so it does
 * for collectives below AMPI_NBC_PROGRESS_MIN bytes, which the library
 * leaves to the helper threads (run.sh also runs this with the limit 0). */
#include <stdbool.h>
#include "mpitest.h"

#define BAIL_S 60.0

static int bval(int root, int it, size_t i) { return (int)(mt_hash((uint32_t)root, 7, (uint32_t)i, (uint32_t)it) >> 1); }
static int aval(int src, int dst, size_t j, int it) { return (int)(mt_hash((uint32_t)src, (uint32_t)dst, (uint32_t)j, (uint32_t)it) >> 1); }
static int sum_val(int n, size_t i) { return (int)(i % 97 + 1) * n * (n + 1) / 2; }
static double max_val(int n, size_t i)
{
    double m = -1;
    for (int r = 0; r < n; r++) {
        double v = (double)((r * 7 + (int)i) % (n + 3));
        m = v > m ? v : m;
    }
    return m;
}

typedef struct bufs {
    int *bc, *ars, *arr, *a2s, *a2r, *a2ip;
    double *armax;
} bufs_t;

static int check_int(int rank, const char *what, const int *got, size_t n, int (*want)(const void *, size_t),
                     const void *ctx)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want(ctx, i))
            return mt_fail(rank, "%s: element %zu is %d, expected %d", what, i, got[i], want(ctx, i));
    return 0;
}

typedef struct ctx {
    int a, b, c, n;
} ctx_t;
static int want_b(const void *p, size_t i) { const ctx_t *c = p; return bval(c->a, c->b, i); }
static int want_sum(const void *p, size_t i) { const ctx_t *c = p; return sum_val(c->n, i); }
/* alltoall: element i of the receive buffer, blocks of c->c elements from each rank */
static int want_a2(const void *p, size_t i)
{
    const ctx_t *c = p;
    return aval((int)(i / (size_t)c->c), c->a, i % (size_t)c->c, c->b);
}

static int part1(int rank, int size, MPI_Comm split, int it, size_t n, bool use_test)
{
    int errs = 0, cs, cr;
    MPI_Comm_size(split, &cs);
    MPI_Comm_rank(split, &cr);
    size_t blk = n / (size_t)size ? n / (size_t)size : 1;
    bufs_t b;
    b.bc = malloc(n * sizeof(int));
    b.ars = malloc(n * sizeof(int));
    b.arr = malloc(n * sizeof(int));
    b.armax = malloc(n * sizeof(double));
    b.a2s = malloc(blk * (size_t)size * sizeof(int));
    b.a2r = malloc(blk * (size_t)size * sizeof(int));
    b.a2ip = malloc(blk * (size_t)cs * sizeof(int));
    int root = it % size;
    for (size_t i = 0; i < n; i++) {
        b.bc[i] = rank == root ? bval(root, it, i) : -1;
        b.ars[i] = (rank + 1) * (int)(i % 97 + 1);
        b.arr[i] = -1;
        b.armax[i] = (double)((cr * 7 + (int)i) % (cs + 3));
    }
    for (int d = 0; d < size; d++)
        for (size_t j = 0; j < blk; j++) {
            b.a2s[(size_t)d * blk + j] = aval(rank, d, j, it);
            b.a2r[(size_t)d * blk + j] = -1;
        }
    for (int d = 0; d < cs; d++)
        for (size_t j = 0; j < blk; j++)
            b.a2ip[(size_t)d * blk + j] = aval(cr, d, j, it + 1000);
    MPI_Request req[5];
    MPI_Ibcast(b.bc, (int)n, MPI_INT, root, MPI_COMM_WORLD, &req[0]);
    MPI_Iallreduce(MPI_IN_PLACE, b.armax, (int)n, MPI_DOUBLE, MPI_MAX, split, &req[1]);
    MPI_Iallreduce(b.ars, b.arr, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[2]);
    MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b.a2ip, (int)blk, MPI_INT, split, &req[3]);
    MPI_Ialltoall(b.a2s, (int)blk, MPI_INT, b.a2r, (int)blk, MPI_INT, MPI_COMM_WORLD, &req[4]);
    if (use_test) {
        int flag = 0;
        while (!flag)
            MPI_Testall(5, req, &flag, MPI_STATUSES_IGNORE);
    } else {
        MPI_Waitall(5, req, MPI_STATUSES_IGNORE);
    }
    ctx_t cb = { root, it, 0, size }, cs_ = { 0, 0, 0, size }, ca = { rank, it, (int)blk, size },
          cip = { cr, it + 1000, (int)blk, cs };
    errs += check_int(rank, "Ibcast", b.bc, n, want_b, &cb);
    errs += check_int(rank, "Iallreduce(SUM)", b.arr, n, want_sum, &cs_);
    errs += check_int(rank, "Ialltoall", b.a2r, blk * (size_t)size, want_a2, &ca);
    errs += check_int(rank, "Ialltoall(IN_PLACE)", b.a2ip, blk * (size_t)cs, want_a2, &cip);
    for (size_t i = 0; i < n; i++)
        if (b.armax[i] != max_val(cs, i)) {
            errs += mt_fail(rank, "Iallreduce(MAX, IN_PLACE): element %zu is %g, expected %g", i, b.armax[i],
                            max_val(cs, i));
            break;
        }
    free(b.bc);
    free(b.ars);
    free(b.arr);
    free(b.armax);
    free(b.a2s);
    free(b.a2r);
    free(b.a2ip);
    return errs;
}

static int part1b(int rank, int size, int it, int n)
{
    int errs = 0, root = size - 1, blk = n / size ? n / size : 1;
    bool odd = rank % 2;
    int *bc = malloc(2 * (size_t)n * sizeof(int)), *sb = malloc((size_t)blk * size * sizeof(int));
    int *rb = malloc(2 * (size_t)blk * size * sizeof(int));
    for (int i = 0; i < 2 * n; i++)
        bc[i] = -7;
    for (int i = 0; i < 2 * blk * size; i++)
        rb[i] = -7;
    for (int i = 0; i < n && rank == root; i++)
        bc[odd ? 2 * i : i] = bval(root, it, (size_t)i);
    for (int d = 0; d < size; d++)
        for (int j = 0; j < blk; j++)
            sb[d * blk + j] = aval(rank, d, (size_t)j, it);
    MPI_Datatype bt = mt_strided_ints(n), at = mt_strided_ints(blk);
    MPI_Request q[2];
    MPI_Ibcast(bc, odd ? 1 : n, odd ? bt : MPI_INT, root, MPI_COMM_WORLD, &q[0]);
    MPI_Ialltoall(sb, blk, MPI_INT, rb, odd ? 1 : blk, odd ? at : MPI_INT, MPI_COMM_WORLD, &q[1]);
    MPI_Type_free(&bt); /* freed before completion: the library keeps what it needs */
    MPI_Type_free(&at);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; i++) {
        int got = bc[odd ? 2 * i : i], gap = odd ? bc[2 * i + 1] : -7;
        if (got != bval(root, it, (size_t)i) || gap != -7) {
            errs += mt_fail(rank, "Ibcast into %s: element %d is %d (gap %d)", odd ? "a strided type" : "ints", i,
                            got, gap);
            break;
        }
    }
    for (int s = 0; s < size && !errs; s++)
        for (int j = 0; j < blk; j++) {
            int at_ = odd ? 2 * (s * blk + j) : s * blk + j, gap = odd ? rb[at_ + 1] : -7;
            if (rb[at_] != aval(s, rank, (size_t)j, it) || gap != -7) {
                errs += mt_fail(rank, "Ialltoall into %s: block %d element %d is %d (gap %d)",
                                odd ? "a strided type" : "ints", s, j, rb[at_], gap);
                break;
            }
        }
    free(bc);
    free(sb);
    free(rb);
    return errs;
}

enum { K_BCAST, K_ALLRED, K_ALLTOALL, K_ALLTOALLV, NKINDS };
static const char *const kname[NKINDS] = { "Ibcast", "Iallreduce", "Ialltoall", "Ialltoallv" };

/* Part 2's collective, on MPI_COMM_WORLD. */
typedef struct {
    int kind, root;
    int *sb, *rb;
    size_t n, blk, len;
    ctx_t c;
    int *counts, *displs; /* Ialltoallv: the blocks of Ialltoall */
} p2_t;

static void p2_start(void *arg, MPI_Request *q)
{
    const p2_t *a = arg;
    if (a->kind == K_BCAST)
        MPI_Ibcast(a->rb, (int)a->n, MPI_INT, a->root, MPI_COMM_WORLD, q);
    else if (a->kind == K_ALLRED)
        MPI_Iallreduce(a->sb, a->rb, (int)a->n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, q);
    else if (a->kind == K_ALLTOALL)
        MPI_Ialltoall(a->sb, (int)a->blk, MPI_INT, a->rb, (int)a->blk, MPI_INT, MPI_COMM_WORLD, q);
    else
        MPI_Ialltoallv(a->sb, a->counts, a->displs, MPI_INT, a->rb, a->counts, a->displs, MPI_INT, MPI_COMM_WORLD, q);
}

/* Whether buf holds the whole result (volatile: the progress thread writes it). */
static bool complete(int kind, const volatile int *buf, size_t len, const ctx_t *c)
{
    for (size_t i = len; i-- > 0;) { /* the last elements arrive last */
        int w = kind == K_BCAST ? want_b(c, i) : kind == K_ALLRED ? want_sum(c, i) : want_a2(c, i); /* (v) alike */
        if (buf[i] != w)
            return false;
    }
    return true;
}

static bool p2_done(void *arg)
{
    const p2_t *a = arg;
    return complete(a->kind, a->rb, a->len, &a->c);
}

static int part2(int rank, int size, int kind, size_t n, int it)
{
    int root = size - 1;
    size_t blk = n / (size_t)size ? n / (size_t)size : 1;
    bool a2a = kind == K_ALLTOALL || kind == K_ALLTOALLV;
    size_t len = a2a ? blk * (size_t)size : n;
    int *sb = malloc(len * sizeof(int)), *rb = malloc(len * sizeof(int));
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++) {
        counts[i] = (int)blk;
        displs[i] = i * (int)blk;
    }
    ctx_t c = { kind == K_BCAST ? root : rank, it, (int)blk, size };
    for (size_t i = 0; i < len; i++) {
        rb[i] = -1;
        if (kind == K_BCAST)
            rb[i] = rank == root ? bval(root, it, i) : -1;
        else if (kind == K_ALLRED)
            sb[i] = (rank + 1) * (int)(i % 97 + 1);
        else
            sb[i] = aval(rank, (int)(i / blk), i % blk, it);
    }
    p2_t a = { kind, root, sb, rb, n, blk, len, c, counts, displs };
    char name[64];
    snprintf(name, sizeof name, "%s of %zu ints", kname[kind], n);
    size_t weight = kind == K_BCAST ? mt_nbc_bcast_weight(len * sizeof(int)) : len * sizeof(int);
    int errs = mt_nbc_progress(&(mt_nbc_progress_t){ p2_start, p2_done, &a, weight, BAIL_S, name });
    if (!complete(kind, rb, len, &c))
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
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split);
    /* 131075 ints (512 KiB and more, not a multiple of any block count): the
     * schedules' Iallreduce by reduce-scatter + allgather from four processes,
     * and the input folded into a whole received vector on two */
    const size_t sizes[] = { 1, 1000, 70000, 131075 };
    int it = 0;
    for (int s = 0; s < 4 && !errs; s++)
        for (int rep = 0; rep < 2 && !errs; rep++, it++)
            errs += part1(rank, size, split, it, sizes[s], rep == 1);
    for (int s = 0; s < 3 && !errs; s++, it++)
        errs += part1b(rank, size, it, (int)sizes[s]);
    for (int kind = 0; kind < NKINDS && !errs; kind++)
        for (int s = 0; s < 3 && !errs; s++, it++)
            errs += part2(rank, size, kind, sizes[s], it);
    /* 20000 ints (78 KiB): between half of AMPI_NBC_PROGRESS_MIN's default
     * and all of it, where an Ibcast takes the schedule only when the
     * progress threads have CPUs of their own */
    if (!errs)
        errs += part2(rank, size, K_BCAST, 20000, it++);
    MPI_Comm_free(&split);
    mt_finish(errs, "coll_nb_async OK");
    MPI_Finalize();
    return 0;
}
