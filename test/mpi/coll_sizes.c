/* coll_sizes.c - collectives whose message size jumps up and down between
 * calls, blocking and several nonblocking ones outstanding together.
 *
 * The library keeps the scratch space of its collectives per rank and
 * hands it out again (best fit), and picks algorithms by size (recursive
 * doubling or halving, segmented reduction trees, a direct path for ranks
 * of one process); a block handed out twice, or a size threshold crossed
 * wrongly, shows up here as wrong data.  Every input is a small integer of
 * (rank, index, salt), so every rank computes every expected result and
 * sums are exact; each case runs with and without MPI_IN_PLACE. */
#include "mpitest.h"

static const int sizes[] = { 1, 70000, 3, 300000, 2049, 300000, 40000, 5, 131072, 16 };
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

static int in(int r, int i, int salt) { return (r * 37 + i * 11 + salt * 5) % 200 - 100; }
static long sum_in(int n, int i, int salt)
{
    long s = 0;
    for (int r = 0; r < n; r++)
        s += in(r, i, salt);
    return s;
}

static int *filled(int count, int r, int salt)
{
    int *b = mt_malloc((size_t)(count ? count : 1) * sizeof *b);
    for (int i = 0; i < count; i++)
        b[i] = in(r, i, salt);
    return b;
}

static int check_sum(int me, const char *what, const int *b, int count, int n, int salt, int in_place)
{
    for (int i = 0; i < count; i++)
        if (b[i] != sum_in(n, i, salt))
            return mt_fail(me, "%s count %d%s: element %d is %d, expected %ld", what, count,
                           in_place ? " in place" : "", i, b[i], sum_in(n, i, salt));
    return 0;
}

/* Allreduce, Reduce (root rotates) and Alltoall of `count` ints. */
static int blocking(int me, int n, int count, int salt, int in_place)
{
    int errs = 0, root = salt % n;
    int *s = filled(count, me, salt), *r = filled(count, me, salt);
    MPI_Allreduce(in_place ? MPI_IN_PLACE : s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    errs += check_sum(me, "Allreduce", r, count, n, salt, in_place);
    for (int i = 0; i < count; i++)
        r[i] = in(me, i, salt);
    MPI_Reduce(in_place && me == root ? MPI_IN_PLACE : s, r, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    if (me == root)
        errs += check_sum(me, "Reduce", r, count, n, salt, in_place);
    free(s);
    free(r);
    int blk = count / n > 0 ? count / n : 1;
    int *a = mt_malloc((size_t)blk * (size_t)n * sizeof *a), *b = mt_malloc((size_t)blk * (size_t)n * sizeof *b);
    for (int d = 0; d < n; d++)
        for (int i = 0; i < blk; i++)
            a[d * blk + i] = in(me, d * blk + i, salt);
    MPI_Alltoall(in_place ? MPI_IN_PLACE : a, blk, MPI_INT, in_place ? a : b, blk, MPI_INT, MPI_COMM_WORLD);
    const int *got = in_place ? a : b;
    for (int src = 0; src < n && !errs; src++)
        for (int i = 0; i < blk; i++)
            if (got[src * blk + i] != in(src, me * blk + i, salt)) {
                errs += mt_fail(me, "Alltoall block %d%s: element %d from %d is %d, expected %d", blk,
                                in_place ? " in place" : "", i, src, got[src * blk + i], in(src, me * blk + i, salt));
                break;
            }
    free(a);
    free(b);
    return errs;
}

/* Three Iallreduce of different sizes and an Iscan outstanding together,
 * completed in reverse order. */
static int nonblocking(int me, int n, int salt)
{
    enum { K = 4 };
    int counts[K] = { 300000, 7, 65536, 20000 }, *b[K], errs = 0;
    MPI_Request q[K];
    for (int k = 0; k < K; k++) {
        b[k] = filled(counts[k], me, salt + k);
        if (k == K - 1)
            MPI_Iscan(MPI_IN_PLACE, b[k], counts[k], MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[k]);
        else
            MPI_Iallreduce(MPI_IN_PLACE, b[k], counts[k], MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[k]);
    }
    for (int k = K - 1; k >= 0; k--)
        MPI_Wait(&q[k], MPI_STATUS_IGNORE);
    for (int k = 0; k < K - 1; k++)
        errs += check_sum(me, "Iallreduce", b[k], counts[k], n, salt + k, 1);
    errs += check_sum(me, "Iscan", b[K - 1], counts[K - 1], me + 1, salt + K - 1, 1);
    for (int k = 0; k < K; k++)
        free(b[k]);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = mt_rank(), n = mt_size(), errs = 0;
    for (int round = 0; round < 2 && !errs; round++)
        for (int k = 0; k < NSIZES && !errs; k++) {
            errs += blocking(me, n, sizes[k], 10 * k + round, round);
            if (k % 3 == 0)
                errs += nonblocking(me, n, 10 * k + round);
        }
    char line[64];
    snprintf(line, sizeof line, "coll_sizes: %d ranks, %d sizes OK", n, NSIZES);
    mt_finish(errs, line);
    MPI_Finalize();
    return 0;
}
